"""The stage template: one pure call per element, timed, counted, budgeted and dead-lettered, alone or chained."""
from __future__ import annotations

import gc
import time
from typing import Any, Iterable, Optional, Sequence, Union

import apache_beam as beam
from apache_beam import pvalue
from apache_beam.metrics import Metrics
from apache_beam.utils.windowed_value import WindowedValue

from larvatus.transforms.budget import (
    StepsRun, TimeBudget, check_record_timeout, run_steps,
)
from larvatus.transforms.counters import NAMESPACE
from larvatus.transforms.records import DeadLetter, DeadLetterReason as Reason, Document

DEAD = "dead_letter"


def count(name: str, value: int = 1) -> None:
    Metrics.counter(NAMESPACE, name).inc(value)


def add_time(stage: str, seconds: float) -> None:
    """Adds `seconds` of wall time to the `time_us_<stage>` counter."""
    Metrics.counter(NAMESPACE, f"time_us_{stage}").inc(int(seconds * 1e6))


class _Timer:
    """Adds the wall time of a block to the `time_us_<stage>` counter."""

    def __init__(self, stage: str):
        self._stage = stage

    def __enter__(self):
        self._start = time.perf_counter()

    def __exit__(self, *exc):
        add_time(self._stage, time.perf_counter() - self._start)


def dead_letter(letter: DeadLetter):
    count(f"dead_letter_{letter.reason}")
    return pvalue.TaggedOutput(DEAD, letter)


def _safe_detail(error: Exception) -> str:
    # Exception messages can quote their input; keep only the type.
    return type(error).__name__


def _is_dead(result) -> bool:
    return isinstance(result, DeadLetter)


class _Budgeted(beam.DoFn):
    """Runs its stages back to back on each element, within the record budget.

    The stages' `step`s run in the budget's worker thread (inline without a budget),
    one hand-off for `batch_size` elements at a time, each step of each element with
    the budget to itself. Each stage keeps its own name: its time goes to its
    `time_us_<stage>` counter (the hand-off's to the first stage's), its output to its
    `count_output`, and its failure to a dead letter with its `failure` reason and the
    exception's type as detail, never its message (messages can quote text). A dead
    letter a step returns ends the element there. A stage that overruns is dead-lettered
    as `timeout` and the job goes on (see `larvatus.transforms.budget.TimeBudget` for what
    happens to the overrunning call); its `on_timeout` lets it drop state that call may
    still be using. With `batch_size` above 1, elements wait in the DoFn until that many
    have come or the bundle ends, and leave with their own timestamp and window.
    """

    def __init__(self, record_timeout: Optional[float] = None, batch_size: int = 1):
        super().__init__()
        if batch_size < 1:
            raise ValueError(f"batch_size must be at least 1; got {batch_size}")
        self._record_timeout = check_record_timeout(record_timeout)
        self._batch_size = batch_size
        self._budget: Optional[TimeBudget] = None
        self._waiting: list = []

    def __getstate__(self):
        state = self.__dict__.copy()
        state["_budget"] = None   # threads stay with the instance that started them
        state["_waiting"] = []
        return state

    def stages(self) -> tuple["Stage", ...]:
        raise NotImplementedError

    def teardown(self):
        if self._budget is not None:
            self._budget.close()

    def start_bundle(self):
        self._waiting = []

    def process(self, element, timestamp=beam.DoFn.TimestampParam,
                window=beam.DoFn.WindowParam) -> Iterable:
        if self._batch_size == 1:
            [outcome] = self._outcomes([element])
            yield from outcome
            return
        self._waiting.append((element, timestamp, window))
        if len(self._waiting) >= self._batch_size:
            yield from self._flush()

    def finish_bundle(self) -> Iterable:
        yield from self._flush()

    def _flush(self) -> Iterable:
        waiting, self._waiting = self._waiting, []
        if not waiting:
            return
        outcomes = self._outcomes([element for element, _, _ in waiting])
        for (_, timestamp, window), outcome in zip(waiting, outcomes):
            for output in outcome:
                if isinstance(output, pvalue.TaggedOutput):
                    yield pvalue.TaggedOutput(
                        output.tag, WindowedValue(output.value, timestamp, (window,)))
                else:
                    yield WindowedValue(output, timestamp, (window,))

    def _outcomes(self, elements: list) -> list[list]:
        """Each element's outputs (its result, or its dead letter), its stages timed and counted."""
        stages = self.stages()
        for element in elements:
            stages[0].start(element)
        started = time.perf_counter()
        runs = self._run(stages, elements)
        self._add_times(stages, runs, time.perf_counter() - started)
        return [list(self._outcome(stages, element, run)) for element, run in zip(elements, runs)]

    def _run(self, stages: tuple["Stage", ...], elements: list) -> list[StepsRun]:
        steps = [stage.step for stage in stages]
        if self._record_timeout is None:
            return [run_steps(steps, element, _is_dead) for element in elements]
        if self._budget is None:
            self._budget = TimeBudget(self._record_timeout)
        return self._budget.run_batch(steps, elements, _is_dead)

    def _add_times(self, stages: tuple["Stage", ...], runs: list[StepsRun], wall: float) -> None:
        """Each stage's seconds; an overrun counts its budget; the hand-off goes to the first."""
        spent = [0.0] * len(stages)
        for run in runs:
            finished = run.timeout.step if run.timeout is not None else len(run.seconds)
            for index, seconds in enumerate(run.seconds[:finished]):
                spent[index] += seconds
            if run.timeout is not None:
                spent[run.timeout.step] += run.timeout.seconds
        spent[0] += max(0.0, wall - sum(spent))
        for stage, seconds in zip(stages, spent):
            add_time(stage.stage, seconds)

    def _outcome(self, stages: tuple["Stage", ...], element, run: StepsRun) -> Iterable:
        if run.timeout is not None:
            done = run.outputs[:run.timeout.step]
            yield from self._finished(stages, done)
            late = stages[run.timeout.step]
            late.on_timeout()
            document = late.document_of(done[-1] if done else element)
            yield dead_letter(DeadLetter(
                document.source, Reason.TIMEOUT, f"{late.stage} {run.timeout}", document.doc_id))
            return
        yield from self._finished(stages, run.outputs)
        if run.error is not None:
            failing = stages[len(run.outputs)]
            document = failing.document_of(run.outputs[-1] if run.outputs else element)
            yield dead_letter(DeadLetter(
                document.source, failing.failure, _safe_detail(run.error), document.doc_id))
        elif run.outputs and not _is_dead(run.outputs[-1]):
            yield run.outputs[-1]

    def _finished(self, stages: tuple["Stage", ...], outputs: list) -> Iterable:
        """Counts what finished stages made; yields the dead letter one of them returned."""
        for stage, output in zip(stages, outputs):
            if _is_dead(output):
                yield dead_letter(output)
                return
            stage.count_output(output)


