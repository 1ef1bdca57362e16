"""Checks on the input before a job starts: the fields each format names exist, no file is refused, and how many bytes there are to read."""
from __future__ import annotations

import logging
import os
import re
import shlex
from typing import IO, Any, Callable, Optional, Sequence

from apache_beam.io.filesystem import CompressionTypes
from apache_beam.io.filesystems import FileSystems

from larvatus.layout import (
    ANNOTATIONS_DIR, ANNOTATIONS_PREFIX, DEAD_LETTER_PREFIX, DEAD_LETTERS_DIR, ML_TOKENIZER_NAME,
    PARQUET_SUFFIX, SUMMARY_NAME, join,
)
from larvatus.options import OptionsError
from larvatus.transforms import formats
from larvatus.transforms.formats import (  # noqa: F401 (SAMPLE_RECORDS: how far the check reads)
    SAMPLE_RECORDS, FieldSample, format_for_path, jsonl_field_counts,
)
from larvatus.transforms.read import (
    COMPRESSION_SUFFIXES, input_base, open_decompressed, special_file_kind,
)

MAX_FIELDS_LISTED = 30
FOLDER_FILES_LOOKED_AT = 1000   # files of a folder given as --input looked at for its hint
FILES_TRIED = 5             # files of a format tried for a readable sample

LOG = logging.getLogger(__name__)
_GLOB_CHARS = "*?["


def input_files(pattern: str) -> list:
    """The files `pattern` matches (Beam FileMetadata: path, size_in_bytes), as `glob_matches`
    reads it: `**/` is zero or more folders, as in shells and pathlib (Beam's own match
    needs one at least), so `data/**/*.txt` matches `data/a.txt` too. The launcher and the
    job's workers both match through here."""
    if "**" not in pattern:
        return list(FileSystems.match([pattern])[0].metadata_list)
    # Beam's `**` is any characters, `/` included: a pattern without the "/" after each
    # `**` matches a superset of the files, which the pattern itself then picks from.
    broad = FileSystems.match([pattern.replace("**/", "**")])[0].metadata_list
    return [metadata for metadata in broad if glob_matches(pattern, metadata.path)]


def folder_hint(folder: str) -> str:
    """The error for an --input that names a folder, with a file pattern that works as
    printed: `**` (zero or more folders) and the most common input suffix among its first
    files, quoted for the shell."""
    counts: dict[str, int] = {}
    listed = FileSystems.match([join(folder, "**")], limits=[FOLDER_FILES_LOOKED_AT])
    for metadata in listed[0].metadata_list:
        suffix = _input_suffix(metadata.path)
        if suffix:
            counts[suffix] = counts.get(suffix, 0) + 1
    if not counts:
        return f"--input {folder} is a folder with no file of a known input format in it; " \
               f"give a file pattern such as {shlex.quote(join(folder, '**', '*.jsonl'))}"
    suffix = max(sorted(counts), key=counts.get)
    return (f"--input {folder} is a folder; give a file pattern, such as "
            f"--input {shlex.quote(join(folder, '**', '*' + suffix))} (every {suffix} file in "
            f"it and its subfolders)")


def _input_suffix(path: str) -> str:
    """A file's format suffix with its compression suffix (".jsonl", ".csv.gz"), or "" when
    its name names no input format."""
    name = path.rsplit("/", 1)[-1].lower()
    compression = next((s for s in COMPRESSION_SUFFIXES if name.endswith(s)), "")
    name = name[: len(name) - len(compression)]
    for fmt in formats.FORMATS:
        for extension in fmt.extensions:
            if name.endswith(extension) and len(name) > len(extension):
                return extension + compression
    return ""


def check_matched(pattern: str, files: Sequence) -> None:
    """Refuses matched files that a run must not read silently: symbolic links that lead out
    of the input's base folder (a link planted in a shared folder would read any file the
    user can); reports empty files, and refuses an input of empty files only."""
    base = input_base(pattern)
    if base and "://" not in pattern and any(c in pattern for c in _GLOB_CHARS):
        inside = os.path.realpath(base).rstrip("/") + "/"
        outside = [m.path for m in files if not os.path.realpath(m.path).startswith(inside)
                   and special_file_kind(m.path) is None]   # FIFOs, devices: dead letters
        if outside:
            raise OptionsError(
                f"--input {pattern} matches {len(outside)} symbolic link(s) that lead out of "
                f"its folder {base} (such as {outside[0]}); Larvatus does not follow them: "
                f"give their targets' folder as --input, or copy the files in")
    empty = [m.path for m in files if getattr(m, "size_in_bytes", None) == 0]
    if empty and len(empty) == len(files):
        raise OptionsError(
            f"--input {pattern} matches only empty files ({len(empty)}, such as {empty[0]}): "
            f"there is nothing to annotate")
    if empty:
        LOG.warning("%d of the %d input files are empty (0 bytes) and hold no document, "
                    "such as %s", len(empty), len(files), empty[0])


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
    names = sorted(formats.printable(name) for name in fields)
    shown = ", ".join(names[:MAX_FIELDS_LISTED])
    more = f" and {len(names) - MAX_FIELDS_LISTED} more" if len(names) > MAX_FIELDS_LISTED else ""
    return (shown + more) if names else "(none)"


def _opened(path: str, read: Callable[[IO[bytes], str], Any]) -> Any:
    """read(handle, path) over a file's bytes, decompressed as the job reads them: never more
    than `read` asks for (Beam's decompressor expands whole blocks)."""
    with FileSystems.open(path, compression_type=CompressionTypes.UNCOMPRESSED) as raw:
        return read(open_decompressed(raw, path), path)


