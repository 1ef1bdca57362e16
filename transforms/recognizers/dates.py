"""Dates: numeric and written calendar dates that exist, with or without a year, in five languages."""
from __future__ import annotations

import datetime
import re
from typing import Iterable

from larvatus.transforms.recognizers.base import (
    DIGIT_RE, H, SCORE_VALIDATED, cue_pattern, finditer_on_lines, line_window, with_digit)
from larvatus.transforms.recognizers.line_hints import (
    digit_run_starts, finditer_at, lines_holding, memoized, skip_back, with_line_stems,
    word_starts_ending_at)
from larvatus.transforms.recognizers.registry import Kind, PatternSettings
from larvatus.transforms.records import EntitySpan

# ----------------------------------------------------------------------------- DATE

_MONTHS = {m.lower()[:3]: i for i, m in enumerate(
    ("January", "February", "March", "April", "May", "June", "July", "August", "September",
     "October", "November", "December"), start=1)}
_MONTH_NAMES = (r"Jan(?:uary)?|Feb(?:ruary)?|Mar(?:ch)?|Apr(?:il)?|May|June?|July?|"
                r"Aug(?:ust)?|Sep(?:t(?:ember)?)?|Oct(?:ober)?|Nov(?:ember)?|Dec(?:ember)?")
_MONTH = rf"(?P<month>(?i:{_MONTH_NAMES}))(?!\w)\.?"
_DAY = r"(?P<day>[0-9]{1,2})(?i:st|nd|rd|th)?(?!\w)"
_YEAR = r"(?P<year>[12][0-9]{3})(?!\w)"
_DATE_SEP = rf"(?:{H}+|{H}*[-/]{H}*)"
_MONTH_START = "(?=[ADFJMNOSadfjmnos])"
_DATE_WRITTEN_RES = (
    # 12 August 1956, 12th of Aug. 1956, 12-Aug-1956
    re.compile(rf"(?=[0-9])(?<!\w){_DAY}(?:{H}+of)?{_DATE_SEP}{_MONTH},?{_DATE_SEP}{_YEAR}"),
    # August 12, 1956; Aug. 12th 1956
    re.compile(rf"{_MONTH_START}(?<!\w){_MONTH}(?:{H}+){_DAY},?{H}+{_YEAR}"),
    # August 1956, May-2021 (the month capitalised: "may 2020" is not a date)
    re.compile(rf"{_MONTH_START}(?<!\w){_MONTH}(?:,?{H}+|[-/]){_YEAR}"),
)
# a day number right before "February 2020" ("30 February 2020" that failed as a whole)
_DAY_BEFORE_RE = re.compile(rf"(?<!\w)[0-9]{{1,2}}(?i:st|nd|rd|th)?(?:{H}+of)?{_DATE_SEP}\Z")
_DATE_NUMERIC_START = r"(?=[0-9])(?<!\w)(?<![0-9][./-])"
_DATE_NUMERIC_END = r"(?![./-][0-9])"
_DATE_DMY_RE = re.compile(  # 12/08/1956, 12.08.1956, 12-08-1956; 08/12/1956 (US)
    _DATE_NUMERIC_START + r"(?P<a>[0-9]{1,2})(?P<sep>[./-])(?P<b>[0-9]{1,2})(?P=sep)"
    r"(?P<year>[12][0-9]{3})(?!\w)" + _DATE_NUMERIC_END)
_ISO_TIME = (r"T(?:[01][0-9]|2[0-3]):[0-5][0-9](?::[0-5][0-9](?:[.,][0-9]{1,9})?)?"
             r"(?:Z|[+-](?:[01][0-9]|2[0-3]):?[0-5][0-9])?")
_DATE_YMD_RE = re.compile(  # 1956-08-12, 1956/08/12, 2024-06-05T09:15:30.500-07:00 (time kept)
    _DATE_NUMERIC_START + r"(?P<year>[12][0-9]{3})(?P<sep>[./-])(?P<b>[0-9]{1,2})(?P=sep)"
    rf"(?P<a>[0-9]{{1,2}})(?:{_ISO_TIME}(?!\w)|(?=T[0-9])|(?!\w))" + _DATE_NUMERIC_END)
