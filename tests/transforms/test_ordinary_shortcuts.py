"""The cheap rejections in front of the field-label and particle-join checks give what the plain regexes give."""
from __future__ import annotations

import random
import re

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
    if span.label not in ordinary.MODEL_TYPES or "\n" in text[span.start:span.end]:
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
    if last.label not in ordinary.MODEL_TYPES or span.label not in ordinary.MODEL_TYPES \
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
