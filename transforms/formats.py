"""The input formats, one record each: extensions, reader, field sample and id rule, from which the rest derives."""
from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import IO, Callable, Iterator, Mapping, Optional, Sequence

from larvatus.transforms import delimited, read as read_lib
from larvatus.transforms.read import DEFAULT_MAX_CHARS, ParseResult

SAMPLE_RECORDS = 100        # JSONL records looked at before starting
SAMPLE_BYTES = 1 << 20      # at most this much of a JSONL file


@dataclass(frozen=True)
class RecordFields:
    """What a reader takes from the options: the id and text fields, the size bound, the kept fields."""

    id_field: str = "id"
    text_field: str = "text"
    max_chars: int = DEFAULT_MAX_CHARS
    keep_fields: tuple[str, ...] = ()


@dataclass(frozen=True)
class FieldSample:
    """The field names (never values) at the start of one input file, for the checks at start.

    `absent` says where a name was looked for, as the error puts it ("is not a column of
    a.csv; its header names"); `types` maps a column to its type where the format has types.
    """

    names: frozenset[str]
    absent: str
    types: Mapping[str, str] = field(default_factory=dict)
    repeated: frozenset[str] = frozenset()   # names the header gives more than one column


Reader = Callable[[IO[bytes], str, RecordFields], Iterator[Optional[ParseResult]]]
Sampler = Callable[[IO[bytes], str], Optional[FieldSample]]
Refusal = Callable[[IO[bytes], str], Optional[str]]


@dataclass(frozen=True)
class InputFormat:
    """One input format.

    `read(handle, source, fields)` yields a file's Documents, DeadLetters and
    `read.BLANK_LINE`s from its decompressed bytes (sources and fallback ids start with
    `source`). `sample(handle, path)` reads the field names at a file's start, or is None
    for a format without fields (then --id-field, --text-field and --keep-fields do not
    apply). `ids_from_path`: a document's id is its file's path (what --text-ids hash
    hides) rather than a field. `refuse(handle, path)` names a mistake that refuses the
    whole job at start (a JSON array read as JSON Lines), or None.
    """

    name: str
    extensions: tuple[str, ...]
    describe: str                    # for --input-format's help: "one JSON object a line"
    read: Reader
    sample: Optional[Sampler] = None
    ids_from_path: bool = False
    refuse: Optional[Refusal] = None

    @property
    def has_fields(self) -> bool:
        return self.sample is not None

    def problems(self) -> list[str]:
        """What the record lacks to be read, picked by extension and checked at start."""
        found = []
        if not self.name.isidentifier() or self.name != self.name.lower() or self.name == "auto":
            found.append(f"name {self.name!r} is not a lowercase word other than 'auto'")
        if not self.extensions:
            found.append("no extension")
        found += [f"extension {e!r} is not '.' and lowercase letters" for e in self.extensions
                  if not (e.startswith(".") and e[1:].isalnum() and e == e.lower())]
        if not self.describe.strip():
            found.append("no description for --input-format's help")
        for role in ("read", "sample", "refuse"):
            value = getattr(self, role)
            if (value is not None or role == "read") and not callable(value):
                found.append(f"{role} is not callable")
        return found


def _read_jsonl(handle: IO[bytes], source: str, fields: RecordFields):
    return read_lib.read_jsonl(handle, source, fields.id_field, fields.text_field,
                               fields.max_chars, fields.keep_fields)


def _read_csv(handle: IO[bytes], source: str, fields: RecordFields):
    return delimited.read_delimited(handle, source, ",", fields.id_field, fields.text_field,
                                   fields.max_chars, fields.keep_fields)


def _read_tsv(handle: IO[bytes], source: str, fields: RecordFields):
    # IANA text/tab-separated-values: no quoting, a row a line; a quote is text, as corpora
    # quote speech far more often than a TSV writer quotes fields.
    return delimited.read_delimited(handle, source, "\t", fields.id_field, fields.text_field,
                                   fields.max_chars, fields.keep_fields, quoting=False)


def _read_text(handle: IO[bytes], source: str, fields: RecordFields):
    return (read_lib.with_fields(result, {}, fields.keep_fields)
            for result in read_lib.read_text(handle, source, fields.max_chars))


def _read_parquet(handle: IO[bytes], source: str, fields: RecordFields):
    return read_lib.read_parquet(handle, source, fields.id_field, fields.text_field,
                                 fields.max_chars, fields.keep_fields)


def jsonl_field_counts(handle: IO[bytes]) -> tuple[int, dict[str, int]]:
    """(objects read, how many of them have each field) over the first records of a JSONL
    stream, reading at most SAMPLE_BYTES: a line may be endless.

    Reads field names only, never values; lines that are not JSON objects are
    skipped (they are the data's problem, dead-lettered in the job).
    """
    seen: dict[str, int] = {}
    objects = 0
    data = handle.read(SAMPLE_BYTES)
    lines = data.split(b"\n")
    if len(data) >= SAMPLE_BYTES:
        lines.pop()   # cut at the bound: not a whole line
    for line in lines:
        if line.strip():
            try:
                record = json.loads(line.decode("utf-8").lstrip("\ufeff"))
            except (ValueError, UnicodeDecodeError, RecursionError):
                record = None
            if isinstance(record, dict):
                objects += 1
                for key in record:
                    seen[key] = seen.get(key, 0) + 1
        if objects >= SAMPLE_RECORDS:
            break
    return objects, seen