_DATE_MONTH_YEAR_RE = re.compile(  # 05/2021, 5.2021
    _DATE_NUMERIC_START + r"(?:0?[1-9]|1[0-2])[./](?:19|20)[0-9]{2}(?!\w)" + _DATE_NUMERIC_END)
_DATE_SHORT_RE = re.compile(  # 12/8/56, 12.08.56 (two-digit day and month with dots)
    _DATE_NUMERIC_START
    + r"(?:(?P<a>[0-9]{1,2})/(?P<b>[0-9]{1,2})/|(?P<a2>[0-9]{2})\.(?P<b2>[0-9]{2})\.)"
    r"(?P<year>[0-9]{2})(?!\w)" + _DATE_NUMERIC_END)

# Month names of French, German, Spanish, Italian and Dutch (and the French abbreviations),
# written after the day: "12 août 1956", "1er mars 1956", "12. März 1956",
# "12 de marzo de 1956", "3 maggio 1956", "8 mei 1956".
_FOREIGN_MONTHS = {
    1: "janvier janv gennaio genn januar jänner enero januari",
    2: "février fevrier févr fevr februar febrero febbraio febr februari",
    3: "mars märz maerz marzo maart",
    4: "avril avr april abril aprile",
    5: "mai mayo maggio mei",
    6: "juin juni junio giugno",
    7: "juillet juil juli julio luglio",
    8: "août aout august agosto augustus",
    9: "septembre sept september septiembre setiembre settembre",
    10: "octobre oct oktober octubre ottobre",
    11: "novembre nov november noviembre",
    12: "décembre decembre déc dec dezember diciembre dicembre december",
}
_FOREIGN_MONTH_NUMBERS = {name: number for number, names in _FOREIGN_MONTHS.items()
                          for name in names.split()}
_FOREIGN_MONTH = "(?P<fmonth>(?i:" + "|".join(
    sorted(_FOREIGN_MONTH_NUMBERS, key=len, reverse=True)) + r"))(?!\w)\.?"
# Without a year: "mars" is no month ("the 2 mars rovers"), and the names English shares
# are months only capitalised, as English ones ("12 august" is not a date).
_AMBIGUOUS_WITHOUT_YEAR = frozenset({"mars"})
_ENGLISH_TOO = frozenset("april august september sept oct november nov december dec".split())
_FOREIGN_DATE_RE = re.compile(
    rf"(?=[0-9])(?<!\w)(?P<day>[0-9]{{1,2}})(?:er|º|°|\.)?(?:{H}+de)?{H}+{_FOREIGN_MONTH}"
    rf"(?:,?(?:{H}+de)?{H}+{_YEAR})?")
# Day and month without a year ("1 March", "11th of September", "March 1", "Sept. 11th"):
# the month capitalised, the day one that month has.
_DATE_NO_YEAR_RES = (
    re.compile(rf"(?=[0-9])(?<!\w){_DAY}(?:{H}+of)?{_DATE_SEP}{_MONTH}"),
    re.compile(rf"{_MONTH_START}(?<!\w){_MONTH}{H}+{_DAY}"),
)
# Compact dates (19560812, and 12081956 or 08121956 day or month first) after a date cue.
_COMPACT_DATE_RE = re.compile(
    r"(?=[0-9])(?<![\w+.,/-])(?:(?P<ymd>(?:19|20)[0-9]{6})|(?P<dmy>[0-9]{4}(?:19|20)[0-9]{2}))"
    r"(?!\w)(?![.,/-][0-9])")
_DATE_CUE_WORDS = (
    r"date|dated|dob|d\.o\.b|born|birth|birthday|geboren|geb\.|geburtsdatum|datum|né|née|"
    r"naissance|fecha|nacimiento|data|nascita|geboortedatum")
