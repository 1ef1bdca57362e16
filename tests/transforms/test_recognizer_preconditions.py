"""Recognizers skip texts whose longest number is too short for them, and miss nothing by it."""
from __future__ import annotations

import random
import re

import pytest

from larvatus.transforms.recognizers import PatternSettings, base, contact, finance, identifiers, vehicles

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
        fits = [ch for ch in _POOL if re.fullmatch(_class_pattern(items), ch)]
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


def _texts(pattern: re.Pattern, seed: int, count: int, context: bool = True) -> list[str]:
    """Random strings of `pattern`, each between random context (or after a line break)."""
    rng = random.Random(seed)
    parsed = sre_parse.parse(pattern.pattern, pattern.flags)
    texts = []
    for _ in range(count):
        before, after = ("".join(rng.choice(_POOL) for _ in range(rng.randint(0, 4)))
                         for _ in range(2))
        gap = " " if rng.random() < 0.7 else ""
        if not context:
            before, gap, after = "\n", "", ""
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


def _plain_longest_number(text: str) -> int:
    """The most digits in a run of digits joined by one to three separators, char by char."""
    separators = base.NUMBER_SEPARATORS.replace("\\", "")
    best, i = 0, 0
    while i < len(text):
        if not text[i].isdecimal():
            i += 1
            continue
        digits = 0
        while True:
            while i < len(text) and text[i].isdecimal():
                digits, i = digits + 1, i + 1
            gap = 0
            while gap < 3 and i + gap < len(text) and text[i + gap] in separators:
                gap += 1
            if not (gap and i + gap < len(text) and text[i + gap].isdecimal()):
                break
            i += gap
        best = max(best, digits)
    return best


def test_longest_number_is_the_plain_count_on_random_texts():
    rng = random.Random(3)
    pool = _POOL + "\n" * 3 + "11223344" + " " * 6
    for _ in range(20000):
        text = "".join(rng.choice(pool) for _ in range(rng.randint(0, 30)))
        assert base.longest_number(text) == _plain_longest_number(text), ascii(text)


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
    assert sum(map(len, full)) > 10     # the texts do hold spans (the many ID shapes dilute the rest)
    short = [text for text in texts if base.longest_number(text) < 12]
    assert len(short) > 50              # and texts that some recognizers skip


# ----------------------------------------------------------------------------- every kind

def _search_everything(monkeypatch):
    """Makes the recognizers search every line of every text: no hint, guard or skip."""
    plain = {"finditer_on_lines": lambda pattern, hint, text, lines=None: pattern.finditer(text),
             "lines_with": lambda hint, text: [(0, len(text))] if text else [],
             "longest_number": lambda text: 1000, "may_hold": lambda text, stems: True}
    for module in (contact, finance, identifiers):
        for name, function in plain.items():
            if hasattr(module, name):
                monkeypatch.setattr(module, name, function)


_KIND_FRAGMENTS = [
    "AB12 CDE", "AB12CDE", "MH 12 AB 1234", "MH-12-AB-1234", "M-AB 1234", "34 ABC 123", "plate ",
    "Kennzeichen ", "car ", "GB82 WEST 1234 5698 7654 32", "GB82WEST12345698765432",
    "DE89 3704 0044 0532 0130 00", "de89370400440532013000", "LV80 bANK 0000 4351 9500 1",
    "1BvBMSEYstWetqTFn5Au4m4GFg7xJaNVN2", "3J98t1WpEZ73CNmQviecrnyiWrnqRhWNLy",
    "bc1qar0srrr7xfkvy5l643lydnw9re59gtzzwf5mdq", "0x52908400098527886E0F7030069857D2E4169EE7",
    "0xde709f2102306220921060314715629080e2fb77", "wallet ", "00:1A:2B:3C:4D:5E",
    "00-1a-2b-3c-4d-5e", "001a.2b3c.4d5e", "192.168.1.1", "10.0.0.254", "2001:db8::1",
    "fe80::1ff:fe23:4567:890a", "version 1.2.3.4", "1.2.3.4.5", "@jsmith", "<jsmith> hi",
    "[12:03] ann: hi", "jsmith42: hi", "user=jsmith", "username: ann", "Invalid user bob from ",
    "Failed password for root from 1.2.3.4", "u\u017fer=x", "\u0130nvalid user x from ",
    "PASSWORD for x from ", "NICK=\u212aim", "jane@example.com", "http://example.com/x",
    "www.example.org", "example.com/jobs/12", "+44 20 7946 0958", "(212) 555-0143",
    "tel 2125550143", "case no. 2022/1873", "SSN 536-90-4399", "4111 1111 1111 1111",
    "account 12345678", "routing 021000021", "acct 123456789012", "\n", " ", "\r\n", "x", "12", "-",
    ".", ":", "2026", "3.5"]


