"""Turn raw input records (JSONL lines, CSV/TSV rows, text files, Parquet rows) into Documents or DeadLetters."""
from __future__ import annotations

import hashlib
import hmac
import io
import json
import os
import stat
from dataclasses import replace
from typing import IO, Any, Callable, Iterator, Optional, Sequence, Union

from larvatus.transforms.records import DeadLetter, DeadLetterReason as Reason, Document

ParseResult = Union[Document, DeadLetter]

DEFAULT_MAX_CHARS = 2_000_000
# Every compression Beam names (apache_beam.io.filesystem.CompressionTypes), by suffix.
COMPRESSIONS = {".gz": "gzip", ".bz2": "bzip2", ".deflate": "deflate", ".zst": "zstd",
                ".zstd": "zstd", ".xz": "lzma", ".lzma": "lzma"}
COMPRESSION_SUFFIXES = tuple(COMPRESSIONS)
BLANK_LINE = None  # what `read_jsonl` yields for a blank line: not a record, only counted
PARQUET_BATCH_ROWS = 1024


def special_file_kind(path: str) -> Optional[str]:
    """What a local path is when it is no regular file (followed through symlinks): "a FIFO",
    "a device", "a socket"...; None for a regular file or a remote object. Opening one can
    block forever (a FIFO) or never end (/dev/zero), so the reader does not."""
    if "://" in path:
        return None
    try:
        mode = os.stat(path).st_mode
    except OSError:
        return None   # gone or unreadable: opening it says so
    if stat.S_ISREG(mode):
        return None
    if stat.S_ISFIFO(mode):
        return "a FIFO"
    if stat.S_ISCHR(mode) or stat.S_ISBLK(mode):
        return "a device"
    if stat.S_ISSOCK(mode):
        return "a socket"
    return "a folder" if stat.S_ISDIR(mode) else "not a regular file"


def compression_for_path(path: str) -> Optional[str]:
    """The compression a file's suffix names, as Beam reads it ("gzip", "zstd", ...), or None."""
    name = path.lower()
    for suffix, compression in COMPRESSIONS.items():
        if name.endswith(suffix):
            return compression
    return None


class _ZlibStream:
    """zlib's decompressor with the interface of bz2's and lzma's (`needs_input`)."""

    def __init__(self, wbits: int):
        import zlib

        self._decompressor = zlib.decompressobj(wbits)
        self._tail = b""

    @property
    def eof(self) -> bool:
        return self._decompressor.eof

    @property
    def unused_data(self) -> bytes:
        return self._decompressor.unused_data

    @property
    def needs_input(self) -> bool:
        return not self._tail

    def decompress(self, data: bytes, max_length: int) -> bytes:
        out = self._decompressor.decompress(self._tail + data, max_length)
        self._tail = self._decompressor.unconsumed_tail
        return out


class _ZstdStream:
    """zstandard's decompressor, fed 64 bytes at a time so that one call's output stays
    small (a zstd block of 4 bytes can stand for 128 KiB), with bz2's interface."""

    FEED = 64

    def __init__(self):
        import zstandard

        self._decompressor = zstandard.ZstdDecompressor(
            max_window_size=2 ** 31).decompressobj()
        self._input = b""
        self._output = b""

    @property
    def eof(self) -> bool:
        return self._decompressor.eof and not self._output

    @property
    def unused_data(self) -> bytes:
        return self._decompressor.unused_data + self._input

    @property
    def needs_input(self) -> bool:
        return not self._input and not self._output

    def decompress(self, data: bytes, max_length: int) -> bytes:
        self._input += data
        view, fed = memoryview(self._input), 0
        pieces = [self._output]
        produced = len(self._output)
        while produced < max_length and fed < len(view) and not self._decompressor.eof:
            piece = self._decompressor.decompress(view[fed:fed + self.FEED].tobytes())
            fed += self.FEED
            pieces.append(piece)
            produced += len(piece)
        self._input = view[fed:].tobytes() if fed < len(view) else b""
        output = b"".join(pieces)
        self._output = output[max_length:]
        return output[:max_length]


def _decompressor_factory(compression: str) -> Callable[[], Any]:
    import bz2
    import lzma

    return {
        "gzip": lambda: _ZlibStream(31),         # gzip header and CRC
        "deflate": lambda: _ZlibStream(15),      # zlib header, as Beam writes DEFLATE
        "bzip2": bz2.BZ2Decompressor,
        "lzma": lzma.LZMADecompressor,            # .xz and .lzma alike
        "zstd": _ZstdStream,
    }[compression]


