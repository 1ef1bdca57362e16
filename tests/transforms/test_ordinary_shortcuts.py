"""The cheap rejections in front of the field-label and particle-join checks give what the plain regexes give."""
from __future__ import annotations

import random
import re

from larvatus.transforms.labels import DECLARED_ROLES
from larvatus.transforms import ordinary
from larvatus.transforms.records import EntitySpan

PIECES = ["Anna", "Berg", "van", "den", "am", "Main", "d'", "l’", "D", "d", "'s", "’s", "of",
          "number:", "address,", "No. 5", "MRN: 12", "SSN", ":", "§", "U.S.C.", "\n", "  ",
          "\t", " ", "the", "Claimant's", "x" * 90, "della", "upon", "Julie", "Heripon", ","]
_LABEL_START_RE = re.compile(r"(?:^|\n)[ \t]*\Z|['’]s[ \t]+(?:[^\W\d_]+[ \t]+)?\Z")


def _random_texts(count: int):
    rng = random.Random(11)
    for _ in range(count):
        yield "".join(rng.choice(PIECES) + rng.choice(["", " ", " "]) for _ in range(rng.randrange(1, 40)))


def _random_spans(text: str, rng: random.Random, count: int):
    for _ in range(count):
        start = rng.randrange(len(text))
        end = rng.randrange(start + 1, len(text) + 1)
        if not text[start:end].strip():
            continue   # spans hold a word
        yield EntitySpan(start, end, rng.choice(["PER", "LOC", "ORG", "MISC", "ID"]),
                         rng.choice([0.05, 0.9]))


def _field_label_reference(text: str, span: EntitySpan) -> bool:
    if not DECLARED_ROLES.covers(span) or "\n" in text[span.start:span.end]:
        return False
    if ordinary._CITATION_RE.match(text, span.end) and text[max(0, span.start - 2):span.start].strip():
        return True
    if not _LABEL_START_RE.search(text, max(0, span.start - 80), span.start):
        return False
    surface = text[span.start:span.end]
    return ordinary._FIELD_NOUN_RE.match(text, span.end) is not None \
        or surface.isupper() and len(surface) <= 5 \
        and ordinary._BEFORE_NUMBER_RE.match(text, span.end) is not None


def _particle_joins_reference(text: str, last: EntitySpan, span: EntitySpan) -> bool:
    if not DECLARED_ROLES.covers(last) or not DECLARED_ROLES.covers(span) \
            or last.end > span.start:
        return False
    gap = text[last.end:span.start]
    first = ordinary._TOKEN_RE.match(text, span.start, span.end)
    ending = text[last.start:last.end].rsplit(None, 1)[-1]
    return not gap.strip(" \t") and (first is not None and first.group() in ordinary.NAME_PARTICLES
                                      or ending in ordinary.NAME_PARTICLES
                                      or ordinary._elided_name(text, span.start, span.end)) \
        or ordinary._PARTICLE_GAP_RE.fullmatch(text, last.end, span.start) is not None \
        or ordinary._LONE_ELISION_RE.fullmatch(text, last.start, last.end) is not None \
        and ordinary._elided_name(text, last.start, span.end)


def test_field_label_equals_the_plain_label_start_search():
    rng = random.Random(3)
    checked = found = 0
    for text in _random_texts(400):
        for span in _random_spans(text, rng, 20):
            expected = _field_label_reference(text, span)
            assert ordinary._field_label(text, span) is expected, (text, span)
            checked += 1
            found += expected
    assert found > 50 and checked - found > 50


def test_particle_joins_equal_the_plain_checks():
    rng = random.Random(5)
    joined = 0
    for text in _random_texts(400):
        spans = sorted(_random_spans(text, rng, 30), key=lambda s: s.start)
        for last, span in zip(spans, spans[1:]):
            expected = _particle_joins_reference(text, last, span)
            assert ordinary._particle_joins(text, last, span) == expected, (text, last, span)
            joined += bool(expected)
    assert joined > 20


REFINE_PIECES = ["Anna", "Berg", "Mr", "Dr.", "Inspector", "Morse", "Hi", "team", "the", "THE",
                 "March", "1", "37.6", "C.", "C", "X-ray", "BSc", "Economics", "sincerely", ",",
                 ".", ":", "MRN:", "Prince", "Harry", "greene", "jason", "from", "2", "²", "٣",
                 "\u00a0", "\n", "\t", " ", "  ", "Monday", "Jan", "U.S.", "Corp.", "Fla.",
                 "Hamburg.", "van", "de", "Rückfragen", "Verfügung", "und", "X11", "Will", "May"]


