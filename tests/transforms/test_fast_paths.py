"""The array and cached paths of segment, encode, realign and audit give exactly what their
straightforward references give, on fixed and random inputs."""
from __future__ import annotations

import random
import re

import numpy as np
import pytest

from larvatus.transforms import audit as audit_lib
from larvatus.transforms import encode as encode_lib
from larvatus.transforms import realign as realign_lib
from larvatus.transforms import segment as segment_lib

_ALPHABET = ("aZé É ß.,;:!?'’\"-–—()[]$%&@#/\\_0123456789 \n\t\u00a0\u2009\u3000"
             "ǅⒶ²ÆæΣσ北京👍🏽\u200d\ufe0f\u00ad\x00\x1b" + "abcdefXYZ" * 4)
_WORDS = ["Mr.", "U.S.", "can't", "gonna", "e-mail", "a@b.com", "https://x.org/a?b=1", ":)",
          "(NYC).", "5:30pm", "20%", "O'Neil's", "1996-08-22", "--", "...", "J.R.R.", "'s",
          "x" * 70, "!" * 80, "Zoë", "don't", "etc.", "$5", "3.14"]


def _random_texts(seed: int, count: int) -> list[str]:
    rng = random.Random(seed)
    texts = []
    for _ in range(count):
        pieces = [rng.choice(_WORDS) if rng.random() < 0.4 else
                  "".join(rng.choice(_ALPHABET) for _ in range(rng.randint(1, 12)))
                  for _ in range(rng.randint(0, 30))]
        texts.append("".join(p + rng.choice([" ", "  ", "\n", "", " \t "]) for p in pieces))
    return texts


def _spacy_reference(text: str) -> tuple[list[int], list[int]]:
    """spaCy run on each stretch between long chunks, its tokens iterated one by one."""
    starts, ends, cursor = [], [], 0

    def spacy_words(begin: int, end: int) -> None:
        for token in segment_lib.english_tokenizer()(text[begin:end]):
            if not token.is_space:
                starts.append(begin + token.idx)
                ends.append(begin + token.idx + len(token.text))

    for chunk in segment_lib.LONG_CHUNK_RE.finditer(text):
        spacy_words(cursor, chunk.start())
        for word in segment_lib._long_chunk_words().finditer(text, chunk.start(), chunk.end()):
            starts.append(word.start())
            ends.append(word.end())
        cursor = chunk.end()
    spacy_words(cursor, len(text))
    return starts, ends


def test_words_from_spacys_arrays_match_its_tokens():
    texts = _random_texts(5, 400) + [" ".join(_WORDS), "\n".join(_WORDS * 3), "", "   "]
    for text in texts:
        shadow = segment_lib.Shadow(text).text
        assert segment_lib._shadow_words(shadow) == _spacy_reference(shadow), repr(text)


def test_hidden_characters_are_found_as_hidden_finds_them():
    from larvatus.transforms.chars import HIDDEN
    for text in _random_texts(7, 300) + ["plain", "a\u200db", "\x7f", "\U000e0041"]:
        assert (segment_lib._HIDDEN_CHAR.search(text) is None) == (HIDDEN.search(text) is None)


def test_remembered_casings_match_casing_type(tokenizer):
    words = [w for text in _random_texts(11, 100) for w in text.split()] + _WORDS
    for max_words in (100_000, 50):
        memory = encode_lib.WordPieces(tokenizer, max_words=max_words)
        for start in range(0, 2 * len(words), 37):
            chunk = (words * 2)[start:start + 37]
            assert memory.lookup(chunk)[2].tolist() == [encode_lib.casing_type(w) for w in chunk]


def test_audit_candidates_hold_every_word_match_with_an_uppercase_first_letter():
    texts = _random_texts(13, 400) + ["a3Com 3Com _Xy x-Ray -Ray .Net ’Tis Ⓐbc ǅx ²X Éa ßE éA"]
    for text in texts:
        matches = [(m.start(), m.group()) for m in audit_lib._WORD.finditer(text)]
        candidates = [(m.start("word"), m.group("word"))
                      for m in audit_lib._CANDIDATE.finditer(text)]
        assert set(candidates) <= set(matches), repr(text)
        assert [m for m in matches if text[m[0]].isupper()] == \
            [m for m in candidates if text[m[0]].isupper()], repr(text)


