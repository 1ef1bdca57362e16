"""The output folder through Beam's FileSystems: only Larvatus's own files, staged and swapped in whole, every store call bounded."""
from __future__ import annotations

import contextlib
import copy
import errno
import glob
import json
import logging
import os
import shutil
import socket
import tempfile
import threading
import time
import uuid
from typing import Any, Callable, Iterator, Optional

from larvatus.layout import (
    ANNOTATIONS_DIR, DEAD_LETTERS_DIR, EXTRA_NAMES,
    PARTIAL_SUFFIX, STAGING_PREFIX, SUMMARY_NAME, annotation_files_pattern,
    dead_letter_files_pattern, join, own_entry,
)

_OUR_DIRS = (ANNOTATIONS_DIR, DEAD_LETTERS_DIR)
OWNER_NAME = ".larvatus-owner.json"     # in a staging folder: the run (host, pid) writing there
REPLACED_DIR = "replaced"               # in a staging folder: the earlier run's files mid-swap
OTHER_HOST_STAGING_AGE_S = 7 * 24 * 3600   # another host's run this old is taken as left over
# Seconds one call to a remote store (list, read, write, rename, delete) may take on the
# launcher before the command gives up on it: a store that stops answering must not hold
# the command in its client's retries for ever.
STORE_CALL_TIMEOUT_S = 60.0
# Files of the output itself (not leftovers), set aside during a swap and restored on failure.
_OUTPUT_FILES = (SUMMARY_NAME, *EXTRA_NAMES)

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


class StoreTimeout(OSError):
    """A remote store did not answer one call within STORE_CALL_TIMEOUT_S seconds."""


class OutputWriteError(RuntimeError):
    """The new output could not be written or moved into place (a full disk, a store that
    failed); `earlier_kept` says whether the earlier output is as it was."""

    def __init__(self, message: str, earlier_kept: bool = True):
        super().__init__(message)
        self.earlier_kept = earlier_kept


def is_local(path: str) -> bool:
    """Whether a path has no filesystem scheme (gs://, s3://, hdfs://, ...)."""
    return "://" not in path


def absolute(path: str) -> str:
    """Local paths made absolute at launch (workers have other working directories)."""
    return os.path.abspath(path) if is_local(path) else path


def bounded(what: str, call: Callable[..., Any], *args: Any) -> Any:
    """`call(*args)` for a remote store, given at most STORE_CALL_TIMEOUT_S seconds.

    The call runs in a daemon thread: when the time is up, StoreTimeout names `what`
    and the command goes on (to its one-line error), while the abandoned call ends with
    the process instead of holding it in the store client's retries.
    """
    outcome: dict[str, Any] = {}
    finished = threading.Event()

    def target() -> None:
        try:
            outcome["value"] = call(*args)
        except BaseException as error:   # handed to the caller below
            outcome["error"] = error
        finally:
            finished.set()

    threading.Thread(target=target, name="larvatus-store-call", daemon=True).start()
    if not finished.wait(STORE_CALL_TIMEOUT_S):
        raise StoreTimeout(errno.ETIMEDOUT, f"the store did not answer within "
                                            f"{STORE_CALL_TIMEOUT_S:g} s while {what}")
    if "error" in outcome:
        raise outcome["error"]
    return outcome["value"]


def _matched(patterns: list[str]) -> list[str]:
    """Paths matching the patterns: local files and folders (Beam's local match lists no
    folders), or a remote store's objects (folders there are name prefixes: `X/**`)."""
    local = [p for p in patterns if is_local(p)]
    paths = [path for pattern in local for path in glob.glob(pattern)]
    remote = [p for p in patterns if not is_local(p)]
    if remote:
        remote += [p.rstrip("/") + "/**" for p in remote]
        results = bounded(f"listing {remote[0]}", _fs().match, remote)
        for result in results:
            paths += [m.path for m in result.metadata_list]
    return paths


def is_folder(path: str) -> bool:
    """Whether a path names a folder: a local directory, or on a remote store a name
    that is no object itself but has objects below it (`gs://bucket/corpus`)."""
    if is_local(path):
        return os.path.isdir(path)
    return not _exists(path) and bool(_matched([path.rstrip("/") + "/"]))


def _exists(path: str) -> bool:
    if is_local(path):
        return os.path.lexists(path)
    return bounded(f"looking for {path}", _fs().exists, path)