_DATE_CUE = with_line_stems(cue_pattern(_DATE_CUE_WORDS),
                       "dat|dob|d.o.b|born|birth|geb|né|naissance|fecha|nacimiento|nascita")
_DATE_CUE_BEFORE = 32
# Short dates that fractions, scores and versions also look like ("5/21", "21.5.21"), after
# a date or validity cue: month and two-digit year, or day, month and two-digit year.
# "data" (Italian, Polish) is left out: "the data show 1/20 of ..." is English.
_SHORT_DATE_CUE = with_line_stems(cue_pattern(
    _DATE_CUE_WORDS.replace("|data|", "|")
    + r"|expires?|expiry|expiration|exp\.?|valid (?:until|thru|through|to)|good thru|"
      r"g[üu]ltig bis|ablaufdatum|issued|ausgestellt"),
    "dat|dob|d.o.b|born|birth|geb|né|naissance|fecha|nacimiento|nascita|exp|valid|good|ltig|"
    "ablauf|issued|ausgestellt")
_CUED_SHORT_DATE_RE = re.compile(
    _DATE_NUMERIC_START + r"(?P<a>[0-9]{1,2})(?P<sep>[./])(?P<b>[0-9]{1,2})"
    r"(?:(?P=sep)(?P<year>[0-9]{2}))?(?!\w)" + _DATE_NUMERIC_END)
# A year of birth or death, after its cue ("born in 1929", "born in Vienna in 1929",
# "died 1984", "year of birth: 1956"): the year alone is the span.
_LIFE_YEAR_RE = re.compile(
    rf"(?=[BDGNYbdgny])(?<!\w)(?i:born|died|year{H}+of{H}+(?:birth|death)|geboren|"
    rf"gestorben|née?|nacid[oa]|nat[oa])(?!\w)"
    rf"(?:{H}+[^\W\d_][\w'’-]*){{0,4}}?"
    rf"(?:{H}*:|{H}+(?i:in|en|im|on|nel|el|in{H}+the{H}+year))?{H}*"
    rf"(?P<year>1[89][0-9]{{2}}|20[0-9]{{2}})(?!\w)(?![.,/-][0-9])")


# Hints for `finditer_on_lines`: every written, day-month-year and year-month-day date
# holds a four-digit year, every short one a digit, "/" or "." and a digit, every compact
# one eight digits. Each is searched on the lines holding a digit (`lines_holding`), and a
# cue word only on the lines holding what its date needs.
_FULL_YEAR_HINT_RE = with_digit(re.compile(r"[12][0-9]{3}"))
_SHORT_DATE_HINT_RE = with_digit(re.compile(r"[0-9][./][0-9]"))
_EIGHT_DIGITS_RE = with_digit(re.compile(r"[0-9][0-9]{7}"))   # not `[0-9]{8}`: see `postal`


def _full_year_lines(text: str) -> list[tuple[int, int]]:
    return lines_holding(text, DIGIT_RE, _FULL_YEAR_HINT_RE)


# Where a date can start: a date opening with a number (`_DIGIT_FIRST`) at a run of digits,
# one opening with an English month (`_MONTH_FIRST`) at a month name ending where the
# separators (space, ",", "-", "/") before a run of digits begin.
_DIGIT_FIRST = frozenset((
    _DATE_WRITTEN_RES[0], _DATE_DMY_RE, _DATE_YMD_RE, _DATE_MONTH_YEAR_RE, _DATE_SHORT_RE,
    _FOREIGN_DATE_RE, _DATE_NO_YEAR_RES[0], _COMPACT_DATE_RE, _CUED_SHORT_DATE_RE))
_MONTH_FIRST = frozenset((_DATE_WRITTEN_RES[1], _DATE_WRITTEN_RES[2], _DATE_NO_YEAR_RES[1]))
_MONTH_AT_END_RE = re.compile(rf"{_MONTH_START}(?<!\w)(?i:{_MONTH_NAMES})(?!\w)\.?\Z")
_LONGEST_MONTH = len("September.")
_DATE_SEP_CHAR_RE = re.compile(rf"[,/-]|{H}")


