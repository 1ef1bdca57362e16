"""Pattern recognizers for structured personal data, and their merge with the model's spans."""
from __future__ import annotations

import bisect
import datetime
import ipaddress
import re
from dataclasses import dataclass, replace
from functools import lru_cache
from types import MappingProxyType
from typing import Callable, Iterable, Mapping, Optional, Sequence

import phonenumbers
from stdnum import iban as stdnum_iban
from stdnum import luhn
from stdnum.be import nn as be_nn
from stdnum.de import idnr as de_idnr
from stdnum.es import dni as es_dni
from stdnum.es import nie as es_nie
from stdnum.fr import nir as fr_nir
from stdnum.gb import nhs as gb_nhs
from stdnum.ie import pps as ie_pps
from stdnum.it import codicefiscale as it_codicefiscale
from stdnum.nl import bsn as nl_bsn
from stdnum.pl import pesel as pl_pesel
from stdnum.us import ssn as us_ssn

from larvatus.transforms.records import EntitySpan, SegmentedDocument

__all__ = [
    "DEFAULT_PHONE_REGIONS", "LINE_BREAKS", "PATTERN_LABELS", "RECOGNIZERS", "SCORE_CHECKSUM",
    "SCORE_FORMAT", "SCORE_VALIDATED", "PatternSettings", "Recognizer", "find_patterns",
    "merge_spans", "recognize",
]

PATTERN_LABELS = ("EMAIL", "PHONE", "CARD", "IBAN", "IP", "URL", "DATE", "ID", "HANDLE", "CODE",
                  "ADDRESS")

# English-speaking corpora first (US/CA share +1, so CA adds nothing to US), then the
# largest EU languages. National formats ("(212) 555-0143", "020 7946 0958") are only
# found for these regions; "+44 20 7946 0958" is found whatever the regions.
DEFAULT_PHONE_REGIONS = ("US", "GB", "IE", "IN", "AU", "DE", "FR", "ES", "IT", "NL")

# Scores: a check digit confirmed the span (Luhn, mod 97, national id keys) ...
SCORE_CHECKSUM = 1.0
# ... a library or the calendar confirmed it without a check digit (phone metadata,
# `ipaddress`, `datetime`, SSN area/group rules) ...
SCORE_VALIDATED = 0.95
# ... or only its shape and context did (EMAIL, URL, HANDLE, CODE, UK NINO).
SCORE_FORMAT = 0.9

# The characters `str.splitlines` breaks at; no span crosses one.
LINE_BREAKS = "\n\r\x0b\x0c\x1c\x1d\x1e\x85\u2028\u2029"
_LB = "\\n\\r\\x0b\\x0c\\x1c-\\x1e\\x85\\u2028\\u2029"
_LINE_BREAK_RE = re.compile(f"[{_LB}]")
_H = f"[^\\S{_LB}]"                     # horizontal whitespace
_LINE_START = f"(?<![^{_LB}])"          # at the text's start or right after a line break
# Patterns open with a lookahead on their first character so that `re` can skip ahead
# to the candidates instead of trying every position (ten times faster on long text).
_NUM_START = r"(?=[0-9])(?<![\w+])(?<![0-9][.,/-])"    # not inside a longer token or number
_NUM_END = r"(?!\w)(?![.,/-][0-9])"
_DIGIT_RUN_RE = re.compile(r"[0-9]+")


@dataclass(frozen=True)
class PatternSettings:
    """Which recognizers run, and how.

    Args:
      labels: the pattern labels to look for (a subset of `PATTERN_LABELS`).
      phone_regions: ISO 3166 region codes whose national number formats are accepted,
        in `phonenumbers`' metadata; empty finds only numbers written with a leading "+".

    Raises:
      ValueError: an unknown label or region. Regions are upper-cased and deduplicated.
    """

    labels: frozenset[str] = frozenset(PATTERN_LABELS)
    phone_regions: tuple[str, ...] = DEFAULT_PHONE_REGIONS

    def __post_init__(self):
        labels = frozenset(self.labels)
        unknown = sorted(labels - set(PATTERN_LABELS))
        if unknown:
            raise ValueError(f"unknown pattern labels {unknown}; choose from {PATTERN_LABELS}")
        regions = tuple(dict.fromkeys(r.upper() for r in self.phone_regions))
        unsupported = [r for r in regions if r not in phonenumbers.SUPPORTED_REGIONS]
        if unsupported:
            raise ValueError(f"phone regions {unsupported} are not regions phonenumbers knows")
        object.__setattr__(self, "labels", labels)
        object.__setattr__(self, "phone_regions", regions)


Recognizer = Callable[[str, PatternSettings], list[EntitySpan]]


def _keep_disjoint(spans: Iterable[EntitySpan],
                   key: Callable[[EntitySpan], tuple]) -> list[EntitySpan]:
    """Keeps spans in `key` order, skipping any that overlaps one already kept (n log n)."""
    starts: list[int] = []
    kept: list[EntitySpan] = []
    for span in sorted(spans, key=key):
        i = bisect.bisect_left(starts, span.start)
        if i < len(kept) and kept[i].intersects(span):
            continue
        if i > 0 and kept[i - 1].intersects(span):
            continue
        starts.insert(i, span.start)
        kept.insert(i, span)
    return kept


def _line_window(text: str, start: int, end: int, before: int, after: int) -> tuple[int, int]:
    """Widens [start, end) by up to `before`/`after` characters without crossing a line break."""
    head = _LINE_BREAK_RE.split(text[max(0, start - before):start])[-1]
    tail = _LINE_BREAK_RE.split(text[end:end + after])[0]
    return start - len(head), end + len(tail)


def lines_with(hint: re.Pattern, text: str) -> list[tuple[int, int]]:
    """[start, end) of each line ("\\n") holding a `hint` match, in order."""
    lines = []
    position = 0
    while (found := hint.search(text, position)) is not None:
        start = text.rfind("\n", 0, found.start()) + 1
        end = text.find("\n", found.end())
        end = len(text) if end < 0 else end
        lines.append((start, end))
        position = end
    return lines


def finditer_on_lines(pattern: re.Pattern, hint: re.Pattern, text: str,
                       lines: Optional[list[tuple[int, int]]] = None) -> Iterable[re.Match]:
    """`pattern.finditer(text)`, searched only on the lines that hold a `hint` match (`lines`,
    when the caller found them already).

    The same matches in the same order, for a pattern whose matches hold no "\\n" and lie
    on lines holding a hint match, and which cannot look ahead at a "\\n" (each search ends
    at its line's end); the hint holds no "\\n" either. A hint that opens with a literal
    or a character class (not a repeat) lets `re` scan for its first character, about ten
    times faster than a pattern opening with lookarounds, which is tried at every position.
    """
    for start, end in lines_with(hint, text) if lines is None else lines:
        yield from pattern.finditer(text, start, end)


_DIGIT_RE = re.compile("[0-9]")   # hint: patterns that need a digit


def _cue_pattern(words: str) -> re.Pattern:
    """Any of the `|`-separated cue words (each starting with a letter), whole, in any case."""
    initials = "".join(sorted({w[0].lower() + w[0].upper() for w in words.split("|")}))
    return re.compile(rf"(?=[{initials}])(?<![^\W_])(?:{words})(?![^\W_])", re.IGNORECASE)


# ----------------------------------------------------------------------------- EMAIL

_EMAIL_RE = re.compile(
    r"(?=[\w%+-])(?<![\w%+-])[\w%+-][\w.%+-]{0,63}@"
    r"(?:[^\W_](?:[\w-]{0,61}[^\W_])?\.)+[^\W\d_]{2,63}(?![\w-])")
_AT_RE = re.compile("@")   # hint: every address and mention holds one


def recognize_emails(text: str, settings: PatternSettings) -> list[EntitySpan]:
    """Addresses like `jane.doe+news@mail.example.co.uk` (an alphabetic top-level domain)."""
    return [EntitySpan(m.start(), m.end(), "EMAIL", SCORE_FORMAT)
            for m in finditer_on_lines(_EMAIL_RE, _AT_RE, text)]


