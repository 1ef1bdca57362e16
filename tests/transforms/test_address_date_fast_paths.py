"""The fast paths of the address, postcode, date and reference recognizers find what their plain searches find."""
from __future__ import annotations

import random
import re
import threading

import pytest

from larvatus.transforms.recognizers import addresses, base, dates, line_hints, postal, references

# Horizontal spaces, line breaks, and characters `re` and `str` treat unlike ASCII letters.
_ODD = ["\t", "\u00a0", "\u3000", "\n", "\r\n", "\u2028", "\x0b", "\x1c", "\x85", "²", "ß",
        "\u1e9e", "\u0130", "\u0131", "\u017f", "\u212a", "_", "-", "/", ".", ",", "#", "é"]


def _texts(pieces, seed, count, longest=14):
    rng = random.Random(seed)
    return ["".join(rng.choice(pieces) for _ in range(rng.randint(0, longest)))
            for _ in range(count)]


def _spans(matches):
    return [(m.span(), m.groupdict()) for m in matches]


# ----------------------------------------------------------------------------- lines

_LINE_PIECES = ["12", "1996", "19560812", "5/21", "3.4.21", " ", "\n", "x", "Date ", "DOB ",
                "expires ", "Valid until ", "zip ", "PLZ ", "P.O. Box ", "Postfach ", "plot ",
                "Sort code ", "sheet ", "NE ", "M20 6RT", "10115 ", "A/B", "dat", "born"] + _ODD
_HINT_CHAINS = [
    (base.DIGIT_RE, postal._UK_HINT_RE), (base.DIGIT_RE, postal._FIVE_DIGITS_RE),
    (base.DIGIT_RE, postal._FOUR_DIGITS_RE, postal._POSTCODE_CUE_HINT_RE),
    (base.DIGIT_RE, postal._PO_BOX_HINT_RE), (base.DIGIT_RE, dates._FULL_YEAR_HINT_RE),
    (base.DIGIT_RE, dates._SHORT_DATE_HINT_RE, dates._SHORT_DATE_CUE),
    (base.DIGIT_RE, dates._EIGHT_DIGITS_RE, dates._DATE_CUE),
    (base.DIGIT_RE, references._SORT_CODE_CUE), (base.DIGIT_RE, references._SLASH_HINT_RE),
    (base.DIGIT_RE, references._LAND_HINT_RE)]


def _lines_of_all(text, hints):
    """The plain answer: the lines each hint's whole-text search finds, intersected."""
    lines = base._search_lines(hints[0], text)
    for hint in hints[1:]:
        found = set(base._search_lines(hint, text))
        lines = [line for line in lines if line in found]
    return lines


@pytest.mark.parametrize("hints", _HINT_CHAINS, ids=lambda h: h[-1].pattern[:24])
def test_lines_holding_gives_the_lines_every_hint_finds(hints):
    found = 0
    for text in _texts(_LINE_PIECES, 4, 2500):
        lines = line_hints.lines_holding(text, *hints)
        assert lines == _lines_of_all(text, hints), ascii(text)
        assert line_hints.lines_holding(text, *hints) is lines   # found once per text
        found += len(lines)
    assert found > 30, found    # the pieces do make such lines