def _relative(path: str, output_dir: str) -> str:
    return path[len(output_dir.rstrip("/")):].lstrip("/")


def _listing(output_dir: str) -> list[str]:
    """Every path in a local output folder (its own folders included, never a link's
    inside: a link is listed, not followed), or every object under a remote one."""
    if not is_local(output_dir):
        return _matched([output_dir.rstrip("/") + "/"])
    paths = []
    if not os.path.isdir(output_dir):
        return paths
    with os.scandir(output_dir) as entries:
        for entry in entries:
            paths.append(entry.path)
            if entry.name in _OUR_DIRS and entry.is_dir(follow_symlinks=False):
                with os.scandir(entry.path) as inner:
                    paths += [item.path for item in inner]
    return paths


def _owned_extras(output_dir: str) -> set[str]:
    """The EXTRA_NAMES files the earlier run wrote, as its summary names them (its ML
    outputs' tokenizer); none when there is no readable summary."""
    try:
        summary = read_json(join(output_dir, SUMMARY_NAME))
    except (UnreadableJson, OSError):
        return set()
    ml = (summary or {}).get("ml_outputs")
    token_ids = ml.get("token_ids") if isinstance(ml, dict) else None
    named = token_ids.get("tokenizer") if isinstance(token_ids, dict) else None
    return {named} & set(EXTRA_NAMES)


def previous_output(output_dir: str) -> tuple[list[str], bool]:
    """Larvatus's files and folders in `output_dir` (an earlier run's output and leftovers
    of interrupted runs, recognised by exact names: `layout.OWN_PATHS`, and the extra files
    its summary names), and whether the earlier run there completed (its summary, written
    last, exists). Everything else there is the user's."""
    ours = set()
    for path in _listing(output_dir):
        entry = own_entry(_relative(path, output_dir))
        if entry is not None:
            ours.add(join(output_dir, entry))
    for name in _owned_extras(output_dir):
        if _exists(join(output_dir, name)):
            ours.add(join(output_dir, name))
    summary = join(output_dir, SUMMARY_NAME)
    complete = summary in ours
    return sorted(ours), complete


def check_output(output_dir: str, overwrite: bool, writes: tuple[str, ...] = ()) -> None:
    """Refuses an --output that is a file, that cannot be written (local folders), whose
    `annotations` or `dead_letters` is a link or a file, that holds a file of the user's
    under a name this run `writes`, or that holds earlier output without --overwrite.

    Deletes nothing: the old output is replaced only when the new run has finished.
    """
    if is_local(output_dir):
        _check_local_folder(output_dir)
        _check_local_writable(output_dir)
        _check_own_folders(output_dir)
    ours, complete = previous_output(output_dir)
    if ours and not overwrite:
        state = "a complete Larvatus run" if complete else (
            "an INCOMPLETE Larvatus run (interrupted: no _SUMMARY.json)")
        raise OutputError(
            f"{output_dir} already holds {state} ({len(ours)} files or folders); pass "
            f"--overwrite to replace it (only once the new run has finished) or choose "
            f"another --output.")
    for name in writes:
        path = join(output_dir, name)
        if path not in ours and _exists(path):
            raise OutputError(
                f"--output {output_dir} holds a {name} that Larvatus did not write, and this "
                f"run writes its own {name} there; move yours away or choose another --output")


def _check_own_folders(output_dir: str) -> None:
    """`annotations` and `dead_letters` in a local output must be folders of their own:
    a link is never written or deleted through (its target lies elsewhere)."""
    for name in _OUR_DIRS:
        path = join(output_dir, name)
        if os.path.islink(path):
            raise OutputError(
                f"--output {output_dir}: {name} is a symbolic link; Larvatus writes its own "
                f"{name} folder there and never writes or deletes through a link: remove "
                f"the link or choose another --output")
        if os.path.exists(path) and not os.path.isdir(path):
            raise OutputError(f"--output {output_dir}: {name} is a file; Larvatus writes its "
                              f"own {name} folder there: move it or choose another --output")


