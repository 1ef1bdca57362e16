"""The Beam graph: TestPipeline runs with assert_that, and whole runs on hostile input."""
from __future__ import annotations

import glob
import json
import os

import apache_beam as beam
import pyarrow.parquet as pq
import pytest
from apache_beam.testing.test_pipeline import TestPipeline
from apache_beam.testing.util import assert_that, equal_to

from larvatus.models.model_dir import load_model_spec
from larvatus import schemas
from larvatus.graph import AnnotateDocuments, JobConfig
from larvatus.run import run
from larvatus.transforms.records import Document
from larvatus.transforms.redact import RedactionPolicy
from larvatus.transforms.settings import AnnotationSettings


def job_config(model_dir, **overrides) -> JobConfig:
    spec = load_model_spec(model_dir)
    values = dict(
        max_chars=1_000_000, spec=spec, device="cpu", batch_tokens=256,
        intra_op_threads=1,
        encode_settings=spec.encode_settings(spec.load_tokenizer(), overlap=16),
        aggregation="first", policy=RedactionPolicy(frozenset({"PER", "LOC", "ORG"})),
        keep_text=False)
    values.update(overrides)
    return JobConfig(input_pattern="unused", output_dir="unused", input_format="auto",
                     id_field="id", text_field="text", settings=AnnotationSettings(**values))


def annotate(config, documents):
    with TestPipeline() as p:
        outputs = p | beam.Create(documents) | AnnotateDocuments(config)
        redacted = outputs["annotated"] | beam.Map(
            lambda d: (d.document.doc_id, d.redacted_text))
        yield redacted, outputs["dead_letter"]


def test_annotate_documents_redacts_and_keeps_keys(rigged_model_dir):
    config = job_config(rigged_model_dir)
    documents = [
        Document("a", "Angela Merkel met NATO officials in town.", "f:1"),
        Document("a", "nothing to see here.", "f:2"),   # duplicate id, distinct source
        Document("b", "👍🏽 Zoë Ødegård spoke; later zoë ødegård left.", "f:3"),
    ]
    with TestPipeline() as p:
        outputs = p | beam.Create(documents) | AnnotateDocuments(config)
        assert_that(
            outputs["annotated"] | beam.Map(lambda d: (d.document.source, d.redacted_text)),
            equal_to([
                ("f:1", "[PER] met [ORG] officials in town."),
                ("f:2", "nothing to see here."),
                ("f:3", "👍🏽 [PER] spoke; later [PER] left."),
            ]))
        assert_that(outputs["dead_letter"], equal_to([]), label="NoDeadLetters")


def test_indexed_placeholders_number_surface_forms(rigged_model_dir):
    config = job_config(rigged_model_dir, policy=RedactionPolicy(
        frozenset({"PER"}), style="indexed"))
    documents = [Document("a", "Ada met Bob. Bob met Ada. Carol stayed.", "f:1")]
    with TestPipeline() as p:
        outputs = p | beam.Create(documents) | AnnotateDocuments(config)
        assert_that(outputs["annotated"] | beam.Map(lambda d: d.redacted_text), equal_to([
            "[PER_1] met [PER_2]. [PER_2] met [PER_1]. [PER_3] stayed."]))


def test_a_long_document_is_tagged_to_its_last_character(rigged_model_dir):
    config = job_config(rigged_model_dir)
    text = "the quick brown fox jumps over the lazy dog. " * 4000 + "Xanthippe"
    documents = [Document("long", text, "f:1")]
    with TestPipeline() as p:
        outputs = p | beam.Create(documents) | AnnotateDocuments(config)
        assert_that(outputs["annotated"] | beam.Map(
            lambda d: (d.redacted_text.endswith("dog. [PER]"), d.num_windows > 100,
                       [(e.start, e.end) for e in d.entities])),
            equal_to([(True, True, [(len(text) - 9, len(text))])]))