def _sample_jsonl(handle: IO[bytes], path: str) -> Optional[FieldSample]:
    objects, seen = jsonl_field_counts(handle)
    if not objects:
        return None
    return FieldSample(frozenset(seen), f"is in none of the first {objects} records of {path}; "
                                        f"their fields")


def printable(name: str) -> str:
    """A field name as messages print it: control characters, NULs and bytes that were not
    UTF-8 escaped (\\x00, \\udcff), so that a header never writes raw bytes to a terminal."""
    return "".join(c if c.isprintable() else ascii(c)[1:-1] for c in name)


UTF16_MARKS = (b"\xff\xfe", b"\xfe\xff")
# The same two bytes as the readers decode them (UTF-8 with surrogateescape)
_UTF16_MARKS_DECODED = tuple(mark.decode("utf-8", "surrogateescape") for mark in UTF16_MARKS)


def _header_sample(delimiter: str, quoting: bool) -> Sampler:
    def sample(handle: IO[bytes], path: str) -> Optional[FieldSample]:
        # The header row as the job reads it, never more than SAMPLE_BYTES of it.
        for fields, problem in delimited.delimited_rows(handle, delimiter, quoting, SAMPLE_BYTES):
            if problem is not None:
                return None   # the job dead-letters the file (its header cannot be read)
            if fields and fields[0].startswith(_UTF16_MARKS_DECODED):
                return None   # refused at start as UTF-16 (_refuse_utf16)
            if fields:
                repeated = frozenset(name for name in fields if fields.count(name) > 1)
                return FieldSample(frozenset(fields), f"is not a column of {path}; its header "
                                                      f"names", repeated=repeated)
        return None
    return sample


def _sample_parquet(handle: IO[bytes], path: str) -> Optional[FieldSample]:
    import pyarrow.parquet as pq

    types = {column.name: str(column.type) for column in pq.ParquetFile(handle).schema_arrow}
    if not types:
        return None
    return FieldSample(frozenset(types), f"is not a column of {path}; its columns", types)


def _refuse_json_array(handle: IO[bytes], path: str) -> Optional[str]:
    first = handle.readline(SAMPLE_BYTES).lstrip(b"\xef\xbb\xbf \t\r\n")
    if not first.startswith(b"["):
        return None
    return (f"{path} holds a JSON array, but JSON input is read as JSON Lines: one object a "
            f"line, such as {{\"id\": \"1\", \"text\": \"...\"}}. Convert it, e.g. with: "
            f"jq -c '.[]' {path} > records.jsonl")


def _refuse_utf16(handle: IO[bytes], path: str) -> Optional[str]:
    start = handle.read(2)
    if start not in UTF16_MARKS:
        return None
    return (f"{path} is UTF-16 (it starts with a UTF-16 byte-order mark), but Larvatus reads "
            f"UTF-8; convert it, e.g. with: iconv -f UTF-16 -t UTF-8 {path} > utf8-copy")


FORMATS: tuple[InputFormat, ...] = (
    InputFormat("jsonl", (".jsonl", ".json", ".ndjson"), "one JSON object a line", _read_jsonl,
                _sample_jsonl, refuse=_refuse_json_array),
    InputFormat("csv", (".csv",), "one document a row, with a header row; quoted fields may "
                "span lines", _read_csv, _header_sample(",", True), refuse=_refuse_utf16),
    InputFormat("tsv", (".tsv", ".tab"), "one document a row (a line), with a header row; no "
                "quoting", _read_tsv, _header_sample("\t", False), refuse=_refuse_utf16),
    InputFormat("text", (".txt", ".text"), "one document a file (id = path)", _read_text,
                ids_from_path=True),
    InputFormat("parquet", (".parquet", ".pq"), "one document a row", _read_parquet,
                _sample_parquet),
)
DEFAULT_FORMAT = "text"   # what a file whose extension names no format is read as


def format_names() -> tuple[str, ...]:
    """The formats' names, in the table's order."""
    return tuple(fmt.name for fmt in FORMATS)


def input_format(name: str) -> InputFormat:
    """The format of that name (ValueError for an unknown one)."""
    for fmt in FORMATS:
        if fmt.name == name:
            return fmt
    raise ValueError(f"input format must be one of {format_names()}, got {name!r}")


def format_for_path(path: str, requested: str = "auto") -> str:
    """The input format for a file: the one requested, or the one its extension names
    (a compression suffix ignored), else DEFAULT_FORMAT."""
    if requested != "auto":
        return requested
    name = path.lower()
    for suffix in read_lib.COMPRESSION_SUFFIXES:
        if name.endswith(suffix):
            name = name[: -len(suffix)]
    for fmt in FORMATS:
        if name.endswith(fmt.extensions):
            return fmt.name
    return DEFAULT_FORMAT


def read_records(
    handle: IO[bytes], path: str, fmt: str, id_field: str, text_field: str,
    max_chars: int = DEFAULT_MAX_CHARS, source: Optional[str] = None,
    keep_fields: Sequence[str] = (),
) -> Iterator[Optional[ParseResult]]:
    """Documents, dead letters and blank lines of one file in the given format.

    `handle` is the file's raw bytes; a compressed file (by `path`'s suffix) is
    read through `open_decompressed`. Sources (and fallback ids) start with
    `source`, by default `path`. Documents carry the record's `keep_fields` (none for text).
    """
    reader = input_format(fmt).read
    fields = RecordFields(id_field, text_field, max_chars, tuple(keep_fields))
    return reader(read_lib.open_decompressed(handle, path), path if source is None else source,
                  fields)
