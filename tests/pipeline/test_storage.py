"""The output folder's life cycle: checks first, a staged run moved into place, honest summaries."""
from __future__ import annotations

import hashlib
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

from larvatus import run as run_module
from larvatus import show as show_module
from larvatus.options import OptionsError
from larvatus.run import main, run
from larvatus.summary import summarize
from tests.fake_fs import PREFIX
from larvatus.transforms.read import hashed_name, input_base, source_name
from tests.paths import ROOT


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


def snapshot(folder: Path) -> dict:
    return {str(p.relative_to(folder)): p.read_bytes() if p.is_file() else None
            for p in sorted(folder.rglob("*"))}


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


def test_hashed_names_are_keyed_when_a_key_is_given():
    plain = hashed_name("letters/Quentin Blackwood.txt")
    assert plain == "sha256:" + hashlib.sha256(b"letters/Quentin Blackwood.txt").hexdigest()[:16]
    keyed = hashed_name("letters/Quentin Blackwood.txt", b"k" * 32)
    assert keyed.startswith("hmac:") and len(keyed) == len("hmac:") + 16
    assert keyed == hashed_name("letters/Quentin Blackwood.txt", b"k" * 32)
    assert keyed != hashed_name("letters/Quentin Blackwood.txt", b"j" * 32)


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
    with pytest.raises(OptionsError, match=r"is a folder; give a file pattern, such as "
                                           r"--input '.*/in/\*\*/\*\.jsonl'"):
        run(args(tmp_path / "in", tmp_path / "out", rigged_model_dir))
    assert not (tmp_path / "out").exists()


def test_a_folder_on_a_remote_store_as_input_is_refused_with_a_glob_hint(
        tmp_path, rigged_model_dir, monkeypatch):
    from tests import objectstore

    monkeypatch.setenv(objectstore.ROOT_ENV, str(tmp_path / "store"))
    write_docs(tmp_path / "store" / "bucket" / "corpus" / "a.jsonl")
    folder = objectstore.PREFIX + "bucket/corpus"
    with pytest.raises(OptionsError, match=r"is a folder; give a file pattern, such as "
                                           r"--input 'larvtest://bucket/corpus/\*\*/\*\.jsonl'"):
        run(args(folder, tmp_path / "out", rigged_model_dir))
    with pytest.raises(OptionsError, match="is a folder"):
        run(args(folder + "/", tmp_path / "out", rigged_model_dir))
    with pytest.raises(OptionsError, match="matches no file"):
        run(args(objectstore.PREFIX + "bucket/corp", tmp_path / "out", rigged_model_dir))


def test_a_file_as_output_is_refused(tmp_path, rigged_model_dir):
    source = write_docs(tmp_path / "in.jsonl")
    (tmp_path / "out").write_text("not a folder")
    assert main(args(source, tmp_path / "out", rigged_model_dir)) == 2


def test_an_output_below_a_file_is_refused_at_start(tmp_path, rigged_model_dir, capsys):
    source = write_docs(tmp_path / "in.jsonl")
    (tmp_path / "taken.txt").write_text("keep me")
    assert main(args(source, tmp_path / "taken.txt" / "sub" / "out", rigged_model_dir)) == 2
    error = capsys.readouterr().err
    assert "taken.txt is a file, so no folder can be made there" in error
    assert "Traceback" not in error and (tmp_path / "taken.txt").read_text() == "keep me"


def test_an_output_that_cannot_be_written_is_refused_at_start(tmp_path, rigged_model_dir, capsys):
    """Root may write anywhere, so the unwritable place is one no user can write: Linux's
    /proc (a folder cannot be made there): refused before the model loads, with no traceback
    from Beam's writer."""
    source = write_docs(tmp_path / "in.jsonl")
    assert main(args(source, Path("/proc/larvatus-write-check/out"), rigged_model_dir)) == 2
    error = capsys.readouterr().err
    assert "--output /proc/larvatus-write-check/out cannot be written" in error
    assert "Traceback" not in error