@pytest.mark.parametrize("length", [1, 2, 3, 7, 8, 9, 130, 300])
def test_span_statistics_match_numpy(length):
    rng = np.random.default_rng(length)
    for _ in range(200):
        values = (rng.random(length + 5) ** 3).astype(np.float32)
        first = int(rng.integers(0, 6))
        last = first + length
        assert realign_lib._span_mean(values, first, last) == float(values[first:last].mean())
        assert realign_lib._span_max(values, [(first, last, "X")]) == [float(values[first:last].max())]


def test_span_maxima_of_several_runs_ending_at_the_last_word():
    values = np.array([0.1, 0.9, 0.3, 0.5, 0.2], dtype=np.float32)
    runs = [(0, 2, "A"), (2, 3, "B"), (3, 5, "A")]
    assert realign_lib._span_max(values, runs) == [float(np.float32(0.9)), float(np.float32(0.3)),
                                                    float(np.float32(0.5))]


def test_spans_without_a_letter_or_digit_are_dropped_as_any_isalnum_drops_them():
    from larvatus.transforms.records import EntitySpan
    text = "- Ada _ ² (x) -- 北 _a"
    spans = tuple(EntitySpan(a, b, "PER", 1.0) for a in range(len(text))
                  for b in range(a + 1, min(len(text), a + 4) + 1))
    expected = tuple(s for s in spans if any(c.isalnum() for c in text[s.start:s.end]))
    assert realign_lib._with_content(spans, text) == expected
    assert re.search(r"\w", "_") and not realign_lib._ALNUM.search("_")


_AUDIT_ALPHABET = "aZéÉßǅⒶ²Ⅳ北0159_'’-. \n\t,;:@" + "\u00a0\u2009–"


def _audit_texts(seed: int, count: int) -> list[str]:
    rng = random.Random(seed)
    return [rng.choice(["", "Mr ", "said: "]) + "".join(
        rng.choice(_AUDIT_ALPHABET) for _ in range(rng.randint(0, 40))) for _ in range(count)] \
        + ["a3Com 3Com _Xy x-Ray -Ray .Net ’Tis Ⓐbc ǅx ²X Éa ßE éA a1B 1B é-Bx .-_1'Zed ⅣA"]


def test_capitalized_words_are_the_candidates_with_an_uppercase_first_letter():
    for text in _random_texts(17, 300) + _audit_texts(18, 3000):
        expected = [(m.start("word"), m.group("word")) for m in audit_lib._CANDIDATE.finditer(text)
                    if text[m.start("word")].isupper()]
        found = [(m.start(), m.group()) for m in audit_lib._CAPITALIZED.finditer(text)
                 if audit_lib._capitalized(text, m.start())]
        assert found == expected, repr(text)


def test_digit_runs_are_found_as_with_the_lookbehind_first():
    reference = re.compile(r"(?<![\w])\d(?:(?:[ \-./]| - )?\d){4,}(?![\w])")
    rng = random.Random(19)
    alphabet = "0123456789" * 3 + "a_ -./٣" + "\u00a0"
    texts = ["".join(rng.choice(alphabet) for _ in range(rng.randint(0, 30))) for _ in range(3000)]
    for text in texts + ["12345", "a12345", "_12345 67890", "1 - 2345", "٣12345"]:
        assert [m.span() for m in audit_lib._DIGITS.finditer(text)] == \
            [m.span() for m in reference.finditer(text)], repr(text)


def _reference_capitalized_findings(text: str) -> list[tuple[int, int]]:
    """The capitalised-word findings of a text without placeholders, candidate by candidate."""
    found = []
    for match in audit_lib._CANDIDATE.finditer(text):
        start = match.start("word")
        word = match.group("word").rstrip(".-'’")
        if text[start].isupper() and word.lower() not in audit_lib.common_words() \
                and len(word) > 1 and not audit_lib._sentence_initial(text, start):
            found.append((start, start + len(word)))
    return found