def _kind_texts(seed: int, count: int) -> list[str]:
    """Texts of every kind's fragments and random strings of its patterns, side by side."""
    patterns = [vehicles._UK_PLATE_RE, vehicles._IN_PLATE_RE, vehicles._DE_PLATE_RE,
                vehicles._TR_PLATE_RE, finance._IBAN_RE, finance._BITCOIN_RE,
                finance._ETHEREUM_RE, contact._MAC_RE, contact._IPV4_RE, contact._IPV6_RE,
                contact._CHAT_STAMPED_RE, contact._LOGIN_RE, contact._SSHD_RE]
    pieces = [text for i, pattern in enumerate(patterns) for text in _texts(pattern, seed + i, 30)]
    pieces += 10 * _KIND_FRAGMENTS
    rng = random.Random(seed)
    return ["".join(rng.choice(pieces) for _ in range(rng.randint(1, 8))) for _ in range(count)]


_MINE = ["ID", "CODE", "VEHICLE", "PHONE", "EMAIL", "URL", "HANDLE", "IP", "MAC", "IBAN", "BANK",
         "CARD", "CRYPTO"]


def test_every_kind_finds_what_a_search_of_every_line_finds(monkeypatch):
    from larvatus.transforms.recognizers import kind

    settings = PatternSettings()
    texts = _kind_texts(23, 1500)
    fast = {label: [sorted(map(_fields, kind(label).find(text, settings))) for text in texts]
            for label in _MINE}
    _search_everything(monkeypatch)
    for label in _MINE:
        full = [sorted(map(_fields, kind(label).find(text, settings))) for text in texts]
        assert fast[label] == full, label
        assert sum(map(len, full)) > 5, (label, sum(map(len, full)))     # the texts hold some


@pytest.mark.parametrize("stems", [contact._LOGIN_STEMS, contact._SSHD_STEMS])
def test_guard_stems_match_in_re_only_what_lower_case_finds(stems):
    """`re` matches a stem's letter case-insensitively only with characters whose lower case
    is that letter, or with those that make `may_hold` search the text anyway."""
    everything = "".join(chr(c) for c in range(0x110000) if not 0xD800 <= c < 0xE000)
    for ch in {ch for stem in stems for ch in stem}:
        matched = set(re.findall(re.escape(ch), everything, re.IGNORECASE))
        assert ch == ch.lower()
        assert matched - set(base._NOT_LOWERED) <= {c for c in everything if c.lower() == ch}, ch


@pytest.mark.parametrize("pattern, hint", [
    (vehicles._UK_PLATE_RE, vehicles._PLATE_HINT_RE),
    (vehicles._IN_PLATE_RE, vehicles._PLATE_HINT_RE),
    (vehicles._DE_PLATE_RE, vehicles._PLATE_HINT_RE),
    (vehicles._TR_PLATE_RE, vehicles._PLATE_HINT_RE),
    (finance._IBAN_RE, finance._IBAN_HINT_RE),
    (finance._BITCOIN_RE, finance._BITCOIN_HINT_RE),
    (finance._ETHEREUM_RE, finance._ETHEREUM_HINT_RE),
    (contact._MAC_RE, contact._MAC_HINT_RE),
    (contact._IPV4_RE, contact._IPV4_HINT_RE),
    (contact._CHAT_STAMPED_RE, contact._CLOCK_RE),
], ids=lambda p: p.pattern[:24])
def test_random_matches_are_found_on_the_lines_of_their_hint(pattern, hint):
    rng = random.Random(29)
    pieces = _texts(pattern, 31, 300) + _texts(pattern, 31, 300, context=False) + _KIND_FRAGMENTS
    matches = 0
    for _ in range(1500):
        text = "".join(rng.choice(pieces) for _ in range(rng.randint(1, 5)))
        everywhere = [m.span() for m in pattern.finditer(text)]
        assert [m.span() for m in base.finditer_on_lines(pattern, hint, text)] == everywhere, text
        matches += len(everywhere)
    assert matches > 300, matches