# ----------------------------------------------------------------------------- PHONE

# Runs of digit groups joined the way phone numbers are written ("+44 (0)20 7946 0958",
# "(212) 555-0143", "06.12.34.56.78", "020 - 7946 0958"); only these, with one character
# of context each side for the matcher's letter-adjacency checks, go to the matcher.
# Double spaces and " -" end a run, so aligned tables and negative numbers fall apart.
_PHONE_DASHES = "\\-./\u2010-\u2015\u2212\uff0d"
_PHONE_SEP = (f"(?:[ \u00a0\u2007\u202f]|[{_PHONE_DASHES}]|[ ][{_PHONE_DASHES}][ ]|\\)[ \u00a0]?"
              f"|[ \u00a0]?\\()")
_PHONE_RUN_RE = re.compile(f"[+\uff0b]?\\(?\\d+(?:{_PHONE_SEP}\\d+)*\\)?")
_PHONE_DECIMAL_RE = re.compile(r"\D*\d+\.\d+\D*")     # 0.88213, (2.0477815)
_PHONE_ZIP_RE = re.compile(r"\d{5}-\d{4}")               # US ZIP+4, 02110-1301
# "06 12 34 56 78" comes with its leading 0; "60 22 50 86 58" is a row of numbers
_PHONE_PAIRS_RE = re.compile(r"[1-9]\d(?: \d\d){3,}")
_PHONE_CUE = _cue_pattern(
    r"tel|tele|telephone|phone|ph|mobile|mob|cell|cellphone|fax|call|text|sms|whatsapp|"
    r"contact|hotline|ring|reach|telefon|telefoon|tél|téléphone|portable|mobil|handy|"
    r"t(?=:)|m(?=:)|f(?=:)|p(?=:)")
_PHONE_CUE_BEFORE = 32
_PHONE_MIN_DIGITS = 7     # shorter numbers are years, amounts and extensions far more often
_PHONE_MAX_RUN = 200      # longer runs are numeric tables (or hostile input), not phone text


@lru_cache(maxsize=None)
def _region_min_digits(region: str) -> int:
    """The fewest digits a number of `region` can have, by phonenumbers' metadata."""
    metadata = phonenumbers.PhoneMetadata.metadata_for_region(region)
    lengths = [n for n in metadata.general_desc.possible_length if n > 0] if metadata else []
    return min(lengths, default=1)


@lru_cache(maxsize=4096)
def _phone_matches(window: str, region: Optional[str]) -> tuple[tuple[int, int], ...]:
    """Offsets of the numbers PhoneNumberMatcher finds in `window`.

    Region None reads only numbers written with "+": the "+" is evidence
    enough, so any valid number is taken (leniency VALID). For national formats the
    grouping must also be one the region uses (STRICT_GROUPING).
    """
    leniency = phonenumbers.Leniency.VALID if region is None else \
        phonenumbers.Leniency.STRICT_GROUPING
    matcher = phonenumbers.PhoneNumberMatcher(window, region, leniency=leniency)
    found = []
    for m in matcher:
        start, end = m.start, m.end
        if window[start] in "([" and window.count(")", start, end) == 0:
            start += 1          # "(+31 30 286 5859)": the matcher keeps the lone "("
        number = window[start:end]
        if _count_digits(number) >= _PHONE_MIN_DIGITS and not _PHONE_DECIMAL_RE.fullmatch(number):
            found.append((start, end))
    return tuple(found)


def _count_digits(text: str) -> int:
    return sum(ch.isdigit() for ch in text)


def _phone_run_matches(text: str, start: int, end: int,
                       regions: Sequence[str]) -> list[tuple[int, int]]:
    """The phone numbers in the run text[start:end], in text offsets."""
    run = text[start:end]
    if len(run) > _PHONE_MAX_RUN:
        return []
    international = run[0] in "+\uff0b"
    bare = run.strip("()")
    if bare.isdigit() and not bare.startswith("00"):
        # unformatted digits: serials, seeds, ids, timestamps, unless a cue says "phone"
        ws, _ = _line_window(text, start, end, _PHONE_CUE_BEFORE, 0)
        if not _PHONE_CUE.search(text, ws, start):
            return []
    digits = _count_digits(run)
    if (digits < _PHONE_MIN_DIGITS or _PHONE_DECIMAL_RE.fullmatch(run)
            or _PHONE_PAIRS_RE.fullmatch(bare) or _PHONE_ZIP_RE.fullmatch(bare)):
        return []
    ws, we = _line_window(text, start, end, 1, 1)
    window = text[ws:we]
    matches = list(_phone_matches(window, None)) if international else []
    left = digits - sum(_count_digits(window[s:e]) for s, e in matches)
    if left >= _PHONE_MIN_DIGITS:
        for region in regions:
            if left >= _region_min_digits(region):
                matches.extend(_phone_matches(window, region))
    covered = sum(_count_digits(window[s:e]) for s, e in
                  _keep_disjoint_offsets(matches))
    if covered < digits - covered:
        return []       # a few digits of a long numeric sequence (a table row), not phone text
    return [(ws + s, ws + e) for s, e in matches]


def _keep_disjoint_offsets(offsets: Iterable[tuple[int, int]]) -> list[tuple[int, int]]:
    spans = _keep_disjoint((EntitySpan(s, e, "", 0.0) for s, e in set(offsets)),
                           key=lambda s: (-len(s), s.start))
    return [(s.start, s.end) for s in spans]


def recognize_phones(text: str, settings: PatternSettings) -> list[EntitySpan]:
    """Numbers `phonenumbers.PhoneNumberMatcher` finds, once per region, merged.

    Numbers written with "+" are read once, whatever the regions, at leniency VALID:
    the digits form a valid number of the country (its numbering plan, not only its
    lengths, as POSSIBLE would: that takes "12.08.1956", "10.0.0.1" and "36110/97").
    National formats are read once per region that allows that many digits, at
    STRICT_GROUPING: valid, and grouped the way the region groups them (VALID alone
    also takes table rows such as "2.0  4.4   3.05   0.43", ISBNs and decimals).
    Overlapping matches are merged, the longest winning.

    For precision, a number has at least seven digits; unformatted digits
    ("2125550143", "07911123456": also serials, seeds, ids or timestamps) need a cue
    such as "tel", "phone", "call" or "M:" shortly before them on their line, unless they
    start with "+" or "00"; decimals ("0.88213") and US ZIP+4 codes ("02110-1301") are
    not numbers; and numbers that cover less than half the digits of their run are
    dropped (a table row).
    """
    found = [EntitySpan(s, e, "PHONE", SCORE_VALIDATED)
             for run in _PHONE_RUN_RE.finditer(text) if run.end() - run.start() >= _PHONE_MIN_DIGITS
             for s, e in _phone_run_matches(text, run.start(), run.end(), settings.phone_regions)]
    return _keep_disjoint(set(found), key=lambda s: (-len(s), s.start))


# ----------------------------------------------------------------------------- CARD

_CARD_RE = re.compile(
    _NUM_START + r"[0-9]{3,19}(?:([ -])[0-9]{1,19}(?:\1[0-9]{1,19}){0,8})?" + _NUM_END)
# Maestro numbers may have 12 digits; only these prefixes are taken at that length
_MAESTRO_12 = ("0604", "5018", "5020", "5038", "56", "57", "58", "6304", "6390", "6759", "6761",
               "6762", "6763")


def _card_in(text: str, groups: list[tuple[int, int]]) -> Iterable[tuple[int, int]]:
    """Yields the longest Luhn-valid card numbers made of whole, consecutive digit groups."""
    i = 0
    while i < len(groups):
        for j in range(len(groups), i, -1):
            parts = [text[s:e] for s, e in groups[i:j]]
            if j - i > 1 and not (all(3 <= len(p) <= 6 for p in parts[:-1])
                                  and 1 <= len(parts[-1]) <= 6):
                continue
            digits = "".join(parts)
            if _card_shaped(digits) and luhn.is_valid(digits):
                yield groups[i][0], groups[j - 1][1]
                i = j
                break
        else:
            i += 1