def jsonl_fields(path: str) -> tuple[int, dict[str, int]]:
    """(objects read, how many of them have each field) over the first records of a JSONL file."""
    return _opened(path, lambda handle, _: jsonl_field_counts(handle))


def _paths_by_format(files: Sequence, requested: str) -> dict[str, list[str]]:
    """The files' paths by the format each is read as, special files (FIFOs, devices) left
    out: they are never opened."""
    by_format: dict[str, list[str]] = {}
    for metadata in files:
        if special_file_kind(metadata.path) is None:
            by_format.setdefault(format_for_path(metadata.path, requested), []).append(
                metadata.path)
    return by_format


def check_refusals(files: Sequence, input_format: str) -> None:
    """Refuses a file whose format names a mistake at its start (a JSON file holding one
    array: Larvatus reads JSON Lines, one object a line); a few files of each format are looked at."""
    by_format = _paths_by_format(files, input_format)
    for fmt in formats.FORMATS:
        for path in by_format.get(fmt.name, [])[:FILES_TRIED] if fmt.refuse else ():
            try:
                problem = _opened(path, fmt.refuse)
            except Exception:   # unreadable: the job dead-letters it
                continue
            if problem:
                raise OptionsError(problem)


def _first_readable(paths: Sequence[str], read: Callable[[str], Any]) -> tuple[str, Any]:
    """(path, read(path)) for the first of (up to FILES_TRIED) `paths` that reads and has
    fields, or ("", None): an unreadable file is the data's problem (the job dead-letters it
    as unreadable_file), not a reason to refuse the job."""
    for path in paths[:FILES_TRIED]:
        try:
            found = read(path)
        except Exception as error:   # corrupt footer, truncated stream, I/O error
            LOG.debug("field check: %s unreadable (%s), trying the next file", path,
                      type(error).__name__)
            continue
        if found:
            return path, found
    return "", None


def check_text_ids(files: Sequence, input_format: str, text_ids: str) -> None:
    """Refuses `--text-ids hash` when no matched file is read as a format whose ids are
    paths (text): it would change nothing."""
    if text_ids == "path":
        return
    by_path = [fmt for fmt in formats.FORMATS if fmt.ids_from_path]
    read_as = sorted({format_for_path(metadata.path, input_format) for metadata in files})
    if not {fmt.name for fmt in by_path} & set(read_as):
        names = " or ".join(fmt.name for fmt in by_path)
        raise OptionsError(
            f"--text-ids {text_ids} applies to {names} input "
            f"({' or '.join(fmt.extensions[0] for fmt in by_path)} files or --input-format "
            f"{names}); the input is read as {', '.join(read_as)}, whose ids come from "
            f"--id-field and whose source is the file's path relative to the input's base folder")


def _check_kept(keep_fields: Sequence[str], seen: set[str]) -> None:
    """Refuses a --keep-fields name that no sampled file has (nothing was sampled: no check)."""
    missing = [name for name in keep_fields if seen and name not in seen]
    if missing:
        raise OptionsError(
            f"--keep-fields {', '.join(missing)}: in none of the input files looked at; their "
            f"fields: {_fields_text(seen)}.")


def _check_sample(path: str, sample: FieldSample, wanted: Sequence[tuple[str, str]],
                  text_field: str) -> None:
    """Refuses an option naming a field the sample lacks, or a typed text column that holds no text."""
    for option, name in wanted:
        if name not in sample.names:
            raise OptionsError(f"{option} {name!r} {sample.absent}: "
                               f"{_fields_text(sample.names)}. Pass {option} with one of them.")
        if name in sample.repeated:
            raise OptionsError(f"{option} {name!r}: the header of {path} names it more than "
                               f"once, so which column to read is ambiguous; rename one of them")
    text_type = sample.types.get(text_field, "string")
    if not ("string" in text_type or "binary" in text_type):
        raise OptionsError(
            f"--text-field {text_field!r} of {path} holds {text_type}, not text; its "
            f"columns: {_fields_text(sample.names)}.")


def check_fields(files: Sequence, input_format: str, id_field: Optional[str],
                 text_field: str, keep_fields: Sequence[str] = ()) -> None:
    """Fails with the fields that do exist when --text-field (or an --id-field named) is absent.

    For each format with fields, looks at the first readable file's fields (a few files are
    tried; when none can be read there is nothing to check and the job dead-letters them):
    a Parquet schema, a CSV/TSV header, the first records of a JSONL file. `id_field` None
    means the default: `id` when present, else the record's source, so it is not checked.
    A `keep_fields` name must be in one of those samples at least (formats may differ;
    a record lacking one gets null).
    """
    by_format = _paths_by_format(files, input_format)
    wanted = [("--text-field", text_field)] + ([("--id-field", id_field)] if id_field else [])
    seen_anywhere: set[str] = set()
    for fmt in formats.FORMATS:
        if fmt.sample is None:
            continue
        path, sample = _first_readable(by_format.get(fmt.name, []),
                                       lambda name, fmt=fmt: _opened(name, fmt.sample))
        if sample:
            _check_sample(path, sample, wanted, text_field)
            seen_anywhere |= sample.names
            repeated = [name for name in keep_fields if name in sample.repeated]
            if repeated:
                raise OptionsError(
                    f"--keep-fields {repeated[0]!r}: the header of {path} names it more than "
                    f"once, so which column to keep is ambiguous; rename one of them")
    _check_kept(keep_fields, seen_anywhere)
