"""Lines holding several hints at once, and `finditer` tried only where a match can start."""
from __future__ import annotations

import re
from typing import Callable, Iterable, Iterator

from larvatus.transforms.recognizers.base import (
    DIGIT_RE, lines_with, lowered_for_stems, text_memo, with_stems,
)

_STEMS: dict[re.Pattern, tuple[str, ...]] = {}


def with_line_stems(hint: re.Pattern, stems: str) -> re.Pattern:
    """`base.with_stems(hint, stems)`, whose stems `lines_holding` also tries on each line."""
    _STEMS[hint] = tuple(stems.split("|"))
    return with_stems(hint, stems)


def lines_holding(text: str, first: re.Pattern, *more: re.Pattern) -> list[tuple[int, int]]:
    """[start, end) of each line ("\\n") holding a match of `first` and of each of `more`.

    `first`'s lines come from `base.lines_with` (shared with the other recognizers); each
    of `more` is then searched on those lines alone, so that a rare hint (a digit) spares
    the whole-text search of a common one (a cue word). Each of `more` must be line-local:
    its matches hold no "\\n" and its lookarounds read a line's "\\n" like the text's end
    (a `\\w` test, a class without "\\n"). A pattern whose every match holds a match of each
    hint then finds, on these lines, what it finds on `lines_with(more[-1], text)`.
    A hint with stems (`with_line_stems`) is searched only on lines whose lower case holds
    one. Found once per text and hints (the last text's, per thread); do not modify the list.
    """
    if not more:
        return lines_with(first, text)
    memo = text_memo(text)
    key = (first, *more)
    lines = memo.get(key)
    if lines is None:
        lines = memo[key] = _narrowed(text, lines_holding(text, first, *more[:-1]), more[-1],
                                      memo)
    return lines


def _narrowed(text: str, lines: list[tuple[int, int]], hint: re.Pattern,
              memo: dict) -> list[tuple[int, int]]:
    """The lines of `lines` holding a `hint` match: searched line by line where they are
    less than half the text, else found in the whole text (`lines_with`) and intersected."""
    if not lines:
        return lines
    if 2 * sum(end - start for start, end in lines) > len(text):
        found = set(lines_with(hint, text))
        return [line for line in lines if line in found]
    stems = _STEMS.get(hint)
    lowered = "" if stems is None else lowered_for_stems(text, memo)
    if lowered:   # "": no stems, or a text they cannot rule out
        if not any(stem in lowered for stem in stems):
            return []
        lines = [(start, end) for start, end in lines
                 if any(lowered.find(stem, start, end) >= 0 for stem in stems)]
    return [(start, end) for start, end in lines if hint.search(text, start, end)]


def memoized(text: str, find: Callable[[str], list]) -> list:
    """`find(text)`, found once per text (the last text's, per thread); do not modify it."""
    memo = text_memo(text)
    found = memo.get(find)
    if found is None:
        found = memo[find] = find(text)
    return found


def digit_run_starts(text: str) -> list[int]:
    """Where each run of ASCII digits in `text` starts, ascending (`memoized`).

    Where a pattern opening with a digit that no digit precedes can match (an address's
    house number, a date's day): `finditer_at` tries these alone.
    """
    return memoized(text, _digit_run_starts)


def _digit_run_starts(text: str) -> list[int]:
    return [run.start() for start, end in lines_with(DIGIT_RE, text)
            for run in _DIGIT_RUN_RE.finditer(text, start, end)]


_DIGIT_RUN_RE = re.compile("[0-9][0-9]*")   # `[0-9]+`, which `re` cannot scan ahead for


def skip_back(text: str, position: int, separator: re.Pattern) -> int:
    """Where the run of one-character `separator` matches ending at `position` begins."""
    while position > 0 and separator.match(text, position - 1):
        position -= 1
    return position


def word_starts_ending_at(text: str, end: int, word: re.Pattern, longest: int) -> list[int]:
    """The starts, ascending, of the `word` matches (a pattern ending in `\\Z`) that end at
    `end` and start at most `longest` characters before it."""
    starts = []
    position = max(0, end - longest)
    while (found := word.search(text, position, end)) is not None:
        starts.append(found.start())
        position = found.start() + 1
    return starts


def finditer_from(pattern: re.Pattern, text: str, start: int, end: int,
                  candidates: Iterable[int]) -> Iterator[re.Match]:
    """`pattern.finditer(text, start, end)`, tried only at `candidates` (ascending positions).

    The same matches when every match of the pattern in [start, end) starts at one of the
    candidates and none is empty: where `re` would try every position, this tries a few.
    """
    position = start
    for candidate in candidates:
        if candidate < position:
            continue
        found = pattern.match(text, candidate, end)
        if found is not None:
            yield found
            position = found.end()


def finditer_at(pattern: re.Pattern, text: str, lines: list[tuple[int, int]],
                starts: Iterable[int]) -> Iterator[re.Match]:
    """`pattern.finditer` on each of `lines` (ascending), tried only at `starts` (ascending
    positions in `text`, among them every position where a non-empty match can start)."""
    line = 0
    position = 0
    for candidate in starts:
        while line < len(lines) and lines[line][1] <= candidate:
            line += 1
        if line == len(lines):
            return
        start, end = lines[line]
        if candidate < start or candidate < position:
            continue
        found = pattern.match(text, candidate, end)
        if found is not None:
            yield found
            position = found.end()