def folders_to_make(output_dir: str) -> tuple[str, ...]:
    """The local folders a run into `output_dir` makes (deepest first): removed again,
    when empty, after a run that failed (nothing left behind)."""
    return tuple(_missing_folders(output_dir)[0]) if is_local(output_dir) else ()


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
        try:
            write_json(join(making, OWNER_NAME), owner)
            os.rename(making, staging)
        except BaseException:
            shutil.rmtree(making, ignore_errors=True)
            raise
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
    rows = {}
    for name, pattern in (("annotations", annotation_files_pattern(output_dir)),
                          ("dead_letters", dead_letter_files_pattern(output_dir))):
        rows[name] = 0
        for path in list_files(pattern):
            rows[name] += _rows_in(path) if is_local(path) else bounded(
                f"reading {path}", _rows_in, path)
    return rows


def _rows_in(path: str) -> int:
    import pyarrow.parquet as pq

    with open_binary(path) as handle:
        return pq.ParquetFile(handle).metadata.num_rows


def _delete(paths: list[str]) -> None:
    """Deletes Larvatus's own files and folders (never through a link: a link is removed)."""
    for path in paths:
        if is_local(path):
            if os.path.isdir(path) and not os.path.islink(path):
                shutil.rmtree(path, ignore_errors=True)
            elif os.path.lexists(path):
                os.remove(path)
        elif _exists(path):
            bounded(f"deleting {path}", _fs().delete, [path])
        else:   # an object store's "folder": the objects below the prefix
            below = _matched([path.rstrip("/") + "/"])
            if below:
                bounded(f"deleting {path}", _fs().delete, below)


def _move(source: str, target: str, parents: set[str]) -> None:
    """Moves one file (a rename locally, Beam's rename elsewhere), making the target's
    folder when missing; `parents` remembers the remote folders made or found."""
    if is_local(source):
        os.makedirs(os.path.dirname(target), exist_ok=True)
        os.rename(source, target)
        return
    parent = target.rsplit("/", 1)[0]
    if parent not in parents:
        if not _exists(parent):   # a store with folders needs them; an object store ignores this
            with contextlib.suppress(OSError):
                bounded(f"making {parent}", _fs().mkdirs, parent)
        parents.add(parent)
    bounded(f"moving {source} to {target}", _fs().rename, [source], [target])


def _write_bytes(path: str, content: bytes) -> None:
    if is_local(path):
        with open(path, "wb") as handle:
            handle.write(content)
        return

    def write() -> None:
        with _fs().create(path, compression_type=_uncompressed()) as handle:
            handle.write(content)

    bounded(f"writing {path}", write)


def _describe(error: BaseException) -> str:
    """An OSError or a store failure, short (no traceback), for a one-line message."""
    if isinstance(error, OSError) and error.errno == errno.ENOSPC:
        return "no space left on the device"
    if isinstance(error, OSError) and error.strerror:
        return f"{error.strerror}{f' ({error.filename})' if error.filename else ''}"
    text = " ".join(str(error).split())
    return f"{type(error).__name__}: {text[:300]}" if text else type(error).__name__


def publish(staging_dir: str, output_dir: str, summary: dict,
            extra: Optional[dict[str, bytes]] = None,
            verify: Optional[Callable[[dict, dict[str, int]], None]] = None) -> None:
    """Swaps the staged run in for OUTPUT's earlier files, the summary last.

    Everything the new output holds is written into the staging folder first: the
    Parquet files (by the job), `extra` (name -> bytes, such as the --emit-token-ids
    tokenizer) and a draft of the summary. Only
    then are the earlier run's files set aside (into the staging folder) and the new
    ones moved in; the summary is moved in last and the earlier files deleted after it.
    Any failure on the way (a full disk, a store that stops answering) moves everything
    back and raises OutputWriteError: the earlier output stays as it was. Other runs'
    staging folders are kept unless provably abandoned; a local output is locked while
    this happens. `verify(summary, published_rows(OUTPUT))` may amend the summary's checks
    with what the published files hold before it is written.
    """
    extra = extra or {}
    try:
        for name, content in extra.items():
            _write_bytes(join(staging_dir, name), content)
        staged = sorted(own_entry(_relative(p, staging_dir)) or "" for p in _matched(
            [annotation_files_pattern(staging_dir), dead_letter_files_pattern(staging_dir)]))
        staged += sorted(extra)
        draft = copy.deepcopy(summary)
        if verify is not None:
            verify(draft, published_rows(staging_dir))
        write_json(join(staging_dir, SUMMARY_NAME), draft)
    except (OSError, StoreTimeout, RuntimeError) as error:   # the earlier output untouched
        raise OutputWriteError(f"the new output could not be written in {output_dir} "
                               f"({_describe(error)})") from error
    with publish_lock(output_dir):
        _swap(staging_dir, output_dir, staged, summary, draft, verify)
    discard(staging_dir)


