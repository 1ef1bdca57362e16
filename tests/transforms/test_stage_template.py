"""The Beam-free stage template every driver runs: outcomes, dead-letter reasons, counters, the time bound, and the one declared stage list."""
from __future__ import annotations

import time
from collections import Counter

from larvatus.transforms.records import DeadLetter, DeadLetterReason, Document
from larvatus.transforms.stage_template import Stage, StageChain
from larvatus.transforms import stages


class _Upper(Stage):
    name, failure = "upper", DeadLetterReason.SEGMENT_ERROR
    counters = ("letters",)

    def document_of(self, document):
        return document

    def step(self, document):
        if "boom" in document.doc_id:
            raise RuntimeError(f"cannot read {document.text}")   # a message quoting the text
        if "slow" in document.doc_id:
            time.sleep(2)
        return Document(document.doc_id, document.text.upper(), document.source)

    def count_output(self, result, count):
        count("letters", len(result.text))


class _Refuse(Stage):
    name, failure = "refuse", DeadLetterReason.REDACT_ERROR

    def document_of(self, document):
        return document

    def step(self, document):
        if "no" in document.doc_id:
            return DeadLetter(document.source, DeadLetterReason.TOO_LARGE, "no", document.doc_id)
        return document


def _documents(*names):
    return [Document(name, "Ada Lovelace", f"f:{name}") for name in names]


def test_a_chain_gives_each_element_its_result_or_its_dead_letter_and_counts_both():
    counts: Counter = Counter()
    chain = StageChain([_Upper(), _Refuse()], record_timeout=None)
    outcomes = chain.run(_documents("a", "boom", "no", "b"), lambda name, value: counts.update({name: value}))
    assert [o.text if isinstance(o, Document) else o.reason for o in outcomes] == [
        "ADA LOVELACE", "segment_error", "too_large", "ADA LOVELACE"]
    assert outcomes[1] == DeadLetter("f:boom", "segment_error", "RuntimeError", "boom")
    assert counts["letters"] == 3 * len("Ada Lovelace")
    assert counts["dead_letter_segment_error"] == 1 and counts["dead_letter_too_large"] == 1
    assert {"time_us_upper", "time_us_refuse"} <= set(counts)


def test_a_chain_bounds_each_element_and_stage_and_the_rest_go_on():
    counts: Counter = Counter()
    chain = StageChain([_Upper(), _Refuse()], record_timeout=0.3)
    started = time.perf_counter()
    outcomes = chain.run(_documents("a", "slow", "b"), lambda name, value: counts.update({name: value}))
    assert time.perf_counter() - started < 1.8
    assert outcomes[1] == DeadLetter("f:slow", "timeout", "upper took more than 0.3 s", "slow")
    assert [outcomes[0].text, outcomes[2].text] == ["ADA LOVELACE", "ADA LOVELACE"]
    assert counts["dead_letter_timeout"] == 1
    chain.close()


class _Classifier:
    def load_model(self):
        return "loaded"

    def predict_documents(self, batch, model):
        return [model] * len(batch)


def test_the_declared_list_names_every_stage_in_its_one_order(rigged_model_dir):
    from larvatus.models.model_dir import load_model_spec
    from larvatus.transforms.mlout import MlSettings
    from larvatus.transforms.redact import RedactionPolicy
    from larvatus.transforms.settings import AnnotationSettings

    spec = load_model_spec(rigged_model_dir)
    settings = AnnotationSettings(
        spec=spec, encode_settings=spec.encode_settings(spec.load_tokenizer(), overlap=16),
        policy=RedactionPolicy(frozenset({"PER"})))
    declared = stages.declare(settings, _Classifier())
    assert declared.names == ("segment", "encode", "inference", "realign", "patterns",
                              "redact", "audit")
    assert [stage.failure for stage in (*declared.before_model, declared.model,
                                        *declared.after_model)] == [
        "segment_error", "encode_error", "inference_error", "realign_error", "pattern_error",
        "redact_error", "audit_error"]
    with_ml = stages.declare(AnnotationSettings(
        spec=spec, encode_settings=settings.encode_settings, policy=settings.policy,
        ml=MlSettings((), None)), _Classifier())
    assert with_ml.names[-1] == "ml_outputs"