def _card_shaped(digits: str) -> bool:
    """Whether a card network issues numbers of this length and first digits."""
    if 13 <= len(digits) <= 19:
        return digits[0] in "23456" or digits.startswith("1800")     # 1800: JCB
    return len(digits) == 12 and digits.startswith(_MAESTRO_12)


def recognize_cards(text: str, settings: PatternSettings) -> list[EntitySpan]:
    """Payment cards: 13 to 19 Luhn-valid digits, grouped by one kind of separator (space or dash).

    Groups of 3 to 6 digits (the last may be shorter: "4445 3499 6189 9") or one unbroken
    run; the number starts as a card network's do (2 to 6: Mastercard, Amex/Diners/JCB,
    Visa, Mastercard/Maestro, Discover/UnionPay; 1800: JCB). Maestro's 12-digit numbers
    are taken too, with Maestro prefixes only.
    """
    spans = []
    for m in _CARD_RE.finditer(text):
        groups = [(g.start(), g.end()) for g in _DIGIT_RUN_RE.finditer(text, m.start(), m.end())]
        spans.extend(EntitySpan(s, e, "CARD", SCORE_CHECKSUM) for s, e in _card_in(text, groups))
    return spans


# ----------------------------------------------------------------------------- IBAN

_IBAN_RE = re.compile(
    r"(?=[A-Za-z])(?<!\w)[A-Z]{2}[0-9]{2}"
    r"(?:[A-Z0-9]{11,30}|(?: [A-Z0-9]{4}){2,7}(?: [A-Z0-9]{1,4})?)(?!\w)",
    re.IGNORECASE)


def recognize_ibans(text: str, settings: PatternSettings) -> list[EntitySpan]:
    """IBANs of any country, compact or in groups of four, valid for `stdnum.iban`.

    A grouped candidate that fails is retried without its trailing groups, in case a
    word of four letters or digits followed it.
    """
    spans = []
    for m in _IBAN_RE.finditer(text):
        parts = m.group().split(" ")
        for k in range(len(parts), 0, -1):
            candidate = " ".join(parts[:k])
            if len(candidate) < 15:
                break
            if stdnum_iban.is_valid(candidate):
                end = m.start() + len(candidate)
                spans.append(EntitySpan(m.start(), end, "IBAN", SCORE_CHECKSUM))
                break
    return spans


# ----------------------------------------------------------------------------- IP

# "==1.0.0.0", ">= 3.10.0.0", "§4.2.3.2", "version 1.2.3.4": versions and sections
_NOT_IP_BEFORE_RE = re.compile(rf"(?:[=<>~!]=|§|\b(?i:version|ver\.)){_H}?\Z")
_IPV4_RE = re.compile(r"(?=[0-9])(?<![\w.])[0-9]{1,3}(?:\.[0-9]{1,3}){3}(?!\w|\.[0-9])")
_IPV6_RE = re.compile(
    r"(?=[0-9A-Fa-f:])(?<![\w:.])(?=[0-9A-Fa-f]{0,4}:[0-9A-Fa-f]{0,4}:)[0-9A-Fa-f:]{2,39}"
    r"(?:(?<=:)[0-9]{1,3}(?:\.[0-9]{1,3}){3})?(?![\w:]|\.[0-9])")
_IPV4_HINT_RE = re.compile(r"[0-9]\.[0-9]")
_IPV6_HINT_RE = re.compile(r":[0-9A-Fa-f]{0,4}:")   # what the opening lookahead asks for


def recognize_ips(text: str, settings: PatternSettings) -> list[EntitySpan]:
    """IPv4 dotted quads and IPv6 addresses that Python's `ipaddress` accepts.

    Any valid dotted quad is an address ("1.2.3.4" too), but not one inside a longer
    token ("v1.2.3.4", "1.2.3.4.5") or after "version", "==", ">=" or "§". An IPv6
    candidate needs a decimal digit and a group of three or more hex digits or four
    colons, so C++ scopes ("Face::Add") and Python slices ("[1::2]") are not addresses
    (nor is "::1").
    """
    spans = []
    for m in finditer_on_lines(_IPV4_RE, _IPV4_HINT_RE, text):
        if _NOT_IP_BEFORE_RE.search(text, max(0, m.start() - 10), m.start()):
            continue
        try:
            ipaddress.IPv4Address(m.group())
        except ValueError:
            continue
        spans.append(EntitySpan(m.start(), m.end(), "IP", SCORE_VALIDATED))
    for m in finditer_on_lines(_IPV6_RE, _IPV6_HINT_RE, text):
        candidate = m.group()
        if candidate.endswith(":") and not candidate.endswith("::"):
            candidate = candidate[:-1]     # "fe80::1:" ending a clause
        groups = candidate.split(":")
        if not any(ch.isdigit() for ch in candidate) or (
                max(len(g) for g in groups) < 3 and len(groups) < 5):
            continue    # "Face::Add" is C++, "cuts[1::2]" a Python slice
        try:
            ipaddress.IPv6Address(candidate)
        except ValueError:
            continue
        spans.append(EntitySpan(m.start(), m.start() + len(candidate), "IP", SCORE_VALIDATED))
    return spans


# ----------------------------------------------------------------------------- URL

_URL_CHARS = r"[^\s<>\"'`{}|\\^\[\]]"
_URL_TLDS = (
    "com|org|net|edu|gov|mil|int|info|biz|io|co|me|app|dev|ai|eu|uk|ie|us|ca|au|nz|in|"
    "de|fr|es|it|nl|be|ch|at|se|no|dk|fi|pl|pt")
_URL_RE = re.compile(
    rf"(?=[^\W_])(?:(?<![\w@./-])(?:(?:https?|ftp)://{_URL_CHARS}|www\.[^\W_]){_URL_CHARS}*"
    rf"|(?<![\w@./:-])(?:[^\W_](?:[\w-]{{0,61}}[^\W_])?\.)+(?:{_URL_TLDS})"
    rf"(?::[0-9]{{1,5}})?/{_URL_CHARS}*)",
    re.IGNORECASE)
_URL_HINT_RE = re.compile(r"/|w[wW][wW]\.|W[wW][wW]\.")   # every URL holds "/" or "www."
_URL_CLOSERS = {")": "(", "]": "[", "}": "{", ">": "<"}


def _trim_url(url: str) -> str:
    """Drops trailing sentence punctuation, and closing brackets the URL did not open."""
    depth = {c: url.count(c) - url.count(o) for c, o in _URL_CLOSERS.items()}
    end = len(url)
    while end:
        c = url[end - 1]
        if c in ".,;:!?*'\"":
            end -= 1
        elif c in depth and depth[c] > 0:
            depth[c] -= 1
            end -= 1
        else:
            break
    return url[:end]


def recognize_urls(text: str, settings: PatternSettings) -> list[EntitySpan]:
    """URLs with a scheme (http, https, ftp), starting with "www.", or a domain and a path.

    The path form needs a common top-level domain ("example.com/jobs/12", not
    "config.py/x"); a bare domain without a path ("example.com") is not a URL here.
    """
    spans = []
    for m in finditer_on_lines(_URL_RE, _URL_HINT_RE, text):
        url = _trim_url(m.group())
        if url.endswith("//"):
            continue
        spans.append(EntitySpan(m.start(), m.start() + len(url), "URL", SCORE_FORMAT))
    return spans


# ----------------------------------------------------------------------------- DATE

_MONTHS = {m.lower()[:3]: i for i, m in enumerate(
    ("January", "February", "March", "April", "May", "June", "July", "August", "September",
     "October", "November", "December"), start=1)}
_MONTH = (r"(?P<month>(?i:Jan(?:uary)?|Feb(?:ruary)?|Mar(?:ch)?|Apr(?:il)?|May|June?|July?|"
          r"Aug(?:ust)?|Sep(?:t(?:ember)?)?|Oct(?:ober)?|Nov(?:ember)?|Dec(?:ember)?))(?!\w)\.?")