def test_the_write_check_leaves_no_folder_or_file_behind(tmp_path):
    from larvatus import storage

    storage.check_output(str(tmp_path / "new" / "deeper" / "out"), overwrite=False)
    assert not (tmp_path / "new").exists()
    (tmp_path / "existing").mkdir()
    storage.check_output(str(tmp_path / "existing"), overwrite=False)
    assert list((tmp_path / "existing").iterdir()) == []


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


def test_a_run_without_metrics_is_not_taken_for_complete(tmp_path, rigged_model_dir,
                                                          monkeypatch, capsys):
    source = write_docs(tmp_path / "in.jsonl")
    out = tmp_path / "out"
    monkeypatch.setattr(run_module, "query_counters", lambda result: None)
    assert main(args(source, out, rigged_model_dir)) == 1
    assert "metrics were unavailable" in capsys.readouterr().err
    summary = json.loads((out / "_SUMMARY.json").read_text())
    assert summary["metrics_available"] is False and summary["counts_add_up"] is False
    assert summary["checks"]["passed"] is False
    assert "FAILED: metrics were unavailable" in show_module.show(str(out))
    monkeypatch.setattr(run_module, "query_counters", lambda result: {})   # an empty answer
    assert main(args(source, tmp_path / "empty", rigged_model_dir)) == 1


def test_the_summary_records_the_dead_letter_verdict(tmp_path, rigged_model_dir):
    source = write_docs(tmp_path / "in.jsonl", n=1)
    with source.open("a") as handle:
        handle.write("{broken\n[1]\n")
    out = tmp_path / "out"
    assert main(args(source, out, rigged_model_dir)) == 1
    summary = json.loads((out / "_SUMMARY.json").read_text())
    assert summary["checks"]["passed"] is False and summary["checks"]["max_dead_letter_ratio"] == 0.5
    [failure] = summary["checks"]["failures"]
    assert "2 of 3 records (67%) were dead-lettered" in failure
    assert "invalid_json 1" in failure and "not_an_object 1" in failure
    assert "FAILED: 2 of 3 records" in show_module.show(str(out))
    assert main(args(source, tmp_path / "lenient", rigged_model_dir,
                     "--max-dead-letter-ratio", "0.7")) == 0
    lenient = json.loads((tmp_path / "lenient" / "_SUMMARY.json").read_text())
    assert lenient["checks"] == {"passed": True, "failures": [], "max_dead_letter_ratio": 0.7}


# --- interrupted runs ----------------------------------------------------------------

def test_an_interrupted_run_is_named_incomplete_and_overwrite_cleans_it(tmp_path, rigged_model_dir):
    source = write_docs(tmp_path / "in.jsonl")
    out = tmp_path / "out"
    run(args(source, out, rigged_model_dir))
    # what a killed run leaves: no summary, a staging folder, Beam's temp folder
    (out / "_SUMMARY.json").unlink()
    (out / ".larvatus-staging-0123456789ab" / "annotations").mkdir(parents=True)
    (out / "annotations" / "beam-temp-annotations-0123456789abcdef0123456789abcdef").mkdir()
    (out / "_SUMMARY.json.0123456789ab.partial").write_text('{"records_in"')
    with pytest.raises(show_module.IncompleteRun, match="incomplete run"):
        show_module.show(str(out))
    assert show_module.main([str(out)]) == 1
    with pytest.raises(OptionsError, match="INCOMPLETE"):
        run(args(source, out, rigged_model_dir))
    run(args(source, out, rigged_model_dir, "--overwrite"))
    assert (out / "_SUMMARY.json").exists() and len(annotation_rows(out)) == 3
    assert not list(out.glob(".larvatus-staging-*"))
    assert not list(out.rglob("beam-temp-*")) and not list(out.glob("*.partial"))
    assert "records in 3" in show_module.show(str(out))


