"""The output folder through Beam's FileSystems: refuse or replace old output, stage, publish."""
from __future__ import annotations

import contextlib
import glob
import json
import logging
import os
import shutil
import socket
import tempfile
import time
import uuid
from typing import Callable, Iterator, Optional

from larvatus.layout import (
    ML_TOKENIZER_NAME,
    ANNOTATIONS_DIR, ANNOTATIONS_PREFIX, BEAM_TEMP_PREFIX, DEAD_LETTER_PREFIX, DEAD_LETTERS_DIR,
    PARTIAL_SUFFIX, STAGING_PREFIX, SUMMARY_NAME, annotation_files_pattern,
    dead_letter_files_pattern, join,
)

_OUR_DIRS = (ANNOTATIONS_DIR, DEAD_LETTERS_DIR)
OWNER_NAME = ".larvatus-owner.json"     # in a staging folder: the run (host, pid) writing there
OTHER_HOST_STAGING_AGE_S = 7 * 24 * 3600   # another host's run this old is taken as left over

LOG = logging.getLogger("larvatus")


def _fs():
    """Beam's FileSystems, imported on first use (`larvatus.show` starts without Beam)."""
    from apache_beam.io.filesystems import FileSystems

    return FileSystems


def _uncompressed():
    from apache_beam.io.filesystem import CompressionTypes

    return CompressionTypes.UNCOMPRESSED


class OutputError(ValueError):
    """The output folder cannot take this run (a bad option, not bad data)."""


def is_local(path: str) -> bool:
    """Whether a path has no filesystem scheme (gs://, s3://, hdfs://, ...)."""
    return "://" not in path


def absolute(path: str) -> str:
    """Local paths made absolute at launch (workers have other working directories)."""
    return os.path.abspath(path) if is_local(path) else path


def _matched(patterns: list[str]) -> list[str]:
    """Paths matching the patterns: local files and folders (Beam's local match lists no
    folders), or a remote store's objects (folders there are name prefixes: `X/**`)."""
    local = [p for p in patterns if is_local(p)]
    paths = [path for pattern in local for path in glob.glob(pattern)]
    remote = [p for p in patterns if not is_local(p)]
    if remote:
        remote += [p.rstrip("/") + "/**" for p in remote]
        for result in _fs().match(remote):
            paths += [m.path for m in result.metadata_list]
    return paths


def is_folder(path: str) -> bool:
    """Whether a path names a folder: a local directory, or on a remote store a name
    that is no object itself but has objects below it (`gs://bucket/corpus`)."""
    if is_local(path):
        return os.path.isdir(path)
    return not _exists(path) and bool(_matched([path.rstrip("/") + "/"]))


def _exists(path: str) -> bool:
    return _fs().exists(path)


def previous_output(output_dir: str) -> tuple[list[str], bool]:
    """Larvatus's files (and leftovers of interrupted runs) in `output_dir`, and whether the
    earlier run there completed (its summary, written last, exists)."""
    ours = _matched([
        annotation_files_pattern(output_dir), dead_letter_files_pattern(output_dir),
        join(output_dir, ANNOTATIONS_PREFIX + "-*"), join(output_dir, DEAD_LETTER_PREFIX + "-*"),
        join(output_dir, STAGING_PREFIX + "*"), join(output_dir, BEAM_TEMP_PREFIX + "*"),
        join(output_dir, SUMMARY_NAME + ".*" + PARTIAL_SUFFIX),
        join(output_dir, ANNOTATIONS_DIR, BEAM_TEMP_PREFIX + "*"),
        join(output_dir, DEAD_LETTERS_DIR, BEAM_TEMP_PREFIX + "*"),
        join(output_dir, ML_TOKENIZER_NAME)])
    summary = join(output_dir, SUMMARY_NAME)
    complete = _exists(summary)
    if complete:
        ours.append(summary)
    return sorted(set(ours)), complete


def check_output(output_dir: str, overwrite: bool) -> None:
    """Refuses an --output that is a file, that cannot be written (local folders), or that
    holds earlier output without --overwrite.

    Deletes nothing: the old output is replaced only when the new run has finished.
    """
    if is_local(output_dir):
        _check_local_folder(output_dir)
        _check_local_writable(output_dir)
    ours, complete = previous_output(output_dir)
    if ours and not overwrite:
        state = "a complete Larvatus run" if complete else (
            "an INCOMPLETE Larvatus run (interrupted: no _SUMMARY.json)")
        raise OutputError(
            f"{output_dir} already holds {state} ({len(ours)} files or folders); pass "
            f"--overwrite to replace it (only once the new run has finished) or choose "
            f"another --output.")