_DAY = r"(?P<day>[0-9]{1,2})(?i:st|nd|rd|th)?(?!\w)"
_YEAR = r"(?P<year>[12][0-9]{3})(?!\w)"
_DATE_SEP = rf"(?:{_H}+|{_H}*[-/]{_H}*)"
_MONTH_START = "(?=[ADFJMNOSadfjmnos])"
_DATE_WRITTEN_RES = (
    # 12 August 1956, 12th of Aug. 1956, 12-Aug-1956
    re.compile(rf"(?=[0-9])(?<!\w){_DAY}(?:{_H}+of)?{_DATE_SEP}{_MONTH},?{_DATE_SEP}{_YEAR}"),
    # August 12, 1956; Aug. 12th 1956
    re.compile(rf"{_MONTH_START}(?<!\w){_MONTH}(?:{_H}+){_DAY},?{_H}+{_YEAR}"),
    # August 1956 (the month capitalised: "may 2020" is not a date)
    re.compile(rf"{_MONTH_START}(?<!\w){_MONTH},?{_H}+{_YEAR}"),
)
# a day number right before "February 2020" ("30 February 2020" that failed as a whole)
_DAY_BEFORE_RE = re.compile(rf"(?<!\w)[0-9]{{1,2}}(?i:st|nd|rd|th)?(?:{_H}+of)?{_DATE_SEP}\Z")
_DATE_NUMERIC_START = r"(?=[0-9])(?<!\w)(?<![0-9][./-])"
_DATE_NUMERIC_END = r"(?![./-][0-9])"
_DATE_DMY_RE = re.compile(  # 12/08/1956, 12.08.1956, 12-08-1956; 08/12/1956 (US)
    _DATE_NUMERIC_START + r"(?P<a>[0-9]{1,2})(?P<sep>[./-])(?P<b>[0-9]{1,2})(?P=sep)"
    r"(?P<year>[12][0-9]{3})(?!\w)" + _DATE_NUMERIC_END)
_DATE_YMD_RE = re.compile(  # 1956-08-12, 1956/08/12, 1956-08-12T10:30
    _DATE_NUMERIC_START + r"(?P<year>[12][0-9]{3})(?P<sep>[./-])(?P<b>[0-9]{1,2})(?P=sep)"
    r"(?P<a>[0-9]{1,2})(?:(?=T[0-9])|(?!\w))" + _DATE_NUMERIC_END)
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
    for m in finditer_on_lines(_DATE_SHORT_RE, _SHORT_DATE_HINT_RE, text):
        a, b = int(m.group("a") or m.group("a2")), int(m.group("b") or m.group("b2"))
        years = (1900 + int(m.group("year")), 2000 + int(m.group("year")))
        if any(_is_date(y, b, a) or _is_date(y, a, b) for y in years):
            spans.append(EntitySpan(m.start(), m.end(), "DATE", SCORE_VALIDATED))
    return spans


# ----------------------------------------------------------------------------- ID

_CUE_BEFORE = 40   # characters before a candidate searched for its cue word (same line)
_CUE_AFTER = 24


@dataclass(frozen=True)
class _IdKind:
    """A national identifier: its candidate shape and validator (None: the shape is the check).

    With a `cue`, a candidate also needs that cue word nearby unless it fully matches
    `formatted`, the identifier's usual way of being written.
    """

    shape: re.Pattern
    is_valid: Optional[Callable[[str], bool]]
    score: float = SCORE_CHECKSUM
    cue: Optional[re.Pattern] = None
    formatted: Optional[re.Pattern] = None
    # Searched only on the lines holding `_ID_HINT_RE` (`finditer_on_lines`); False: everywhere.
    hinted: bool = True

    def candidates(self, text: str,
                   hint_lines: Optional[list[tuple[int, int]]] = None) -> Iterable[re.Match]:
        """The shape's matches; `hint_lines`: `_ID_HINT_RE`'s lines, when already found."""
        if not self.hinted:
            return self.shape.finditer(text)
        return finditer_on_lines(self.shape, _ID_HINT_RE, text, hint_lines)


# Every identifier below but the codice fiscale (whose digits may all be written as
# letters) holds two digits, at most one space, dot or dash, and two digits.
_ID_HINT_RE = re.compile(r"[0-9][0-9][ .-]?[0-9]{2}")   # opens with a class: `re` scans for it


def _digits_shape(body: str) -> re.Pattern:
    return re.compile(_NUM_START + body + _NUM_END)


def _valid_ssn(candidate: str) -> bool:
    return us_ssn.is_valid(candidate.replace(" ", ""))


def _valid_codice_fiscale(candidate: str) -> bool:
    return any(ch.isdigit() for ch in candidate) and it_codicefiscale.is_valid(candidate)


# UK National Insurance numbers have no check digit (python-stdnum has no module for them):
# HMRC's allocation rules on the two prefix letters and the A-D suffix are the check.
_NINO_PREFIX = r"(?!BG|GB|KN|NK|NT|TN|ZZ)[A-CEGHJ-PR-TW-Z][A-CEGHJ-NPR-TW-Z]"
_NIR_GROUPS = ("[1-478]", "[0-9]{2}", "[0-9]{2}", "(?:[0-9]{2}|2[AB])", "[0-9]{3}", "[0-9]{3}",
               "[0-9]{2}")

_ID_KINDS = (
    # UK NHS number, e.g. 943 476 5919
    _IdKind(_digits_shape(r"[0-9]{3}([ -]?)[0-9]{3}\1[0-9]{4}"), gb_nhs.is_valid,
            cue=_cue_pattern(r"NHS"), formatted=re.compile(r"[0-9]{3} [0-9]{3} [0-9]{4}")),
    # US social security number, e.g. 536-90-4399
    _IdKind(_digits_shape(r"[0-9]{3}([ -]?)[0-9]{2}\1[0-9]{4}"), _valid_ssn, score=SCORE_VALIDATED,
            cue=_cue_pattern(r"SSN|SS#|social[ -]security"),
            formatted=re.compile(r"[0-9]{3}-[0-9]{2}-[0-9]{4}")),
    # UK National Insurance number, e.g. AB 12 34 56 C
    _IdKind(re.compile(rf"(?=[A-Z])(?<!\w){_NINO_PREFIX}(?: ?[0-9]{{2}}){{3}} ?[A-D](?!\w)"), None,
            score=SCORE_FORMAT),
    # Spanish DNI and NIE, e.g. 12345678Z, X1234567L
    _IdKind(re.compile(r"(?=[0-9])(?<!\w)[0-9]{8}-?[A-Z](?!\w)"), es_dni.is_valid),
    _IdKind(re.compile(r"(?=[XYZ])(?<!\w)[XYZ]-?[0-9]{7}-?[A-Z](?!\w)"), es_nie.is_valid),
    # Dutch BSN, e.g. 123456782
    _IdKind(_digits_shape(r"(?:[0-9]{9}|[0-9]{4}\.[0-9]{2}\.[0-9]{3})"), nl_bsn.is_valid,
            cue=_cue_pattern(r"BSN|burgerservicenummer|sofi-?nummer")),
    # French NIR (social security number), e.g. 2 95 10 99 126 111 93
    _IdKind(_digits_shape(" ?".join(_NIR_GROUPS)), fr_nir.is_valid,
            cue=_cue_pattern(r"NIR|INSEE|s[ée]curit[ée] sociale|num[ée]ro de s[ée]cu|"
                             r"social security"),
            formatted=re.compile(" ".join(_NIR_GROUPS))),
    # Italian codice fiscale, e.g. RCCMNL83S18D969H
    _IdKind(re.compile(r"(?=[A-Z])(?<!\w)[A-Z]{6}[0-9LMNP-V]{2}[ABCDEHLMPRST][0-9LMNP-V]{2}[A-Z]"
                       r"[0-9LMNP-V]{3}[A-Z](?!\w)"), _valid_codice_fiscale, hinted=False),
    # Polish PESEL, e.g. 44051401359
    _IdKind(_digits_shape(r"[0-9]{11}"), pl_pesel.is_valid, cue=_cue_pattern(r"PESEL")),
    # German tax identification number, e.g. 36 574 261 809
    _IdKind(_digits_shape(r"[0-9]{2}( ?)[0-9]{3}\1[0-9]{3}\1[0-9]{3}"), de_idnr.is_valid,
            cue=_cue_pattern(r"steuer-?id|steuer-?identifikationsnummer|identifikationsnummer|"
                             r"IdNr|tax[ -]id(?:entification)?|TIN")),
    # Irish PPS number, e.g. 6433435F
    _IdKind(re.compile(r"(?=[0-9])(?<!\w)[0-9]{7}[A-W][A-IW]?(?!\w)"), ie_pps.is_valid,
            cue=_cue_pattern(r"PPSN?|personal public service")),
    # Belgian national number, e.g. 85.07.30-033.28
    _IdKind(_digits_shape(r"[0-9]{2}\.[0-9]{2}\.[0-9]{2}-[0-9]{3}\.[0-9]{2}"), be_nn.is_valid),
)


