"""Input and output paths and the output folder's lifecycle, all through Beam's FileSystems (local, gs://, s3://, ...)."""
from __future__ import annotations

import json
import os
import re
import secrets
from collections import Counter
from dataclasses import dataclass
from typing import Optional

from apache_beam.io.filesystems import FileSystems

from pipeline import layout

_GLOB = re.compile(r"[*?\[]")


class OutputError(ValueError):
    """The output folder cannot take this run (a file, another run's files, unwritable)."""


def is_local(path: str) -> bool:
    return FileSystems.get_scheme(path) is None


def absolute(path: str) -> str:
    """A local path made absolute (workers do not share the launcher's working folder); others as given."""
    return os.path.abspath(path) if is_local(path) else path


def join(base: str, *names: str) -> str:
    return FileSystems.join(base, *names)


def _strip(path: str) -> str:
    return path.rstrip("/") or path


def is_file(path: str) -> bool:
    """Whether `path` is a file (an object), not a folder or nothing."""
    if is_local(path):
        return os.path.isfile(path)
    return FileSystems.exists(_strip(path))


def is_directory(path: str) -> bool:
    """Whether `path` is a folder: a local directory, or an object-store prefix with objects under it."""
    if is_local(path):
        return os.path.isdir(path)
    if FileSystems.exists(_strip(path)):
        return False
    return bool(FileSystems.match([join(_strip(path), "**")], limits=[1])[0].metadata_list)


def _file_ancestor(path: str) -> Optional[str]:
    """A local path's nearest existing ancestor when that is a file (nothing can be made below it)."""
    if not is_local(path):
        return None
    parent = os.path.abspath(path)
    while parent != os.path.dirname(parent):
        parent = os.path.dirname(parent)
        if os.path.exists(parent):
            return parent if os.path.isfile(parent) else None
    return None


def list_files(folder: str) -> list[str]:
    """Every file below `folder`, recursively, as full paths (nothing when it does not exist)."""
    return sorted(m.path for m in FileSystems.match([join(_strip(folder), "**")])[0].metadata_list)


# ---------------------------------------------------------------------------------- input


@dataclass(frozen=True)
class InputFiles:
    """What --input names: the pattern Beam matches and the base folder sources are relative to.

    `base` is the non-glob prefix of the pattern up to its last "/" (a folder given
    as --input is its own base), after local paths are made absolute: the same
    files get the same sources however --input is spelled. A folder given as
    --input (`directory`) is read recursively, skipping hidden entries (a path
    component starting with "." or "_", as Spark and Hadoop do) and `exclude`
    (the output folder, when it lies inside the input folder).
    """

    pattern: str
    base: str
    directory: bool = False
    exclude: str = ""

    def keeps(self, path: str) -> bool:
        if not self.directory:
            return True
        if self.exclude and path.startswith(self.exclude):
            return False
        relative = path[len(self.base):] if path.startswith(self.base) else path
        return not any(part.startswith((".", "_")) for part in relative.split("/"))


def keeps_file(metadata, files: InputFiles) -> bool:
    """beam.Filter predicate: whether a matched file is part of the input."""
    return files.keeps(metadata.path)


def resolve_input(given: str, output: str = "") -> InputFiles:
    """--input as a pattern, its base folder, and whether it names a folder."""
    path = absolute(given)
    if not _GLOB.search(path) and is_directory(path):
        base = _strip(path) + "/"
        output = _strip(absolute(output)) + "/" if output else ""
        return InputFiles(base + "**", base, directory=True,
                          exclude=output if output.startswith(base) else "")
    prefix = _GLOB.split(path, 1)[0]
    return InputFiles(path, prefix[: prefix.rfind("/") + 1])


def match_input(files: InputFiles) -> list[str]:
    """The files the job will read, as the launcher sees them."""
    matched = FileSystems.match([files.pattern])[0].metadata_list
    return [m.path for m in matched if files.keeps(m.path)]


# ---------------------------------------------------------------------------------- output