def write_hostile_jsonl(path):
    long_text = "word " * 40_000 + "Finally Xanthippe Moreau"
    lines = [
        json.dumps({"id": "ok-1", "text": "Angela Merkel visited Paris."}).encode(),
        b'{"id": "bad-utf8", "text": "caf\xe9 \xff"}',
        b'{"id": "truncated", "text": "Angela Mer',
        b'[1, 2, 3]',
        b'"just a string"',
        json.dumps({"id": "no-text"}).encode(),
        json.dumps({"id": "int-text", "text": 42}).encode(),
        json.dumps({"id": "list-id", "text": "x"}).replace('"list-id"', '["a"]').encode(),
        json.dumps({"id": "empty", "text": ""}).encode(),
        json.dumps({"id": "spaces", "text": " \n\t "}).encode(),
        b'{"id": "surrogate", "text": "Bob \\ud800 Smith"}',
        json.dumps({"id": "emoji", "text": "👍🏽Zoë́ Ødegård 👩‍👩‍👧 met Ñoño at NASA."},
                   ensure_ascii=False).encode(),
        json.dumps({"id": "long", "text": long_text}).encode(),
        json.dumps({"id": "giant-token", "text": "Start " + "x" * 20_000 + " Ada ends"}).encode(),
        json.dumps({"id": "ok-1", "text": "Duplicate id, Bob Dylan."}).encode(),
        b"",
        json.dumps({"id": 7, "text": "numeric id for Carol."}).encode(),
        json.dumps({"id": "too-big", "text": "y" * 300_001}).encode(),
        json.dumps({"id": "mark-before", "text": "\u0301Angela and @NASA."}).encode(),
    ]
    path.write_bytes(b"\n".join(lines) + b"\n")
    return path


def read_parquet(output, prefix):
    folder = {"annotations": "annotations", "dead_letter": "dead_letters"}[prefix]
    files = sorted(glob.glob(os.path.join(output, folder, prefix + "-*.parquet")))
    assert files, f"no {prefix} files in {output}"
    tables = [pq.read_table(f) for f in files]
    return tables[0].schema, [row for t in tables for row in t.to_pylist()]


@pytest.mark.slow
def test_hostile_input_never_crashes_and_every_record_is_accounted_for(
        rigged_model_dir, tmp_path):
    source = write_hostile_jsonl(tmp_path / "hostile.jsonl")
    output = tmp_path / "out"
    summary = run([
        "--input", str(source), "--output", str(output), "--model", str(rigged_model_dir),
        "--device", "cpu", "--max-chars", "300000", "--batch-tokens", "512"])
    assert summary["records_in"] == 18          # 19 lines, one blank
    assert summary["blank_lines_skipped"] == 1
    assert summary["counts_add_up"]
    assert summary["dead_lettered_by_reason"] == {
        "id_not_string": 1, "invalid_json": 1, "invalid_unicode": 1,
        "invalid_utf8": 1, "missing_text": 1, "not_an_object": 2, "text_not_string": 1,
        "too_large": 1}
    assert summary["records_out"] == 9 and summary["empty_documents"] == 2
    with open(output / "_SUMMARY.json") as handle:
        assert json.load(handle)["records_out"] == 9

    schema, rows = read_parquet(output, "annotations")
    assert schema.equals(schemas.annotation_schema(keep_text=False), check_metadata=False)
    by_source = {row["source"].rsplit(":", 1)[1]: row for row in rows}
    assert by_source["1"]["redacted_text"] == "[PER] visited [PER]."
    assert by_source["15"]["id"] == "ok-1" and by_source["1"]["id"] == "ok-1"
    assert by_source["17"]["id"] == "7"
    # "@NASA" is a handle: the pattern span beats the model's ORG (the "@" carries nothing).
    assert by_source["19"]["redacted_text"] == "[PER] and @[HANDLE]."
    assert by_source["9"]["redacted_text"] == "" and by_source["9"]["entities"] == []
    assert by_source["10"]["redacted_text"] == " \n\t " and by_source["10"]["id"] == "spaces"
    assert by_source["13"]["redacted_text"].endswith("word [PER]")
    assert by_source["14"]["redacted_text"].endswith("ends") and "Ada" not in by_source["14"]["redacted_text"]
    emoji = by_source["12"]
    assert "Zoë" not in emoji["redacted_text"] and "Ødegård" not in emoji["redacted_text"]
    assert emoji["redacted_text"].startswith("👍🏽[PER] 👩‍👩‍👧 met [PER] at [ORG].")
    text = "👍🏽Zoë́ Ødegård 👩‍👩‍👧 met Ñoño at NASA."
    spans = [(e["start"], e["end"], e["label"]) for e in emoji["entities"]]
    assert [text[s:e] for s, e, _ in spans] == ["Zoë́ Ødegård", "Ñoño", "NASA"]
    for row in rows:
        assert row["model"]["name"] == "tiny-rigged-bert"
        for replacement in row["replacements"]:
            assert row["redacted_text"][replacement["start"]:replacement["end"]] == \
                replacement["placeholder"]

    dead_schema, dead = read_parquet(output, "dead_letter")
    assert dead_schema.equals(schemas.DEAD_LETTER_SCHEMA, check_metadata=False)
    assert len(dead) == summary["dead_lettered"]
    everything = json.dumps(dead) + json.dumps(rows)
    for secret in ("Angela", "Merkel", "Xanthippe", "Moreau", "Dylan", "Carol", "Smith"):
        assert secret not in everything


