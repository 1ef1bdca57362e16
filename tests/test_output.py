"""The output folder's life cycle: checks first, a staged run moved into place, honest summaries."""
from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pyarrow.parquet as pq
import pytest

from pipeline import run as run_module
from pipeline import show as show_module
from pipeline.options import OptionsError
from pipeline.run import main, run
from pipeline.summary import summarize
from tests.fake_fs import PREFIX, FakeRemoteFileSystem
from transforms.read import input_base, source_name

ROOT = Path(__file__).resolve().parent.parent


def write_docs(path: Path, n: int = 3, name: str = "Jane Doe") -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(json.dumps({"id": f"d{i}", "text": f"{name} met ACME in Paris."}) + "\n"
                            for i in range(n)))
    return path


def args(source, output, model, *more):
    return ["--input", str(source), "--output", str(output), "--model", str(model),
            "--device", "cpu", *map(str, more)]


def annotation_rows(output) -> list[dict]:
    files = sorted(Path(output, "annotations").glob("annotations-*.parquet"))
    return [row for f in files for row in pq.read_table(f).to_pylist()]


# --- pure helpers --------------------------------------------------------------------

@pytest.mark.parametrize("pattern,base", [
    ("/data/2024/*.jsonl", "/data/2024"), ("/data/**/x.txt", "/data"),
    ("/data/in.jsonl", "/data"), ("gs://b/in/*.jsonl", "gs://b/in"), ("in.jsonl", ""),
    ("/data/part-[0-9].jsonl", "/data")])
def test_input_base_is_the_folder_before_the_first_wildcard(pattern, base):
    assert input_base(pattern) == base


def test_source_name_is_relative_and_always_valid_utf8():
    assert source_name("/data/2024/a.jsonl", "/data") == "2024/a.jsonl"
    assert source_name("/elsewhere/a.jsonl", "/data") == "/elsewhere/a.jsonl"
    odd = os.fsdecode(b"/data/caf\xe9.txt")            # Latin-1 bytes: not UTF-8
    name = source_name(odd, "/data")
    assert name == "caf\\xe9.txt" and name.encode("utf-8")


def test_summary_without_metrics_is_not_complete():
    summary = summarize(None, model={}, options={}, wall_seconds=1.0)
    assert summary["counts_add_up"] is False and summary["metrics_available"] is False
    empty = summarize({}, model={}, options={}, wall_seconds=1.0)
    assert empty["counts_add_up"] is False
    zero = summarize({"records_in": 0}, model={}, options={}, wall_seconds=1.0)
    assert zero["counts_add_up"] is True and zero["metrics_available"] is True


# --- start-up refusals ---------------------------------------------------------------

def test_a_folder_as_input_is_refused_with_a_glob_hint(tmp_path, rigged_model_dir):
    write_docs(tmp_path / "in" / "a.jsonl")
    with pytest.raises(OptionsError, match=r"is a folder; give a file pattern such as .*\*\.jsonl"):
        run(args(tmp_path / "in", tmp_path / "out", rigged_model_dir))
    assert not (tmp_path / "out").exists()


def test_a_file_as_output_is_refused(tmp_path, rigged_model_dir):
    source = write_docs(tmp_path / "in.jsonl")
    (tmp_path / "out").write_text("not a folder")
    assert main(args(source, tmp_path / "out", rigged_model_dir)) == 2


def test_overwrite_with_a_broken_model_keeps_the_old_output(tmp_path, rigged_model_dir):
    source = write_docs(tmp_path / "in.jsonl")
    out = tmp_path / "out"
    run(args(source, out, rigged_model_dir))
    before = sorted(p.relative_to(out) for p in out.rglob("*"))
    broken = tmp_path / "broken"
    shutil.copytree(rigged_model_dir, broken)
    (broken / "tokenizer.json").write_text("{")
    assert main(args(source, out, broken, "--overwrite")) == 2
    assert sorted(p.relative_to(out) for p in out.rglob("*")) == before
    assert len(annotation_rows(out)) == 3


def test_layout_keeps_annotations_and_dead_letters_apart(tmp_path, rigged_model_dir):
    source = tmp_path / "in.jsonl"
    write_docs(source)
    with source.open("a") as handle:
        handle.write("{broken\n")
    out = tmp_path / "out"
    summary = run(args(source, out, rigged_model_dir))
    assert summary["records_in"] == 4 and summary["dead_lettered"] == 1
    assert summary["counts_add_up"] and summary["metrics_available"]
    # a folder reads as one dataset, as pandas.read_parquet, DuckDB and polars read it
    assert pq.read_table(out / "annotations").num_rows == 3
    assert pq.read_table(out / "dead_letters").column("reason").to_pylist() == ["invalid_json"]
    assert not [p for p in out.iterdir() if p.name.startswith((".larvatus", "beam-temp"))]


# --- interrupted runs ----------------------------------------------------------------

def test_an_interrupted_run_is_named_incomplete_and_overwrite_cleans_it(tmp_path, rigged_model_dir):
    source = write_docs(tmp_path / "in.jsonl")
    out = tmp_path / "out"
    run(args(source, out, rigged_model_dir))
    # what a killed run leaves: no summary, a staging folder, Beam's temp folder
    (out / "_SUMMARY.json").unlink()
    (out / ".larvatus-staging-0123456789ab" / "annotations").mkdir(parents=True)
    (out / "annotations" / "beam-temp-annotations-x").mkdir()
    with pytest.raises(show_module.IncompleteRun, match="incomplete run"):
        show_module.show(str(out))
    assert show_module.main([str(out)]) == 1
    with pytest.raises(OptionsError, match="INCOMPLETE"):
        run(args(source, out, rigged_model_dir))
    run(args(source, out, rigged_model_dir, "--overwrite"))
    assert (out / "_SUMMARY.json").exists() and len(annotation_rows(out)) == 3
    assert not list(out.glob(".larvatus-staging-*"))
    assert not list(out.rglob("beam-temp-*"))
    assert "records in 3" in show_module.show(str(out))