def _swap(staging_dir: str, output_dir: str, staged: list[str], summary: dict, draft: dict,
          verify: Optional[Callable[[dict, dict[str, int]], None]]) -> None:
    """Sets the earlier output's files aside, moves the staged ones in, then the summary
    (the draft when the published files confirm it, else `summary` rewritten); undoes
    every move on failure (OutputWriteError)."""
    old = _removable(previous_output(output_dir)[0], output_dir, staging_dir)
    aside = join(staging_dir, REPLACED_DIR)
    # the earlier run's files (the summary first: from then on the folder reads as an
    # incomplete run, never as a complete one with a mix of files); leftovers of
    # interrupted runs are deleted only once the swap has succeeded
    earlier = sorted((p for p in old if _is_output_file(_relative(p, output_dir))),
                     key=lambda p: _relative(p, output_dir) != SUMMARY_NAME)
    done: list[tuple[str, str]] = []
    parents: set[str] = set()
    made = [join(output_dir, sub) for sub in _OUR_DIRS
            if is_local(output_dir) and not os.path.isdir(join(output_dir, sub))]
    try:
        for path in earlier:
            target = join(aside, _relative(path, output_dir))
            _move(path, target, parents)
            done.append((path, target))
        for relative in staged:
            source, target = join(staging_dir, relative), join(output_dir, relative)
            _move(source, target, parents)
            done.append((source, target))
        if verify is not None:
            verify(summary, published_rows(output_dir))
        if summary == draft:
            _move(join(staging_dir, SUMMARY_NAME), join(output_dir, SUMMARY_NAME), parents)
        else:
            write_json(join(output_dir, SUMMARY_NAME), summary)
    except BaseException as error:
        restored = _undo(done, made)
        if not isinstance(error, Exception):
            raise
        raise OutputWriteError(
            f"the new output could not be moved into {output_dir} ({_describe(error)})"
            + ("" if restored else f"; the earlier run's files could not all be moved back: "
                                   f"they are in {aside}"), earlier_kept=restored) from error
    _delete([p for p in old if p not in earlier])


def _is_output_file(relative: str) -> bool:
    """A file of a finished run's output (not the leftover of an interrupted one)."""
    return relative in _OUTPUT_FILES or (
        relative.split("/", 1)[0] in _OUR_DIRS and relative.endswith(".parquet"))


def _undo(done: list[tuple[str, str]], made: list[str]) -> bool:
    """Moves back what a failed swap moved, newest first, and removes the folders it made
    if they are empty; whether everything went back."""
    restored = True
    for source, target in reversed(done):
        try:
            _move(target, source, set())
        except Exception as error:   # keep going: put back as much as can be
            LOG.error("could not move %s back to %s (%s)", target, source, _describe(error))
            restored = False
    for folder in made:
        with contextlib.suppress(OSError):
            os.rmdir(folder)
    return restored


def discard(staging_dir: str, made_folders: tuple[str, ...] = ()) -> None:
    """Removes a run's staging folder (failed, interrupted or published), then the local
    folders the run made for its output (`made_folders`, deepest first) if they are empty."""
    if is_local(staging_dir):
        shutil.rmtree(staging_dir, ignore_errors=True)
    else:
        _delete(_matched([staging_dir]))
    remove_empty_folders(made_folders)


def remove_empty_folders(folders: tuple[str, ...]) -> None:
    """Removes each local folder (deepest first) if it is empty; never one with a file."""
    for folder in folders:
        with contextlib.suppress(OSError):
            os.rmdir(folder)


def list_files(pattern: str) -> list[str]:
    """The paths matching a pattern, sorted (remote listings bounded in time)."""
    return sorted(_matched([pattern]))


def open_binary(path: str):
    """A file opened for reading through Beam's FileSystems, uncompressed."""
    return _fs().open(path, compression_type=_uncompressed())


# JSON files (the summary) live in their own module, which reads and writes through this one.
from larvatus.json_files import UnreadableJson, read_json, write_json  # noqa: E402,F401