def _missing_folders(path: str) -> tuple[list[str], str]:
    """The folders from `path` up that do not exist yet (deepest first), and the nearest
    path above them that does (or the root)."""
    missing = []
    while not os.path.exists(path) and path != os.path.dirname(path):
        missing.append(path)
        path = os.path.dirname(path)
    return missing, path


def _check_local_folder(output_dir: str) -> None:
    """A local --output must be a folder, or a path where one can be made."""
    missing, existing = _missing_folders(output_dir)
    if not missing:
        if not os.path.isdir(output_dir):
            raise OutputError(f"--output {output_dir} is a file; give a folder")
        return
    if os.path.exists(existing) and not os.path.isdir(existing):
        raise OutputError(f"--output {output_dir}: {existing} is a file, so no folder can be "
                          f"made there; give a folder")


def _check_local_writable(output_dir: str) -> None:
    """A local --output must take files: the missing folders are made, a probe file is
    written in it, and both are removed again, so a read-only disk or a folder the user may
    not write fails now, not after the model has loaded and the job has started."""
    missing, _ = _missing_folders(output_dir)
    made = []
    try:
        for folder in reversed(missing):
            os.mkdir(folder)
            made.append(folder)
        with tempfile.NamedTemporaryFile(dir=output_dir, prefix=".larvatus-write-check-"):
            pass
    except OSError as error:
        raise OutputError(f"--output {output_dir} cannot be written: "
                          f"{error.strerror or type(error).__name__}") from None
    finally:
        for folder in reversed(made):
            try:
                os.rmdir(folder)
            except OSError:
                pass


def new_staging_dir(output_dir: str) -> str:
    """A fresh folder inside OUTPUT where this run's Parquet files are written first, marked
    with its owner (host, process, start) before it appears under its staging name, so that
    another run never takes it for a leftover."""
    token = uuid.uuid4().hex[:12]
    staging = join(output_dir, STAGING_PREFIX + token)
    owner = {"host": socket.gethostname(), "pid": os.getpid(), "started": time.time()}
    if is_local(staging):
        making = join(output_dir, ".larvatus-new-" + token)
        os.makedirs(making)
        write_json(join(making, OWNER_NAME), owner)
        os.rename(making, staging)
    else:   # an object store has no folders: the marker is the staging folder's first object
        write_json(join(staging, OWNER_NAME), owner)
    return staging


def _process_alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except OSError:   # it exists, owned by someone else
        return True
    return True


def is_abandoned(staging_dir: str) -> bool:
    """Whether another run's staging folder is provably left over: it has no owner marker
    (every run writes one before its folder appears), its marker names a process of this
    host that no longer runs, or a run on another host that started over a week ago."""
    try:
        owner = read_json(join(staging_dir, OWNER_NAME))
    except (UnreadableJson, OSError):
        return False
    if owner is None:
        return True
    pid, started = owner.get("pid"), owner.get("started")
    if owner.get("host") == socket.gethostname() and isinstance(pid, int):
        return pid != os.getpid() and not _process_alive(pid)
    return isinstance(started, (int, float)) and time.time() - started > OTHER_HOST_STAGING_AGE_S


def _staging_root(path: str, output_dir: str) -> Optional[str]:
    """The staging folder `path` lies in (or is), or None."""
    relative = path[len(output_dir.rstrip("/")):].lstrip("/")
    first = relative.split("/", 1)[0]
    return join(output_dir, first) if first.startswith(STAGING_PREFIX) else None


def _removable(old: list[str], output_dir: str, staging_dir: str) -> list[str]:
    """The earlier files `publish` may delete: never this run's staging, nor the staging of
    another run that is not provably abandoned (that run may still be writing)."""
    verdict: dict[str, bool] = {}
    removable = []
    for path in old:
        root = _staging_root(path, output_dir)
        if root is None:
            removable.append(path)
            continue
        if root.rstrip("/") == staging_dir.rstrip("/"):
            continue
        if root not in verdict:
            verdict[root] = is_abandoned(root)
            if not verdict[root]:
                LOG.warning("%s belongs to another run that may still be going; it was left "
                            "as it is", root)
        if verdict[root]:
            removable.append(path)
    return removable


@contextlib.contextmanager
def publish_lock(output_dir: str) -> Iterator[None]:
    """Holds an exclusive lock on a local output folder while a run publishes into it, so
    that two runs finishing at once publish one after the other (a no-op elsewhere)."""
    try:
        import fcntl
    except ImportError:   # not POSIX
        fcntl = None
    if fcntl is None or not is_local(output_dir):
        yield
        return
    descriptor = os.open(output_dir, os.O_RDONLY)
    try:
        fcntl.flock(descriptor, fcntl.LOCK_EX)
        yield
    finally:
        os.close(descriptor)