def _matches(pattern: re.Pattern, text: str, lines: list[tuple[int, int]]) -> Iterable[re.Match]:
    """`finditer_on_lines(pattern, _, text, lines)`, tried only where a match can start."""
    if pattern in _DIGIT_FIRST:
        return finditer_at(pattern, text, lines, digit_run_starts(text))
    assert pattern in _MONTH_FIRST, pattern.pattern
    return finditer_at(pattern, text, lines, memoized(text, _month_starts))


def _month_starts(text: str) -> list[int]:
    """Every position where a date opening with an English month can start, ascending."""
    return sorted({start for run in digit_run_starts(text)
                   for start in word_starts_ending_at(
                       text, skip_back(text, run, _DATE_SEP_CHAR_RE), _MONTH_AT_END_RE,
                       _LONGEST_MONTH)})


def _is_date(year: int, month: int, day: int) -> bool:
    try:
        datetime.date(year, month, day)
    except ValueError:
        return False
    return True


def recognize_dates(text: str, settings: PatternSettings) -> list[EntitySpan]:
    """Calendar dates that exist, numeric or with a month name, with or without a year.

    Numeric day-month-year dates are accepted when either reading (day first or month
    first) exists; two-digit years when the date exists in the 1900s or the 2000s. Month
    names are English, French, German, Spanish, Italian or Dutch; a day and month without
    a year ("1 March", "March 1", "12 août") is a date when the day exists in that month
    (the English month capitalised). Compact dates ("19560812") need a date cue ("date",
    "DOB", "born", "geboren", "né", ...) shortly before them. A bare year is kept, except
    a year of birth or death after its cue ("born in 1929"); times are not dates here.
    """
    spans = _dates_without_year(text) + _compact_dates(text) + _life_years(text) \
        + _cued_short_dates(text)
    for pattern in _DATE_WRITTEN_RES:
        for m in _matches(pattern, text, _full_year_lines(text)):
            month_name = m.group("month")
            if "day" not in m.groupdict() and (
                    not month_name[0].isupper()
                    or _DAY_BEFORE_RE.search(text, max(0, m.start() - 16), m.start())):
                continue
            day = int(m.group("day")) if "day" in m.groupdict() else 1
            if _is_date(int(m.group("year")), _MONTHS[month_name[:3].lower()], day):
                spans.append(EntitySpan(m.start(), m.end(), "DATE", SCORE_VALIDATED))
    for pattern in (_DATE_DMY_RE, _DATE_YMD_RE):
        for m in _matches(pattern, text, _full_year_lines(text)):
            year, a, b = int(m.group("year")), int(m.group("a")), int(m.group("b"))
            if _is_date(year, b, a) or (pattern is _DATE_DMY_RE and _is_date(year, a, b)):
                spans.append(EntitySpan(m.start(), m.end(), "DATE", SCORE_VALIDATED))
    spans += [EntitySpan(m.start(), m.end(), "DATE", SCORE_VALIDATED)
              for m in _matches(_DATE_MONTH_YEAR_RE, text, _full_year_lines(text))]
    for m in _matches(_DATE_SHORT_RE, text, lines_holding(text, DIGIT_RE, _SHORT_DATE_HINT_RE)):
        a, b = int(m.group("a") or m.group("a2")), int(m.group("b") or m.group("b2"))
        years = (1900 + int(m.group("year")), 2000 + int(m.group("year")))
        if any(_is_date(y, b, a) or _is_date(y, a, b) for y in years):
            spans.append(EntitySpan(m.start(), m.end(), "DATE", SCORE_VALIDATED))
    return spans


def _month_day_exists(month: int, day: int) -> bool:
    return _is_date(2000, month, day)    # a leap year: 29 February exists


