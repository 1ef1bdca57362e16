"""Shared pieces of the pattern recognizers: scores, line-bounded regex helpers, cue words."""
from __future__ import annotations

import bisect
import re
import threading
from typing import Callable, Iterable, Optional

from larvatus.transforms.records import EntitySpan


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
# ... or a cue word beside a value of the right shape whose check failed (a typo, or a number
# newer than the validator): hidden, and marked not validated by this score.
SCORE_UNVALIDATED = 0.5

# The characters `str.splitlines` breaks at; no span crosses one.
LINE_BREAKS = "\n\r\x0b\x0c\x1c\x1d\x1e\x85\u2028\u2029"
LB = "\\n\\r\\x0b\\x0c\\x1c-\\x1e\\x85\\u2028\\u2029"
LINE_BREAK_RE = re.compile(f"[{LB}]")
H = f"[^\\S{LB}]"                     # horizontal whitespace
LINE_START = f"(?<![^{LB}])"          # at the text's start or right after a line break
# Patterns open with a lookahead on their first character so that `re` can skip ahead
# to the candidates instead of trying every position (ten times faster on long text).
NUM_START = r"(?=[0-9])(?<![\w+])(?<![0-9][.,/-])"    # not inside a longer token or number
NUM_END = r"(?!\w)(?![.,/-][0-9])"
DIGIT_RUN_RE = re.compile(r"[0-9]+")