class DecompressingReader(io.RawIOBase):
    """Reads a compressed stream (concatenated members included) with bounded memory.

    Each read decompresses at most what was asked for, so a small compressed file
    that expands to gigabytes costs no more memory than the bytes read from it. A
    stream that ends before its end-of-stream marker raises EOFError
    ("truncated"), where Beam's CompressedFile returns a silently shorter text.
    """

    CHUNK = 64 * 1024

    def __init__(self, raw: IO[bytes], compression: str):
        super().__init__()
        self._raw = raw
        self._factory = _decompressor_factory(compression)
        self._decompressor = self._factory()
        self._started = False

    def readable(self) -> bool:
        return True

    def readinto(self, buffer) -> int:
        data = self._read(len(buffer))
        buffer[:len(data)] = data
        return len(data)

    def _read(self, size: int) -> bytes:
        while size > 0:
            if self._decompressor.eof:   # one member done: another may follow
                block = self._decompressor.unused_data or self._raw.read(self.CHUNK)
                if not block:
                    return b""
                self._decompressor = self._factory()
            elif self._decompressor.needs_input:
                block = self._raw.read(self.CHUNK)
                if not block:
                    data = self._decompressor.decompress(b"", size)
                    if data or self._decompressor.eof:
                        return data
                    if not self._started:
                        return b""   # an empty file is an empty stream, as gzip.open reads it
                    raise EOFError("the compressed stream ends early (truncated)")
            else:
                block = b""
            self._started = True
            data = self._decompressor.decompress(block, size)
            if data:
                return data
        return b""


def open_decompressed(raw: IO[bytes], path: str) -> IO[bytes]:
    """A buffered, decompressed view of `raw` when `path` names a compression, else `raw`."""
    compression = compression_for_path(path)
    if compression is None:
        return raw
    return io.BufferedReader(DecompressingReader(raw, compression))


def describe_read_error(error: BaseException) -> str:
    """What broke a file, by kind: never the exception's message, which may quote data."""
    if isinstance(error, EOFError):
        return "truncated: the compressed stream ends early"
    kind = type(error)
    package = kind.__module__.split(".")[0].lstrip("_")
    if package in ("zlib", "lzma", "bz2", "zstandard"):
        return f"corrupt: the compressed data cannot be decoded ({package}.{kind.__name__})"
    return kind.__name__


_JSON_TYPES = {dict: "object", list: "array", str: "string", int: "number", float: "number",
               bool: "boolean", type(None): "null"}


def json_kind(value: Any) -> str:
    """A value's type as JSON names it, with its article: "an array", "a string", "null"."""
    kind = _JSON_TYPES.get(type(value), type(value).__name__)
    if kind == "null":
        return kind
    return f"{'an' if kind[0] in 'aeiou' else 'a'} {kind}"


def _describe_json_error(error: json.JSONDecodeError) -> str:
    # JSONDecodeError's own message carries no document text, only a position;
    # some messages end in "at" ("Unterminated string starting at"), as json writes them.
    return f"{error.msg}: line {error.lineno} column {error.colno}"


def validate_text(
    doc_id: Optional[str], text: Any, source: str, max_chars: int
) -> ParseResult:
    """Checks a decoded text value and returns a Document or the reason it is not one.

    An empty or whitespace-only text is a valid document (it comes out with no entities).
    """
    if text is None:
        return DeadLetter(source, Reason.MISSING_TEXT, "no text field", doc_id)
    if not isinstance(text, str):
        return DeadLetter(source, Reason.TEXT_NOT_STRING, f"text is {json_kind(text)}", doc_id)
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
        return DeadLetter(source, Reason.ID_NOT_STRING, f"id is {json_kind(value)}")
    doc_id = str(value)
    try:
        doc_id.encode("utf-8")
    except UnicodeEncodeError:
        return DeadLetter(source, Reason.ID_NOT_STRING, "id has an unpaired surrogate")
    return doc_id


def kept_value(value: Any) -> Optional[str]:
    """A --keep-fields value as the annotations carry it: text as it is (bytes that are not
    UTF-8 as \\xNN escapes), other values as JSON, an absent field as None."""
    if value is None:
        return None
    if isinstance(value, bytes):
        return value.decode("utf-8", "backslashreplace")
    if not isinstance(value, str):
        value = json.dumps(value, ensure_ascii=False, default=str)
    try:
        raw = value.encode("utf-8", "surrogateescape")   # CSV bytes that were not UTF-8
    except UnicodeEncodeError:
        raw = value.encode("utf-8", "surrogatepass")     # a JSON "\ud800" escape
    return raw.decode("utf-8", "backslashreplace")


def with_fields(result: ParseResult, record: dict[str, Any],
                keep_fields: Sequence[str]) -> ParseResult:
    """The Document carrying the record's --keep-fields (a DeadLetter as it is)."""
    if not keep_fields or not isinstance(result, Document):
        return result
    return replace(result, fields=tuple((name, kept_value(record.get(name)))
                                        for name in keep_fields))


