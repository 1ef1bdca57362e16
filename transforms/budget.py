"""A wall-clock budget per call, kept by a reusable daemon worker thread (no signals, so it works in any thread)."""
from __future__ import annotations

import math
import queue
import threading
from typing import Any, Callable, Optional

DEFAULT_RECORD_TIMEOUT = 60.0


class RecordTimeout(Exception):
    """A call ran past its budget; the caller moves on without its result."""

    def __init__(self, seconds: float):
        super().__init__(f"took more than {seconds:g} s")
        self.seconds = seconds


def check_record_timeout(seconds: Optional[float]) -> Optional[float]:
    """The budget in seconds, or None for no limit (0 or None); a ValueError says what is wrong."""
    if seconds is None or seconds == 0:
        return None
    if not math.isfinite(seconds) or seconds < 0:
        raise ValueError(f"must be a positive number of seconds, or 0 for no limit; got {seconds}")
    return float(seconds)


class _Job:
    __slots__ = ("call", "args", "done", "result", "error")

    def __init__(self, call: Callable, args: tuple):
        self.call, self.args = call, args
        self.done = threading.Event()
        self.result: Any = None
        self.error: Optional[BaseException] = None


class _Worker:
    """One daemon thread running jobs one at a time until told to stop."""

    def __init__(self):
        self._jobs: queue.SimpleQueue = queue.SimpleQueue()
        self.thread = threading.Thread(target=self._loop, name="larvatus-budget", daemon=True)
        self.thread.start()

    def _loop(self) -> None:
        while True:
            job = self._jobs.get()
            if job is None:
                return
            try:
                job.result = job.call(*job.args)
            except BaseException as error:   # handed to the caller, who decides
                job.error = error
            job.done.set()
            job = None   # drop the record before waiting for the next one

    def submit(self, call: Callable, args: tuple) -> _Job:
        job = _Job(call, args)
        self._jobs.put(job)
        return job

    def retire(self) -> None:
        """Stop after the current job (which may never end)."""
        self._jobs.put(None)


class TimeBudget:
    """Runs calls in a background worker thread and waits at most `seconds` for each.

    A call that overruns raises `RecordTimeout` in the caller, who goes on with the
    next record on a fresh worker. Python cannot kill a thread: the overrunning
    call keeps running in its daemon thread until it returns by itself (its result
    is then dropped), holding its record's memory and competing for the CPU and
    the GIL; a call that never returns ends only with the process. `overrunning`
    counts such threads still alive. Not thread-safe: one TimeBudget per DoFn
    instance, as Beam uses a DoFn instance from one thread at a time.
    """

    def __init__(self, seconds: float):
        self.seconds = check_record_timeout(seconds)
        if self.seconds is None:
            raise ValueError("a TimeBudget needs a positive number of seconds")
        self._worker: Optional[_Worker] = None
        self._retired: list[_Worker] = []

    @property
    def overrunning(self) -> int:
        self._retired = [w for w in self._retired if w.thread.is_alive()]
        return len(self._retired)

    def run(self, call: Callable, *args):
        """`call(*args)`, or RecordTimeout if it takes longer than the budget; its exceptions pass through."""
        if self._worker is None:
            self._worker = _Worker()
        job = self._worker.submit(call, args)
        if not job.done.wait(self.seconds):
            self._worker.retire()
            self._retired.append(self._worker)
            self._worker = None
            raise RecordTimeout(self.seconds)
        if job.error is not None:
            raise job.error
        return job.result

    def close(self) -> None:
        """Lets the idle worker thread end (overrunning ones end when their call returns)."""
        if self._worker is not None:
            self._worker.retire()
            self._worker = None
