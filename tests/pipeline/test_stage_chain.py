"""Stages chained in one Beam step keep their own budget, dead-letter reason, counts and time."""
from __future__ import annotations

import time

import pytest
from apache_beam.pvalue import TaggedOutput

from larvatus import beam_stages
from larvatus.transforms import stages
from larvatus.transforms.budget import RecordTimeout, TimeBudget
from larvatus.transforms.records import DeadLetter, DeadLetterReason, Document


class _Upper(stages.Stage):
    """A stage of the test's own: the document's text upper-cased, its outputs counted."""

    name, failure = "upper", DeadLetterReason.SEGMENT_ERROR

    def __init__(self):
        self.counted = []

    def document_of(self, document):
        return document

    def step(self, document):
        if "slow-upper" in document.doc_id:
            time.sleep(3)
        return Document(document.doc_id, document.text.upper(), document.source)

    def count_output(self, result, count):
        self.counted.append(result.doc_id)


class _Reverse(stages.Stage):
    name, failure = "reverse", DeadLetterReason.REDACT_ERROR

    def __init__(self):
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

    def count_output(self, result, count):
        self.counted.append(result.doc_id)

    def on_timeout(self):
        self.timeouts += 1


def _chain(timeout):
    upper, reverse = _Upper(), _Reverse()
    return beam_stages.BeamStageChain([upper, reverse], timeout), upper, reverse


def _document(doc_id, text="Angela Merkel"):
    return Document(doc_id, text, f"f:{doc_id}")


@pytest.mark.parametrize("timeout", [None, 5.0], ids=["no-budget", "budget"])
def test_a_chain_gives_what_its_stages_give_one_after_the_other(timeout):
    chain, upper, reverse = _chain(timeout)
    [output] = list(chain.process(_document("a")))
    alone = list(beam_stages.BeamStageChain([_Reverse()]).process(
        next(iter(beam_stages.BeamStageChain([_Upper()]).process(_document("a"))))))
    assert output == alone[0] == Document("a", "LEKREM ALEGNA", "f:a")
    assert upper.counted == ["a"] and reverse.counted == ["a"]
    chain.teardown()


@pytest.mark.parametrize("timeout", [None, 5.0], ids=["no-budget", "budget"])
def test_a_failing_stage_dead_letters_with_its_own_reason_after_the_earlier_ones_counted(timeout):
    chain, upper, reverse = _chain(timeout)
    [output] = list(chain.process(_document("boom")))
    assert output.tag == beam_stages.DEAD
    letter = output.value
    assert (letter.source, letter.reason, letter.doc_id) == ("f:boom", "redact_error", "boom")
    assert letter.detail == "RuntimeError" and "Merkel" not in letter.detail
    assert upper.counted == ["boom"] and reverse.counted == []
    [after] = list(chain.process(_document("next")))
    assert after.text == "LEKREM ALEGNA"


def test_a_dead_letter_a_stage_returns_ends_the_element_there():
    tail = _Reverse()
    chain = beam_stages.BeamStageChain([_Reverse(), tail], 5.0)
    [output] = list(chain.process(_document("refuse")))
    assert output.tag == beam_stages.DEAD and output.value.reason == "too_large"
    assert tail.calls == 0


def test_the_stage_that_overruns_is_named_and_the_next_document_goes_on():
    chain, upper, reverse = _chain(0.5)
    started = time.perf_counter()
    [slow] = list(chain.process(_document("slow")))
    assert time.perf_counter() - started < 2.5
    letter = slow.value
    assert slow.tag == beam_stages.DEAD
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


def _nap(value):
    time.sleep(0.25)
    return value + 1


def _hang_on_two(value):
    if value == 2:
        time.sleep(2)
    return value * 10


def test_each_step_of_each_value_has_a_budget_of_its_own():
    budget = TimeBudget(0.4)
    [run] = budget.run_batch([_nap, _nap, _nap], [0], lambda value: False)   # 0.75 s in all
    assert run.outputs == [1, 2, 3] and run.error is None and len(run.seconds) == 3
    runs = budget.run_batch([_nap], [0, 1], lambda value: False)   # 0.5 s in all
    assert [run.outputs for run in runs] == [[1], [2]]
    budget.close()