def test_audit_flags_the_capitalized_words_the_candidate_scan_flags():
    for text in _random_texts(21, 300) + _audit_texts(22, 2000):
        findings = audit_lib.audit(text).findings
        got = [(f.start, f.end) for f in findings if f.kind == "capitalized"]
        taken = [(f.start, f.end) for f in findings if f.kind != "capitalized"]
        expected = [(a, b) for a, b in _reference_capitalized_findings(text)
                    if not any(a < d and c < b for c, d in taken)]
        assert got == expected, repr(text)


def test_audit_skips_placeholders_as_the_candidate_scan_and_free_check_do():
    from larvatus.transforms.records import Replacement
    rng = random.Random(23)
    for text in _random_texts(24, 300) + _audit_texts(25, 2000):
        cuts = sorted(rng.sample(range(len(text) + 1), min(len(text) + 1, 2 * rng.randint(0, 3))))
        placeholders = [Replacement(a, b, "PER", text[a:b]) for a, b in zip(cuts[0::2], cuts[1::2])
                        if b > a]
        findings = audit_lib.audit(text, placeholders).findings
        got = [(f.start, f.end) for f in findings if f.kind == "capitalized"]
        taken = [(f.start, f.end) for f in findings if f.kind != "capitalized"] + \
            [(r.start, r.end) for r in placeholders]
        expected = [(a, b) for a, b in _reference_capitalized_findings(text)
                    if not any(a < d and c < b for c, d in taken)]
        assert got == expected, (text, cuts)


def test_remembered_flagged_lengths_match_flagged_length():
    for text in _random_texts(26, 100) + _audit_texts(27, 300):
        for match in audit_lib._CAPITALIZED.finditer(text):
            word = match.group()
            assert audit_lib._LENGTHS[word] == audit_lib.flagged_length(word)
            stripped = word.rstrip(".-'’")
            flagged = len(stripped) > 1 and stripped.lower() not in audit_lib.common_words()
            assert audit_lib.flagged_length(word) == (len(stripped) if flagged else 0)


def _bits(values: list[float]) -> list[bytes]:
    return [np.float64(v).tobytes() for v in values]   # tells -0.0 from 0.0


@pytest.mark.parametrize("size", [1, 3, 20, 300])
def test_span_means_match_span_mean_run_by_run(size):
    rng = np.random.default_rng(size)
    for trial in range(300):
        values = (rng.random(size) ** 3).astype(np.float32)
        values[rng.integers(0, size, 2)] = rng.choice([0.0, -0.0, 1.0, 1e-30])
        cuts = np.unique(rng.integers(0, size + 1, int(rng.integers(2, 2 * size + 3))))
        runs = [(a, b) for a, b in zip(cuts[:-1].tolist(), cuts[1:].tolist()) if rng.random() < 0.8]
        firsts = np.array([a for a, _ in runs], dtype=np.int64)
        lasts = np.array([b for _, b in runs], dtype=np.int64)
        for scores in (values, values.astype(np.float64)) if trial % 10 == 0 else (values,):
            expected = [realign_lib._span_mean(scores, a, b) for a, b in runs]
            assert _bits(realign_lib._span_means(scores, firsts, lasts)) == _bits(expected)


def _reference_word_probabilities(encoded, window_probs, aggregation):
    """Window by window: a word takes the vector of the window where it stands farthest from
    an edge, the earliest on a tie."""
    per_word = np.zeros((encoded.segmented.num_words, window_probs[0].shape[1]), np.float32)
    best = np.full(encoded.segmented.num_words, -1.0)
    for window, probs in zip(encoded.windows, window_probs):
        firsts = np.flatnonzero(window.first_piece[1:-1])
        words = window.word_ids[1:-1][firsts]
        start, end = window.piece_offset, window.piece_offset + len(window) - 2
        left = firsts.astype(float) if start > 0 else np.full(firsts.size, np.inf)
        right = (end - start - 1 - firsts).astype(float) if end < encoded.num_pieces \
            else np.full(firsts.size, np.inf)
        distance = np.minimum(left, right)
        better = distance > best[words]
        if better.any():
            per_word[words[better]] = realign_lib._aggregate(probs, firsts, aggregation)[better]
            best[words[better]] = distance[better]
    return per_word, best >= 0