def parse_json_line(
    line: bytes, source: str, id_field: str, text_field: str,
    max_chars: int = DEFAULT_MAX_CHARS, keep_fields: Sequence[str] = (),
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
            source, Reason.NOT_AN_OBJECT, f"line holds {json_kind(record)}, not an object")
    doc_id = _coerce_id(record.get(id_field), source)
    if isinstance(doc_id, DeadLetter):
        return doc_id
    return with_fields(validate_text(doc_id, record.get(text_field), source, max_chars),
                       record, keep_fields)


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
    max_chars: int = DEFAULT_MAX_CHARS, keep_fields: Sequence[str] = (),
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
    return with_fields(validate_text(doc_id, text, source, max_chars), row, keep_fields)


# Room in a JSONL line for everything but the text (id, other fields).
JSONL_LINE_SLACK = 16 * 1024 * 1024


def jsonl_line_limit(max_chars: int) -> int:
    """The longest JSONL line (bytes) that can hold a text of `max_chars` characters:
    12 bytes a character (a surrogate pair escaped as two \\uXXXX) and 16 MiB for the rest."""
    return 12 * (max_chars + 1) + JSONL_LINE_SLACK


def read_jsonl(
    handle: IO[bytes], path: str, id_field: str, text_field: str,
    max_chars: int = DEFAULT_MAX_CHARS, keep_fields: Sequence[str] = (),
) -> Iterator[Optional[ParseResult]]:
    """Parses a JSONL stream line by line; yields `BLANK_LINE` for blank lines.

    Reads with `readline(limit)`, so memory stays bounded: a line longer than
    `jsonl_line_limit(max_chars)` is skipped unread and dead-lettered as too_large.
    """
    limit = jsonl_line_limit(max_chars)
    number = 0
    while True:
        line = handle.readline(limit + 1)
        if not line:
            return
        number += 1
        if len(line) > limit and not line.endswith(b"\n"):
            while line and not line.endswith(b"\n"):   # skip the rest of the line
                line = handle.readline(1 << 20)
            yield DeadLetter(f"{path}:{number}", Reason.TOO_LARGE,
                             f"line of more than {limit} bytes > --max-chars {max_chars}")
            continue
        if not line.strip():
            yield BLANK_LINE
            continue
        yield parse_json_line(line.rstrip(b"\r\n"), f"{path}:{number}", id_field, text_field,
                              max_chars, keep_fields)


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
    max_chars: int = DEFAULT_MAX_CHARS, keep_fields: Sequence[str] = (),
) -> Iterator[ParseResult]:
    """Parses a Parquet file row by row, reading only the id and text columns."""
    import pyarrow.parquet as pq

    parquet = pq.ParquetFile(handle)
    columns = [c for c in dict.fromkeys((id_field, text_field, *keep_fields))
               if c in parquet.schema_arrow.names]
    row_number = 0
    for batch in parquet.iter_batches(columns=columns, batch_size=PARQUET_BATCH_ROWS):
        for row in batch.to_pylist():
            yield parse_row(row, f"{path}#row={row_number}", id_field, text_field, max_chars,
                            keep_fields)
            row_number += 1


_GLOB_CHARS = "*?["


def input_base(pattern: str) -> str:
    """The folder a file pattern's matches are named relative to: everything before the
    last "/" ahead of its first wildcard ("data/2024/*.jsonl" -> "data/2024";
    "gs://b/in/**/x.txt" -> "gs://b/in"; a plain file's own folder)."""
    cut = min((pattern.find(c) for c in _GLOB_CHARS if c in pattern), default=len(pattern))
    head = pattern[:cut]
    return head.rsplit("/", 1)[0] if "/" in head else ""


def source_name(path: str, base: str) -> str:
    """A matched file's name as rows and dead letters show it: relative to `base` (so it does
    not depend on how --input was spelled), always valid UTF-8 (bytes of a file name that
    are not UTF-8 appear as \\xNN escapes instead of crashing the writer). "%" and ":" are
    written %25 and %3A, so that a name never reads as another file's record (`a.jsonl:1`,
    the first line of a.jsonl, is no file named so)."""
    if base and path.startswith(base.rstrip("/") + "/"):
        path = path[len(base.rstrip("/")) + 1:]
    path = path.replace("%", "%25").replace(":", "%3A")
    return path.encode("utf-8", "surrogateescape").decode("utf-8", "backslashreplace")


def hashed_name(name: str, key: Optional[bytes] = None) -> str:
    """A file name that cannot be read back: `sha256:` and 16 hex digits of its SHA-256,
    or with a secret key `hmac:` and 16 hex digits of its HMAC-SHA256 (then nobody
    without the key can test a guessed name against it)."""
    data = name.encode("utf-8")
    if key:
        return "hmac:" + hmac.new(key, data, hashlib.sha256).hexdigest()[:16]
    return "sha256:" + hashlib.sha256(data).hexdigest()[:16]