@dataclass(frozen=True)
class OutputState:
    """What an output folder holds now.

    `kind`: "file" (--output names a file), "free" (no Larvatus files: absent or
    holding only other files), "complete" (a summary with `"complete": true` whose
    listed files are all there) or "incomplete" (Larvatus files without that).
    """

    path: str
    kind: str
    found: tuple[tuple[str, int], ...] = ()   # Larvatus names directly in OUT, files below each
    summary: Optional[dict] = None
    problem: str = ""

    @property
    def names(self) -> list[str]:
        return [name for name, _ in self.found]

    @property
    def temporary(self) -> list[str]:
        return [name for name in self.names if layout.is_temporary(name)]

    def describe_found(self, names: Optional[list[str]] = None) -> str:
        """The Larvatus names found, e.g. "annotations/ (2 files), _SUMMARY.json"."""
        return ", ".join(
            name if name == layout.SUMMARY_NAME or name.endswith(layout.PARQUET_SUFFIX)
            else f"{name}/ ({count} files)"
            for name, count in self.found if names is None or name in names)


def _top_level(output: str, files: list[str]) -> Counter:
    prefix = _strip(output) + "/"
    counts: Counter = Counter()
    for path in files:
        if path.startswith(prefix):
            relative = path[len(prefix):]
            top, _, below = relative.partition("/")
            if layout.is_ours(top):
                counts[top] += 1 if below else 0
    return counts


def _read_json(path: str) -> Optional[dict]:
    try:
        with FileSystems.open(path) as handle:
            value = json.loads(handle.read().decode("utf-8"))
    except (OSError, ValueError):
        return None
    return value if isinstance(value, dict) else None


def inspect_output(output: str) -> OutputState:
    """Classifies an output folder without changing it."""
    output = _strip(absolute(output))
    if is_file(output):
        return OutputState(output, "file")
    files = list_files(output)
    counts = _top_level(output, files)
    if is_local(output) and os.path.isdir(output):
        # Beam lists files only; a killed run can leave empty folders behind.
        for entry in os.listdir(output):
            if layout.is_ours(entry) and entry not in counts:
                counts[entry] = 0
    found = tuple(sorted(counts.items()))
    if not found:
        return OutputState(output, "free")
    if layout.SUMMARY_NAME not in counts:
        return OutputState(output, "incomplete", found, problem=(
            f"no {layout.SUMMARY_NAME}: the run was interrupted or failed"))
    summary = _read_json(join(output, layout.SUMMARY_NAME))
    if summary is None:
        return OutputState(output, "incomplete", found,
                           problem=f"{layout.SUMMARY_NAME} is unreadable")
    if summary.get("complete") is not True:
        return OutputState(output, "incomplete", found, summary, problem=(
            f"{layout.SUMMARY_NAME} has no completion mark (an interrupted run, or one "
            f"written by an older Larvatus)"))
    present = {path[len(output) + 1:] for path in files}
    listed = [name for names in summary.get("files", {}).values() for name in names]
    missing = [name for name in listed if name not in present]
    if missing:
        return OutputState(output, "incomplete", found, summary, problem=(
            f"{len(missing)} of the {len(listed)} files {layout.SUMMARY_NAME} lists are "
            f"missing (first: {missing[0]})"))
    return OutputState(output, "complete", found, summary)


def check_output(output: str, overwrite: bool) -> OutputState:
    """Refuses, touching nothing, an output that cannot take a new run; returns its state."""
    ancestor = _file_ancestor(output)
    if ancestor:
        raise OutputError(f"--output {output}: {ancestor} is a file, so no folder can be made there")
    try:
        state = inspect_output(output)
    except ValueError as error:   # e.g. no filesystem for the scheme
        raise OutputError(f"--output {output}: {error}") from error
    if state.kind == "file":
        raise OutputError(f"--output {output} is a file; give a folder (it is created if missing)")
    if overwrite or state.kind == "free":
        return state
    if state.kind == "complete":
        raise OutputError(
            f"{output} already holds a complete Larvatus run; pass --overwrite to replace it "
            f"(the old run is replaced only once the new one has finished) or choose "
            f"another --output.")
    raise OutputError(
        f"{output} holds an incomplete Larvatus run ({state.problem}; found "
        f"{state.describe_found()}); pass --overwrite to replace it or choose another --output.")


