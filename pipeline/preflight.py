"""Checks on the input before a job starts: the id and text fields exist, and how many bytes there are to read."""
from __future__ import annotations

import json
import logging
import re
from typing import Any, Callable, Optional, Sequence

from apache_beam.io.filesystem import CompressionTypes
from apache_beam.io.filesystems import FileSystems

from larvatus.layout import (
    ANNOTATIONS_DIR, ANNOTATIONS_PREFIX, DEAD_LETTER_PREFIX, DEAD_LETTERS_DIR, ML_TOKENIZER_NAME,
    PARQUET_SUFFIX, SUMMARY_NAME, join,
)
from larvatus.options import OptionsError
from larvatus.transforms.read import format_for_path, open_decompressed, special_file_kind

SAMPLE_RECORDS = 100        # JSONL records looked at before starting
SAMPLE_BYTES = 1 << 20      # at most this much of a JSONL file
MAX_FIELDS_LISTED = 30
FILES_TRIED = 5             # files of a format tried for a readable sample

LOG = logging.getLogger(__name__)


def input_files(pattern: str) -> list:
    """The files `pattern` matches (Beam FileMetadata: path, size_in_bytes)."""
    return list(FileSystems.match([pattern])[0].metadata_list)


def glob_matches(pattern: str, path: str) -> bool:
    """Whether a file pattern matches a path as a file system's match would: `*` and `?`
    within one path part, `**` across parts, `[...]` a character class."""
    regex, i = "", 0
    while i < len(pattern):
        if pattern.startswith("**/", i):
            regex, i = regex + "(?:.*/)?", i + 3
        elif pattern.startswith("**", i):
            regex, i = regex + ".*", i + 2
        elif pattern[i] == "*":
            regex, i = regex + "[^/]*", i + 1
        elif pattern[i] == "?":
            regex, i = regex + "[^/]", i + 1
        elif pattern[i] == "[" and "]" in pattern[i + 2:]:
            end = pattern.index("]", i + 2)
            body = pattern[i + 1:end]
            regex += "[" + ("^" + body[1:] if body.startswith("!") else body) + "]"
            i = end + 1
        else:
            regex, i = regex + re.escape(pattern[i]), i + 1
    return re.fullmatch(regex, path, flags=re.DOTALL) is not None


def check_output_outside_input(pattern: str, files: Sequence, output_dir: str) -> None:
    """Refuses an --input that matches (or would match, once written) files of --output: a
    later run would read its own output as input."""
    inside = output_dir.rstrip("/") + "/"
    ours = [join(output_dir, SUMMARY_NAME), join(output_dir, ML_TOKENIZER_NAME),
            join(output_dir, ANNOTATIONS_DIR, f"{ANNOTATIONS_PREFIX}-00000-of-00001{PARQUET_SUFFIX}"),
            join(output_dir, DEAD_LETTERS_DIR, f"{DEAD_LETTER_PREFIX}-00000-of-00001{PARQUET_SUFFIX}")]
    found = [m.path for m in files if m.path.startswith(inside)] or [
        path for path in ours if glob_matches(pattern, path)]
    if found:
        raise OptionsError(
            f"--input {pattern} matches files inside --output {output_dir} (such as "
            f"{found[0]}), so a run would read its own output; put --output outside the "
            f"input's folder, or narrow --input")


def total_bytes(files: Sequence) -> Optional[int]:
    """Their total size in bytes, or None when a file system does not say."""
    sizes = [getattr(f, "size_in_bytes", None) for f in files]
    if not sizes or any(s is None for s in sizes):
        return None
    return int(sum(sizes))


def _fields_text(fields) -> str:
    names = sorted(fields)
    shown = ", ".join(names[:MAX_FIELDS_LISTED])
    more = f" and {len(names) - MAX_FIELDS_LISTED} more" if len(names) > MAX_FIELDS_LISTED else ""
    return (shown + more) if names else "(none)"


def jsonl_fields(path: str) -> tuple[int, dict[str, int]]:
    """(objects read, how many of them have each field) over the first records of a JSONL file.

    Reads field names only, never values; lines that are not JSON objects are
    skipped (they are the data's problem, dead-lettered in the job).
    """
    seen: dict[str, int] = {}
    objects = 0
    # never more than SAMPLE_BYTES, whatever the file: a line may be endless, and the
    # job's own decompressor expands only what is read (Beam's expands whole blocks)
    with FileSystems.open(path, compression_type=CompressionTypes.UNCOMPRESSED) as raw:
        data = open_decompressed(raw, path).read(SAMPLE_BYTES)
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


def parquet_fields(path: str) -> dict[str, str]:
    """A Parquet file's columns and their types, from its footer."""
    import pyarrow.parquet as pq

    with FileSystems.open(path, compression_type=CompressionTypes.UNCOMPRESSED) as handle:
        schema = pq.ParquetFile(handle).schema_arrow
    return {field.name: str(field.type) for field in schema}


def delimited_fields(path: str, fmt: str) -> dict[str, int]:
    """The header of a CSV or TSV file: its column names (never a value)."""
    import csv
    import io

    from larvatus.transforms.read import DELIMITERS

    with FileSystems.open(path, compression_type=CompressionTypes.AUTO) as handle:
        text = io.TextIOWrapper(handle, encoding="utf-8-sig", errors="replace", newline="")
        header = next(csv.reader(text, delimiter=DELIMITERS[fmt]), [])
    return {name: 1 for name in header}


