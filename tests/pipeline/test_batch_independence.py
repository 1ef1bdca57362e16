"""A document's row must not depend on its batch mates, on how the input is split into files, or on batch size."""
from __future__ import annotations

import json
from pathlib import Path

import pytest

from larvatus.run import run
from tests.paths import ROOT
from tests.rows import differing, read_rows

SAMPLE = ROOT / "pipeline" / "sample" / "news.jsonl"
TARGET = "news-007"   # a long document (several windows) with names of every kind


def sample_lines() -> list[str]:
    return [line for line in SAMPLE.read_text(encoding="utf-8").splitlines() if line.strip()]


def run_rows(tmp_path: Path, name: str, inputs: dict[str, list[str]], model: str, *extra) -> dict:
    folder = tmp_path / name
    folder.mkdir()
    for file_name, lines in inputs.items():
        (folder / file_name).write_text("\n".join(lines) + "\n", encoding="utf-8")
    output = tmp_path / f"{name}-out"
    summary = run(["--input", str(folder / "*.jsonl"), "--output", str(output),
                   "--model", model, "--device", "cpu", *extra])
    assert summary["counts_add_up"] and summary["dead_lettered"] == 0
    return read_rows(output)


def batching_variants(tmp_path: Path, model: str, small_batch: str) -> dict[str, dict]:
    lines = sample_lines()
    target = [line for line in lines if json.loads(line)["id"] == TARGET]
    third = len(lines) // 3
    return {
        "alone": run_rows(tmp_path, "alone", {"one.jsonl": target}, model),
        "corpus": run_rows(tmp_path, "corpus", {"all.jsonl": lines}, model),
        "three files": run_rows(tmp_path, "split", {
            "a.jsonl": lines[:third], "b.jsonl": lines[third:2 * third],
            "c.jsonl": lines[2 * third:]}, model),
        f"--batch-tokens {small_batch}": run_rows(
            tmp_path, "small", {"all.jsonl": lines}, model, "--batch-tokens", small_batch),
    }


def assert_batch_independent(variants: dict[str, dict]) -> None:
    corpus = variants["corpus"]
    assert len(corpus) == len(sample_lines())
    assert variants["alone"][TARGET] == corpus[TARGET], "alone vs inside the corpus"
    assert corpus[TARGET][1], "the target document should have entities"
    for name, rows in variants.items():
        if name != "alone":
            assert differing(rows, corpus) == [], f"{name} vs one file"


@pytest.mark.slow
def test_rows_do_not_depend_on_batching_with_an_fp32_model(rigged_fp32_model_dir, tmp_path):
    assert_batch_independent(batching_variants(tmp_path, str(rigged_fp32_model_dir), "128"))


@pytest.mark.slow
def test_rows_do_not_depend_on_batching_with_the_embedded_model(tmp_path):
    assert_batch_independent(batching_variants(tmp_path, "embedded:default", "256"))