def _random_encoded(rng: random.Random):
    """A document of up to 12 words and windows over random stretches of its pieces, one of
    them sometimes over all of them after others."""
    from larvatus.transforms.records import Document, EncodedDocument, SegmentedDocument, Window
    num_words = rng.randint(1, 12)
    word_of_piece = [w for w in range(num_words) for _ in range(rng.choice([0, 1, 1, 2, 3]))]
    total = len(word_of_piece)
    first = [i == 0 or word_of_piece[i] != word_of_piece[i - 1] for i in range(total)]
    stretches = [(a, rng.randint(a + 1, total)) for a in sorted(
        rng.randrange(total) for _ in range(rng.randint(1, 4)))] if total else []
    if total and rng.random() < 0.5:
        stretches.insert(rng.randint(0, len(stretches)), (0, total))
    windows = tuple(Window(
        np.zeros(b - a + 2, np.int64), np.zeros(b - a + 2, np.int64),
        np.array([-1] + word_of_piece[a:b] + [-1], np.int64),
        np.array([False] + first[a:b] + [False]), a) for a, b in stretches)
    words = ["w" * (k + 1) for k in range(num_words)]
    starts = [sum(len(w) + 1 for w in words[:k]) for k in range(num_words)]
    segmented = SegmentedDocument(Document("d", " ".join(words), "s"), tuple(starts),
                                  tuple(s + len(w) for s, w in zip(starts, words)))
    return EncodedDocument(segmented, windows, total)


@pytest.mark.parametrize("aggregation", ["first", "average", "max"])
def test_word_probabilities_match_the_window_by_window_reference(aggregation):
    rng = random.Random(29)
    generator = np.random.default_rng(29)
    for _ in range(1500):
        encoded = _random_encoded(rng)
        probs = [generator.random((len(w) - 2, 4)).astype(np.float32) for w in encoded.windows]
        if not probs:
            continue
        got = realign_lib.word_probabilities(encoded, probs, aggregation)
        expected = _reference_word_probabilities(encoded, probs, aggregation)
        assert np.array_equal(got[0], expected[0]) and np.array_equal(got[1], expected[1])


def test_the_decision_computed_once_matches_decide_redaction_and_redacted_mass():
    from larvatus.transforms.labels import read_scheme
    scheme = read_scheme(["O", "B-PER", "I-PER", "B-LOC", "I-LOC", "B-ORG", "I-ORG", "B-MISC",
                          "I-MISC"])
    rng = np.random.default_rng(31)
    for trial in range(500):
        size = int(rng.integers(1, 40))
        probs = rng.random((size, len(scheme.tags))).astype(np.float32) ** 4
        probs /= probs.sum(axis=1, keepdims=True)
        predicted = rng.random(size) < 0.9
        types = frozenset(t for t in ("PER", "LOC", "ORG", "MISC", "X") if rng.random() < 0.5)
        decision = realign_lib.RedactionDecision(
            types, float(rng.choice([0.04, 0.3, 0.5, 1.0])),
            (("PER", 0.2),) if trial % 3 == 0 else ())
        argmax, labels, mass = realign_lib._decide(probs, predicted, scheme, decision)
        expected_labels, _ = realign_lib.decide_redaction(probs, predicted, scheme, decision)
        assert np.array_equal(argmax, np.where(predicted, probs.argmax(axis=1), -1))
        assert np.array_equal(labels, expected_labels)
        assert mass.tobytes() == realign_lib.redacted_mass(probs, scheme, types).tobytes()