def published_rows(output_dir: str) -> dict[str, int]:
    """Rows in the published annotation and dead-letter files, read from their footers."""
    import pyarrow.parquet as pq

    rows = {}
    for name, pattern in (("annotations", annotation_files_pattern(output_dir)),
                          ("dead_letters", dead_letter_files_pattern(output_dir))):
        rows[name] = 0
        for path in list_files(pattern):
            with open_binary(path) as handle:
                rows[name] += pq.ParquetFile(handle).metadata.num_rows
    return rows


def _delete(paths: list[str]) -> None:
    for path in paths:
        if is_local(path):
            if os.path.isdir(path):
                shutil.rmtree(path, ignore_errors=True)
            elif os.path.lexists(path):
                os.remove(path)
        elif _exists(path):
            _fs().delete([path])


def publish(staging_dir: str, output_dir: str, summary: dict,
            extra: Optional[dict[str, bytes]] = None,
            verify: Optional[Callable[[dict, dict[str, int]], None]] = None) -> None:
    """Replaces OUTPUT's earlier files with the staged ones and `extra` (name -> bytes, such as
    the --emit-token-ids tokenizer), then writes the summary last.

    Other runs' staging folders are kept unless provably abandoned; a local output is
    locked while this happens. `verify(summary, published_rows(OUTPUT))` may amend the
    summary's checks with what the published files hold before it is written.
    """
    with publish_lock(output_dir):
        _publish(staging_dir, output_dir, extra or {})
        if verify is not None:
            verify(summary, published_rows(output_dir))
        write_json(join(output_dir, SUMMARY_NAME), summary)


def _publish(staging_dir: str, output_dir: str, extra: dict[str, bytes]) -> None:
    staged = _matched([annotation_files_pattern(staging_dir),
                       dead_letter_files_pattern(staging_dir)])
    old, _ = previous_output(output_dir)
    summary_path = join(output_dir, SUMMARY_NAME)
    # the old summary goes first: from here until the new one is written, the folder
    # reads as an incomplete run, never as a complete one with a mix of files
    _delete([p for p in old if p == summary_path])
    _delete([p for p in _removable(old, output_dir, staging_dir) if p != summary_path])
    for sub in _OUR_DIRS:
        target = join(output_dir, sub)
        if is_local(target):
            os.makedirs(target, exist_ok=True)
        elif not _exists(target):
            _fs().mkdirs(target)
    sources = [p for p in staged]
    targets = [join(output_dir, *p[len(staging_dir):].strip("/").split("/")) for p in staged]
    if sources:
        _fs().rename(sources, targets)
    discard(staging_dir)
    for name, content in extra.items():
        with _fs().create(join(output_dir, name), compression_type=_uncompressed()) as handle:
            handle.write(content)


def discard(staging_dir: str) -> None:
    """Removes a run's staging folder (failed, interrupted or published)."""
    if is_local(staging_dir):
        shutil.rmtree(staging_dir, ignore_errors=True)
        return
    _delete(_matched([staging_dir]))


def write_json(path: str, value: dict) -> None:
    """Writes a JSON file whole or not at all: locally through a temporary file renamed
    into place; an object store makes an object visible only once it is closed."""
    data = json.dumps(value, indent=2).encode("utf-8")
    if is_local(path):
        partial = f"{path}.{uuid.uuid4().hex[:12]}{PARTIAL_SUFFIX}"
        with open(partial, "wb") as handle:
            handle.write(data)
        os.replace(partial, path)
        return
    with _fs().create(path, mime_type="application/json",
                      compression_type=_uncompressed()) as handle:
        handle.write(data)


class UnreadableJson(ValueError):
    """A JSON file that exists but does not parse (cut short, or not ours)."""


def read_json(path: str) -> Optional[dict]:
    """A JSON file's content, or None when it does not exist; UnreadableJson when it
    does not parse."""
    if not _exists(path):
        return None
    with _fs().open(path, compression_type=_uncompressed()) as handle:
        data = handle.read()
    try:
        value = json.loads(data.decode("utf-8"))
    except ValueError as error:
        raise UnreadableJson(f"{path} is not valid JSON ({error})") from None
    if not isinstance(value, dict):
        raise UnreadableJson(f"{path} holds no JSON object")
    return value


def list_files(pattern: str) -> list[str]:
    return sorted(_matched([pattern]))


def open_binary(path: str):
    return _fs().open(path, compression_type=_uncompressed())