# "+1 503 837 8935" is a phone number, not an NHS number in its usual groups
_PHONE_PREFIX_RE = re.compile(r"(?:\+|\b00)[0-9]{1,3}[ .-]?(?:\(0\)[ ]?)?\Z")


def _has_cue(text: str, start: int, end: int, cue: re.Pattern) -> bool:
    """Whether the cue occurs shortly before or after [start, end) on the same line."""
    ws, we = _line_window(text, start, end, _CUE_BEFORE, _CUE_AFTER)
    return bool(cue.search(text, ws, start) or cue.search(text, end, we))


def recognize_ids(text: str, settings: PatternSettings) -> list[EntitySpan]:
    """National identifiers with a check digit or a strict format, validated by python-stdnum.

    UK NHS, US SSN, UK NINO, Spanish DNI and NIE, Dutch BSN, French NIR, Italian codice
    fiscale, Polish PESEL, German tax id, Irish PPS and Belgian national number. Digit
    strings that other numbers often resemble (BSN, PESEL, German tax id, PPS; NHS, SSN
    and NIR unless written in their usual groups) also need a cue word such as "NHS",
    "SSN" or "BSN" on the same line.
    """
    spans = set()
    hint_lines = lines_with(_ID_HINT_RE, text)   # once for every hinted kind
    for kind in _ID_KINDS:
        for m in kind.candidates(text, hint_lines):
            candidate = m.group()
            if kind.is_valid is not None and not kind.is_valid(candidate):
                continue
            has_cue = kind.cue is not None and _has_cue(text, m.start(), m.end(), kind.cue)
            formatted = kind.formatted is not None and kind.formatted.fullmatch(candidate) \
                and not _PHONE_PREFIX_RE.search(text, max(0, m.start() - 10), m.start())
            if kind.cue is not None and not (has_cue or formatted):
                continue
            spans.add(EntitySpan(m.start(), m.end(), "ID", kind.score))
    return list(spans)


# ----------------------------------------------------------------------------- HANDLE

_MENTION_RE = re.compile(
    r"(?=@)(?<![\w@./+`-])@[A-Za-z0-9_](?:[A-Za-z0-9_.-]{0,37}[A-Za-z0-9_])(?![\w@])")
_DECORATOR_RE = re.compile(r"[({]")   # @dataclass(frozen=True), @pytest.mark.slow(...), @Book{
_TIME_LIKE_RE = re.compile(r"[0-9][0-9:.]*(?:am|pm|h|hrs?)?", re.IGNORECASE)
_TIMESTAMP = (r"[\[(]?(?:[0-9]{4}-[0-9]{2}-[0-9]{2}[ T])?[0-9]{1,2}:[0-9]{2}(?::[0-9]{2})?"
              rf"(?:{_H}?[AaPp][Mm])?[\])]?")
_NICK = r"[A-Za-z_][\w|^`-]{0,30}"
_CHAT_ANGLE_RE = re.compile(  # <nick> hi, [12:03] <@nick> hi; not indented ("    <program>")
    rf"{_LINE_START}(?:{_TIMESTAMP}{_H}+)?<[@+%&~]?(?P<nick>{_NICK})>(?={_H})")
_CHAT_STAMPED_RE = re.compile(  # [12:03] nick: hi
    rf"{_LINE_START}{_H}*{_TIMESTAMP}{_H}+[@+]?(?P<nick>{_NICK}):(?={_H}|[{_LB}]|\Z)")
_CHAT_BARE_RE = re.compile(  # jsmith42: hi (not indented: "  input1: x" is YAML)
    rf"{_LINE_START}(?P<nick>[a-z_][a-z0-9_|^`-]{{1,30}}):(?={_H})")
_LOGIN_RE = re.compile(  # user=jsmith, username: jsmith, login_name="jsmith"
    r"(?=[LNSUlnsu])(?<![\w.-])(?P<key>(?i:user(?:[ _-]?(?:name|id))?|login(?:[ _-]?name)?|logon|"
    r"nick(?:name)?|screen[ _-]?name))"
    rf"(?:=|(?P<colon>:)){_H}*[\"']?(?P<value>\w(?:[\w.@+-]{{0,62}}\w)?)(?![\w@(\[])")
_SSHD_RE = re.compile(  # sshd: "Invalid user jsmith from", "Failed password for jsmith from"
    rf"(?=[IPip])(?<!\w)(?:(?:invalid|illegal){_H}+user"
    rf"|(?:password|publickey){_H}+for(?:{_H}+invalid{_H}+user)?)"
    rf"{_H}+(?P<value>\w(?:[\w.-]{{0,30}}\w)?){_H}+from(?!\w)", re.IGNORECASE)
# Hints (`finditer_on_lines`): what each chat and log pattern cannot do without.
_LESS_THAN_RE = re.compile("<")              # _CHAT_ANGLE_RE
_CLOCK_RE = re.compile("[0-9]:[0-9]")        # _CHAT_STAMPED_RE
_COLON_RE = re.compile(":")                  # _CHAT_BARE_RE
_KEY_VALUE_RE = re.compile("[=:]")           # _LOGIN_RE
_FROM_RE = re.compile("[fF][rR][oO][mM]")    # _SSHD_RE
_NUMBERED_KEY_RE = re.compile(  # "col1:", "new_col2:", "step3:" are keys, not people
    r"(?:[a-z]+_)*(?:arg|answer|block|case|chapter|class|col|column|db|example|feature|field|file|"
    r"group|host|id|input|item|key|label|layer|level|line|name|node|option|opt|output|param|part|"
    r"phase|q|question|row|section|server|stage|step|table|task|test|type|val|value|var|version|v|"
    r"x|y|z)_?[0-9]+")
# Decorators, annotations and doc-comment tags that code quoted in prose writes with "@"
_NOT_MENTIONS = frozenset(
    "abc abstractmethod addtogroup app author brief cached_property classmethod cond "
    "contextmanager dataclass dataclasses deprecated endcond file final functools given "
    "inheritdoc link mock overload override param patch property pytest return returns "
    "runtime_checkable see since staticmethod suppresswarnings throws todo typing version "
    "wraps".split())
_HTML_TAGS = frozenset(
    "a abbr b blockquote body br button code div em footer form h1 h2 h3 h4 h5 h6 head header hr "
    "html i img input label li link meta nav ol option p pre script section select small span "
    "strong style sub sup table tbody td textarea th thead title tr u ul".split())
_NOT_NICKS = frozenset(
    "a alert answer bcc cc client critical date debug edit email error fatal fax fixme from fw "
    "file filename fwd host http https info input kernel mailto main mobile name nb note notes "
    "notice output path phone program ps q question re reply result sent server status subject "
    "summary system tel to todo trace update url user username value version warn "
    "warning".split())
