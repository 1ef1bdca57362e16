"""ML outputs through the model and the pipeline: hidden states line up with pieces, token ids decode
to text without the redacted names, and nothing changes when they are off."""
from __future__ import annotations

import glob
import json
import os
import shutil

import numpy as np
import pyarrow.parquet as pq
import pytest

from larvatus.models.handler import OnnxTokenClassifierHandler
from larvatus.models.model_dir import ModelError, load_model_spec
from larvatus import schemas
from larvatus.cli import main as cli_main
from larvatus.run import run
from larvatus.transforms.encode import encode
from larvatus.transforms.records import Document, WindowPredictions
from larvatus.transforms.segment import segment


def encoded_text(spec, text, max_length=None, overlap=4):
    tokenizer = spec.load_tokenizer()
    settings = spec.encode_settings(tokenizer, overlap=overlap, max_length=max_length)
    return encode(segment(Document("d", text, "d")), tokenizer, settings)


def torch_hidden_states(model_dir, window):
    """The checkpoint's own hidden states for one window, in PyTorch."""
    import torch
    from transformers import AutoModelForTokenClassification

    checkpoint = model_dir.parent / f"{model_dir.name}-checkpoint"
    model = AutoModelForTokenClassification.from_pretrained(str(checkpoint)).eval()
    with torch.no_grad():
        out = model(input_ids=torch.from_numpy(window.input_ids[None]),
                    attention_mask=torch.ones(1, len(window), dtype=torch.long),
                    token_type_ids=torch.from_numpy(window.type_ids[None]),
                    output_hidden_states=True)
    return [h[0].numpy() for h in out.hidden_states]


@pytest.mark.parametrize("layer", ["last", "second_to_last", "sum_last_four"])
def test_handler_hidden_states_line_up_with_the_pieces(random_model_dir, layer):
    spec = load_model_spec(random_model_dir)
    assert set(spec.hidden_outputs) == {"last", "second_to_last", "sum_last_four"}
    text = " ".join(["Zbigniew Brzęczyszczykiewicz wrote to the board."] * 12)
    encoded = encoded_text(spec, text, max_length=32)
    assert len(encoded.windows) > 3
    plain = OnnxTokenClassifierHandler(spec, device="cpu", batch_tokens=96)
    with_hidden = OnnxTokenClassifierHandler(spec, device="cpu", batch_tokens=96,
                                             embedding_layer=layer)
    (without,) = plain.run_inference([encoded], plain.load_model())
    (result,) = with_hidden.run_inference([encoded], with_hidden.load_model())
    assert isinstance(result.inference, WindowPredictions)
    # the tags do not change when hidden states are fetched too
    for a, b in zip(without.inference, result.inference.probs):
        np.testing.assert_allclose(a, b, rtol=1e-5, atol=1e-6)
    for window, hidden in zip(encoded.windows, result.inference.hidden):
        states = torch_hidden_states(random_model_dir, window)
        expected = {"last": states[-1], "second_to_last": states[-2],
                    "sum_last_four": np.sum(states[-4:], axis=0)}[layer]
        assert hidden.shape == (len(window), 32) and hidden.dtype == np.float32
        np.testing.assert_allclose(hidden, expected, rtol=1e-3, atol=1e-4)


def without_hidden_outputs(model_dir, target):
    shutil.copytree(model_dir, target)
    config = json.loads((target / "larvatus_model.json").read_text())
    del config["hidden_states"]
    (target / "larvatus_model.json").write_text(json.dumps(config))
    return target


def test_a_model_without_hidden_outputs_is_refused_at_start(rigged_fp32_model_dir, tmp_path,
                                                             capsys):
    model = without_hidden_outputs(rigged_fp32_model_dir, tmp_path / "no-hidden")
    with pytest.raises(ModelError, match="exported without them"):
        OnnxTokenClassifierHandler(load_model_spec(model), embedding_layer="last")
    source = tmp_path / "in.jsonl"
    source.write_text('{"id": "a", "text": "Ada left."}\n')
    status = cli_main(["run", "--input", str(source), "--output", str(tmp_path / "out"),
                       "--model", str(model), "--emit-embeddings"])
    assert status == 2
    assert "--emit-embeddings needs the hidden-state outputs" in capsys.readouterr().err
    assert not (tmp_path / "out" / "_SUMMARY.json").exists()


DOCUMENTS = [
    {"id": "a", "text": "Zbigniew Brzęczyszczykiewicz, of Szczebrzeszyn, met Ada. "
                        "later, zbigniew brzęczyszczykiewicz wrote: (Ada)!"},
    {"id": "b", "text": "no names here at all."},
    {"id": "c", "text": ""},
    {"id": "d", "text": "Mail jo.smith@example.org or call +44 20 7946 0958, said Kowalczyk-Nowak."},
    {"id": "e", "text": " ".join(["the board met again and Wojciechowski spoke"] * 20)},
]
NAMES = ["zbigniew", "brzęczyszczykiewicz", "szczebrzeszyn", "ada", "kowalczyk", "nowak",
         "smith", "example", "7946", "0958", "wojciechowski"]


def run_job(model_dir, tmp_path, name, *flags):
    source = tmp_path / "in.jsonl"
    if not source.exists():
        source.write_text("".join(json.dumps(d, ensure_ascii=False) + "\n" for d in DOCUMENTS),
                          encoding="utf-8")
    out = tmp_path / name
    summary = run(["--input", str(source), "--output", str(out), "--model", str(model_dir),
                   "--device", "cpu", "--window-length", "24", "--window-overlap", "6",
                   *flags])
    files = sorted(glob.glob(os.path.join(out, "annotations", "annotations-*.parquet")))
    tables = [pq.read_table(f) for f in files]
    rows = sorted((r for t in tables for r in t.to_pylist()), key=lambda r: r["id"])
    return out, summary, tables[0].schema, rows


