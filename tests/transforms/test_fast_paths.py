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
