"""Recognizers skip texts whose longest number is too short for them, and miss nothing by it."""
from __future__ import annotations

import random
import re

import pytest

from larvatus.transforms.recognizers import PatternSettings, base, contact, finance, identifiers

try:
    from re import _parser as sre_parse
except ImportError:   # Python < 3.11
    import sre_parse

_POOL = "0123456789 .-/+()ABCDEFGHJKLMNPRSTUVWXYZabcz_é:\u00a0\u2013\u0661\u0662"


def _sample(parsed, rng: random.Random, groups: dict) -> str:
    """A random string of the parsed pattern (lookarounds and anchors left out: a caller checks
    what it generated with the real pattern)."""
    out = []
    for op, av in parsed:
        name = str(op)
        if name == "LITERAL":
            out.append(chr(av))
        elif name == "NOT_LITERAL":
            out.append(rng.choice([ch for ch in _POOL if ord(ch) != av]))
        elif name == "ANY":
            out.append(rng.choice(_POOL))
        elif name == "IN":
            out.append(_sample_class(av, rng))
        elif name in ("MAX_REPEAT", "MIN_REPEAT", "POSSESSIVE_REPEAT"):
            low, high, item = av
            count = rng.randint(low, min(high, low + 4) if high != sre_parse.MAXREPEAT else low + 4)
            out.extend(_sample(item, rng, groups) for _ in range(count))
        elif name == "SUBPATTERN":
            group, _, _, item = av
            piece = _sample(item, rng, groups)
            if av[1] & re.IGNORECASE and rng.random() < 0.5:
                piece = piece.lower()
            if group:
                groups[group] = piece
            out.append(piece)
        elif name == "BRANCH":
            out.append(_sample(rng.choice(av[1]), rng, groups))
        elif name == "GROUPREF":
            out.append(groups.get(av, ""))
    return "".join(out)


def _sample_class(items, rng: random.Random) -> str:
    """A character in (or, negated, out of) the class: from its ranges, or from the pool."""
    if items and str(items[0][0]) == "NEGATE":
        fits = [ch for ch in _POOL if not re.fullmatch(_class_pattern(items), ch)]
        return rng.choice(fits) if fits else "~"
    choices = []
    for op, av in items:
        if str(op) == "LITERAL":
            choices.append(chr(av))
        elif str(op) == "RANGE":
            choices.append(chr(rng.randint(av[0], av[1])))
        else:
            choices += [ch for ch in _POOL if re.fullmatch(_class_pattern([(op, av)]), ch)]
    return rng.choice(choices) if choices else "~"


def _class_pattern(items) -> str:
    """A pattern of one class item list, rebuilt well enough to test pool characters."""
    parts = {"CATEGORY_DIGIT": r"\d", "CATEGORY_NOT_DIGIT": r"\D", "CATEGORY_WORD": r"\w",
             "CATEGORY_NOT_WORD": r"\W", "CATEGORY_SPACE": r"\s", "CATEGORY_NOT_SPACE": r"\S"}
    body = ""
    for op, av in items:
        if str(op) == "NEGATE":
            body += "^"
        elif str(op) == "LITERAL":
            body += re.escape(chr(av))
        elif str(op) == "RANGE":
            body += re.escape(chr(av[0])) + "-" + re.escape(chr(av[1]))
        elif str(op) == "CATEGORY":
            body += parts.get(str(av), "")
    return f"[{body}]"


def _texts(pattern: re.Pattern, seed: int, count: int) -> list[str]:
    """Random strings of `pattern`, each between random context."""
    rng = random.Random(seed)
    parsed = sre_parse.parse(pattern.pattern, pattern.flags)
    texts = []
    for _ in range(count):
        before, after = ("".join(rng.choice(_POOL) for _ in range(rng.randint(0, 4)))
                         for _ in range(2))
        gap = " " if rng.random() < 0.7 else ""
        texts.append(before + gap + _sample(parsed, rng, {}) + gap + after)
    return texts


