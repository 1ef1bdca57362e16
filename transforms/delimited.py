"""CSV and TSV input: rows under a header, read in bounded memory, each a Document or a DeadLetter."""
from __future__ import annotations

import csv
import io
import re
import sys
from typing import IO, Any, Iterator, Optional, Sequence

from larvatus.transforms.read import (
    BLANK_LINE, DEFAULT_MAX_CHARS, ParseResult, validate_text, with_fields,
)
from larvatus.transforms.records import DeadLetter, DeadLetterReason as Reason

_UNDECODED = re.compile("[\udc80-\udcff]")   # bytes that were not UTF-8 (surrogateescape)

# Room in a CSV/TSV row for everything but the text (id, other columns), in characters.
DELIMITED_RECORD_SLACK = 16 * 1024 * 1024
_LINE_ENDS = ("\n", "\r")


def delimited_record_limit(max_chars: int) -> int:
    """The longest CSV/TSV row (characters, line breaks included) that can hold a text of
    `max_chars` characters: 2 a character (every quote doubled) and 16 Mi for the rest."""
    return min(2 * (max_chars + 1) + DELIMITED_RECORD_SLACK, sys.maxsize - 1)


def _undecoded_at(value: Any) -> Optional[int]:
    """Where a field decoded with surrogateescape holds a byte that was not UTF-8, or None."""
    bad = _UNDECODED.search(value) if isinstance(value, str) else None
    return bad.start() if bad else None


def parse_csv_row(row: dict[str, Any], source: str, id_field: str, text_field: str,
                  max_chars: int = DEFAULT_MAX_CHARS,
                  keep_fields: Sequence[str] = ()) -> ParseResult:
    """One CSV/TSV row (a dict by header, values decoded with surrogateescape) -> a Document.

    A dead letter for a text that is not UTF-8 keeps the row's id when the id is UTF-8."""
    raw_id = row.get(id_field) or None
    if _undecoded_at(raw_id) is not None:
        return DeadLetter(source, Reason.INVALID_UTF8,
                          f"invalid UTF-8 at character {_undecoded_at(raw_id)} of the id field")
    bad = _undecoded_at(row.get(text_field))
    if bad is not None:
        return DeadLetter(source, Reason.INVALID_UTF8,
                          f"invalid UTF-8 at character {bad} of the text field", raw_id)
    return with_fields(validate_text(raw_id, row.get(text_field), source, max_chars), row,
                       keep_fields)


class _RowTooLong(Exception):
    """A row runs past the reader's bound (one physical line, or lines joined by a quote)."""


_OVERLONG = object()   # a physical line longer than the bound, skipped unread
_OPEN_QUOTE = "CSV: a quote is left open to the end of the file (unbalanced quote)"


class _PhysicalLines:
    """A text stream's physical lines (line ends kept), each read with a bound; lines handed
    back (after a malformed row) are read again first. Memory stays within twice the bound."""

    def __init__(self, text: IO[str], limit: int):
        self._text = text
        self._limit = limit
        self._again: list = []

    def next(self):
        """The next line, `_OVERLONG` for a line past the bound (its rest skipped), "" at the end."""
        if self._again:
            return self._again.pop()
        line = self._text.readline(self._limit + 1)
        if len(line) > self._limit and not line.endswith(_LINE_ENDS):
            while line and not line.endswith(_LINE_ENDS):
                line = self._text.readline(1 << 20)
            return _OVERLONG
        return line

    def read_again(self, lines: Sequence) -> None:
        self._again.extend(reversed(lines))


def _lenient_fields(line: str, delimiter: str) -> list[str]:
    """A row's fields as far as one physical line shows them (no quote error raised)."""
    try:
        return next(csv.reader([line.rstrip("\r\n")], delimiter=delimiter), [])
    except csv.Error:
        return []