class Stage(_Budgeted):
    """One pipeline step: the template owns timing, the time budget, failure routing and counting.

    A subclass names its `stage` (the `time_us_<stage>` counter) and its
    `failure` reason, and writes `step` (the pure call; it may return a
    DeadLetter) and, if it has any, `count_output`. Run alone, it is a DoFn of its
    own; `StageChain` runs several back to back in one budgeted call.
    """

    stage: str = ""
    failure: Reason = Reason.ENCODE_ERROR

    def stages(self) -> tuple["Stage", ...]:
        return (self,)

    def start(self, element) -> None:
        """Called in the DoFn's own thread before the element's steps run."""

    def document_of(self, element) -> Document:
        raise NotImplementedError

    def step(self, element) -> Union[Any, DeadLetter]:
        raise NotImplementedError

    def count_output(self, result) -> None:
        pass

    def on_timeout(self) -> None:
        pass


class StageChain(_Budgeted):
    """Stages run back to back on each element: one Beam step, one hand-off per batch.

    Fewer hand-offs to the budget's worker thread than one DoFn per stage (each costs
    a thread switch); each stage keeps its own counters, time, budget and dead-letter reason.
    """

    def __init__(self, stages: Sequence["Stage"], record_timeout: Optional[float] = None,
                 batch_size: int = 1):
        super().__init__(record_timeout, batch_size)
        if not stages:
            raise ValueError("a StageChain needs at least one stage")
        self._stages = tuple(stages)

    def stages(self) -> tuple["Stage", ...]:
        return self._stages

    def setup(self):
        for stage in self._stages:
            stage.setup()
        freeze_loaded_objects()


def freeze_loaded_objects() -> None:
    """Moves every object alive now (the models, tokenizers and rule tables setup loaded)
    out of the cyclic garbage collector's reach, after one last collection.

    They live as long as the worker, and the collector's passes over the oldest
    generation walked them all again and again, inside the stages' time. Reference
    counting still frees them; only a reference cycle alive now and dropped later would
    outlive its use.
    """
    gc.collect()
    gc.freeze()


class StreamStage(Stage):
    """A Stage whose `step` yields any number of results for one element (a file -> its records).

    The template times each result as it comes (`time_us_<stage>`), hands every one to
    `count_output` (dead letters, and None for something only counted, such as a blank
    line, included), passes Documents on and dead letters to their output. An exception
    part-way ends the element with the dead letter `failed` makes of it, told how many
    results came before (a dead letter's detail names the error's kind, never its message).
    """

    def failed(self, element, error: Exception, done: int) -> DeadLetter:
        raise NotImplementedError

    def process(self, element) -> Iterable:
        timer, done = _Timer(self.stage), 0
        try:
            results = iter(self.step(element))
            while True:
                with timer:
                    result = next(results, StopIteration)
                if result is StopIteration:
                    return
                done += result is not None
                yield from self._route(result)
        except Exception as error:   # a file that breaks mid-way: record where
            yield from self._route(self.failed(element, error, done))

    def _route(self, result) -> Iterable:
        self.count_output(result)
        if isinstance(result, DeadLetter):
            yield dead_letter(result)
        elif result is not None:
            yield result