# ----------------------------------------------------------------------------- longest_number

@pytest.mark.parametrize("text, digits", [
    ("", 0), ("no digits", 0), ("2.1 percent in 2026", 4), ("call 943 476 5919 now", 10),
    ("+44 (0)20 7946 0958", 13), ("4111 - 1111", 8), ("12  -  34", 2), ("1,234,567", 3),
    ("12/34/5678", 8), ("\u0661\u0662\u0663 4", 4), ("a1b2c3", 1), ("12\n34", 2),
    ("1996-08-22", 8), ("0-1.2/3+4(5)6 7\u00a08\u20139", 10)])
def test_longest_number_counts_the_digits_of_the_longest_number(text, digits):
    assert base.longest_number(text) == digits


def test_longest_number_of_a_part_of_a_text_is_never_longer():
    rng = random.Random(5)
    for _ in range(3000):
        text = "".join(rng.choice(_POOL + "\n") for _ in range(rng.randint(0, 40)))
        start = rng.randint(0, len(text))
        end = rng.randint(start, len(text))
        longest = base.longest_number(text)
        assert base.longest_number(text[start:end]) <= longest, ascii(text)
        assert base.longest_number(text) == longest     # the memo is the text's own


# ----------------------------------------------------------------------------- identifiers

_SKIPPED = [kind for kind in identifiers.ID_SCHEMES if kind.min_digits]


@pytest.mark.parametrize("kind", _SKIPPED, ids=lambda kind: kind.name)
def test_every_identifier_candidate_holds_a_number_of_its_fewest_digits(kind):
    matches = 0
    for text in _texts(kind.shape, 3, 3000):
        for m in kind.shape.finditer(text):
            assert base.longest_number(m.group()) >= kind.min_digits, (kind.name, m.group())
            matches += 1
    assert matches > 15, matches     # the strings do make candidates


def _unskipped(monkeypatch, *modules):
    """Makes every text's longest number look long enough for every recognizer."""
    for module in modules:
        monkeypatch.setattr(module, "longest_number", lambda text: 1000)


def _mixed_texts(seed: int, count: int) -> list[str]:
    """Texts of identifier, card, phone and account shapes, spaced out or joined up."""
    shapes = [kind.shape for kind in identifiers.ID_SCHEMES] + [
        contact._PHONE_RUN_RE, finance._CARD_RE, finance._ACCOUNT_RE]
    pieces = [text for i, shape in enumerate(shapes) for text in _texts(shape, seed + i, 40)]
    pieces += 40 * ["4111 1111 1111 1111", "5018 0000 0009", "4222222222222", "5555555555554444",
                    "3782 822463 10005", "4012-8888-8888-1881",
                    "+44 20 7946 0958", "(212) 555-0143", "account 12345678", "routing 021000021",
                    "SSN 536-90-4399", "NHS 943 476 5919", "tel ", "\n", " "]
    rng = random.Random(seed)
    return ["".join(rng.choice(pieces) for _ in range(rng.randint(1, 6))) for _ in range(count)]


def _fields(span):
    return span.start, span.end, span.label, span.score


@pytest.mark.parametrize("find, modules", [
    (identifiers.recognize_ids, [identifiers]),
    (contact.recognize_phones, [contact]),
    (finance.recognize_cards, [finance]),
    (finance.recognize_bank_numbers, [finance]),
], ids=lambda value: getattr(value, "__name__", ""))
def test_recognizers_that_skip_short_numbers_find_what_a_full_search_finds(
        find, modules, monkeypatch):
    settings = PatternSettings()
    texts = _mixed_texts(11, 600)
    skipping = [sorted(map(_fields, find(text, settings))) for text in texts]
    _unskipped(monkeypatch, *modules)
    full = [sorted(map(_fields, find(text, settings))) for text in texts]
    assert skipping == full
    assert sum(map(len, full)) > 20     # the texts do hold spans
    short = [text for text in texts if base.longest_number(text) < 12]
    assert len(short) > 50              # and texts that some recognizers skip