def test_an_overrun_in_a_batch_costs_only_its_own_value():
    budget = TimeBudget(0.5)
    started = time.perf_counter()
    runs = budget.run_batch([_nap, _hang_on_two], [0, 1, 5], lambda value: False)
    assert time.perf_counter() - started < 1.9
    assert [run.timeout is None for run in runs] == [True, False, True]
    assert runs[1].timeout.step == 1 and runs[1].outputs[:1] == [2]
    assert [run.outputs for run in (runs[0], runs[2])] == [[1, 10], [6, 60]]
    budget.close()


def _bundle(chain, documents):
    """What a runner sees from one bundle: the outputs of process and finish_bundle."""
    from apache_beam.transforms.window import GlobalWindow

    chain.start_bundle()
    outputs = []
    for number, document in enumerate(documents):
        outputs += list(chain.process(document, number, GlobalWindow()))
    return outputs, list(chain.finish_bundle())


def test_a_batched_chain_waits_for_its_batch_and_gives_each_output_its_own_timestamp():
    from apache_beam.utils.windowed_value import WindowedValue

    upper, reverse = _Upper(), _Reverse()
    chain = beam_stages.BeamStageChain([upper, reverse], 5.0, batch_size=2)
    names = ["a", "boom", "c"]
    during, at_end = _bundle(chain, [_document(name) for name in names])
    assert len(during) == 2 and len(at_end) == 1   # a full batch of two, then the rest
    values = [o.value if isinstance(o, TaggedOutput) else o for o in during + at_end]
    assert all(isinstance(value, WindowedValue) for value in values)
    assert [value.timestamp.micros for value in values] == [0, 1_000_000, 2_000_000]
    assert values[0].value.text == "LEKREM ALEGNA"
    assert (during[1].tag, values[1].value.reason) == (beam_stages.DEAD, "redact_error")
    assert upper.counted == names and reverse.counted == ["a", "c"]
    chain.teardown()


@pytest.mark.parametrize("timeout", [None, 0.5], ids=["no-budget", "budget"])
def test_batched_and_one_by_one_chains_give_the_same_outputs(timeout):
    names = ["a", "boom", "refuse", "b", "slow", "c"] if timeout else ["a", "boom", "refuse", "b"]
    one_by_one, _, _ = _chain(timeout)
    alone = [list(one_by_one.process(_document(name))) for name in names]
    batched = beam_stages.BeamStageChain([_Upper(), _Reverse()], timeout, batch_size=4)
    during, at_end = _bundle(batched, [_document(name) for name in names])

    def plain(output):
        if isinstance(output, TaggedOutput):
            return output.tag, output.value.value
        return None, output.value

    assert [plain(output) for output in during + at_end] == [
        (output.tag, output.value) if isinstance(output, TaggedOutput)
        else (None, output) for outputs in alone for output in outputs]


def test_a_chain_still_pickles_after_its_worker_started():
    import pickle

    chain, _, _ = _chain(1.0)
    list(chain.process(_document("a")))
    copy = pickle.loads(pickle.dumps(chain))
    assert [d.text for d in copy.process(_document("a"))] == ["LEKREM ALEGNA"]


def test_a_chain_needs_a_stage_and_a_batch():
    with pytest.raises(ValueError):
        beam_stages.BeamStageChain([], 1.0)
    with pytest.raises(ValueError):
        beam_stages.BeamStageChain([_Upper()], 1.0, batch_size=0)


def test_a_chain_set_up_freezes_what_its_stages_loaded():
    import gc

    gc.unfreeze()
    try:
        chain = beam_stages.BeamStageChain([_Upper(), _Reverse()], 1.0)
        chain.setup()
        assert gc.get_freeze_count() > 0
        [output] = list(chain.process(_document("a")))
        assert output.text == "LEKREM ALEGNA"
    finally:
        gc.unfreeze()