def test_lines_holding_is_right_in_every_thread_and_for_equal_texts():
    texts = _texts(_LINE_PIECES, 6, 300)
    wrong = []

    def work(seed):
        rng = random.Random(seed)
        for _ in range(1500):
            text, hints = rng.choice(texts), rng.choice(_HINT_CHAINS)
            if rng.random() < 0.3:
                text = "".join(list(text))    # an equal text, another object
            if line_hints.lines_holding(text, *hints) != _lines_of_all(text, hints):
                wrong.append((hints, text))

    threads = [threading.Thread(target=work, args=(seed,)) for seed in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert not wrong


def test_stems_are_not_trusted_in_a_text_whose_lower_case_differs_from_re():
    """"ſ" is an "s" to `re` in any case, not to `str.lower`: such a text is searched."""
    text = "12 Po\u017ftfach 7\nSORT CODE 60-16-13"
    assert line_hints.lines_holding(text, base.DIGIT_RE, postal._PO_BOX_HINT_RE) == [(0, 13)]
    assert line_hints.lines_holding(text, base.DIGIT_RE, references._SORT_CODE_CUE) == [(14, 32)]


def test_line_hint_stems_are_the_ones_the_shared_hints_hold():
    for hint, stems in line_hints._STEMS.items():
        assert base._HINT_STEMS[hint] == stems


def test_finditer_from_a_superset_of_starts_is_finditer():
    pattern = re.compile(r"(?<![a-z])[a-z]+[0-9]*|[0-9]{2}")
    rng = random.Random(8)
    for text in _texts(["ab", "7", "123", " ", "Z", "q9"], 2, 2000):
        start = rng.randint(0, len(text))
        end = rng.randint(start, len(text))
        plain = list(pattern.finditer(text, start, end))
        starts = sorted({m.start() for m in plain} | {rng.randint(0, len(text)) for _ in range(3)})
        assert _spans(line_hints.finditer_from(pattern, text, start, end, starts)) \
            == _spans(plain), (text, start, end)


def test_finditer_at_a_superset_of_starts_is_finditer_on_those_lines():
    pattern = re.compile(r"(?<![a-z])[a-z]+[0-9]*|[0-9]{2}")
    rng = random.Random(9)
    for text in _texts(["ab", "7", "123", " ", "Z", "q9", "\n", "\n\n"], 3, 2000):
        starts = [0] + [m.end() for m in re.finditer("\n", text)]
        ends = [m.start() for m in re.finditer("\n", text)] + [len(text)]
        lines = [line for line in zip(starts, ends) if rng.random() < 0.6]
        plain = [m for start, end in lines for m in pattern.finditer(text, start, end)]
        starts = sorted({m.start() for m in plain} | {rng.randint(0, len(text)) for _ in range(4)})
        assert _spans(line_hints.finditer_at(pattern, text, lines, starts)) == _spans(plain), \
            (text, lines)


# ----------------------------------------------------------------------------- ADDRESS

_ADDRESS_PIECES = ["12", "431", "7b", "3/4", " ", "  ", "Flat ", "apt.", "Apt", "APARTMENT ",
                   "suite", "Ste.", "#", "fl.", "RM", "room ", "unit", "Main ", "High ", "St",
                   "street", "Rd.", "Zachary ", "Falls", "Lane", ", ", "Mellestraat ", "weg ",
                   "Hof", "STRASSE", "straße", "Stra\u1e9eE", "str.", "Allee", "dijk", "during ",
                   "ring", "van der ", "the ", "minutes "] + _ODD


_ENGLISH_PIECES = _ADDRESS_PIECES + [
    "12 Main St", "Flat 34, Deborah Island", "apt 5 High Street", "Suite\t12 Oak Rd.",
    "431 Zachary Falls Suite 621", "ROOM 7  Elm Ave", "unit 3b Mill Lane", "9/2 Park Road",
    "Ste.8 King St", "# 4 Rue", "sTuDiO 12 the way", "100 minutes walk", " 5 "]


def test_english_address_matches_are_its_plain_matches():
    found = 0
    for text in _texts(_ENGLISH_PIECES, 12, 4000, longest=10):
        lines = base.lines_with(base.DIGIT_RE, text)
        fast = _spans(line_hints.finditer_at(addresses._ADDRESS_EN_RE, text, lines,
                                             addresses._english_address_starts(text)))
        assert fast == _spans(addresses._ADDRESS_EN_RE.finditer(text)), ascii(text)
        found += len(fast)
    assert found > 300, found


def test_prefixed_addresses_are_tried_at_digit_runs_and_found_the_same():
    pieces = _ENGLISH_PIECES + ["75, chemin de Joseph", "12 rue Bouvet", "3 bis avenue Foch",
                                "8 Via Roma", "4 c/ Mayor", "12 Place Vendôme", "7ter RUE x"]
    found = 0
    for text in _texts(pieces, 17, 3000, longest=10):
        lines = base.lines_with(base.DIGIT_RE, text)
        fast = _spans(line_hints.finditer_at(addresses._ADDRESS_PREFIXED_RE, text, lines,
                                             line_hints.digit_run_starts(text)))
        assert fast == _spans(addresses._ADDRESS_PREFIXED_RE.finditer(text)), ascii(text)
        found += len(fast)
    assert found > 300, found


def test_compound_hint_ends_are_one_past_each_hint_match_start():
    found = 0
    for text in _texts(_ADDRESS_PIECES, 13, 4000, longest=18):
        ends = list(addresses._compound_hint_ends(text))
        assert ends == [m.start() + 1 for m in addresses._COMPOUND_HINT_RE.finditer(text)], \
            ascii(text)
        found += len(ends)
    assert found > 300, found


def test_street_ending_check_is_a_search_for_an_ending_at_that_end():
    endings = [e.replace("\\", "") for e in addresses._STREET_ENDINGS.split("|")]
    at_end = re.compile(rf"(?:{addresses._STREET_ENDINGS})\Z", re.IGNORECASE)
    pieces = endings + [e.upper() for e in endings] + [e.title()[1:] for e in endings] \
        + ["x", "s", "S", "e", " ", "\u212aamp", "\u017ftraat", "\u1e9e"] + _ODD
    found = 0
    rng = random.Random(14)
    for text in _texts(pieces, 15, 4000, longest=4):
        end = rng.randint(0, len(text))
        plain = at_end.search(text, max(0, end - 2 * addresses._LONGEST_STREET_ENDING), end)
        assert addresses._ends_in_street_ending(text, end) == (plain is not None), (text, end)
        found += plain is not None
    assert found > 200, found


_COMPOUND_PIECES = _ADDRESS_PIECES + [
    "Mellestraat 87", "Fedor-Putz-Stra\u00dfe 60/14", "Reinhild-van der Dussen-Allee 51",
    "Hauptstr. 5", "HOFWEG\t12a", "during 3", "K\u00f6nigsallee 1 - 3", "Damm  7b"]


def test_compound_addresses_are_the_compound_patterns_plain_matches():
    found = 0
    for text in _texts(_COMPOUND_PIECES, 16, 4000, longest=10):
        fast = _spans(addresses._compound_address_matches(text))
        assert fast == _spans(addresses._ADDRESS_COMPOUND_RE.finditer(text)), ascii(text)
        found += len(fast)
    assert found > 200, found


# ----------------------------------------------------------------------------- DATE

_DATE_PIECES = ["12", "1", "31", "1956", "2021", "19560812", "08121956", "5/21", "21.5.21",
                "12/08/1956", "1956-08-12", "T09:15:30Z", "12/8/56", "12.08.56", "05/2021",
                " ", "  ", ", ", "-", "/", ".", "th",
                "st ", " of ", "August", "aug", "Aug.", "SEPTEMBER", "Sept", "May", "mar",
                "März", "août", "1er", "mars", " de ", "mei", "Dec", "December", "x", "born ",
                "DOB ", "expires ", "date: ", "valid until ", "12 août", "1er mars 1956",
                "12. März", "3 de marzo de 1956", "8 mei ", "12 August 1956", "Aug 12, 1956",
                "August 1956", "1 March", "March 1", "11th of Sept.", "May-2021"] + _ODD


@pytest.mark.parametrize("pattern", sorted(dates._DIGIT_FIRST | dates._MONTH_FIRST,
                                           key=lambda p: p.pattern),
                         ids=lambda p: p.pattern[:40])
def test_dates_are_tried_only_where_they_can_start_and_found_the_same(pattern):
    found = 0
    for text in _texts(_DATE_PIECES, 31, 2500, longest=12):
        for lines in (base.lines_with(base.DIGIT_RE, text),
                      base.lines_with(dates._FULL_YEAR_HINT_RE, text)):
            fast = _spans(dates._matches(pattern, text, lines))
            assert fast == _spans(base.finditer_on_lines(pattern, None, text, lines)), \
                ascii(text)
            found += len(fast)
    assert found > 30, found


def test_digit_run_starts_are_where_every_run_of_digits_starts():
    for text in _texts(_DATE_PIECES + ["\u0663", "\uff11"], 32, 2000):
        assert line_hints.digit_run_starts(text) == [
            m.start() for m in re.finditer("[0-9]+", text)], ascii(text)


def test_memoized_findings_belong_to_their_own_text_in_every_thread():
    texts = _texts(_DATE_PIECES, 33, 200)
    wrong = []

    def work(seed):
        rng = random.Random(seed)
        for _ in range(3000):
            text = rng.choice(texts)
            if rng.random() < 0.3:
                text = "".join(list(text))
            runs = [m.start() for m in re.finditer("[0-9]+", text)]
            if line_hints.digit_run_starts(text) != runs \
                    or line_hints.memoized(text, dates._month_starts) != dates._month_starts(text):
                wrong.append(text)

    threads = [threading.Thread(target=work, args=(seed,)) for seed in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert not wrong


def test_short_date_cue_stems_hold_every_cue_word():
    words = ["Date", "dated", "DOB", "d.o.b", "Born", "birth", "Birthday", "geboren", "GEB.",
             "Geburtsdatum", "datum", "né", "NÉE", "naissance", "Fecha", "nacimiento", "nascita",
             "geboortedatum", "expire", "EXPIRES", "expiry", "Expiration", "exp", "Exp.",
             "valid until", "VALID THRU", "valid through", "Valid to", "good thru", "Gültig bis",
             "gultig bis", "Ablaufdatum", "issued", "Ausgestellt"]
    stems = line_hints._STEMS[dates._SHORT_DATE_CUE]
    for word in words:
        assert dates._SHORT_DATE_CUE.fullmatch(word), word
        assert any(stem in word.lower() for stem in stems), word
    found = 0
    for text in _texts(words + [" ", "\n", "5/21", "x", "\u017f", "\u0130"], 41, 2000, 8):
        lines = base._search_lines(dates._SHORT_DATE_CUE, text)
        assert line_hints.lines_holding(text, base.DIGIT_RE, dates._SHORT_DATE_CUE) \
            == [line for line in base._search_lines(base.DIGIT_RE, text) if line in lines]
        found += len(lines)
    assert found > 200, found