def test_show_names_a_missing_run_and_a_cut_summary_without_a_traceback(tmp_path, capsys):
    assert show_module.main([str(tmp_path / "nothing")]) == 2   # no such folder: as `run`
    assert "no such folder" in capsys.readouterr().err
    assert show_module.main([str(tmp_path)]) == 1
    assert "no Larvatus run there" in capsys.readouterr().err
    out = tmp_path / "out"
    out.mkdir()
    (out / "_SUMMARY.json").write_text('{"records_in": 3, "records_')   # a write cut short
    assert show_module.main([str(out)]) == 1
    error = capsys.readouterr().err
    assert "incomplete run" in error and "_SUMMARY.json is not valid JSON" in error


def test_a_failing_run_removes_its_staging_folder(tmp_path, rigged_model_dir, monkeypatch):
    source = write_docs(tmp_path / "in.jsonl")
    out = tmp_path / "out"

    def explode(*_args, **_kwargs):
        raise KeyboardInterrupt

    monkeypatch.setattr(run_module, "query_counters", explode)
    assert main(args(source, out, rigged_model_dir)) == 130
    assert not list(out.glob(".larvatus-staging-*")) and not (out / "_SUMMARY.json").exists()


@pytest.mark.slow
def test_ctrl_c_exits_130_removes_its_files_and_keeps_the_old_run(tmp_path, rigged_model_dir):
    out = tmp_path / "out"
    run(args(write_docs(tmp_path / "small.jsonl"), out, rigged_model_dir))
    before = snapshot(out)
    source = tmp_path / "in.jsonl"
    source.write_text("".join(json.dumps({"id": f"d{i}", "text": "Jane Doe met ACME. " * 400})
                              + "\n" for i in range(400)))
    child = subprocess.Popen(
        [sys.executable, "-m", "larvatus.run", *args(source, out, rigged_model_dir),
         "--overwrite"],
        cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    deadline = time.time() + 300
    while not list(out.glob(".larvatus-staging-*")):     # the job has started writing
        assert child.poll() is None and time.time() < deadline, child.communicate()[1][-3000:]
        time.sleep(0.2)
    time.sleep(2)
    assert child.poll() is None, "the job finished before it could be interrupted"
    child.send_signal(signal.SIGINT)
    stdout, stderr = child.communicate(timeout=300)
    assert child.returncode == 130, stderr[-3000:]
    assert "interrupted" in stderr and "Traceback" not in stderr
    assert stdout == ""                                 # no partial summary
    assert snapshot(out) == before                      # no staging or beam-temp left, old run intact


def test_ctrl_c_while_the_files_move_into_place_is_held_back(tmp_path, rigged_model_dir,
                                                              monkeypatch):
    source = write_docs(tmp_path / "in.jsonl")
    out = tmp_path / "out"
    run(args(write_docs(tmp_path / "old.jsonl", n=2), out, rigged_model_dir))
    publish = run_module.storage.publish

    def interrupted(*arguments):
        os.kill(os.getpid(), signal.SIGINT)     # Ctrl-C just as the move begins
        time.sleep(0.1)
        return publish(*arguments)

    monkeypatch.setattr(run_module.storage, "publish", interrupted)
    summary = run(args(source, out, rigged_model_dir, "--overwrite"))
    assert summary["records_in"] == 3 and len(annotation_rows(out)) == 3
    assert json.loads((out / "_SUMMARY.json").read_text())["records_in"] == 3
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


def test_a_folder_name_that_is_not_utf8_reaches_ids_and_dead_letters(tmp_path, rigged_model_dir):
    odd = os.path.join(os.fsencode(tmp_path), b"in", b"\xe9t\xe9")    # matched by the wildcard
    os.makedirs(odd)
    with open(os.path.join(odd, b"a.jsonl"), "w") as handle:
        handle.write('{"text": "Jane Doe met ACME."}\n{broken\n')
    out = tmp_path / "out"
    summary = run(args(f"{tmp_path}/in/*/a.jsonl", out, rigged_model_dir))
    assert summary["records_out"] == 1 and summary["dead_lettered"] == 1
    [row] = annotation_rows(out)
    assert row["id"] == row["source"] == "\\xe9t\\xe9/a.jsonl:1"   # the fallback id too
    [dead] = pq.read_table(out / "dead_letters").to_pylist()
    assert dead["source"] == "\\xe9t\\xe9/a.jsonl:2" and dead["reason"] == "invalid_json"


def test_a_path_argument_that_is_not_utf8_is_refused_at_start(tmp_path, rigged_model_dir,
                                                               capsys):
    source = write_docs(tmp_path / "in.jsonl")
    odd = os.fsdecode(os.path.join(os.fsencode(tmp_path), b"out-\xe9"))
    assert main(args(source, odd, rigged_model_dir)) == 2
    error = capsys.readouterr().err
    assert "out-\\xe9: not valid UTF-8" in error and "Traceback" not in error
    assert not os.path.exists(odd)


def test_hashed_text_ids_are_keyed_under_the_pseudonym_key(tmp_path, rigged_model_dir,
                                                           monkeypatch):
    folder = tmp_path / "letters"
    folder.mkdir()
    (folder / "Quentin Blackwood.txt").write_text("Dear sir, about the invoice.")
    monkeypatch.setenv("LARVATUS_PSEUDONYM_KEY", "k" * 32)
    out = tmp_path / "out"
    run(args(f"{folder}/*.txt", out, rigged_model_dir, "--text-ids", "hash",
             "--placeholder", "pseudonym"))
    [row] = annotation_rows(out)
    assert row["id"] == row["source"] == hashed_name("Quentin Blackwood.txt", b"k" * 32)
    for file in out.rglob("*"):
        if file.is_file():
            assert b"Blackwood" not in file.read_bytes() and b"k" * 32 not in file.read_bytes()


# --- remote output ---------------------------------------------------------------------

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
    entities = (pl.read_parquet("out/annotations/*.parquet").select("id", "entities")
                .explode("entities").unnest("entities"))
    assert {"id", "label", "start", "end", "source", "recognizer"} <= set(entities.columns)


def test_output_on_an_object_store_without_folders(tmp_path, rigged_model_dir, monkeypatch):
    """gs:// and s3:// have no folders: every check, the move into place and show still work."""
    from tests import objectstore

    monkeypatch.setenv(objectstore.ROOT_ENV, str(tmp_path / "store"))
    source = write_docs(tmp_path / "in.jsonl")
    out = objectstore.PREFIX + "bucket/run"
    stored = tmp_path / "store" / "bucket" / "run"
    assert run(args(source, out, rigged_model_dir))["counts_add_up"]
    assert (stored / "_SUMMARY.json").exists() and len(annotation_rows(stored)) == 3
    # what an interrupted run leaves there: objects, no summary
    (stored / "_SUMMARY.json").unlink()
    for leftover in (".larvatus-staging-0123456789ab/annotations/annotations-00000-of-00001.parquet",
                     "annotations/beam-temp-annotations-1f2e3d4c5b6a79880123456789abcdef/0d9c.parquet"):
        (stored / leftover).parent.mkdir(parents=True, exist_ok=True)
        (stored / leftover).write_bytes(b"PAR1")
    with pytest.raises(show_module.IncompleteRun, match="incomplete run"):
        show_module.show(out)
    with pytest.raises(OptionsError, match="INCOMPLETE"):
        run(args(source, out, rigged_model_dir))
    run(args(source, out, rigged_model_dir, "--overwrite"))
    files = sorted(str(p.relative_to(stored)) for p in stored.rglob("*") if p.is_file())
    assert files == ["_SUMMARY.json", "annotations/annotations-00000-of-00001.parquet",
                     "dead_letters/dead_letter-00000-of-00001.parquet"]
    assert "records in 3, out 3" in show_module.show(out)
