"""The command line as a user meets it: the sample corpus through the embedded default model."""
from __future__ import annotations

import collections
import glob
import json
import os
import re
import subprocess
import sys

import pyarrow.parquet as pq
import pytest

from larvatus import schemas
from larvatus.options import LarvatusOptions
from tests.paths import ROOT

SAMPLE = ROOT / "pipeline" / "sample" / "news.jsonl"


def run_cli(*args, env=None):
    return subprocess.run(
        [sys.executable, "-m", "larvatus.run", *map(str, args)], cwd=ROOT,
        capture_output=True, text=True, env=env, timeout=900)


def test_help_explains_every_option():
    done = run_cli("--help")
    assert done.returncode == 0
    import argparse

    parser = argparse.ArgumentParser()
    LarvatusOptions._add_argparse_args(parser)
    for action in parser._actions:
        if action.option_strings and action.dest != "help":
            assert action.option_strings[0] in done.stdout
            assert action.help
    assert "--runner" in done.stdout   # Beam's options pass through


def test_missing_model_fails_at_start_with_advice(tmp_path):
    done = run_cli("--input", SAMPLE, "--output", tmp_path / "o", "--model", tmp_path / "none")
    assert done.returncode == 2
    assert "does not exist" in done.stderr and "larvatus.models.export" in done.stderr
    assert not (tmp_path / "o" / "_SUMMARY.json").exists()


@pytest.fixture(scope="module")
def sample_run(tmp_path_factory):
    output = tmp_path_factory.mktemp("sample") / "out"
    done = run_cli("--input", SAMPLE, "--output", output)
    assert done.returncode == 0, done.stderr[-3000:]
    return output, done


@pytest.mark.slow
def test_sample_corpus_with_embedded_model(sample_run):
    output, done = sample_run
    summary = json.loads((output / "_SUMMARY.json").read_text())
    documents = [json.loads(line) for line in SAMPLE.read_text(encoding="utf-8").splitlines()
                 if line.strip()]
    assert summary["records_in"] == len(documents) == summary["records_out"]
    assert summary["dead_lettered"] == 0 and summary["counts_add_up"]
    assert summary["model"]["name"].startswith("larvatus-minilm")
    assert summary["words"] > 10_000
    for label in ("PER", "LOC", "ORG"):
        assert summary["entities_by_label"].get(label, 0) > 20
    files = glob.glob(str(output / "annotations" / "annotations-*.parquet"))
    rows = [row for f in files for row in pq.read_table(f).to_pylist()]
    assert pq.read_schema(files[0]).equals(schemas.annotation_schema(False), check_metadata=False)
    assert len(rows) == len(documents)
    written = collections.Counter(e["label"] for row in rows for e in row["entities"])
    assert summary["entities_by_label"] == dict(written)
    assert summary["entities_propagated"] == sum(
        bool(e["propagated"]) for row in rows for e in row["entities"]) > 0
    by_id = {row["id"]: row for row in rows}
    for doc in documents:
        row = by_id[doc["id"]]
        for entity in row["entities"]:
            assert 0 <= entity["start"] < entity["end"] <= len(doc["text"])


@pytest.mark.slow
def test_known_names_in_the_sample_come_out_redacted(sample_run):
    output, _ = sample_run
    files = glob.glob(str(output / "annotations" / "annotations-*.parquet"))
    redacted = "\n".join(row["redacted_text"] for f in files for row in pq.read_table(f).to_pylist())
    sample = SAMPLE.read_text(encoding="utf-8")
    for name in KNOWN_NAMES:
        assert name in sample
        assert name not in redacted, f"{name!r} leaked"
    assert redacted.count("[PER]") > 50 and redacted.count("[LOC]") > 30


# Names written into pipeline/sample/news.jsonl that the embedded model must redact.
KNOWN_NAMES = [
    "Henrik Aas", "Zoë Ødegård", "Ingrid Solberg-Lie", "Torbjørn Kvale", "Brian Otieno",
    "Kwame Asante", "Fatima Begum", "Naeem Hassan", "Tromsø", "Nairobi", "São Paulo", "Łódź",
    "Reykjavík", "International Monetary Fund",
]


@pytest.mark.slow
def test_misc_is_kept_in_the_sample_and_the_report_and_show_say_so(sample_run):
    """The default labels keep MISC: no [MISC] placeholder, no hidden MISC entity, and the
    report's table and `show` both list MISC as kept."""
    from larvatus import report as report_module, show as show_module

    output, _ = sample_run
    files = glob.glob(str(output / "annotations" / "annotations-*.parquet"))
    rows = [row for f in files for row in pq.read_table(f).to_pylist()]
    assert not any("[MISC]" in row["redacted_text"] for row in rows)
    assert not any(e["redacted"] for row in rows for e in row["entities"] if e["label"] == "MISC")
    assert any(e["label"] == "MISC" for row in rows for e in row["entities"])
    shown = show_module.show(str(output))
    kept_line = next(line for line in shown.splitlines() if line.startswith("hidden (in"))
    assert "kept as written: MISC" in kept_line and "MISC" not in kept_line.split(";")[0]
    page = report_module.build_report(str(output))
    assert re.search(r"<td>MISC</td><td class=\"n\">[\d,]+</td><td>no</td>", page)
    assert "never as [MISC]" in page