_TECH_TOKENS = frozenset(
    "amd64 arm64 base64 covid19 eth0 eth1 h264 h265 http2 http3 i386 ipv4 ipv6 md5 mp3 mp4 "
    "oauth2 py3 python3 sha1 sha256 sha512 utf8 utf16 utf32 wlan0 win32 win64 x509 x86".split())
_NOT_LOGINS = frozenset(
    "admin administrator anonymous any bool bytes dict empty failed false float guest int "
    "invalid list n na nil no none null object optional required root set str success true "
    "tuple unknown yes".split())


def _alone_on_line(text: str, start: int, end: int) -> bool:
    """Whether only whitespace surrounds [start, end) on its line (a decorator, not a mention)."""
    ws, we = _line_window(text, start, end, 200, 200)
    return not text[ws:start].strip() and not text[end:we].strip()


def _plausible_nick(nick: str) -> bool:
    letters = [ch for ch in nick if ch.isalpha()]
    if len(letters) >= 2 and all(ch.isupper() for ch in letters):
        return False    # INFO, ERROR, WARN: log levels, not people
    return nick.lower() not in _NOT_NICKS


def recognize_handles(text: str, settings: PatternSettings) -> list[EntitySpan]:
    """User names where a chat or log format marks them.

    - `@name` mentions (the span is the name, without the "@"; never in an email address,
      nor a decorator such as `@dataclass(...)`, `@property` alone on its line or `@param`);
    - chat line prefixes: `<nick>` at a line's very start (after an optional timestamp),
      `[12:03] nick:` after a timestamp, and a bare `nick:` at a line's very start only
      when the nick is lowercase and bears a digit ("jsmith42:"), since "Note:",
      "error:" or YAML keys would otherwise pass (numbered keys such as "col1:" do not);
    - log fields: `user=`, `username:`, `login_name=`, `nick:` ... and sshd's
      "Invalid user NAME from" / "password for NAME from".
    """
    spans = []
    for m in finditer_on_lines(_MENTION_RE, _AT_RE, text):
        name = m.group()[1:]
        if not any(ch.isalpha() for ch in name) or _TIME_LIKE_RE.fullmatch(name) \
                or name.split(".")[0].lower() in _NOT_MENTIONS \
                or _DECORATOR_RE.match(text, m.end()) or _alone_on_line(text, m.start(), m.end()):
            continue
        spans.append(EntitySpan(m.start() + 1, m.end(), "HANDLE", SCORE_FORMAT))
    for pattern, hint in ((_CHAT_ANGLE_RE, _LESS_THAN_RE), (_CHAT_STAMPED_RE, _CLOCK_RE)):
        for m in finditer_on_lines(pattern, hint, text):
            nick = m.group("nick")
            if pattern is _CHAT_ANGLE_RE and nick.lower() in _HTML_TAGS:
                continue
            if _plausible_nick(nick):
                spans.append(EntitySpan(m.start("nick"), m.end("nick"), "HANDLE", SCORE_FORMAT))
    for m in finditer_on_lines(_CHAT_BARE_RE, _COLON_RE, text):
        nick = m.group("nick")
        if (any(ch.isdigit() for ch in nick) and sum(ch.isalpha() for ch in nick) >= 2
                and nick not in _TECH_TOKENS and nick not in _NOT_NICKS
                and not _NUMBERED_KEY_RE.fullmatch(nick)):
            spans.append(EntitySpan(m.start("nick"), m.end("nick"), "HANDLE", SCORE_FORMAT))
    for m in finditer_on_lines(_LOGIN_RE, _KEY_VALUE_RE, text):
        key, value = m.group("key").lower(), m.group("value")
        if value.lower() in _NOT_LOGINS:
            continue
        if m.group("colon") and (key == "user" or not any(ch.isalpha() for ch in value)
                                 or text.startswith(")", m.end())):
            continue    # "User: please", "login: 3 attempts", "f(user_id: UserId)"
        spans.append(EntitySpan(m.start("value"), m.end("value"), "HANDLE", SCORE_FORMAT))
    for m in finditer_on_lines(_SSHD_RE, _FROM_RE, text):
        if m.group("value").lower() not in _NOT_LOGINS:
            spans.append(EntitySpan(m.start("value"), m.end("value"), "HANDLE", SCORE_FORMAT))
    return spans


# ----------------------------------------------------------------------------- CODE

_CODE_CUES = (
    r"application|applic\.|case|file|claim|account|acct\.?|a/c|patient|mrn|ref\.?|reference|"
    r"docket|invoice|order|ticket|policy|member(?:ship)?|customer|client|record|registration|"
    r"reg\.?|booking|reservation|contract|matter|complaint|appeal|petition|passport|"
    r"licen[cs]e|employee|staff|student|badge|action|id")
_CODE_CONNECTORS = r"no\.?|nr\.?|n[°º]\.?|num(?:ber)?\.?|id\.?|ref(?:erence)?\.?|code"
_CODE_RE = re.compile(
    rf"(?=[A-FILMOPRSTa-filmoprst])(?<![\w-])(?:{_CODE_CUES})(?!\w)"
    rf"(?:{_H}*\(?{_H}*(?:{_CODE_CONNECTORS})(?!\w))?{_H}*[:#]?{_H}*#?"
    r"(?P<code>(?=[A-Za-z0-9/.:-]*[0-9])[A-Za-z0-9]+(?:[/.:-][A-Za-z0-9]+)*)(?!\w)",
    re.IGNORECASE)
_CODE_TAIL_RE = re.compile(rf"{_H}([A-Za-z0-9]{{1,6}})(?![\w/.:-]\w|\w)")
_YEAR_RE = re.compile(r"(?:19|20)[0-9]{2}")


def recognize_codes(text: str, settings: PatternSettings) -> list[EntitySpan]:
    """Case, file, application, patient, account and similar references after a cue word.

    The span is the code alone: at least three digits (four when it is only digits),
    not a bare year, with up to three short groups that bear a digit after it
    ("202201873 B4", "943 476 5919"). "case 3", "order 66", "student 384", "licence 2.0"
    and "file 2019" are not codes.
    """
    spans = []
    for m in finditer_on_lines(_CODE_RE, _DIGIT_RE, text):   # a code holds a digit
        code = m.group("code")
        if _count_digits(code) < (4 if code.isdigit() else 3) or _YEAR_RE.fullmatch(code):
            continue
        end = m.end("code")
        for _ in range(3):
            tail = _CODE_TAIL_RE.match(text, end)
            if not tail:
                break
            group = tail.group(1)
            if not any(ch.isdigit() for ch in group) or (group.isdigit() and len(group) < 3):
                break
            end = tail.end()
        spans.append(EntitySpan(m.start("code"), end, "CODE", SCORE_FORMAT))
    return spans


# ----------------------------------------------------------------------------- ADDRESS

# Street types, as words of their own after the street's name ("431 Zachary Falls"): the
# USPS Publication 28 suffixes (full forms and the common abbreviations) plus British ones.
_STREET_TYPES = (
    "alley|aly|annex|arcade|avenue|ave|av|bayou|beach|bend|bluffs?|bottom|boulevard|blvd|"
    "branch|bridge|brooks?|burgs?|bypass|camp|canyon|cape|causeway|cent(?:er|re)s?|ctr|"
    "circles?|cir|cliffs?|close|club|commons?|corners?|course|courts?|ct|coves?|creek|"
    "crescent|cres|crest|crossing|crossroads?|curve|dale|dam|divide|drives?|dr|drove|"
    "estates?|expressway|expy|extensions?|falls?|ferry|fields?|flats?|fords?|forest|"
    "forges?|forks?|fort|freeway|fwy|gardens?|gateway|glens?|greens?|groves?|harbou?rs?|"
    "haven|heights|hts|highway|hwy|hills?|hollow|inlet|islands?|isle|junctions?|keys?|"
    "knolls?|lakes?|land|landing|lane|ln|lights?|loaf|locks?|lodge|loop|mall|manors?|"
    "meadows?|mews|mills?|mission|motorway|mount|mountains?|neck|orchard|oval|overpass|"
    "parade|parks?|parkways?|pkwy|pass|passage|path|pike|pines?|place|pl|plains?|plaza|"
    "points?|ports?|prairie|radial|ramp|ranch|rapids?|rest|ridges?|rise|rivers?|roads?|rd|"
    "route|row|rue|run|shoals?|shores?|skyway|springs?|spurs?|squares?|sq|stations?|stravenue|"
    "stream|streets?|st|summit|terrace|ter|throughway|trace|track|trafficway|trail|trl|"
    "trailer|tunnel|turnpike|underpass|unions?|valleys?|via|viaduct|views?|villages?|ville|"
    "vista|walks?|wall|ways?|wells?|wharf|wynd|yard")
