"""Dates: numeric and written calendar dates that exist."""
from __future__ import annotations

import datetime
import re

from larvatus.transforms.recognizers.base import H, SCORE_VALIDATED, finditer_on_lines
from larvatus.transforms.recognizers.registry import Kind, PatternSettings
from larvatus.transforms.records import EntitySpan

# ----------------------------------------------------------------------------- DATE

_MONTHS = {m.lower()[:3]: i for i, m in enumerate(
    ("January", "February", "March", "April", "May", "June", "July", "August", "September",
     "October", "November", "December"), start=1)}
_MONTH = (r"(?P<month>(?i:Jan(?:uary)?|Feb(?:ruary)?|Mar(?:ch)?|Apr(?:il)?|May|June?|July?|"
          r"Aug(?:ust)?|Sep(?:t(?:ember)?)?|Oct(?:ober)?|Nov(?:ember)?|Dec(?:ember)?))(?!\w)\.?")
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


# Hints for `finditer_on_lines`: every written, day-month-year and year-month-day date
# holds a four-digit year, every short one a digit, "/" or "." and a digit.
_FULL_YEAR_HINT_RE = re.compile(r"[12][0-9]{3}")
_SHORT_DATE_HINT_RE = re.compile(r"[0-9][./][0-9]")


def _is_date(year: int, month: int, day: int) -> bool:
    try:
        datetime.date(year, month, day)
    except ValueError:
        return False
    return True


def recognize_dates(text: str, settings: PatternSettings) -> list[EntitySpan]:
    """Calendar dates that exist, numeric or with an English month name.

    Numeric day-month-year dates are accepted when either reading (day first or month
    first) exists; two-digit years when the date exists in the 1900s or the 2000s.
    Bare years, times and day-month without a year are not dates here.
    """
    spans = []
    for pattern in _DATE_WRITTEN_RES:
        for m in finditer_on_lines(pattern, _FULL_YEAR_HINT_RE, text):
            month_name = m.group("month")
            if "day" not in m.groupdict() and (
                    not month_name[0].isupper()
                    or _DAY_BEFORE_RE.search(text, max(0, m.start() - 16), m.start())):
                continue
            day = int(m.group("day")) if "day" in m.groupdict() else 1
            if _is_date(int(m.group("year")), _MONTHS[month_name[:3].lower()], day):
                spans.append(EntitySpan(m.start(), m.end(), "DATE", SCORE_VALIDATED))
    for pattern in (_DATE_DMY_RE, _DATE_YMD_RE):
        for m in finditer_on_lines(pattern, _FULL_YEAR_HINT_RE, text):
            year, a, b = int(m.group("year")), int(m.group("a")), int(m.group("b"))
            if _is_date(year, b, a) or (pattern is _DATE_DMY_RE and _is_date(year, a, b)):
                spans.append(EntitySpan(m.start(), m.end(), "DATE", SCORE_VALIDATED))
    spans += [EntitySpan(m.start(), m.end(), "DATE", SCORE_VALIDATED)
              for m in finditer_on_lines(_DATE_MONTH_YEAR_RE, _FULL_YEAR_HINT_RE, text)]
    for m in finditer_on_lines(_DATE_SHORT_RE, _SHORT_DATE_HINT_RE, text):
        a, b = int(m.group("a") or m.group("a2")), int(m.group("b") or m.group("b2"))
        years = (1900 + int(m.group("year")), 2000 + int(m.group("year")))
        if any(_is_date(y, b, a) or _is_date(y, a, b) for y in years):
            spans.append(EntitySpan(m.start(), m.end(), "DATE", SCORE_VALIDATED))
    return spans



KINDS = (
    Kind("DATE", recognize_dates, 1,
         "calendar dates: 12/08/1956, 1956-08-12, 12.8.56, 12 August 1956, Aug 12th, 1956",
         validation="the calendar (datetime.date)"),
)