def json_array_file(path: str) -> bool:
    """Whether a file read as JSON Lines holds one JSON array (its first line opens one)."""
    with FileSystems.open(path, compression_type=CompressionTypes.AUTO) as handle:
        first = handle.readline(SAMPLE_BYTES).lstrip(b"\xef\xbb\xbf \t\r\n")
    return first.startswith(b"[")


def check_json_arrays(files: Sequence, input_format: str) -> None:
    """Refuses a JSON file holding one array: Larvatus reads JSON Lines, one object a line."""
    paths = [m.path for m in files if format_for_path(m.path, input_format) == "jsonl"
             and special_file_kind(m.path) is None]   # a FIFO or device is never opened
    for path in paths[:FILES_TRIED]:
        try:
            is_array = json_array_file(path)
        except Exception:   # unreadable: the job dead-letters it
            continue
        if is_array:
            raise OptionsError(
                f"{path} holds a JSON array, but JSON input is read as JSON Lines: one "
                f"object a line, such as {{\"id\": \"1\", \"text\": \"...\"}}. Convert it, "
                f"e.g. with: jq -c '.[]' {path} > records.jsonl")


def _first_readable(paths: Sequence[str], read: Callable[[str], Any]) -> tuple[str, Any]:
    """(path, read(path)) for the first of (up to FILES_TRIED) `paths` that reads and has
    fields, or ("", None): an unreadable file is the data's problem (the job dead-letters it
    as unreadable_file), not a reason to refuse the job."""
    for path in [p for p in paths if special_file_kind(p) is None][:FILES_TRIED]:
        try:
            found = read(path)
        except Exception as error:   # corrupt footer, truncated stream, I/O error
            LOG.debug("field check: %s unreadable (%s), trying the next file", path,
                      type(error).__name__)
            continue
        if found:
            return path, found
    return "", None


def _jsonl_sample(path: str) -> Optional[tuple[int, dict[str, int]]]:
    objects, seen = jsonl_fields(path)
    return (objects, seen) if objects else None


def check_text_ids(files: Sequence, input_format: str, text_ids: str) -> None:
    """Refuses `--text-ids hash` when no matched file is read as text: it would change nothing."""
    if text_ids == "path":
        return
    formats = sorted({format_for_path(metadata.path, input_format) for metadata in files})
    if "text" not in formats:
        raise OptionsError(
            f"--text-ids {text_ids} applies to text input (.txt files or --input-format text); "
            f"the input is read as {', '.join(formats)}, whose ids come from --id-field and "
            f"whose source is the file's path relative to the input's base folder")


def _check_kept(keep_fields: Sequence[str], seen: set[str]) -> None:
    """Refuses a --keep-fields name that no sampled file has (nothing was sampled: no check)."""
    missing = [name for name in keep_fields if seen and name not in seen]
    if missing:
        raise OptionsError(
            f"--keep-fields {', '.join(missing)}: in none of the input files looked at; their "
            f"fields: {_fields_text(seen)}.")


def check_fields(files: Sequence, input_format: str, id_field: Optional[str],
                 text_field: str, keep_fields: Sequence[str] = ()) -> None:
    """Fails with the fields that do exist when --text-field (or an --id-field named) is absent.

    Looks at the schema of the first readable Parquet file and the first records of
    the first JSONL file holding JSON objects (a few files are tried; when none can be
    read there is nothing to check and the job dead-letters them). `id_field` None
    means the default: `id` when present, else the record's source, so it is not checked.
    A `keep_fields` name must be in one of those samples at least (formats may differ;
    a record lacking one gets null).
    """
    by_format: dict[str, list[str]] = {}
    for metadata in files:
        by_format.setdefault(format_for_path(metadata.path, input_format), []).append(
            metadata.path)
    wanted = [("--text-field", text_field)] + ([("--id-field", id_field)] if id_field else [])
    seen_anywhere: set[str] = set()
    path, columns = _first_readable(by_format.get("parquet", []), parquet_fields)
    seen_anywhere |= set(columns or ())
    if columns:
        for option, name in wanted:
            if name not in columns:
                raise OptionsError(
                    f"{option} {name!r} is not a column of {path}; its columns: "
                    f"{_fields_text(columns)}. Pass {option} with one of them.")
        text_type = columns[text_field]
        if not ("string" in text_type or "binary" in text_type):
            raise OptionsError(
                f"--text-field {text_field!r} of {path} holds {text_type}, not text; its "
                f"columns: {_fields_text(columns)}.")
    for fmt in ("csv", "tsv"):
        path, columns = _first_readable(by_format.get(fmt, []),
                                        lambda name, fmt=fmt: delimited_fields(name, fmt))
        seen_anywhere |= set(columns or ())
        for option, name in wanted if columns else ():
            if name not in columns:
                raise OptionsError(
                    f"{option} {name!r} is not a column of {path}; its header names: "
                    f"{_fields_text(columns)}. Pass {option} with one of them.")
    path, sample = _first_readable(by_format.get("jsonl", []), _jsonl_sample)
    seen_anywhere |= set(sample[1] if sample else ())
    _check_kept(keep_fields, seen_anywhere)
    if sample:
        objects, seen = sample
        for option, name in wanted:
            if name not in seen:
                raise OptionsError(
                    f"{option} {name!r} is in none of the first {objects} records of "
                    f"{path}; their fields: {_fields_text(seen)}. Pass {option} with one "
                    f"of them.")
