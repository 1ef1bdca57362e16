"""The stage template: one pure call per element, timed, counted, budgeted and dead-lettered, alone or chained (Beam-free)."""
from __future__ import annotations

import time
from typing import Any, Callable, Optional, Sequence, Union

from larvatus.transforms.budget import StepsRun, TimeBudget, check_record_timeout, run_steps
from larvatus.transforms.counters import DEAD_LETTER_PREFIX, TIME_PREFIX
from larvatus.transforms.records import DeadLetter, DeadLetterReason as Reason, Document

# Where a stage's counts go: `count(name, value)`. Beam's adapter adds them to Beam
# metrics, the in-process driver to a Counter; names are those of larvatus.transforms.counters.
Count = Callable[[str, int], None]


def no_count(name: str, value: int = 1) -> None:
    """A Count that keeps nothing."""


def safe_detail(error: Exception) -> str:
    """A dead letter's detail for an exception: its type only (messages can quote text)."""
    return type(error).__name__


def is_dead(result) -> bool:
    return isinstance(result, DeadLetter)


class Stage:
    """One pipeline step as a plain class: the template owns timing, the time budget,
    failure routing and counting; drivers (Beam, the Redactor, Spark) only run chains.

    A subclass names itself (`name`: its `time_us_<name>` counter) and its `failure`
    reason, lists the counters it writes (`counters`), and writes `step` (the pure call;
    it may return a DeadLetter), `document_of` (the Document an element belongs to, for
    dead letters) and, if it has any, `count_output`, `setup`, `start`, `on_timeout`.
    """

    name: str = ""
    failure: Reason = Reason.ENCODE_ERROR
    counters: tuple[str, ...] = ()

    def setup(self) -> None:
        """Loads what the stage needs once per process (models, tokenizers, rule tables)."""

    def start(self, element, count: Count) -> None:
        """Called in the driver's own thread before the element's steps run."""

    def document_of(self, element) -> Document:
        raise NotImplementedError

    def step(self, element) -> Union[Any, DeadLetter]:
        raise NotImplementedError

    def count_output(self, result, count: Count) -> None:
        """Counts what `step` made (in the driver's thread)."""

    def on_timeout(self) -> None:
        """Called when this stage's call overran its budget: drop state that call may still use."""


class StageChain:
    """Stages run back to back on each element, within the per-record time budget.

    The stages' `step`s run in the budget's worker thread (inline without a budget),
    one hand-off for a whole batch of elements, each step of each element with the
    budget to itself. Each stage keeps its own name: its time goes to its
    `time_us_<name>` counter (the hand-off's to the first stage's), its output to its
    `count_output`, and its failure to a dead letter with its `failure` reason and the
    exception's type as detail, never its message (messages can quote text). A dead
    letter a step returns ends the element there. A stage that overruns is
    dead-lettered as `timeout` and the rest go on (see `TimeBudget` for what happens to
    the overrunning call); its `on_timeout` lets it drop state that call may still use.
    Every driver runs its stages through `run`: the guarantees are declared here, once.
    """

    def __init__(self, stages: Sequence[Stage], record_timeout: Optional[float] = None):
        if not stages:
            raise ValueError("a StageChain needs at least one stage")
        self.stages = tuple(stages)
        self._record_timeout = check_record_timeout(record_timeout)
        self._budget: Optional[TimeBudget] = None

    def __getstate__(self):
        state = self.__dict__.copy()
        state["_budget"] = None   # threads stay with the instance that started them
        return state

    def setup(self) -> None:
        for stage in self.stages:
            stage.setup()

    def close(self) -> None:
        if self._budget is not None:
            self._budget.close()
            self._budget = None

    def run(self, elements: Sequence, count: Count = no_count) -> list:
        """Each element's outcome, in order: the last stage's result, or a DeadLetter; the
        stages' counters, times and dead letters (`dead_letter_<reason>`) go to `count`."""
        for element in elements:
            self.stages[0].start(element, count)
        started = time.perf_counter()
        runs = self._run(list(elements))
        self._add_times(runs, time.perf_counter() - started, count)
        return [self._outcome(element, run, count) for element, run in zip(elements, runs)]

    def _run(self, elements: list) -> list[StepsRun]:
        steps = [stage.step for stage in self.stages]
        if self._record_timeout is None:
            return [run_steps(steps, element, is_dead) for element in elements]
        if self._budget is None:
            self._budget = TimeBudget(self._record_timeout)
        return self._budget.run_batch(steps, elements, is_dead)

    def _add_times(self, runs: list[StepsRun], wall: float, count: Count) -> None:
        """Each stage's seconds; an overrun counts its budget; the hand-off goes to the first."""
        spent = [0.0] * len(self.stages)
        for run in runs:
            finished = run.timeout.step if run.timeout is not None else len(run.seconds)
            for index, seconds in enumerate(run.seconds[:finished]):
                spent[index] += seconds
            if run.timeout is not None:
                spent[run.timeout.step] += run.timeout.seconds
        spent[0] += max(0.0, wall - sum(spent))
        for stage, seconds in zip(self.stages, spent):
            count(f"{TIME_PREFIX}{stage.name}", int(seconds * 1e6))

    def _outcome(self, element, run: StepsRun, count: Count):
        if run.timeout is not None:
            done = run.outputs[:run.timeout.step]
            letter = self._finished(done, count)
            if letter is not None:
                return letter
            late = self.stages[run.timeout.step]
            late.on_timeout()
            document = late.document_of(done[-1] if done else element)
            return dead_letter(DeadLetter(document.source, Reason.TIMEOUT,
                                          f"{late.name} {run.timeout}", document.doc_id), count)
        letter = self._finished(run.outputs, count)
        if letter is not None:
            return letter
        if run.error is not None:
            failing = self.stages[len(run.outputs)]
            document = failing.document_of(run.outputs[-1] if run.outputs else element)
            return dead_letter(DeadLetter(document.source, failing.failure,
                                          safe_detail(run.error), document.doc_id), count)
        return run.outputs[-1]

    def _finished(self, outputs: list, count: Count) -> Optional[DeadLetter]:
        """Counts what finished stages made; the dead letter one of them returned, if any."""
        for stage, output in zip(self.stages, outputs):
            if is_dead(output):
                return dead_letter(output, count)
            stage.count_output(output, count)
        return None


def dead_letter(letter: DeadLetter, count: Count) -> DeadLetter:
    """A dead letter, counted under its reason."""
    count(f"{DEAD_LETTER_PREFIX}{letter.reason}", 1)
    return letter
