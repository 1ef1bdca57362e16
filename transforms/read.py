"""Turn raw input records (JSONL lines, text files, Parquet rows) into Documents or DeadLetters."""
from __future__ import annotations

import hashlib
import hmac
import json
from typing import IO, Any, Iterator, Optional, Union

from transforms.records import DeadLetter, DeadLetterReason as Reason, Document

ParseResult = Union[Document, DeadLetter]

DEFAULT_MAX_CHARS = 2_000_000
INPUT_FORMATS = ("jsonl", "text", "parquet")
COMPRESSION_SUFFIXES = (".gz", ".bz2", ".zst", ".deflate", ".xz", ".lzma")
_EXTENSIONS = {".jsonl": "jsonl", ".json": "jsonl", ".ndjson": "jsonl", ".txt": "text",
               ".text": "text", ".parquet": "parquet", ".pq": "parquet"}
BLANK_LINE = None  # what `read_jsonl` yields for a blank line: not a record, only counted
PARQUET_BATCH_ROWS = 1024
FILE_NAMES = ("path", "hash")   # how a file is named in `source` (and in text ids)
FILE_HASH_HEX_DIGITS = 32       # 128 bits: no collision in any corpus
_FILE_HASH_DOMAIN = b"larvatus-file\x00"  # keeps these HMACs apart from pseudonyms


def _relative_bytes(path: str, base: str) -> bytes:
    name = path[len(base):] if base and path.startswith(base) else path
    try:
        return name.encode("utf-8", "surrogateescape")   # the file name's own bytes
    except UnicodeEncodeError:   # a surrogate that did not come from a byte
        return name.encode("utf-8", "backslashreplace")


def relative_name(path: str, base: str) -> str:
    """A matched file's name relative to the input's base folder, always valid UTF-8.

    `base` is the non-glob prefix of the input pattern up to its last "/", made
    absolute at launch, so the name does not depend on how --input was spelled.
    Bytes of a file name that are not UTF-8 (Python hands them over as lone
    surrogates) are written as `\\xNN`: a file name is data and never breaks a job.
    """
    return _relative_bytes(path, base).decode("utf-8", "backslashreplace")


def hashed_name(path: str, base: str, key: bytes) -> str:
    """A file's keyed name: HMAC-SHA256 of its relative path's bytes, 32 hex digits.

    Stable across runs, machines and spellings of --input under the same key; says
    nothing about the name to whoever lacks the key (a bare hash of "anna_kowalski.txt"
    could be confirmed by guessing).
    """
    message = _FILE_HASH_DOMAIN + _relative_bytes(path, base)
    return hmac.new(key, message, hashlib.sha256).hexdigest()[:FILE_HASH_HEX_DIGITS]


def format_for_path(path: str, requested: str = "auto") -> str:
    """The input format for a file: the one requested, or the one its extension names."""
    if requested != "auto":
        return requested
    name = path.lower()
    for suffix in COMPRESSION_SUFFIXES:
        if name.endswith(suffix):
            name = name[: -len(suffix)]
    for extension, fmt in _EXTENSIONS.items():
        if name.endswith(extension):
            return fmt
    return "text"


def _describe_json_error(error: json.JSONDecodeError) -> str:
    # JSONDecodeError's own message carries no document text, only a position.
    return f"{error.msg} at line {error.lineno} column {error.colno}"


def validate_text(
    doc_id: Optional[str], text: Any, source: str, max_chars: int
) -> ParseResult:
    """Checks a decoded text value and returns a Document or the reason it is not one."""
    if text is None:
        return DeadLetter(source, Reason.MISSING_TEXT, "no text field", doc_id)
    if not isinstance(text, str):
        return DeadLetter(
            source, Reason.TEXT_NOT_STRING, f"text is a {type(text).__name__}", doc_id)
    if not text.strip():
        return DeadLetter(source, Reason.EMPTY_TEXT, "text is empty or whitespace", doc_id)
    if len(text) > max_chars:
        return DeadLetter(
            source, Reason.TOO_LARGE, f"{len(text)} characters > --max-chars {max_chars}", doc_id)
    try:
        # Lone surrogates (from "\ud800" JSON escapes) cannot be written as UTF-8.
        text.encode("utf-8")
    except UnicodeEncodeError as error:
        return DeadLetter(
            source, Reason.INVALID_UNICODE,
            f"unpaired surrogate at character {error.start}", doc_id)
    return Document(doc_id=doc_id or source, text=text, source=source)


def _coerce_id(value: Any, source: str) -> Union[str, DeadLetter, None]:
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, (str, int)):
        return DeadLetter(source, Reason.ID_NOT_STRING, f"id is a {type(value).__name__}")
    doc_id = str(value)
    try:
        doc_id.encode("utf-8")
    except UnicodeEncodeError:
        return DeadLetter(source, Reason.ID_NOT_STRING, "id has an unpaired surrogate")
    return doc_id