# Street types written as the end of one word ("Mellestraat", "Fedor-Putz-Straße"): Dutch
# and German (with Austrian and Swiss forms).
_STREET_ENDINGS = (
    "straat|singel|baan|hof|dreef|boulevard|laan|plein|weg|gracht|kade|park|steeg|pad|dijk|"
    "markt|wal|haven|veld|erf|hoven|plantsoen|zijde|burgwal|"
    "straße|strasse|str\\.|gasse|ring|allee|platz|damm|ufer|chaussee|steig|pfad|gärten|berg|"
    "feld|graben|zeile|kamp|stieg")
# English words that end like a street ("during 3", "spring 2020", "bring 2").
_NOT_STREET_COMPOUNDS_RE = re.compile(
    r"(?:.*[aeiouy]ring|string|spring|offspring|bring|wring|earring|keyring|hamstring|"
    r"ballpark|carpark|theme-?park|iceberg|weg|i?pad|notepad|keypad|touchpad|trackpad|launchpad|"
    r"scratchpad|lily-?pad|helipad|numpad)\Z", re.IGNORECASE)
# Street types that are also common English words: after a number they need a capitalised
# street name ("12 Place Vendôme", but not "4 square metres", "2 via email").
_AMBIGUOUS_PREFIXES = frozenset(
    "place square passage route via cours voie plaza largo corso paseo av. bd c/".split())
# Abbreviated street types need a capitalised name too ("12 High St", not "5 new cases dr").
_ABBREVIATED_TYPES = frozenset(
    "aly ave av blvd ctr cir ct cres dr expy fwy hts hwy ln pkwy pl rd sq st ter trl".split()
    # and "via" and "rue" (faker's and USPS's "6686 Cooke Via", "1968 Lutz Rue"; not "2
    # copies via post").
    + ["via", "rue"])
# French, Spanish, Italian and Portuguese street types, written before the name.
_STREET_PREFIXES = (
    "rue|avenue|av\\.|boulevard|bd|chemin|allée|allee|impasse|place|quai|route|cours|passage|"
    "square|voie|sentier|faubourg|parvis|esplanade|calle|c/|avenida|avda\\.|paseo|plaza|"
    "carrer|via|viale|piazza|corso|largo|rua|travessa")
_UNIT = r"(?:apt\.?|apartment|suite|ste\.?|unit|flat|studio|floor|fl\.?|room|rm\.?|#)"
_HOUSE_NUMBER = r"[0-9]{1,6}[A-Za-z]?(?:[/-][0-9]{1,4}[A-Za-z]?)?"
_NAME_WORD = r"[^\W\d_][\w'’.-]*"
# Words that, between a number and a street type, mean a quantity rather than an address
# ("10 minute walk", "3 main branches of the bank", "2 of the parks").
_NOT_STREET_NAMES = frozenset(
    "a an the of and or to in on at for with by from per about over under this that these "
    "those my your our their his her its minute minutes min mins hour hours day days week "
    "weeks month months year years mile miles km kilometres kilometers metre metres meter "
    "meters foot feet yard yards percent people person persons times time more less other "
    "new-found".split())
_ADDRESS_EN_RE = re.compile(
    rf"(?=[0-9A-Za-z])(?<![\w./-])"
    rf"(?:(?P<unit_first>{_UNIT}{_H}*[0-9]{{1,5}}[A-Za-z]?,?{_H}+)(?P<no_number>)"
    rf"|(?P<number>{_HOUSE_NUMBER}),?{_H}+)"
    rf"(?P<name>{_NAME_WORD}(?:{_H}+{_NAME_WORD}){{0,2}}?){_H}+"
    rf"(?P<type>(?:{_STREET_TYPES}))\.?(?!\w)"
    rf"(?P<unit>,?{_H}+{_UNIT}{_H}*[0-9]{{1,5}}[A-Za-z]?(?!\w))?",
    re.IGNORECASE)
_PARTICLES = r"(?:van|von|de|der|den|ten|ter|zu|zum|zur|am|an|auf|im|la|le|di|da|del)"
_ADDRESS_COMPOUND_RE = re.compile(
    rf"(?=[^\W\d_])(?<![\w'’.-])"
    rf"(?:[\w'’.-]+(?:{_H}+{_PARTICLES})+{_H}+)?"
    rf"(?P<street>[\w'’-]+(?:{_STREET_ENDINGS}))(?!\w){_H}*"
    rf"(?P<number>{_HOUSE_NUMBER})(?:{_H}*[-/]{_H}*[0-9]{{1,4}}[A-Za-z]?)?(?!\w)",
    re.IGNORECASE)
# The compound pattern starts at every letter and backtracks through each word against the
# street endings: it cost 40% of the pattern stage. A match needs a street ending, then
# horizontal space, then a digit (the ending's `(?!\w)` rules out a digit right after it),
# and cannot cross a line break; so it runs only on the lines where such a spot exists.
_COMPOUND_HINT_RE = re.compile(rf"(?:[^\W\d_]|\.){_H}+[0-9]")
_STREET_ENDING_AT_END_RE = re.compile(rf"(?:{_STREET_ENDINGS})\Z", re.IGNORECASE)
_LONGEST_STREET_ENDING = max(len(e.replace("\\", "")) for e in _STREET_ENDINGS.split("|"))


def _compound_address_matches(text: str) -> Iterable[re.Match]:
    """`_ADDRESS_COMPOUND_RE.finditer(text)`, searched only on the lines that hold a street
    ending followed by horizontal space and a digit (the same matches, in the same order)."""
    line_starts: Optional[list[int]] = None
    searched_to = -1
    for hint in _COMPOUND_HINT_RE.finditer(text):
        ending_end = hint.start() + 1
        if ending_end <= searched_to or not _STREET_ENDING_AT_END_RE.search(
                text, max(0, ending_end - 2 * _LONGEST_STREET_ENDING), ending_end):
            continue
        if line_starts is None:
            line_starts = [0] + [m.end() for m in _LINE_BREAK_RE.finditer(text)]
        line = bisect.bisect_right(line_starts, ending_end - 1) - 1
        start = line_starts[line]
        end = line_starts[line + 1] - 1 if line + 1 < len(line_starts) else len(text)
        yield from _ADDRESS_COMPOUND_RE.finditer(text, start, end)
        searched_to = end


_ADDRESS_PREFIXED_RE = re.compile(
    rf"(?=[0-9])(?<![\w./-])(?P<number>{_HOUSE_NUMBER}(?:{_H}?(?:bis|ter))?),?{_H}+"
    rf"(?P<type>{_STREET_PREFIXES})(?!\w)"
    rf"(?P<name>(?:{_H}+(?:de{_H}+la|de{_H}+l['’]|d['’]|du|des|de|del|della|do|da|la|le|les)"
    rf"(?!\w))?(?:{_H}*{_NAME_WORD}){{1,3}})",
    re.IGNORECASE)
_NAME_STOP_RE = re.compile(
    r"(?i:\s+(?:et|and|is|est|à|a|in|on|the|le matin|près|near|but|mais|ou|or|where|qui|"
    r"which|who|to|for|pour|avec|with|from|de{_H}+[0-9]))(?!\w)".replace("{_H}", _H))


