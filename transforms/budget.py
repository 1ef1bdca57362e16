"""A wall-clock budget per call, kept by a reusable daemon worker thread (no signals, so it works in any thread)."""
from __future__ import annotations

import math
import queue
import threading
import time
from typing import Any, Callable, Optional, Sequence

DEFAULT_RECORD_TIMEOUT = 60.0


class RecordTimeout(Exception):
    """A call ran past its budget; the caller moves on without its result.

    From `TimeBudget.run_batch`, `step` is the index of the step that overran.
    """

    def __init__(self, seconds: float, step: int = 0):
        super().__init__(f"took more than {seconds:g} s")
        self.seconds = seconds
        self.step = step


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


class StepsRun:
    """How far a run of steps got: each finished step's output and seconds, and the error
    or the overrun that stopped it."""

    __slots__ = ("outputs", "seconds", "error", "timeout")

    def __init__(self):
        self.outputs: list = []
        self.seconds: list[float] = []
        self.error: Optional[Exception] = None   # raised by step len(outputs)
        self.timeout: Optional[RecordTimeout] = None   # set where a step overran its budget


class _Watch:
    """Where a batch's worker is: (document's position, step index, step start), written whole."""

    __slots__ = ("current", "cancelled")

    def __init__(self, position: int):
        self.current: tuple[int, int, float] = (position, 0, time.perf_counter())
        self.cancelled = False


def run_steps(steps: Sequence[Callable], value: Any, stop: Callable[[Any], bool],
              run: Optional[StepsRun] = None, watch: Optional[_Watch] = None,
              position: int = 0) -> StepsRun:
    """Each step on the previous one's output, starting from `value`, until one raises
    (`run.error`, its seconds counted) or returns what `stop` accepts; written into `run`
    as it goes, and the step running into `watch`, for a caller watching from another thread."""
    run = StepsRun() if run is None else run
    for index, step in enumerate(steps):
        started = time.perf_counter()
        if watch is not None:
            watch.current = (position, index, started)
        try:
            value = step(value)
        except Exception as error:   # handed to the caller, who dead-letters the element
            run.seconds.append(time.perf_counter() - started)
            run.error = error
            return run
        run.seconds.append(time.perf_counter() - started)
        run.outputs.append(value)
        if stop(value):
            break
    return run


def _run_each(steps: Sequence[Callable], values: Sequence[Any], stop: Callable[[Any], bool],
              runs: list[StepsRun], watch: _Watch, first: int) -> None:
    for offset, (value, run) in enumerate(zip(values, runs)):
        if watch.cancelled:
            return
        run_steps(steps, value, stop, run, watch, first + offset)


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
        [run] = self.run_batch([lambda _: call(*args)], [None], lambda _: False)
        if run.timeout is not None:
            raise run.timeout
        if run.error is not None:
            raise run.error
        return run.outputs[0]

    def run_batch(self, steps: Sequence[Callable], values: Sequence[Any],
                  stop: Callable[[Any], bool]) -> list[StepsRun]:
        """`run_steps` on each value in turn, as few hand-offs to the worker thread as can be.

        Each step of each value has the budget to itself. Where one overruns, its
        `StepsRun` gets `timeout` (a RecordTimeout naming the step; the steps before it
        stay readable), the worker is left to it, and the values after it go on in a
        fresh worker: one value's overrun never costs another its result.
        """
        runs: list[StepsRun] = []
        while len(runs) < len(values):
            runs.extend(self._run_until_timeout(steps, values, len(runs), stop))
        return runs

    def _run_until_timeout(self, steps, values, first: int, stop) -> list[StepsRun]:
        """The runs of values[first:], or those up to and including the first that overran."""
        if self._worker is None:
            self._worker = _Worker()
        runs = [StepsRun() for _ in values[first:]]
        watch = _Watch(first)
        job = self._worker.submit(_run_each, (steps, values[first:], stop, runs, watch, first))
        while not job.done.wait(max(0.0, watch.current[2] + self.seconds - time.perf_counter())):
            position, index, started = watch.current
            if time.perf_counter() - started >= self.seconds:
                watch.cancelled = True   # the old worker stops after its overrunning step
                self._worker.retire()
                self._retired.append(self._worker)
                self._worker = None
                late = runs[position - first]
                late.timeout = RecordTimeout(self.seconds, index)
                return runs[:position - first + 1]
        if job.error is not None:
            raise job.error
        return runs

    def close(self) -> None:
        """Lets the idle worker thread end (overrunning ones end when their call returns)."""
        if self._worker is not None:
            self._worker.retire()
            self._worker = None
