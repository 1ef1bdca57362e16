"""Recall-first redaction, the --redact-labels grammar, and pattern labels end to end."""
from __future__ import annotations

import numpy as np
import pyarrow.parquet as pq
import pytest

from larvatus.options import OptionsError, resolve_redact_labels
from larvatus.run import run
from larvatus.transforms.labels import read_scheme
from larvatus.transforms.recognizers import pattern_labels, profile_pattern_labels
from larvatus.transforms.realign import RedactionDecision, decide_redaction, realign
from larvatus.transforms.records import Document, EntitySpan, SegmentedDocument
from larvatus.transforms.redact import RedactionPolicy, redact
from tests.documents import encoded_document

LABELS = ["O", "B-PER", "I-PER", "B-ORG", "I-ORG", "B-MISC", "I-MISC"]
SCHEME = read_scheme(LABELS)
MODEL_TYPES = ("LOC", "MISC", "ORG", "PER")




def _probs(rows: list[dict[str, float]]) -> np.ndarray:
    out = np.zeros((len(rows), len(LABELS)), dtype=np.float32)
    for i, row in enumerate(rows):
        for label, p in row.items():
            out[i, LABELS.index(label)] = p
        out[i, 0] = 1.0 - sum(row.values())
    return out


# "NHL" mostly MISC but with real ORG mass; "said" plainly O.
NHL_TEXT = "NHL said"
NHL = encoded_document(NHL_TEXT, [(0, 3), (4, 8)])
NHL_PROBS = [_probs([{"B-MISC": 0.55, "B-ORG": 0.40}, {"B-PER": 0.01}])]


def test_argmax_alone_leaves_an_org_mistaken_for_misc():
    [span] = realign(NHL, NHL_PROBS, SCHEME)
    assert (span.label, span.redacted) == ("MISC", False)


def test_a_misc_span_without_a_real_case_for_a_name_is_kept():
    # 0.40 on ORG passes the recall-first threshold, but MISC is a kept type: the redacted
    # types must hold half the probability before a MISC span is hidden.
    decision = RedactionDecision(frozenset({"PER", "ORG"}), threshold=0.3)
    [span] = realign(NHL, NHL_PROBS, SCHEME, decision=decision)
    assert (span.start, span.end, span.label, span.redacted) == (0, 3, "MISC", False)
    policy = RedactionPolicy(frozenset({"PER", "ORG"}))
    entities, text, _ = redact(NHL.segmented, [span], policy)
    assert text == "NHL said" and not entities[0].redacted


def test_a_misc_span_with_a_real_case_is_hidden_as_the_likeliest_name_type():
    probs = [_probs([{"B-MISC": 0.42, "B-ORG": 0.33, "B-PER": 0.22}, {"B-PER": 0.01}])]
    decision = RedactionDecision(frozenset({"PER", "ORG"}), threshold=0.3)
    [span] = realign(NHL, probs, SCHEME, decision=decision)
    assert (span.start, span.end, span.label, span.redacted) == (0, 3, "ORG", True)
    policy = RedactionPolicy(frozenset({"PER", "ORG"}))
    entities, text, _ = redact(NHL.segmented, [span], policy)
    assert text == "[ORG] said" and entities[0].redacted


def test_misc_among_the_redacted_types_is_hidden_at_the_threshold():
    decision = RedactionDecision(frozenset({"PER", "ORG", "MISC"}), threshold=0.3)
    [span] = realign(NHL, NHL_PROBS, SCHEME, decision=decision)
    assert (span.label, span.redacted) == ("MISC", True)


def test_threshold_above_the_mass_keeps_argmax_behaviour():
    decision = RedactionDecision(frozenset({"PER", "ORG"}), threshold=0.5)
    [span] = realign(NHL, NHL_PROBS, SCHEME, decision=decision)
    assert not span.redacted


def test_an_outside_word_with_enough_mass_becomes_the_best_redacted_type():
    probs = _probs([{"B-PER": 0.2, "B-ORG": 0.15}, {}])
    labels, flagged = decide_redaction(probs, np.array([True, True]), SCHEME,
                                       RedactionDecision(frozenset({"PER", "ORG"}), 0.3))
    assert LABELS[labels[0]] == "B-PER" and flagged.tolist() == [True, False]


def test_words_without_prediction_are_never_flagged():
    probs = np.zeros((1, len(LABELS)), dtype=np.float32)
    labels, flagged = decide_redaction(probs, np.array([False]), SCHEME,
                                       RedactionDecision(frozenset({"PER"}), 0.01))
    assert labels.tolist() == [-1] and flagged.tolist() == [False]


@pytest.mark.parametrize("threshold", [0.0, -0.1, 1.5])
def test_threshold_bounds(threshold):
    with pytest.raises(ValueError):
        RedactionDecision(frozenset({"PER"}), threshold)


# --- the --redact-labels grammar -------------------------------------------------

def test_default_is_names_places_organisations_and_every_pattern_label():
    assert resolve_redact_labels("default", MODEL_TYPES) == frozenset(
        {"PER", "LOC", "ORG", *profile_pattern_labels("default")})


def test_all_adds_misc_and_minus_removes():
    assert "MISC" in resolve_redact_labels("all", MODEL_TYPES)
    assert "DATE" not in resolve_redact_labels("default,-DATE", MODEL_TYPES)
    assert resolve_redact_labels("per, email", MODEL_TYPES) == frozenset({"PER", "EMAIL"})