def start_run(output: str) -> str:
    """Creates the fresh temporary folder a run writes into: OUT/.larvatus-run-<hex>."""
    run_dir = join(_strip(output), layout.RUN_DIR_PREFIX + secrets.token_hex(6))
    try:
        FileSystems.mkdirs(run_dir)
    except OSError as error:
        raise OutputError(f"--output {output}: cannot create {run_dir}: {error}") from error
    return run_dir


def _mkdirs(folder: str) -> None:
    if not (is_local(folder) and os.path.isdir(folder)):
        FileSystems.mkdirs(folder)


def remove_tree(path: str) -> None:
    """Deletes a file or a folder and everything below it, on any filesystem."""
    files = list_files(path)
    if files:
        FileSystems.delete(files)
    if FileSystems.exists(path):   # the file itself, or a local folder's empty directories
        FileSystems.delete([path])


def discard_run(run_dir: str, created_output: Optional[str] = None) -> None:
    """Removes a run's temporary folder (a failed or interrupted run leaves nothing behind).

    `created_output`: the output folder, when this run created it; removed too if empty.
    """
    remove_tree(run_dir)
    if created_output and is_local(created_output) and os.path.isdir(created_output) \
            and not os.listdir(created_output):
        FileSystems.delete([created_output])


def run_parts(run_dir: str) -> dict[str, list[str]]:
    """The Parquet parts a finished job wrote, by data folder, as names relative to the run folder."""
    parts = {}
    for folder in layout.DATA_DIRS:
        pattern = join(run_dir, folder, f"{layout.PART_PREFIX}-*{layout.PARQUET_SUFFIX}")
        matched = FileSystems.match([pattern])[0].metadata_list
        parts[folder] = sorted(f"{folder}/{m.path.rsplit('/', 1)[1]}" for m in matched)
    return parts


def finish_run(output: str, run_dir: str, summary: dict, replace: bool) -> dict:
    """Moves a finished run into place and writes its summary last; returns that summary.

    Order: the summary is written inside the run folder; with `replace`, the old
    summary goes first (from then on the folder reads as incomplete, never as the
    old run), then the old data folders, flat-layout files and temporary folders;
    the new parts are renamed into place, and the summary is renamed to
    OUT/_SUMMARY.json as the very last step.
    """
    output = _strip(output)
    parts = run_parts(run_dir)
    final = {"complete": True, **summary, "files": parts}
    staged = join(run_dir, layout.SUMMARY_NAME)
    with FileSystems.create(staged, mime_type="application/json") as handle:
        handle.write((json.dumps(final, indent=2) + "\n").encode("utf-8"))
    own = run_dir.rstrip("/").rsplit("/", 1)[1]
    state = inspect_output(output)
    others = [name for name in state.names if name != own]
    if not replace and [name for name in others if not layout.is_temporary(name)]:
        raise OutputError(
            f"{output} received other Larvatus files while this run ran "
            f"({state.describe_found(others)}): two jobs must not share an --output; "
            f"nothing was replaced, and this run's files stay in {run_dir}")
    if replace:
        if layout.SUMMARY_NAME in others:
            FileSystems.delete([join(output, layout.SUMMARY_NAME)])
        for name in others:
            if name != layout.SUMMARY_NAME:
                remove_tree(join(output, name))
    for folder, names in parts.items():
        _mkdirs(join(output, folder))
        if names:
            FileSystems.rename([join(run_dir, name) for name in names],
                               [join(output, name) for name in names])
    FileSystems.rename([staged], [join(output, layout.SUMMARY_NAME)])
    remove_tree(run_dir)
    return final


def read_summary(output: str) -> Optional[dict]:
    return _read_json(join(_strip(absolute(output)), layout.SUMMARY_NAME))


def open_file(path: str):
    return FileSystems.open(path)