def test_refined_spans_equal_refine_span_wherever_the_memo_answers():
    """The memo of `refine_span` (keyed by the span's label, weakness, language, surface and
    the classes of three characters on each side) gives what `refine_span` gives, on random
    texts where the same surfaces meet other neighbours."""
    ordinary._REFINED.clear()
    surfaces = ["Anna team", "Anna", "C. Morse", "C", "1 March", "March", "Mr Berg", "Anna.",
                "Hamburg.", "BSc Economics", "the Berg", "Monday", "Berg Jan"]
    befores = ["", "1", " ", "1 ", "12 ", "x ", "1x ", "xx ", "\u00b2 ", "\u0663 ", ": ", "1\u00a0", "\n"]
    afters = ["", ":", " :", "1", " 1", ": 1", ".", " x", " x1", " xx", "\u00b2", "\u0663", " \u0663"]
    for surface in surfaces:
        for before in befores:
            for after in afters:
                text = before + surface + after
                for label in ("PER", "LOC"):
                    for score in (0.05, 0.9):
                        span = EntitySpan(len(before), len(before) + len(surface), label, score)
                        for language in ("en", "de"):
                            assert ordinary._refined(text, span, language, DECLARED_ROLES) \
                                == ordinary.refine_span(text, span, language), (text, span)
    rng = random.Random(23)
    hits = 0
    for _ in range(6000):
        text = "".join(rng.choice(REFINE_PIECES) + rng.choice(["", " ", " ", ":", "1"])
                       for _ in range(rng.randrange(1, 12)))
        language = rng.choice(["en", "de"])
        for span in _random_spans(text, rng, 6):
            before = len(ordinary._REFINED)
            got = ordinary._refined(text, span, language, DECLARED_ROLES)
            hits += len(ordinary._REFINED) == before
            assert got == ordinary.refine_span(text, span, language), (text, span, language)
    assert hits > 5_000, hits   # the memo did answer


def test_the_classes_around_a_span_tell_spaces_colons_digits_and_decimals_apart():
    chars = "".join(map(chr, range(0x3000)))
    for c in chars:
        classes = ordinary._OUTER[c]
        assert (classes == " ") == (c == " ") and (classes == ":") == (c == ":")
        assert (classes in "02") == c.isdigit()
        assert (classes == "0") == (re.fullmatch(r"\d", c) is not None), repr(c)


def test_refine_spans_drops_what_each_check_drops():
    """Weak lowercase context words, weak sentence openers, field labels and product tokens
    go; strong spans and pattern spans beside them stay."""
    text = "Brian Scott misidentified him. Tin was unchanged. Postal address: 5 Elm Road"
    spans = [EntitySpan(0, 11, "PER", 0.9), EntitySpan(12, 25, "MISC", 0.1),
             EntitySpan(31, 34, "ORG", 0.2), EntitySpan(50, 56, "LOC", 0.9),
             EntitySpan(66, 76, "ADDRESS", 1.0)]
    kept = ordinary.refine_spans(text, spans)
    assert [text[s.start:s.end] for s in kept] == ["Brian Scott", "5 Elm Road"]
    text = "Agent: Mozilla/5.0 (X11; Linux x86_64) from Anna"
    spans = [EntitySpan(31, 36, "MISC", 0.9), EntitySpan(44, 48, "PER", 0.9)]
    assert [text[s.start:s.end] for s in ordinary.refine_spans(text, spans)] == ["Anna"]


def test_sentence_starts_equal_the_single_pattern_findall():
    rng = random.Random(29)
    pieces = ["Anna", "berg", ".", "!", "?", " ", "\n", "\t", "\u00a0", "\u2028", "9", "_",
              "é", "É", "ß", "日本", "x", ". ", ".\n", "  ", "-", "'"]
    texts = ["", " ", "\n", "A", " a. B", "9. b", ".", "\n\nx", "x.y", "a .  B\n c"]
    texts += ["".join(rng.choice(pieces) for _ in range(rng.randrange(1, 30)))
              for _ in range(20_000)]
    for text in texts:
        assert ordinary.sentence_starts(text) == ordinary._SENTENCE_START_RE.findall(text), text


def test_no_span_labels_a_field_where_the_text_has_no_field_hint():
    rng = random.Random(19)
    hinted = unhinted = 0
    pieces = PIECES + ["Date", "CODE:", "id ,", "no", "NR.\t7", "Number 4", "addressed", ": x", "12"]
    for _ in range(3000):
        text = "".join(rng.choice(pieces) + rng.choice(["", " ", "\t"])
                       for _ in range(rng.randrange(1, 30)))
        labelled = [s for s in _random_spans(text, rng, 30) if ordinary._field_label(text, s)]
        if ordinary.may_label_fields(text):
            hinted += bool(labelled)
        else:
            assert not labelled, (text, labelled)
            unhinted += 1
    assert hinted > 100 and unhinted > 100, (hinted, unhinted)   # both kinds of text are met