@pytest.mark.slow
def test_text_and_parquet_inputs_and_keep_text(rigged_model_dir, tmp_path):
    import pyarrow as pa

    (tmp_path / "docs").mkdir()
    (tmp_path / "docs" / "one.txt").write_text("\ufeffAngela Merkel in Paris.", encoding="utf-8")
    (tmp_path / "docs" / "two.txt").write_bytes(b"\xff\xfe broken")
    pq.write_table(pa.table({"doc": ["p1", "p2", None], "body": ["Bob spoke.", None, "Ada ok"]}),
                   tmp_path / "docs" / "three.parquet")
    output = tmp_path / "out"
    summary = run([
        "--input", str(tmp_path / "docs" / "*"), "--output", str(output),
        "--model", str(rigged_model_dir), "--id-field", "doc", "--text-field", "body",
        "--keep-text", "--device", "cpu"])
    assert summary["records_in"] == 5 and summary["records_out"] == 3
    assert summary["dead_lettered_by_reason"] == {"invalid_utf8": 1, "missing_text": 1}
    schema, rows = read_parquet(output, "annotations")
    assert schema.equals(schemas.annotation_schema(keep_text=True), check_metadata=False)
    texts = {row["id"].rsplit("/", 1)[-1]: row for row in rows}
    assert texts["one.txt"]["text"] == "Angela Merkel in Paris."
    assert [e["text"] for e in texts["one.txt"]["entities"]] == ["Angela Merkel", "Paris"]
    assert texts["p1"]["redacted_text"] == "[PER] spoke."
    assert any(row["source"].endswith("#row=2") for row in rows)


def test_bad_options_fail_before_the_job_starts(rigged_model_dir, tmp_path):
    from larvatus.options import OptionsError
    from larvatus.models.model_dir import ModelError

    source = tmp_path / "in.jsonl"
    source.write_text('{"id": "a", "text": "x"}\n')
    base = ["--input", str(source), "--output", str(tmp_path / "out")]
    with pytest.raises(OptionsError, match="matches no file"):
        run(["--input", str(tmp_path / "none*.jsonl"), "--output", str(tmp_path / "o")])
    with pytest.raises(ModelError, match="does not exist"):
        run(base + ["--model", str(tmp_path / "missing-model")])
    with pytest.raises(OptionsError, match="neither a type the model predicts"):
        run(base + ["--model", str(rigged_model_dir), "--redact-labels", "PERSON"])
    with pytest.raises(OptionsError, match="LARVATUS_PSEUDONYM_KEY"):
        run(base + ["--model", str(rigged_model_dir), "--placeholder", "pseudonym"])
    with pytest.raises(OptionsError, match="window-overlap"):
        run(base + ["--model", str(rigged_model_dir), "--window-overlap", "500"])


def test_output_is_not_overwritten_without_asking(rigged_model_dir, tmp_path):
    from larvatus.options import OptionsError

    source = tmp_path / "in.jsonl"
    source.write_text('{"id": "a", "text": "Ada"}\n')
    argv = ["--input", str(source), "--output", str(tmp_path / "out"),
            "--model", str(rigged_model_dir), "--device", "cpu"]
    assert run(argv)["records_out"] == 1
    with pytest.raises(OptionsError, match="--overwrite"):
        run(argv)
    assert run(argv + ["--overwrite"])["records_out"] == 1


def test_pseudonyms_link_records_under_a_key(rigged_model_dir, tmp_path, monkeypatch):
    monkeypatch.setenv("LARVATUS_PSEUDONYM_KEY", "k" * 32)
    source = tmp_path / "in.jsonl"
    source.write_text('{"id": "a", "text": "Ada met Bob."}\n{"id": "b", "text": "Bob left."}\n')
    run(["--input", str(source), "--output", str(tmp_path / "out"), "--model",
         str(rigged_model_dir), "--device", "cpu", "--placeholder", "pseudonym"])
    _, rows = read_parquet(tmp_path / "out", "annotations")
    texts = {r["id"]: r["redacted_text"] for r in rows}
    bob_a = texts["a"].split(" met ")[1].rstrip(".")
    assert texts["b"] == f"{bob_a} left." and bob_a.startswith("[PER_")