@pytest.mark.parametrize("pattern, stems", [(contact._LOGIN_RE, contact._LOGIN_STEMS),
                                            (contact._SSHD_RE, contact._SSHD_STEMS)])
def test_every_random_match_holds_a_guard_stem(pattern, stems):
    matches = 0
    for text in _texts(pattern, 37, 3000) + _KIND_FRAGMENTS:
        for m in pattern.finditer(text):
            assert base.may_hold(m.group(), stems), m.group()
            matches += 1
    assert matches > 500, matches


_CODE_FRAGMENTS = [
    "case ", "Case No. ", "file #", "ref:", "ref.", "invoice ", "order ", "patient MRN ",
    "acct.", "a/c ", "id ", "ID: ", "no.", "(no. ", "member ", "\u017ftudent ", "\u0130D ",
    "2026", "2030.", "1990s", "123", "1234", "12345", "1.25", "12.5%", "A1B2C3", "AB-12/3",
    "19/2021", "2022/1873", "B4", "x9", "\u017f1\u212a2\u01313", "_", "\u00e9", "-", ".", "/",
    ":", " ", "  ", "\n", "\r\n", "\u2028", "12", "7", "2019-20", "10:30"]


def test_codes_found_on_the_lines_that_may_hold_one_are_those_of_a_full_search(monkeypatch):
    settings = PatternSettings()
    rng = random.Random(41)
    texts = ["".join(rng.choice(_CODE_FRAGMENTS) for _ in range(rng.randint(1, 9)))
             for _ in range(6000)]
    fast = [sorted(map(_fields, identifiers.recognize_codes(text, settings))) for text in texts]
    skipped = sum(len(base.lines_with(base.DIGIT_RE, text)) - len(identifiers._code_lines(text))
                  for text in texts)
    monkeypatch.setattr(identifiers, "_code_lines",
                        lambda text: base.lines_with(base.DIGIT_RE, text))   # every digit line
    full = [sorted(map(_fields, identifiers.recognize_codes(text, settings))) for text in texts]
    assert fast == full
    assert sum(map(len, full)) > 500
    assert skipped > 300     # lines with digits that cannot hold a code


# ----------------------------------------------------------------------------- digit hints

_DIGIT_HINTS = sorted(base._DIGIT_HINTS, key=lambda hint: hint.pattern)


def test_the_hints_searched_on_digit_lines_alone_are_registered():
    assert {identifiers._ID_HINT_RE, vehicles._PLATE_HINT_RE, finance._IBAN_HINT_RE,
            contact._IPV4_HINT_RE, contact._CLOCK_RE} <= base._DIGIT_HINTS
    assert base.DIGIT_RE not in base._DIGIT_HINTS and contact._MAC_HINT_RE not in base._DIGIT_HINTS


@pytest.mark.parametrize("hint", _DIGIT_HINTS, ids=lambda hint: hint.pattern[:24])
def test_every_match_of_a_digit_hint_holds_a_digit(hint):
    matches = 0
    for text in _texts(hint, 43, 2000):
        for m in hint.finditer(text):
            assert re.search("[0-9]", m.group()), (hint.pattern, m.group())
            matches += 1
    assert matches > 1000, matches


_FILLER = [3 * line for line in [
    "Shares in Siemens Energy rose sharply in Frankfurt trading on Monday. ",
    "ABCDEF GHIJKL MNOPQR STUVWX ", "a.b.c d-e-f x:y www. / O-O ", "İ ı ſ é \u00a0\u2013 "]]


@pytest.mark.parametrize("hint", _DIGIT_HINTS, ids=lambda hint: hint.pattern[:24])
def test_a_digit_hint_finds_the_lines_a_search_of_the_whole_text_finds(hint):
    rng = random.Random(47)
    pieces = _texts(hint, 53, 200) + _texts(hint, 59, 100, context=False) + _CODE_FRAGMENTS
    narrowed = found = 0
    for _ in range(1500):
        text = "".join(rng.choice(pieces) + rng.choice(["", " ", "\n", "\n" + rng.choice(_FILLER)])
                       for _ in range(rng.randint(1, 8)))
        digit_lines = base.lines_with(base.DIGIT_RE, text)
        narrowed += 2 * sum(end - start for start, end in digit_lines) <= len(text)
        lines = base.lines_with(hint, text)
        assert lines == base._search_lines(hint, text), (hint.pattern, text)
        found += len(lines)
    assert narrowed > 100 and found > 300, (narrowed, found)