def keep_disjoint(spans: Iterable[EntitySpan],
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


def line_window(text: str, start: int, end: int, before: int, after: int) -> tuple[int, int]:
    """Widens [start, end) by up to `before`/`after` characters without crossing a line break."""
    head = LINE_BREAK_RE.split(text[max(0, start - before):start])[-1]
    tail = LINE_BREAK_RE.split(text[end:end + after])[0]
    return start - len(head), end + len(tail)


def lines_with(hint: re.Pattern, text: str) -> list[tuple[int, int]]:
    """[start, end) of each line ("\\n") holding a `hint` match, in order (do not modify).

    Found once per text and hint: the recognizers share hints (a digit, a four-digit year),
    so the last text's lines are kept per hint, one text per thread.
    """
    memo = text_memo(text)
    lines = memo.get(hint)
    if lines is None:
        stems = _HINT_STEMS.get(hint)
        if stems is not None and not _may_hold(text, stems, memo):
            lines = memo[hint] = []
        elif hint in _DIGIT_HINTS:
            lines = memo[hint] = _search_digit_lines(hint, text)
        else:
            lines = memo[hint] = _search_lines(hint, text)
    return lines


def with_digit(hint: re.Pattern) -> re.Pattern:
    """`hint`, searched only on the lines holding an ASCII digit (`DIGIT_RE`'s lines).

    Every match of `hint` must hold a character of [0-9], and `hint` must be line-local:
    no match holds "\n" and no lookahead reads past a line's end (a test compares each
    such hint's lines with a search of the whole text). Digits are rarer than the
    letters and marks most hints open with: on news text a third of the characters lie
    on lines holding one.
    """
    _DIGIT_HINTS.add(hint)
    return hint


def text_memo(text: str) -> dict:
    """What was found in `text` so far (the last text's findings, one text per thread)."""
    memo = getattr(_LINES_MEMO, "memo", None)
    if memo is None or memo[0] is not text:
        memo = (text, {})
        _LINES_MEMO.memo = memo
    return memo[1]


_LINES_MEMO = threading.local()
_HINT_STEMS: dict[re.Pattern, tuple[str, ...]] = {}
_DIGIT_HINTS: set[re.Pattern] = set()
# The letters `re` matches case-insensitively with an ASCII letter that `str.lower` does
# not lower to it: "İ" and "ı" (i), "ſ" (s). A text holding one is always searched.
_NOT_LOWERED = ("\u0130", "\u0131", "\u017f")


def with_stems(hint: re.Pattern, stems: str) -> re.Pattern:
    """`hint`, searched only in texts whose lower case holds one of the `|`-separated stems.

    Every match of `hint` must hold, in any case, one of the stems: lower-case ASCII
    letters and punctuation (a test checks each letter against `re`). A text without any
    is ruled out by `in` on its lower case, many times faster than a case-insensitive search.
    """
    _HINT_STEMS[hint] = tuple(stems.split("|"))
    return hint


def may_hold(text: str, stems: tuple[str, ...]) -> bool:
    """Whether `text` may hold, in any case, one of `stems` (lower-case ASCII letters and
    punctuation); False: a case-insensitive pattern whose every match holds one has none."""
    return _may_hold(text, stems, text_memo(text))


def _may_hold(text: str, stems: tuple[str, ...], memo: dict) -> bool:
    """Whether `text` may hold a match of a hint with these stems (False: it holds none)."""
    lowered = lowered_for_stems(text, memo)
    return not lowered or any(stem in lowered for stem in stems)


def lowered_for_stems(text: str, memo: dict) -> str:
    """`text.lower()` from `text`'s memo (`text_memo`), or "" where stems cannot be trusted
    (`_NOT_LOWERED`): then every line is searched."""
    lowered = memo.get(None)
    if lowered is None:
        lowered = memo[None] = "" if any(ch in text for ch in _NOT_LOWERED) else text.lower()
    return lowered


def _search_lines(hint: re.Pattern, text: str) -> list[tuple[int, int]]:
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


def _search_digit_lines(hint: re.Pattern, text: str) -> list[tuple[int, int]]:
    """`_search_lines` for a `with_digit` hint: on the digit lines alone, where they are at
    most half the text (else the whole text, at no more cost)."""
    digit_lines = lines_with(DIGIT_RE, text)
    if 2 * sum(end - start for start, end in digit_lines) > len(text):
        return _search_lines(hint, text)
    return [(start, end) for start, end in digit_lines if hint.search(text, start, end)]


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


DIGIT_RE = re.compile("[0-9]")   # hint: patterns that need a digit

# Digits (any script) joined the way numbers are written: by one to three spaces, dashes,
# dots, slashes, "+" or brackets ("943 476 5919", "(0)20 7946", "4111 - 1111", "12/34").
NUMBER_SEPARATORS = (" .+/()\\-\u00a0\u2007\u202f\u2010\u2011\u2012\u2013\u2014\u2015"
                     "\u2212\uff0d")
# (It opens with a class, which `re` scans for: "\\d+(?:[...]{1,3}\\d+)*" opens with a repeat.)
_NUMBER_RE = re.compile(f"\\d(?:\\d|[{NUMBER_SEPARATORS}]{{1,3}}(?=\\d))*")
_NOT_DIGIT = {ord(ch): None for ch in NUMBER_SEPARATORS.replace("\\", "")}
_LONGEST_NUMBER = "longest number"   # its key in a text's memo


def longest_number(text: str) -> int:
    """The most digits one number of `text` holds (digits joined as `_NUMBER_RE` joins them).

    A pattern whose every match holds N digits so joined (a run of N digits, "943 476 5919",
    "+44 (0)20 7946 0958") has no match in a text whose longest number is shorter, and in
    no part of it: a number of a part of a text lies within a number of the text. Found once
    per text, for every recognizer.
    """
    memo = text_memo(text)
    longest = memo.get(_LONGEST_NUMBER)
    if longest is None:
        longest = memo[_LONGEST_NUMBER] = max(
            (len(number.translate(_NOT_DIGIT)) for number in _NUMBER_RE.findall(text)), default=0)
    return longest


def cue_pattern(words: str) -> re.Pattern:
    """Any of the `|`-separated cue words (each starting with a letter), whole, in any case;
    every cue pattern made is also what `is_cue_word` reads."""
    initials = "".join(sorted({w[0].lower() + w[0].upper() for w in words.split("|")}))
    pattern = re.compile(rf"(?=[{initials}])(?<![^\W_])(?:{words})(?![^\W_])", re.IGNORECASE)
    _CUE_PATTERNS.append(pattern)
    return pattern


_CUE_PATTERNS: list[re.Pattern] = []


def is_cue_word(surface: str) -> bool:
    """Whether `surface` is, whole, one of the recognizers' cue words ("Mobile", "Aadhaar",
    "Kennzeichen", "Badge"): the label of a value the recognizers read, not a name."""
    return any(p.fullmatch(surface) for p in _CUE_PATTERNS)


def count_digits(text: str) -> int:
    """How many characters of `text` are digits."""
    return sum(ch.isdigit() for ch in text)


CUE_BEFORE = 40   # characters before a candidate searched for its cue word (same line)
CUE_AFTER = 24


def joined_lines(lines: list[tuple[int, int]]) -> list[tuple[int, int]]:
    """Consecutive lines as one range (fewer searches): the shapes neither hold nor look
    across a line break, so they match the same in a range of lines as line by line."""
    joined: list[tuple[int, int]] = []
    for start, end in lines:
        if joined and joined[-1][1] + 1 == start:
            joined[-1] = (joined[-1][0], end)
        else:
            joined.append((start, end))
    return joined


def cue_near(text: str, start: int, end: int, cue: re.Pattern,
             window: tuple[int, int] = (CUE_BEFORE, CUE_AFTER)) -> bool:
    """Whether the cue occurs shortly before or after [start, end) on the same line."""
    ws, we = line_window(text, start, end, window[0], window[1])
    return bool(cue.search(text, ws, start) or cue.search(text, end, we))


def cue_anywhere(text: str, cue: Optional[re.Pattern]) -> bool:
    """Whether `cue` occurs anywhere in `text` (found once per text and cue)."""
    if cue is None:
        return False
    memo = text_memo(text)
    key = ("cue anywhere", cue)
    if key not in memo:
        memo[key] = cue.search(text) is not None
    return memo[key]