@pytest.mark.parametrize("value", ["", ",", " , "])
def test_an_empty_label_set_is_an_error_not_silence(value):
    with pytest.raises(OptionsError, match="none"):
        resolve_redact_labels(value, MODEL_TYPES)


def test_none_is_explicit_and_alone():
    assert resolve_redact_labels("none", MODEL_TYPES) == frozenset()
    with pytest.raises(OptionsError):
        resolve_redact_labels("none,PER", MODEL_TYPES)
    with pytest.raises(OptionsError, match="nothing"):
        resolve_redact_labels("PER,-PER", MODEL_TYPES)


def test_unknown_labels_name_what_exists():
    with pytest.raises(OptionsError, match="PHONE"):
        resolve_redact_labels("PERSON", MODEL_TYPES)


# --- end to end --------------------------------------------------------------------

PII_TEXT = ("Write to jane.roe@example.com or call +44 20 7946 0958. Card 4111 1111 1111 1111, "
            "IBAN GB82 WEST 1234 5698 7654 32, born 12 August 1956, MRN 00482913, "
            "see https://example.org/x and 192.168.10.20. Home: 431 Zachary Falls Suite 621.")
PLANTED = {"EMAIL": "jane.roe@example.com", "PHONE": "+44 20 7946 0958",
           "CARD": "4111 1111 1111 1111", "IBAN": "GB82 WEST 1234 5698 7654 32",
           "DATE": "12 August 1956", "CODE": "00482913", "URL": "https://example.org/x",
           "IP": "192.168.10.20", "ADDRESS": "431 Zachary Falls Suite 621"}


def test_every_pattern_label_is_redacted_through_the_pipeline(rigged_model_dir, tmp_path):
    source = tmp_path / "in.jsonl"
    source.write_text(f'{{"id": "a", "text": {PII_TEXT!r}}}\n'.replace("'", '"'))
    summary = run(["--input", str(source), "--output", str(tmp_path / "out"),
                   "--model", str(rigged_model_dir), "--device", "cpu"])
    assert summary["records_out"] == 1
    [path] = (tmp_path / "out").glob("**/annotations*.parquet")
    [row] = pq.read_table(path).to_pylist()
    for label, value in PLANTED.items():
        assert value not in row["redacted_text"], label
        assert f"[{label}]" in row["redacted_text"], label
    labels = {e["label"] for e in row["entities"] if e["redacted"]}
    assert set(PLANTED) <= labels
    assert summary["options"]["redact_labels"] == sorted(
        {"PER", "LOC", "ORG", *profile_pattern_labels("default")})
    assert "findings_by_kind" in summary["audit"]


def test_dates_can_be_kept(rigged_model_dir, tmp_path):
    source = tmp_path / "in.jsonl"
    source.write_text('{"id": "a", "text": "born 1956-08-12, mail a@b.org"}\n')
    run(["--input", str(source), "--output", str(tmp_path / "out"), "--model",
         str(rigged_model_dir), "--device", "cpu", "--redact-labels", "default,-DATE"])
    [path] = (tmp_path / "out").glob("**/annotations*.parquet")
    [row] = pq.read_table(path).to_pylist()
    assert "1956-08-12" in row["redacted_text"] and "a@b.org" not in row["redacted_text"]


def test_a_pattern_span_beats_the_model_and_no_model_span_crosses_a_line():
    text = "Nordic Freight A/S\nVesterbrogade"
    segmented = SegmentedDocument(Document("d", text, "s"), (0, 7, 15, 19), (6, 14, 18, 32))
    from larvatus.transforms.recognizers import merge_spans

    model = (EntitySpan(0, 32, "ORG", 0.9),)
    merged = merge_spans(model, (), text)
    assert [text[s.start:s.end] for s in merged] == ["Nordic Freight A/S", "Vesterbrogade"]
    email = "ann@x.org"
    merged = merge_spans((EntitySpan(0, 9, "PER", 0.9),), (EntitySpan(0, 9, "EMAIL", 1.0, redacted=True),), email)
    assert [(s.label) for s in merged] == ["EMAIL"]
    del segmented


def test_show_lists_the_riskiest_documents_first(tmp_path):
    import pyarrow as pa

    from larvatus.schemas import OutputColumns
    from larvatus.show import riskiest

    rows = [{"id": i, "redacted_text": t, "audit": {"findings": f}}
            for i, t, f in (("calm", "[PER] left.", 0), ("leaky", "Smith and Jones", 2),
                            ("some", "Smith left", 1))]
    written = OutputColumns.of(False, None).schema()
    schema = pa.schema([written.field(name) for name in ("id", "redacted_text", "audit")])
    path = tmp_path / "annotations-0.parquet"
    pq.write_table(pa.Table.from_pylist(rows, schema=schema), path)
    assert [(f, row["id"]) for f, row in riskiest([str(path)], 2)] == [(2, "leaky"), (1, "some")]


def test_punctuation_alone_is_never_an_entity():
    doc = encoded_document("- and -", [(0, 1), (2, 5), (6, 7)])
    probs = [_probs([{"B-PER": 0.9}, {}, {"B-PER": 0.9}])]
    assert realign(doc, probs, SCHEME) == ()
    assert realign(doc, probs, SCHEME, decision=RedactionDecision(frozenset({"PER"}), 0.3)) == ()