def recognize_addresses(text: str, settings: PatternSettings) -> list[EntitySpan]:
    """Street addresses: a house number with a street name and a street type, on one line.

    English ("431 Zachary Falls Suite 621", "Flat 34, Deborah Island": USPS and British
    street types after the name), Dutch and German compounds ("Mellestraat 87",
    "Fedor-Putz-Straße 60/14", "Reinhild-van der Dussen-Allee 51"), and French, Spanish and
    Italian streets whose type comes first ("75, chemin de Joseph", "12 rue Bouvet").
    Any casing. A street type after a quantity ("10 minute walk") is not an address.
    """
    spans = []
    digit_lines = lines_with(_DIGIT_RE, text)   # every address has a number
    for m in finditer_on_lines(_ADDRESS_EN_RE, _DIGIT_RE, text, digit_lines):
        words = m.group("name").split()
        if any(word.lower() in _NOT_STREET_NAMES for word in words):
            continue
        if m.group("type").lower() in _ABBREVIATED_TYPES and not words[0][0].isupper():
            continue
        spans.append(EntitySpan(m.start(), m.end(), "ADDRESS", SCORE_FORMAT))
    for m in _compound_address_matches(text):
        if _NOT_STREET_COMPOUNDS_RE.match(m.group("street")):
            continue
        spans.append(EntitySpan(m.start(), m.end(), "ADDRESS", SCORE_FORMAT))
    for m in finditer_on_lines(_ADDRESS_PREFIXED_RE, _DIGIT_RE, text, digit_lines):
        if m.group("type").lower() in _AMBIGUOUS_PREFIXES \
                and not m.group("name").lstrip()[:1].isupper():
            continue
        end = m.end()
        stop = _NAME_STOP_RE.search(text, m.start("name") + 1, end)
        if stop:
            end = stop.start()
        spans.append(EntitySpan(m.start(), end, "ADDRESS", SCORE_FORMAT))
    return spans


# ----------------------------------------------------------------------------- registry

RECOGNIZERS: Mapping[str, Recognizer] = MappingProxyType({
    "EMAIL": recognize_emails,
    "PHONE": recognize_phones,
    "CARD": recognize_cards,
    "IBAN": recognize_ibans,
    "IP": recognize_ips,
    "URL": recognize_urls,
    "DATE": recognize_dates,
    "ID": recognize_ids,
    "HANDLE": recognize_handles,
    "CODE": recognize_codes,
    "ADDRESS": recognize_addresses,
})

# A span strictly inside a longer one is dropped first (`_drop_contained`). Where pattern
# spans still overlap, the lower tier wins, then the longer span, then the higher
# score: validated kinds first (an IBAN or card beats the phone number inside it, an email
# the handle or URL inside it, a URL the date or IP in its path), then dates (phone
# matchers like digit groups), then cue-anchored codes, phones, and handles last.
_TIER = {"IBAN": 0, "CARD": 0, "EMAIL": 0, "URL": 0, "ID": 0, "IP": 0,
         "DATE": 1, "CODE": 2, "ADDRESS": 2, "PHONE": 3, "HANDLE": 4}


def _is_tight(text: str, span: EntitySpan) -> bool:
    piece = text[span.start:span.end]
    return bool(piece) and not piece[0].isspace() and not piece[-1].isspace() \
        and _LINE_BREAK_RE.search(piece) is None


def find_patterns(text: str,
                  settings: PatternSettings = PatternSettings()) -> tuple[EntitySpan, ...]:
    """Runs the chosen recognizers and resolves overlaps among their spans.

    Returns:
      Non-overlapping spans sorted by start; offsets are code-point indices into
      `text`, end-exclusive; no span crosses a line break or has whitespace at its edges.
    """
    spans = [span for label in PATTERN_LABELS if label in settings.labels
             for span in RECOGNIZERS[label](text, settings) if _is_tight(text, span)]
    return tuple(_keep_disjoint(
        _drop_contained(spans), key=lambda s: (_TIER[s.label], -len(s), -s.score, s.start, s.end)))


def _drop_contained(spans: list[EntitySpan]) -> list[EntitySpan]:
    """Drops spans lying strictly inside a longer one, whatever their tiers: the container
    hides every character ("+1 305 614 9207" read as a phone and its last ten digits as an
    NHS number must not leave "+1" visible)."""
    kept: list[EntitySpan] = []
    reach = -1
    for span in sorted(spans, key=lambda s: (s.start, -s.end)):
        if span.end <= reach and not any(k.start == span.start and k.end == span.end
                                         for k in kept[-1:]):
            continue
        kept.append(span)
        reach = max(reach, span.end)
    return kept


def recognize(segmented: SegmentedDocument,
              settings: PatternSettings = PatternSettings()) -> tuple[EntitySpan, ...]:
    """The pattern stage: `find_patterns` on the segmented document's text."""
    return find_patterns(segmented.document.text, settings)


# ----------------------------------------------------------------------------- merge

def _split_at_line_breaks(span: EntitySpan, text: str) -> list[EntitySpan]:
    """The pieces of `span` between line breaks, stripped of whitespace, empty ones dropped."""
    piece = text[span.start:span.end]
    if _LINE_BREAK_RE.search(piece) is None and piece == piece.strip():
        return [span]
    pieces = []
    offset = span.start
    for line in _LINE_BREAK_RE.split(piece):
        start = offset + len(line) - len(line.lstrip())
        end = offset + len(line.rstrip())
        if start < end:
            pieces.append(replace(span, start=start, end=end))
        offset += len(line) + 1
    return pieces


def merge_spans(model_spans: Iterable[EntitySpan], pattern_spans: Iterable[EntitySpan],
                text: str) -> tuple[EntitySpan, ...]:
    """Joins the model's spans with the pattern spans: patterns win, no span crosses a line break.

    A model span that contains line breaks is first split into its pieces (same label,
    score and flags, each stripped of surrounding whitespace, empty pieces dropped; a
    span without line breaks is only stripped); of a piece that overlaps pattern spans only
    the parts outside them that hold a letter or digit are kept. Pattern spans go through the same splitting (a no-op for `find_patterns`'
    spans). Overlaps among the model spans themselves are left to the redaction step.

    Returns:
      The pattern spans and the surviving model pieces, sorted by (start, end, label).
    """
    patterns = sorted((p for span in pattern_spans for p in _split_at_line_breaks(span, text)),
                      key=lambda s: (s.start, s.end))
    starts = [p.start for p in patterns]
    reach: list[int] = []           # reach[i]: the furthest end among patterns[:i + 1]
    for p in patterns:
        reach.append(max(p.end, reach[-1]) if reach else p.end)
    merged = list(patterns)
    for span in model_spans:
        for piece in _split_at_line_breaks(span, text):
            merged += _outside_patterns(piece, patterns, starts, reach, text)
    return tuple(sorted(merged, key=lambda s: (s.start, s.end, s.label)))


_SEPARATORS = " \t\u00a0,;:"


def _outside_patterns(piece: EntitySpan, patterns: list[EntitySpan], starts: list[int],
                      reach: list[int], text: str) -> list[EntitySpan]:
    """The parts of a model span that no pattern span covers, stripped, each with a letter
    or digit ("Mellestraat 87, Amsterdam" tagged LOC around an ADDRESS keeps "Amsterdam")."""
    i = bisect.bisect_left(starts, piece.end)   # patterns starting before the piece ends
    if not i or reach[i - 1] <= piece.start:
        return [piece]
    parts, cursor = [], piece.start
    for pattern in patterns[:i]:
        if pattern.end <= cursor:
            continue
        if pattern.start > cursor:
            parts.append((cursor, min(pattern.start, piece.end)))
        cursor = max(cursor, pattern.end)
        if cursor >= piece.end:
            break
    if cursor < piece.end:
        parts.append((cursor, piece.end))
    kept = []
    for start, end in parts:
        chunk = text[start:end]
        start, end = start + len(chunk) - len(chunk.lstrip(_SEPARATORS)), \
            start + len(chunk.rstrip(_SEPARATORS))
        if any(ch.isalnum() for ch in text[start:end]):
            kept.append(replace(piece, start=start, end=end))
    return kept