class _Rows:
    """The rows of a CSV/TSV stream: (fields, None) for a row, ([], None) for a blank line,
    (the fields before the break, (reason, detail)) for a malformed or overlong row.

    CSV quotes may join physical lines into one row; TSV has no quoting (IANA
    text/tab-separated-values: a quote is text), so a row is a line. A row that is malformed
    (a quote left open to the end of the file or past the bound, a character after a closing
    quote) is reported for its first line, and the lines after it are read again as rows:
    one unbalanced quote never swallows the rows that follow.
    """

    def __init__(self, text: IO[str], delimiter: str, quoting: bool, limit: int):
        self._lines = _PhysicalLines(text, limit)
        self._delimiter = delimiter
        self._quoting = quoting
        self._limit = limit
        self._taken: list = []   # the physical lines of the row being read
        self._size = 0           # and their length

    def _feed(self) -> Iterator[str]:
        """The physical lines for the reader, each noted in the current row's `_taken`."""
        while True:
            line = self._lines.next()
            if line is _OVERLONG:
                self._taken.append(line)
                raise _RowTooLong()
            if not line:
                return
            self._taken.append(line)
            self._size += len(line)
            if self._size > self._limit:
                raise _RowTooLong()
            yield line

    def __iter__(self) -> Iterator[tuple[list[str], Optional[tuple[str, str]]]]:
        quoting = csv.QUOTE_MINIMAL if self._quoting else csv.QUOTE_NONE
        reader = None
        while True:
            if reader is None:   # at the start, and afresh after a broken row
                reader = csv.reader(self._feed(), delimiter=self._delimiter, quoting=quoting,
                                    strict=True)
            self._taken, self._size = [], 0
            try:
                fields = next(reader)
            except StopIteration:
                return
            except _RowTooLong:
                if len(self._taken) == 1:
                    fields, problem = [], (Reason.TOO_LARGE.value,
                                           f"row of more than {self._limit} characters")
                else:
                    fields, problem = None, (
                        Reason.MALFORMED_ROW.value, f"CSV: a quoted field runs on for more "
                        f"than {self._limit} characters (unbalanced quote)")
            except csv.Error as error:
                detail = _OPEN_QUOTE if "unexpected end of data" in str(error) \
                    else f"CSV: {str(error)[:80]}"
                fields, problem = None, (Reason.MALFORMED_ROW.value, detail)
            else:
                yield fields, None
                continue
            reader = None
            first = self._taken[0]
            self._lines.read_again(self._taken[1:])
            if fields is None:   # the fields before the broken one, for the row's id
                fields = [] if first is _OVERLONG else _lenient_fields(first, self._delimiter)[:-1]
            yield fields, problem


def delimited_rows(handle: IO[bytes], delimiter: str, quoting: bool, limit: int
                   ) -> Iterator[tuple[list[str], Optional[tuple[str, str]]]]:
    """A CSV/TSV byte stream's rows, each (fields, None), ([], None) for a blank line, or
    (the fields before the break, (reason, detail)) for a row that is malformed or longer
    than `limit` characters; fields decoded as UTF-8 with surrogateescape, a BOM dropped."""
    text = io.TextIOWrapper(handle, encoding="utf-8-sig", errors="surrogateescape", newline="")
    if csv.field_size_limit() < limit:
        csv.field_size_limit(limit)   # the reader's own bound comes first
    return iter(_Rows(text, delimiter, quoting, limit))


def read_delimited(
    handle: IO[bytes], path: str, delimiter: str, id_field: str, text_field: str,
    max_chars: int = DEFAULT_MAX_CHARS, keep_fields: Sequence[str] = (),
    quoting: bool = True,
) -> Iterator[Optional[ParseResult]]:
    """Parses a file of rows split by `delimiter` (CSV, TSV) with a header row; a record's
    source is `path#row=N` (N counts data rows from 0); yields `BLANK_LINE` for blank lines.

    With `quoting` (CSV), quoted fields may hold delimiters, quotes and line breaks; without
    (TSV), a quote is text and a row is a line. Memory stays bounded: a row longer than
    `delimited_record_limit(max_chars)` is skipped unread and dead-lettered as too_large. A
    row whose field count differs from the header's, or whose quotes are malformed, is a
    `malformed_row` dead letter carrying its id when the id can be read; the next rows are
    read all the same. A header that cannot be read is one unreadable_file dead letter.
    """
    rows = delimited_rows(handle, delimiter, quoting, delimited_record_limit(max_chars))
    header: Optional[list[str]] = None
    for fields, problem in rows:
        if problem is not None:
            yield DeadLetter(f"{path}#header", Reason.UNREADABLE_FILE,
                             f"the header row cannot be read ({problem[1]})")
            return
        if not fields:
            yield BLANK_LINE
            continue
        header = fields
        break
    if header is None:
        return
    width = len(header)
    id_index = header.index(id_field) if id_field in header else None
    repeated = sorted({name for name in (id_field, text_field, *keep_fields)
                       if header.count(name) > 1})
    number = 0
    for fields, problem in rows:
        if problem is None and not fields:
            yield BLANK_LINE
            continue
        source = f"{path}#row={number}"
        number += 1
        doc_id = None
        if fields and id_index is not None and id_index < len(fields) \
                and _undecoded_at(fields[id_index]) is None:
            doc_id = fields[id_index] or None
        if problem is not None:
            yield DeadLetter(source, problem[0], problem[1], doc_id)
        elif repeated:
            yield DeadLetter(source, Reason.MALFORMED_ROW,
                             f"the header names {', '.join(map(repr, repeated))} more than once",
                             doc_id)
        elif len(fields) != width:
            yield DeadLetter(source, Reason.MALFORMED_ROW,
                             f"{len(fields)} fields where the header has {width} (a delimiter "
                             f"in an unquoted field, or one missing)", doc_id)
        else:
            yield parse_csv_row(dict(zip(header, fields)), source, id_field, text_field,
                                max_chars, keep_fields)
