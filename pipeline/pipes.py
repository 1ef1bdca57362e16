"""A reader that stops reading (`larvatus show OUT | head -5`) ends the output quietly, never the command."""
from __future__ import annotations

import os
import sys
import threading
from typing import TextIO


class ClosedPipeGuard:
    """A text stream that, once its reader has gone (EPIPE), sends the rest to /dev/null.

    Python ignores SIGPIPE, so a write to a pipe whose reader has left raises
    BrokenPipeError wherever it happens: in a print, in a flush at exit, in a
    progress thread. Closing a pipe early is a normal way to stop reading, so the
    first such error points the stream's file descriptor at /dev/null (the bytes
    still buffered go there too) and the command goes on to its usual end and
    exit status. Everything else is the wrapped stream's own.
    """

    def __init__(self, stream: TextIO):
        self._stream = stream
        self._lock = threading.Lock()
        self.reader_left = False

    def write(self, text: str) -> int:
        if not self.reader_left:
            try:
                return self._stream.write(text)
            except BrokenPipeError:
                self._to_devnull()
        return len(text)

    def writelines(self, lines) -> None:
        for line in lines:
            self.write(line)

    def flush(self) -> None:
        if not self.reader_left:
            try:
                self._stream.flush()
            except BrokenPipeError:
                self._to_devnull()

    def _to_devnull(self) -> None:
        with self._lock:
            if self.reader_left:
                return
            self.reader_left = True
            devnull = os.open(os.devnull, os.O_WRONLY)
            try:
                os.dup2(devnull, self._stream.fileno())
            finally:
                os.close(devnull)
        try:
            self._stream.flush()       # what was still buffered, into /dev/null
        except (OSError, ValueError):
            pass

    def __getattr__(self, name: str):
        return getattr(self._stream, name)


def guard_standard_streams() -> None:
    """Wraps sys.stdout and sys.stderr (once) so that a reader leaving early is no error."""
    for name in ("stdout", "stderr"):
        stream = getattr(sys, name)
        if stream is not None and not isinstance(stream, ClosedPipeGuard):
            try:
                stream.fileno()
            except (AttributeError, OSError, ValueError):   # not a real file (a test's capture)
                continue
            setattr(sys, name, ClosedPipeGuard(stream))


def stdout_reader_left() -> None:
    """After a BrokenPipeError that reached the top: the rest of stdout goes to /dev/null."""
    stream = sys.stdout
    if isinstance(stream, ClosedPipeGuard):
        stream._to_devnull()
        return
    devnull = os.open(os.devnull, os.O_WRONLY)
    try:
        os.dup2(devnull, sys.__stdout__.fileno())
    finally:
        os.close(devnull)