def _dates_without_year(text: str) -> list[EntitySpan]:
    """Written dates whose year may be missing: foreign month names (with or without a
    year) and English day-month or month-day (a capitalised month)."""
    spans = []
    digit_lines = lines_holding(text, DIGIT_RE)
    for m in _matches(_FOREIGN_DATE_RE, text, digit_lines):
        name = m.group("fmonth").lower()
        month = _FOREIGN_MONTH_NUMBERS[name]
        day = int(m.group("day"))
        if m.group("year") is None:
            if name in _AMBIGUOUS_WITHOUT_YEAR or not _month_day_exists(month, day) or (
                    name in _ENGLISH_TOO and not m.group("fmonth")[0].isupper()):
                continue
        elif not _is_date(int(m.group("year")), month, day):
            continue
        spans.append(EntitySpan(m.start(), m.end(), "DATE", SCORE_VALIDATED))
    for pattern in _DATE_NO_YEAR_RES:
        for m in _matches(pattern, text, digit_lines):
            month_name = m.group("month")
            if month_name[0].isupper() and _month_day_exists(
                    _MONTHS[month_name[:3].lower()], int(m.group("day"))):
                spans.append(EntitySpan(m.start(), m.end(), "DATE", SCORE_VALIDATED))
    return spans


def _compact_dates(text: str) -> list[EntitySpan]:
    """Eight-digit dates (year first, or day or month first) after a date cue on their line."""
    spans = []
    for m in _matches(_COMPACT_DATE_RE, text,
                      lines_holding(text, DIGIT_RE, _EIGHT_DIGITS_RE, _DATE_CUE)):
        digits = m.group()
        if m.group("ymd"):
            valid = _is_date(int(digits[:4]), int(digits[4:6]), int(digits[6:]))
        else:
            year, a, b = int(digits[4:]), int(digits[:2]), int(digits[2:4])
            valid = _is_date(year, b, a) or _is_date(year, a, b)
        ws, _ = line_window(text, m.start(), m.end(), _DATE_CUE_BEFORE, 0)
        if valid and _DATE_CUE.search(text, ws, m.start()):
            spans.append(EntitySpan(m.start(), m.end(), "DATE", SCORE_VALIDATED))
    return spans


def _short_date_exists(m: re.Match) -> bool:
    """Month and two-digit year ("5/21", "05/21"), or day, month and two-digit year in
    either order ("21.5.21")."""
    a, b, year = int(m.group("a")), int(m.group("b")), m.group("year")
    if year is None:
        return 1 <= a <= 12 and len(m.group("b")) == 2
    years = (1900 + int(year), 2000 + int(year))
    return any(_is_date(y, b, a) or _is_date(y, a, b) for y in years)


def _cued_short_dates(text: str) -> list[EntitySpan]:
    """Month-year ("5/21") and short day-month-year ("21.5.21") dates after a date or
    validity cue ("born", "DOB", "expires", "valid until", "geboren", ...) on their line."""
    spans = []
    for m in _matches(_CUED_SHORT_DATE_RE, text,
                      lines_holding(text, DIGIT_RE, _SHORT_DATE_HINT_RE, _SHORT_DATE_CUE)):
        ws, _ = line_window(text, m.start(), m.end(), _DATE_CUE_BEFORE, 0)
        if _short_date_exists(m) and _SHORT_DATE_CUE.search(text, ws, m.start()):
            spans.append(EntitySpan(m.start(), m.end(), "DATE", SCORE_VALIDATED))
    return spans


def _life_years(text: str) -> list[EntitySpan]:
    """The year of a birth or death after its cue word ("born in 1929")."""
    return [EntitySpan(m.start("year"), m.end("year"), "DATE", SCORE_VALIDATED)
            for m in finditer_on_lines(_LIFE_YEAR_RE, _FULL_YEAR_HINT_RE, text,
                                       _full_year_lines(text))]



KINDS = (
    Kind("DATE", recognize_dates, 1,
         "calendar dates: 12/08/1956, 1956-08-12, 12.8.56, 12 August 1956, Aug 12th, 1956, "
         "1 March, 12 août 1956, 12. März 1956; 19560812 and years of birth after a cue",
         validation="the calendar (datetime.date)",
         context="compact dates: a date cue (date, DOB, born, ...); bare years: born, died"),
)
