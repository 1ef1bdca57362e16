"""Live progress side channel: each worker process keeps running totals in its own small file of a shared folder."""
from __future__ import annotations

import json
import os
import threading
import time
import uuid
from typing import IO, Optional

# Counts a progress file carries (running totals of one worker process).
DOCUMENTS, DEAD_LETTERED, WORDS, BYTES = "documents", "dead_lettered", "words", "bytes"
RECORDS = "records"   # read so far (documents counts those written or dead-lettered)
FIELDS = (DOCUMENTS, DEAD_LETTERED, WORDS, BYTES, RECORDS)
FILE_SUFFIX = ".progress.json"
FLUSH_SECONDS = 0.5


class ProgressFile:
    """One process's running totals, rewritten atomically at most every FLUSH_SECONDS.

    Beam's metrics cannot be read while a DirectRunner job runs (`Pipeline.run`
    returns when the job is done), so workers report here instead; every
    process (DirectRunner threads share one, multi_processing workers have
    their own) writes `<pid>-<random>.progress.json` and the launcher sums the
    folder. Failing to write never fails the job.
    """

    def __init__(self, directory: str):
        self.path = os.path.join(directory, f"{os.getpid()}-{uuid.uuid4().hex[:8]}{FILE_SUFFIX}")
        self._lock = threading.Lock()
        self._counts = dict.fromkeys(FIELDS, 0)
        self._written = 0.0

    def add(self, documents: int = 0, dead_lettered: int = 0, words: int = 0,
            bytes_read: int = 0, records: int = 0) -> None:
        with self._lock:
            counts = self._counts
            counts[DOCUMENTS] += documents
            counts[DEAD_LETTERED] += dead_lettered
            counts[WORDS] += words
            counts[BYTES] += bytes_read
            counts[RECORDS] += records
            now = time.monotonic()
            if now - self._written >= FLUSH_SECONDS:
                self._write()
                self._written = now

    def flush(self) -> None:
        with self._lock:
            self._write()
            self._written = time.monotonic()

    def _write(self) -> None:
        temporary = self.path + ".tmp"
        try:
            with open(temporary, "w", encoding="utf-8") as handle:
                json.dump(self._counts, handle)
            os.replace(temporary, self.path)
        except OSError:   # the launcher removed the folder, a full disk: progress is best effort
            pass


_FILES: dict[tuple[str, int], ProgressFile] = {}
_FILES_LOCK = threading.Lock()


def progress_file(directory: Optional[str]) -> Optional[ProgressFile]:
    """This process's ProgressFile in `directory` (shared by its threads), or None without one."""
    if not directory:
        return None
    key = (directory, os.getpid())
    with _FILES_LOCK:
        found = _FILES.get(key)
        if found is None:
            found = _FILES[key] = ProgressFile(directory)
        return found


def read_totals(directory: str) -> dict[str, int]:
    """The sum of every worker's running totals in `directory` (files being replaced are skipped)."""
    totals = dict.fromkeys(FIELDS, 0)
    try:
        names = os.listdir(directory)
    except OSError:
        return totals
    for name in names:
        if not name.endswith(FILE_SUFFIX):
            continue
        try:
            with open(os.path.join(directory, name), encoding="utf-8") as handle:
                counts = json.load(handle)
        except (OSError, ValueError):
            continue
        for field in FIELDS:
            totals[field] += int(counts.get(field, 0))
    return totals


class CountingReader:
    """A read-only file wrapper that counts the bytes handed out (read, read1, readline, readinto)."""

    def __init__(self, handle: IO[bytes]):
        self._handle = handle
        self.count = 0

    def read(self, *args):
        data = self._handle.read(*args)
        self.count += len(data)
        return data

    def read1(self, *args):
        data = self._handle.read1(*args)
        self.count += len(data)
        return data

    def readline(self, *args):
        data = self._handle.readline(*args)
        self.count += len(data)
        return data

    def readinto(self, buffer):
        size = self._handle.readinto(buffer)
        self.count += size or 0
        return size

    def __iter__(self):
        return iter(self.readline, b"")

    def __getattr__(self, name):
        return getattr(self._handle, name)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return self._handle.__exit__(*exc)