def test_a_failing_run_removes_its_staging_folder(tmp_path, rigged_model_dir, monkeypatch):
    source = write_docs(tmp_path / "in.jsonl")
    out = tmp_path / "out"

    def explode(*_args, **_kwargs):
        raise KeyboardInterrupt

    monkeypatch.setattr(run_module, "query_counters", explode)
    assert main(args(source, out, rigged_model_dir)) == 130
    assert not list(out.glob(".larvatus-staging-*")) and not (out / "_SUMMARY.json").exists()


def test_ctrl_c_exits_130_and_leaves_no_partial_output(tmp_path, rigged_model_dir):
    source = tmp_path / "in.jsonl"
    source.write_text("".join(json.dumps({"id": f"d{i}", "text": "Jane Doe met ACME. " * 400})
                              + "\n" for i in range(400)))
    out = tmp_path / "out"
    child = subprocess.Popen(
        [sys.executable, "-m", "pipeline.run", *args(source, out, rigged_model_dir)],
        cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    deadline = time.time() + 300
    while time.time() < deadline and not list(out.glob(".larvatus-staging-*")):
        time.sleep(0.2)
        assert child.poll() is None, child.communicate()[1][-3000:]
    time.sleep(2)
    child.send_signal(signal.SIGINT)
    _, stderr = child.communicate(timeout=300)
    assert child.returncode == 130, stderr[-3000:]
    assert "interrupted" in stderr and "Traceback" not in stderr
    assert not (out / "_SUMMARY.json").exists()
    assert not list(out.glob(".larvatus-staging-*"))


# --- sources and file names ----------------------------------------------------------

def test_source_does_not_depend_on_how_input_is_spelled(tmp_path, rigged_model_dir, monkeypatch):
    write_docs(tmp_path / "data" / "part" / "a.jsonl")
    monkeypatch.chdir(tmp_path)
    run(args("data/*/a.jsonl", tmp_path / "rel", rigged_model_dir))
    run(args(str(tmp_path / "data") + "/*/a.jsonl", tmp_path / "abs", rigged_model_dir))
    relative, absolute = annotation_rows(tmp_path / "rel"), annotation_rows(tmp_path / "abs")
    assert [r["source"] for r in relative] == [r["source"] for r in absolute]
    assert relative[0]["source"].startswith("part/a.jsonl:")


def test_a_file_name_that_is_not_utf8_does_not_crash_the_job(tmp_path, rigged_model_dir):
    folder = tmp_path / "in"
    folder.mkdir()
    odd = os.path.join(os.fsencode(folder), b"caf\xe9-\xff.txt")
    with open(odd, "w") as handle:
        handle.write("Jane Doe met ACME in Paris.")
    (folder / "plain.txt").write_text("Plain text about Paris.")
    out = tmp_path / "out"
    summary = run(args(str(folder) + "/*.txt", out, rigged_model_dir, "--input-format", "text"))
    assert summary["records_in"] == 2 and summary["records_out"] == 2 and summary["counts_add_up"]
    assert sorted(r["source"] for r in annotation_rows(out)) == ["caf\\xe9-\\xff.txt", "plain.txt"]


# --- remote output ---------------------------------------------------------------------

@pytest.fixture
def remote(tmp_path, monkeypatch):
    store = tmp_path / "store"
    store.mkdir()
    monkeypatch.setattr(FakeRemoteFileSystem, "root", str(store))
    monkeypatch.setattr(FakeRemoteFileSystem, "opened", [])
    return store


def test_remote_output_goes_through_beam_filesystems(tmp_path, rigged_model_dir, remote,
                                                     monkeypatch):
    source = write_docs(tmp_path / "in.jsonl")
    monkeypatch.chdir(tmp_path)
    out = PREFIX + "bucket/run"
    summary = run(args(source, out, rigged_model_dir))
    assert summary["counts_add_up"]
    assert (remote / "bucket" / "run" / "_SUMMARY.json").exists()
    assert len(annotation_rows(remote / "bucket" / "run")) == 3
    assert not (tmp_path / "fakefs:").exists()   # nothing landed in a local ./fakefs: folder
    with pytest.raises(OptionsError, match="already holds a complete Larvatus run"):
        run(args(source, out, rigged_model_dir))
    assert "records in 3, out 3" in show_module.show(out)


def test_readme_snippets_read_each_subfolder_as_one_table(tmp_path, rigged_model_dir, monkeypatch):
    import duckdb
    import pandas as pd
    import polars as pl

    source = write_docs(tmp_path / "in.jsonl")
    with source.open("a") as handle:
        handle.write("[1]\n")
    run(args(source, tmp_path / "out", rigged_model_dir))
    monkeypatch.chdir(tmp_path)
    rows = pd.read_parquet("out/annotations")
    dead = pd.read_parquet("out/dead_letters")
    assert len(rows) == 3 and list(dead["reason"]) == ["not_an_object"]
    counts = dict(duckdb.sql("""select e.label, count(*) from 'out/annotations/*.parquet',
                                unnest(entities) as t(e) group by 1""").fetchall())
    assert counts and sum(counts.values()) == sum(len(e) for e in rows["entities"])
    entities = pl.read_parquet("out/annotations/*.parquet").explode("entities").unnest("entities")
    assert {"id", "label", "start", "end"} <= set(entities.columns)
