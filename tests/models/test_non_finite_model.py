"""A model giving NaN or infinite outputs never passes for one that found no entity."""
from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import pyarrow.parquet as pq
import pytest

from larvatus.models.batching import NonFiniteOutput, run_in_batches
from larvatus.models.handler import PROBE_SENTENCE, OnnxTokenClassifierHandler
from larvatus.models.model_dir import ModelError, load_model_spec
from larvatus.transforms.records import Window
from tests.paths import ROOT

TRIGGER = "Braithwaite"


def _poisoned_copy(source: Path, target: Path, trigger_id: int | None) -> Path:
    """The model with its logits made -inf: for windows holding `trigger_id`, or always (None)."""
    import onnx
    from onnx import TensorProto, helper

    shutil.copytree(source, target)
    path = target / "model.fp32.onnx"
    model = onnx.load(str(path))
    graph = model.graph
    logits = graph.output[0].name
    raw = logits + "_raw"
    for node in graph.node:
        node.output[:] = [raw if o == logits else o for o in node.output]
    if trigger_id is None:
        graph.initializer.append(helper.make_tensor("poison", TensorProto.FLOAT, [], [np.nan]))
        graph.node.append(helper.make_node("Add", [raw, "poison"], [logits]))
    else:
        graph.initializer.append(helper.make_tensor("trigger", TensorProto.INT64, [], [trigger_id]))
        graph.initializer.append(helper.make_tensor("last_axis", TensorProto.INT64, [1], [-1]))
        graph.node.extend([
            helper.make_node("Equal", ["input_ids", "trigger"], ["hit"]),
            helper.make_node("Not", ["hit"], ["miss"]),
            helper.make_node("Cast", ["miss"], ["miss_f"], to=TensorProto.FLOAT),
            helper.make_node("Log", ["miss_f"], ["log_miss"]),     # 0, or -inf on the trigger
            helper.make_node("ReduceMin", ["log_miss"], ["window_min"], axes=[-1], keepdims=1),
            helper.make_node("Unsqueeze", ["window_min", "last_axis"], ["window_bias"]),
            helper.make_node("Add", [raw, "window_bias"], [logits]),
        ])
    onnx.save(model, str(path))
    return target


def _trigger_id(model: Path) -> int:
    spec = load_model_spec(model)
    tokenizer = spec.load_tokenizer()
    trigger = tokenizer.encode(TRIGGER, add_special_tokens=False).ids[0]
    assert trigger not in tokenizer.encode(PROBE_SENTENCE).ids
    return trigger


def _window(ids) -> Window:
    n = len(ids)
    return Window(input_ids=np.asarray(ids, dtype=np.int64), type_ids=np.zeros(n, np.int64),
                  word_ids=np.asarray([-1, *range(n - 2), -1]), first_piece=np.ones(n, bool),
                  piece_offset=0)


def test_non_finite_logits_raise_instead_of_tagging_nothing():
    windows = [_window([101, 7, 8, 102]), _window([101, 9, 102])]

    def inf_on_first_row(feeds):
        logits = np.zeros(feeds["input_ids"].shape + (3,), dtype=np.float32)
        logits[0, 1, :] = -np.inf
        return logits

    with pytest.raises(NonFiniteOutput, match="not finite"):
        run_in_batches(windows, 64, inf_on_first_row)

    def nan_in_padding_only(feeds):
        logits = np.zeros(feeds["input_ids"].shape + (3,), dtype=np.float32)
        logits[feeds["attention_mask"] == 0] = np.nan
        return logits

    probs = run_in_batches(windows, 64, nan_in_padding_only)
    assert [p.shape for p in probs] == [(2, 3), (1, 3)]
    assert all(np.isfinite(p).all() for p in probs)


def test_a_model_with_nan_outputs_is_refused_at_start(rigged_fp32_model_dir, tmp_path):
    model = _poisoned_copy(rigged_fp32_model_dir, tmp_path / "nan", None)
    with pytest.raises(ModelError, match="NaN or infinite outputs"):
        OnnxTokenClassifierHandler(load_model_spec(model), device="cpu").load_model()
    source = tmp_path / "in.jsonl"
    source.write_text('{"id": "a", "text": "Wilhelmina Braithwaite met Ada in Leeds."}\n')
    done = subprocess.run(
        [sys.executable, "-m", "larvatus.cli", "run", "--input", str(source), "--output",
         str(tmp_path / "out"), "--model", str(model), "--device", "cpu"],
        cwd=ROOT, capture_output=True, text=True, timeout=600)
    assert done.returncode == 2, done.stderr[-2000:]
    assert "NaN or infinite outputs" in done.stderr and "Traceback" not in done.stderr


def test_a_window_with_non_finite_outputs_is_an_inference_error_dead_letter(
        rigged_fp32_model_dir, tmp_path):
    model = _poisoned_copy(rigged_fp32_model_dir, tmp_path / "poisoned",
                           _trigger_id(rigged_fp32_model_dir))
    source = tmp_path / "in.jsonl"
    source.write_text(
        json.dumps({"id": "leak", "text": f"Wilhelmina {TRIGGER} met Ada in Leeds."}) + "\n"
        + json.dumps({"id": "clean", "text": "Jane Doe met ACME in Paris."}) + "\n")
    out = tmp_path / "out"
    done = subprocess.run(
        [sys.executable, "-m", "larvatus.cli", "run", "--input", str(source), "--output",
         str(out), "--model", str(model), "--device", "cpu", "--max-dead-letter-ratio", "0.5"],
        cwd=ROOT, capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr[-2000:]
    rows = [r for f in (out / "annotations").glob("*.parquet") for r in pq.read_table(f).to_pylist()]
    assert [r["id"] for r in rows] == ["clean"]
    assert "[PER]" in rows[0]["redacted_text"]
    dead = [r for f in (out / "dead_letters").glob("*.parquet") for r in pq.read_table(f).to_pylist()]
    assert [(d["id"], d["reason"]) for d in dead] == [("leak", "inference_error")]
    assert "not finite" in dead[0]["detail"] and TRIGGER not in json.dumps(dead, default=str)
    summary = json.loads((out / "_SUMMARY.json").read_text())
    assert summary["dead_lettered_by_reason"] == {"inference_error": 1}
