"""Stages chained in one Beam step keep their own budget, dead-letter reason, counts and time."""
from __future__ import annotations

import time

import pytest

from larvatus.transforms import stages
from larvatus.transforms.budget import RecordTimeout, TimeBudget
from larvatus.transforms.records import DeadLetter, DeadLetterReason, Document


class _Upper(stages.Stage):
    """A stage of the test's own: the document's text upper-cased, its outputs counted."""

    stage, failure = "upper", DeadLetterReason.SEGMENT_ERROR

    def __init__(self, record_timeout=None):
        super().__init__(record_timeout)
        self.counted = []

    def document_of(self, document):
        return document

    def step(self, document):
        if "slow-upper" in document.doc_id:
            time.sleep(3)
        return Document(document.doc_id, document.text.upper(), document.source)

    def count_output(self, result):
        self.counted.append(result.doc_id)


class _Reverse(stages.Stage):
    stage, failure = "reverse", DeadLetterReason.REDACT_ERROR

    def __init__(self, record_timeout=None):
        super().__init__(record_timeout)
        self.counted, self.timeouts, self.calls = [], 0, 0

    def document_of(self, document):
        return document

    def step(self, document):
        self.calls += 1
        if "slow" in document.doc_id:
            time.sleep(3)
        if "boom" in document.doc_id:
            raise RuntimeError(f"cannot reverse {document.text}")   # quotes the text
        if "refuse" in document.doc_id:
            return DeadLetter(document.source, DeadLetterReason.TOO_LARGE, "no", document.doc_id)
        return Document(document.doc_id, document.text[::-1], document.source)

    def count_output(self, result):
        self.counted.append(result.doc_id)

    def on_timeout(self):
        self.timeouts += 1


def _chain(timeout):
    upper, reverse = _Upper(), _Reverse()
    return stages.StageChain([upper, reverse], timeout), upper, reverse


def _document(doc_id, text="Angela Merkel"):
    return Document(doc_id, text, f"f:{doc_id}")


@pytest.mark.parametrize("timeout", [None, 5.0], ids=["no-budget", "budget"])
def test_a_chain_gives_what_its_stages_give_one_after_the_other(timeout):
    chain, upper, reverse = _chain(timeout)
    [output] = list(chain.process(_document("a")))
    alone = list(_Reverse().process(next(iter(_Upper().process(_document("a"))))))
    assert output == alone[0] == Document("a", "LEKREM ALEGNA", "f:a")
    assert upper.counted == ["a"] and reverse.counted == ["a"]
    chain.teardown()


@pytest.mark.parametrize("timeout", [None, 5.0], ids=["no-budget", "budget"])
def test_a_failing_stage_dead_letters_with_its_own_reason_after_the_earlier_ones_counted(timeout):
    chain, upper, reverse = _chain(timeout)
    [output] = list(chain.process(_document("boom")))
    assert output.tag == stages.DEAD
    letter = output.value
    assert (letter.source, letter.reason, letter.doc_id) == ("f:boom", "redact_error", "boom")
    assert letter.detail == "RuntimeError" and "Merkel" not in letter.detail
    assert upper.counted == ["boom"] and reverse.counted == []
    [after] = list(chain.process(_document("next")))
    assert after.text == "LEKREM ALEGNA"


def test_a_dead_letter_a_stage_returns_ends_the_element_there():
    tail = _Reverse()
    chain = stages.StageChain([_Reverse(), tail], 5.0)
    [output] = list(chain.process(_document("refuse")))
    assert output.tag == stages.DEAD and output.value.reason == "too_large"
    assert tail.calls == 0


def test_the_stage_that_overruns_is_named_and_the_next_document_goes_on():
    chain, upper, reverse = _chain(0.5)
    started = time.perf_counter()
    [slow] = list(chain.process(_document("slow")))
    assert time.perf_counter() - started < 2.5
    letter = slow.value
    assert slow.tag == stages.DEAD
    assert (letter.source, letter.reason, letter.doc_id) == ("f:slow", "timeout", "slow")
    assert letter.detail == "reverse took more than 0.5 s" and "Merkel" not in letter.detail
    assert upper.counted == ["slow"] and reverse.timeouts == 1
    [fast] = list(chain.process(_document("fast")))
    assert fast.text == "LEKREM ALEGNA"
    chain.teardown()


def test_the_first_stage_overrunning_is_named_too():
    chain, upper, reverse = _chain(0.3)
    [slow] = list(chain.process(_document("slow-upper")))
    assert slow.value.detail == "upper took more than 0.3 s"
    assert upper.counted == [] and reverse.calls == 0


def test_each_step_of_a_chain_has_a_budget_of_its_own():
    budget = TimeBudget(0.4)

    def nap(value):
        time.sleep(0.25)
        return value + 1

    run = budget.run_steps([nap, nap, nap], 0, lambda value: False)   # 0.75 s in all
    assert run.outputs == [1, 2, 3] and run.error is None and len(run.seconds) == 3
    with pytest.raises(RecordTimeout) as raised:
        budget.run_steps([nap, lambda value: time.sleep(2), nap], 0, lambda value: False)
    assert raised.value.step == 1 and raised.value.run.outputs == [1]
    budget.close()


def test_a_chain_still_pickles_after_its_worker_started():
    import pickle

    chain, _, _ = _chain(1.0)
    list(chain.process(_document("a")))
    copy = pickle.loads(pickle.dumps(chain))
    assert [d.text for d in copy.process(_document("a"))] == ["LEKREM ALEGNA"]


def test_a_chain_needs_a_stage():
    with pytest.raises(ValueError):
        stages.StageChain([], 1.0)