@pytest.mark.slow
def test_token_ids_decode_to_text_without_the_redacted_names(rigged_fp32_model_dir, tmp_path):
    from tokenizers import Tokenizer
    from transformers import PreTrainedTokenizerFast

    out, summary, schema, rows = run_job(
        rigged_fp32_model_dir, tmp_path, "on", "--emit-token-ids", "--emit-embeddings",
        "--embedding-layer", "sum_last_four")
    assert summary["counts_add_up"] and summary["records_out"] == len(DOCUMENTS)
    assert schema.equals(schemas.annotation_schema(False, token_ids=True, embeddings=True),
                         check_metadata=False)
    placeholders = summary["ml_outputs"]["token_ids"]["placeholder_ids"]
    assert {"[PER]", "[LOC]", "[ORG]", "[EMAIL]", "[PHONE]"} <= set(placeholders)
    tokenizer = Tokenizer.from_file(str(out / "tokenizer.json"))
    fast = PreTrainedTokenizerFast(tokenizer_file=str(out / "tokenizer.json"))
    for token, token_id in placeholders.items():
        assert tokenizer.token_to_id(token) == token_id == fast.convert_tokens_to_ids(token)
    by_id = {r["id"]: r for r in rows}
    for row in rows:
        ids = row["redacted_input_ids"]
        decoded = tokenizer.decode(ids, skip_special_tokens=False)
        assert decoded == fast.decode(ids)
        for name in NAMES:
            assert name not in decoded.lower(), (row["id"], name)
        # one placeholder id per redacted entity
        assert sum(i in placeholders.values() for i in ids) == sum(
            e["redacted"] for e in row["entities"])
    a = by_id["a"]
    assert any(e["propagated"] and e["redacted"] for e in a["entities"])
    def decode(row_id):
        return tokenizer.decode(by_id[row_id]["redacted_input_ids"], skip_special_tokens=False)

    assert decode("a") == "[PER], of [PER], met [PER]. later, [PER] wrote : ( [PER] )!"
    assert "[EMAIL]" in decode("d") and "[PHONE]" in decode("d")
    assert decode("b") == "no names here at all."
    assert by_id["c"]["redacted_input_ids"] == [] and by_id["c"]["embedding"] is None
    # embeddings: the model's hidden size, one vector per entity with pieces
    assert len(by_id["e"]["embedding"]) == 32
    assert all(len(e["vector"]) == 32 for r in rows for e in r["entities"])


@pytest.mark.slow
def test_off_changes_nothing_and_on_only_adds_columns(rigged_fp32_model_dir, tmp_path):
    out_off, summary_off, schema_off, rows_off = run_job(rigged_fp32_model_dir, tmp_path, "off")
    assert schema_off.equals(schemas.annotation_schema(False), check_metadata=False)
    assert "ml_outputs" not in summary_off and not (out_off / "tokenizer.json").exists()
    _, _, _, rows_on = run_job(rigged_fp32_model_dir, tmp_path, "on", "--emit-token-ids",
                               "--emit-embeddings", "--embedding-pooling", "cls")
    for off, on in zip(rows_off, rows_on):
        on = dict(on)
        on.pop("redacted_input_ids"), on.pop("embedding")
        on["entities"] = [{k: v for k, v in e.items() if k != "vector"} for e in on["entities"]]
        assert on == off


@pytest.mark.slow
def test_vectors_do_not_depend_on_batching(rigged_fp32_model_dir, tmp_path):
    flags = ("--emit-embeddings", "--emit-token-ids")
    _, _, _, small = run_job(rigged_fp32_model_dir, tmp_path, "small", *flags,
                             "--batch-tokens", "64")
    _, _, _, large = run_job(rigged_fp32_model_dir, tmp_path, "large", *flags,
                             "--batch-tokens", "4096")
    for a, b in zip(small, large):
        assert a["redacted_input_ids"] == b["redacted_input_ids"]
        if a["embedding"] is not None:
            np.testing.assert_allclose(a["embedding"], b["embedding"], rtol=1e-4, atol=1e-5)


def test_the_cost_benchmark_measures_every_inference_mode(random_model_dir, tmp_path):
    from bench import ml_outputs

    docs = tmp_path / "docs.jsonl"
    docs.write_text("".join(json.dumps(d, ensure_ascii=False) + "\n" for d in DOCUMENTS),
                    encoding="utf-8")
    times = ml_outputs.measure_inference(docs, str(random_model_dir), str(random_model_dir), 2)
    assert list(times) == ["tags, graph without hidden outputs", "tags", "tags + hidden last",
                           "tags + hidden second_to_last", "tags + hidden sum_last_four"]
    assert all(len(v) == 2 and min(v) > 0 for v in times.values())


def test_the_cost_benchmark_times_whole_runs_in_wall_cpu_and_stage_seconds(random_model_dir, tmp_path):
    from bench import ml_outputs

    docs = tmp_path / "docs.jsonl"
    docs.write_text("".join(json.dumps(d, ensure_ascii=False) + "\n" for d in DOCUMENTS),
                    encoding="utf-8")
    wall, cpu, stages = ml_outputs.measure_pipeline(docs, str(random_model_dir), 1)
    assert list(wall) == list(cpu) == list(stages) == ["off", "token-ids", "embeddings", "both"]
    for mode in wall:
        assert len(wall[mode]) == len(cpu[mode]) == len(stages[mode]) == 1
        # A Python process that imports Beam and runs a model uses well over 0.5 CPU-s.
        assert cpu[mode][0] > 0.5 and wall[mode][0] > stages[mode][0] > 0
