"""Turn raw input records (JSONL lines, text files, Parquet rows) into Documents or DeadLetters."""
from __future__ import annotations

import json
from typing import Any, Optional, Union

from transforms.records import DeadLetter, Document

ParseResult = Union[Document, DeadLetter]

DEFAULT_MAX_CHARS = 2_000_000


def _describe_json_error(error: json.JSONDecodeError) -> str:
    # JSONDecodeError's own message carries no document text, only a position.
    return f"{error.msg} at line {error.lineno} column {error.colno}"


def validate_text(
    doc_id: Optional[str], text: Any, source: str, max_chars: int
) -> ParseResult:
    """Checks a decoded text value and returns a Document or the reason it is not one."""
    if text is None:
        return DeadLetter(source, "missing_text", "no text field", doc_id)
    if not isinstance(text, str):
        return DeadLetter(
            source, "text_not_string", f"text is a {type(text).__name__}", doc_id)
    if not text.strip():
        return DeadLetter(source, "empty_text", "text is empty or whitespace", doc_id)
    if len(text) > max_chars:
        return DeadLetter(
            source, "too_large", f"{len(text)} characters > --max-chars {max_chars}", doc_id)
    try:
        # Lone surrogates (from "\ud800" JSON escapes) cannot be written as UTF-8.
        text.encode("utf-8")
    except UnicodeEncodeError as error:
        return DeadLetter(
            source, "invalid_unicode",
            f"unpaired surrogate at character {error.start}", doc_id)
    return Document(doc_id=doc_id or source, text=text, source=source)


def _coerce_id(value: Any, source: str) -> Union[str, DeadLetter, None]:
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, (str, int)):
        return DeadLetter(source, "id_not_string", f"id is a {type(value).__name__}")
    doc_id = str(value)
    try:
        doc_id.encode("utf-8")
    except UnicodeEncodeError:
        return DeadLetter(source, "id_not_string", "id has an unpaired surrogate")
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
        return DeadLetter(source, "invalid_utf8", f"invalid UTF-8 at byte {error.start}")
    try:
        record = json.loads(decoded.lstrip("\ufeff"))
    except json.JSONDecodeError as error:
        return DeadLetter(source, "invalid_json", _describe_json_error(error))
    except RecursionError:
        return DeadLetter(source, "invalid_json", "nesting too deep")
    except ValueError as error:  # e.g. an integer longer than Python's digit limit
        return DeadLetter(source, "invalid_json", f"unreadable value ({str(error)[:60]})")
    if not isinstance(record, dict):
        return DeadLetter(
            source, "not_an_object", f"line holds a JSON {type(record).__name__}")
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
        return DeadLetter(path, "invalid_utf8", f"invalid UTF-8 at byte {error.start}", path)
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
                source, "invalid_utf8", f"invalid UTF-8 at byte {error.start}", doc_id)
    return validate_text(doc_id, text, source, max_chars)