def parse_json_line(
    line: bytes, source: str, id_field: str, text_field: str,
    max_chars: int = DEFAULT_MAX_CHARS,
) -> ParseResult:
    """Parses one JSONL line (raw bytes) into a Document or a DeadLetter.

    A record without an id takes its `source` (file:line) as id.
    """
    try:
        decoded = line.decode("utf-8")
    except UnicodeDecodeError as error:
        return DeadLetter(source, Reason.INVALID_UTF8, f"invalid UTF-8 at byte {error.start}")
    try:
        record = json.loads(decoded.lstrip("\ufeff"))
    except json.JSONDecodeError as error:
        return DeadLetter(source, Reason.INVALID_JSON, _describe_json_error(error))
    except RecursionError:
        return DeadLetter(source, Reason.INVALID_JSON, "nesting too deep")
    except ValueError as error:  # e.g. an integer longer than Python's digit limit
        return DeadLetter(source, Reason.INVALID_JSON, f"unreadable value ({str(error)[:60]})")
    if not isinstance(record, dict):
        return DeadLetter(
            source, Reason.NOT_AN_OBJECT, f"line holds a JSON {type(record).__name__}")
    doc_id = _coerce_id(record.get(id_field), source)
    if isinstance(doc_id, DeadLetter):
        return doc_id
    return validate_text(doc_id, record.get(text_field), source, max_chars)


def parse_text_file(
    content: bytes, path: str, max_chars: int = DEFAULT_MAX_CHARS
) -> ParseResult:
    """Parses a whole plain-text file into one Document whose id is its path."""
    try:
        text = content.decode("utf-8")
    except UnicodeDecodeError as error:
        return DeadLetter(path, Reason.INVALID_UTF8, f"invalid UTF-8 at byte {error.start}", path)
    if text.startswith("\ufeff"):
        text = text[1:]
    return validate_text(path, text, path, max_chars)


def parse_row(
    row: dict[str, Any], source: str, id_field: str, text_field: str,
    max_chars: int = DEFAULT_MAX_CHARS,
) -> ParseResult:
    """Parses one Parquet row (already a Python dict) into a Document or a DeadLetter."""
    doc_id = _coerce_id(row.get(id_field), source)
    if isinstance(doc_id, DeadLetter):
        return doc_id
    text = row.get(text_field)
    if isinstance(text, bytes):
        try:
            text = text.decode("utf-8")
        except UnicodeDecodeError as error:
            return DeadLetter(
                source, Reason.INVALID_UTF8, f"invalid UTF-8 at byte {error.start}", doc_id)
    return validate_text(doc_id, text, source, max_chars)


def read_jsonl(
    handle: IO[bytes], path: str, id_field: str, text_field: str,
    max_chars: int = DEFAULT_MAX_CHARS,
) -> Iterator[Optional[ParseResult]]:
    """Parses a JSONL stream line by line; yields `BLANK_LINE` for blank lines.

    Reads with `readline`, so any file-like object works, Beam's compressed
    files included (they cannot be iterated).
    """
    for number, line in enumerate(iter(handle.readline, b""), start=1):
        if not line.strip():
            yield BLANK_LINE
            continue
        yield parse_json_line(line.rstrip(b"\r\n"), f"{path}:{number}", id_field, text_field,
                              max_chars)


def read_text(handle: IO[bytes], path: str, max_chars: int = DEFAULT_MAX_CHARS) -> Iterator[ParseResult]:
    """Parses a whole text file as one document, reading at most what `max_chars` could need.

    UTF-8 takes at most 4 bytes a character, so a file longer than that is too
    large without being read whole.
    """
    limit = 4 * (max_chars + 1) + 3   # + a BOM
    content = handle.read(limit + 1)
    if len(content) > limit:
        yield DeadLetter(path, Reason.TOO_LARGE,
                         f"more than {limit} bytes > --max-chars {max_chars}", path)
        return
    yield parse_text_file(content, path, max_chars)


def read_parquet(
    handle: IO[bytes], path: str, id_field: str, text_field: str,
    max_chars: int = DEFAULT_MAX_CHARS,
) -> Iterator[ParseResult]:
    """Parses a Parquet file row by row, reading only the id and text columns."""
    import pyarrow.parquet as pq

    parquet = pq.ParquetFile(handle)
    columns = [c for c in (id_field, text_field) if c in parquet.schema_arrow.names]
    row_number = 0
    for batch in parquet.iter_batches(columns=columns, batch_size=PARQUET_BATCH_ROWS):
        for row in batch.to_pylist():
            yield parse_row(row, f"{path}#row={row_number}", id_field, text_field, max_chars)
            row_number += 1


def read_records(
    handle: IO[bytes], path: str, fmt: str, id_field: str, text_field: str,
    max_chars: int = DEFAULT_MAX_CHARS,
) -> Iterator[Optional[ParseResult]]:
    """Documents, dead letters and blank lines of one file in the given format."""
    if fmt == "jsonl":
        return read_jsonl(handle, path, id_field, text_field, max_chars)
    if fmt == "text":
        return read_text(handle, path, max_chars)
    if fmt == "parquet":
        return read_parquet(handle, path, id_field, text_field, max_chars)
    raise ValueError(f"input format must be one of {INPUT_FORMATS}, got {fmt!r}")
