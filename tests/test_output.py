"""The output folder's lifecycle and the launcher's paths: layout, sources, completion, overwrite, remote filesystems."""
from __future__ import annotations

import hashlib
import hmac
import json
import os
from pathlib import Path

import pyarrow.parquet as pq
import pytest

from pipeline.run import main, run

KEY = "k" * 32


def write_jsonl(path: Path, records: list, raw_lines: tuple = ()) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    lines = [json.dumps(r).encode() for r in records] + list(raw_lines)
    path.write_bytes(b"\n".join(lines) + b"\n")
    return path


def base_args(model_dir) -> list[str]:
    return ["--model", str(model_dir), "--device", "cpu"]


def tree(folder: Path) -> list[str]:
    """Every file and folder below `folder`, relative, sorted."""
    return sorted(str(p.relative_to(folder)) for p in folder.rglob("*"))


def rows(output: Path, folder: str) -> list[dict]:
    return pq.read_table(output / folder).to_pylist()


# ------------------------------------------------------------------------------ layout


def test_annotations_and_dead_letters_each_read_whole_from_their_own_folder(
        rigged_model_dir, tmp_path):
    source = write_jsonl(tmp_path / "in" / "a.jsonl", [{"id": "a", "text": "Ada met Bob."}],
                         raw_lines=(b'{"id": "broken"',))
    output = tmp_path / "out"
    summary = run(["--input", str(source), "--output", str(output)] + base_args(rigged_model_dir))
    assert tree(output) == [
        "_SUMMARY.json", "annotations", "annotations/part-00000-of-00001.parquet",
        "dead_letters", "dead_letters/part-00000-of-00001.parquet"]
    # A folder reads as one table (what pandas, DuckDB and polars do), no filter needed.
    annotations = pq.read_table(output / "annotations")
    assert annotations.column("id").to_pylist() == ["a"]
    assert "reason" not in annotations.column_names
    assert pq.read_table(output / "dead_letters").column("reason").to_pylist() == ["invalid_json"]
    written = json.loads((output / "_SUMMARY.json").read_text())
    assert written == summary
    assert written["complete"] is True and written["counts_add_up"] is True
    assert written["files"] == {
        "annotations": ["annotations/part-00000-of-00001.parquet"],
        "dead_letters": ["dead_letters/part-00000-of-00001.parquet"]}


def test_the_output_reads_with_pandas_duckdb_and_polars(rigged_model_dir, tmp_path):
    """The README's snippets, where the libraries are installed."""
    pd = pytest.importorskip("pandas")
    duckdb = pytest.importorskip("duckdb")
    pl = pytest.importorskip("polars")
    source = write_jsonl(tmp_path / "a.jsonl", [{"id": "a", "text": "Ada met Bob."}],
                         raw_lines=(b"[]",))
    output = tmp_path / "out"
    run(["--input", str(source), "--output", str(output)] + base_args(rigged_model_dir))
    assert pd.read_parquet(output / "annotations")["redacted_text"].tolist() == ["[PER] met [PER]."]
    assert pd.read_parquet(output / "dead_letters")["reason"].tolist() == ["not_an_object"]
    assert duckdb.sql(f"SELECT id FROM read_parquet('{output}/annotations/*.parquet')").fetchall() \
        == [("a",)]
    assert pl.read_parquet(f"{output}/dead_letters/*.parquet")["reason"].to_list() == ["not_an_object"]


# ----------------------------------------------------------------------- sources and ids


def test_source_and_fallback_ids_do_not_depend_on_how_input_is_spelled(
        rigged_model_dir, tmp_path, monkeypatch):
    write_jsonl(tmp_path / "corpus" / "2024" / "a.jsonl", [{"text": "Ada met Bob."}])
    monkeypatch.chdir(tmp_path)
    spellings = ["corpus/2024/*.jsonl", str(tmp_path / "corpus" / "2024" / "*.jsonl"),
                 "./corpus/../corpus/2024/a.jsonl"]
    seen = []
    for number, spelling in enumerate(spellings):
        output = tmp_path / f"out{number}"
        run(["--input", spelling, "--output", str(output)] + base_args(rigged_model_dir))
        seen.append([(r["id"], r["source"]) for r in rows(output, "annotations")])
    assert seen[0] == seen[1] == seen[2] == [("a.jsonl:1", "a.jsonl:1")]


def test_a_folder_as_input_is_read_recursively_skipping_hidden_files_and_the_output(
        rigged_model_dir, tmp_path):
    corpus = tmp_path / "corpus"
    write_jsonl(corpus / "a.jsonl", [{"id": "a", "text": "Ada."}])
    write_jsonl(corpus / "sub" / "b.jsonl", [{"id": "b", "text": "Bob."}])
    (corpus / "sub" / "c.txt").write_text("Carol.", encoding="utf-8")
    write_jsonl(corpus / ".git" / "x.jsonl", [{"id": "hidden", "text": "x"}])
    write_jsonl(corpus / "_tmp" / "y.jsonl", [{"id": "underscore", "text": "y"}])
    (corpus / "_SUCCESS").write_text("")
    output = corpus / "redacted"   # inside the input folder: never read back
    for _ in range(2):
        summary = run(["--input", str(corpus), "--output", str(output), "--overwrite"]
                      + base_args(rigged_model_dir))
        assert summary["files_read"] == 3 and summary["records_in"] == 3
    assert sorted((r["id"], r["source"]) for r in rows(output, "annotations")) == [
        ("a", "a.jsonl:1"), ("b", "sub/b.jsonl:1"), ("sub/c.txt", "sub/c.txt")]


def test_a_folder_with_nothing_to_read_is_refused_at_start(rigged_model_dir, tmp_path):
    from pipeline.options import OptionsError

    (tmp_path / "corpus" / ".cache").mkdir(parents=True)
    (tmp_path / "corpus" / ".cache" / "x.jsonl").write_text("{}\n")
    with pytest.raises(OptionsError, match="folder with no file to read"):
        run(["--input", str(tmp_path / "corpus"), "--output", str(tmp_path / "out")]
            + base_args(rigged_model_dir))
    assert not (tmp_path / "out").exists()


def test_a_file_name_that_is_not_utf8_never_crashes_the_job(rigged_model_dir, tmp_path):
    folder = tmp_path / "in"
    folder.mkdir()
    bad = os.path.join(os.fsencode(folder), b"caf\xff-\xc3(.jsonl")
    with open(bad, "wb") as handle:
        handle.write(b'{"text": "Ada met Bob."}\n{"id": "x", "text": 5}\n')
    with open(os.path.join(os.fsencode(folder), b"n\xe9e.txt"), "wb") as handle:
        handle.write(b"Carol left.")
    output = tmp_path / "out"
    summary = run(["--input", str(folder), "--output", str(output)] + base_args(rigged_model_dir))
    assert summary["records_in"] == 3 and summary["counts_add_up"]
    assert summary["records_out"] == 2 and summary["dead_lettered"] == 1
    assert sorted(r["source"] for r in rows(output, "annotations")) == [
        "caf\\xff-\\xc3(.jsonl:1", "n\\xe9e.txt"]
    assert [(r["id"], r["source"]) for r in rows(output, "dead_letters")] == [
        ("x", "caf\\xff-\\xc3(.jsonl:2")]


def test_hashed_text_ids_keep_file_names_out_of_everything_written(
        rigged_model_dir, tmp_path, monkeypatch):
    from transforms.read import hashed_name

    monkeypatch.setenv("LARVATUS_PSEUDONYM_KEY", KEY)
    corpus = tmp_path / "Kowalczyk"
    corpus.mkdir()
    (corpus / "Anna_Kowalczyk.txt").write_text("Ada met Bob.", encoding="utf-8")
    (corpus / "Zbigniew_Nowak.txt").write_bytes(b"\xff not utf-8")
    output = tmp_path / "out"
    summary = run(["--input", str(corpus / "*.txt"), "--output", str(output),
                   "--text-ids", "hash"] + base_args(rigged_model_dir))
    assert summary["records_in"] == 2 and summary["counts_add_up"]
    expected = hmac.new(KEY.encode(), b"larvatus-file\x00Anna_Kowalczyk.txt",
                        hashlib.sha256).hexdigest()[:32]
    [row] = rows(output, "annotations")
    assert row["id"] == row["source"] == expected
    assert hashed_name(str(corpus / "Anna_Kowalczyk.txt"), f"{corpus}/", KEY.encode()) == expected
    [letter] = rows(output, "dead_letters")
    assert letter["id"] == letter["source"] and len(letter["source"]) == 32
    for path in output.rglob("*"):
        assert "Kowalczyk" not in str(path) and "Nowak" not in str(path)
        if path.is_file():
            data = path.read_bytes()
            assert b"Kowalczyk" not in data and b"Nowak" not in data, path


def test_hashed_text_ids_need_a_key_and_text_input(rigged_model_dir, tmp_path, monkeypatch):
    from pipeline.options import OptionsError

    source = write_jsonl(tmp_path / "a.jsonl", [{"id": "a", "text": "x"}])
    args = ["--input", str(source), "--output", str(tmp_path / "out"), "--text-ids", "hash"]
    monkeypatch.delenv("LARVATUS_PSEUDONYM_KEY", raising=False)
    with pytest.raises(OptionsError, match="LARVATUS_PSEUDONYM_KEY"):
        run(args + base_args(rigged_model_dir))
    monkeypatch.setenv("LARVATUS_PSEUDONYM_KEY", KEY)
    with pytest.raises(OptionsError, match="reads none"):
        run(args + ["--input-format", "jsonl"] + base_args(rigged_model_dir))


def test_file_names_are_relative_escaped_and_keyed():
    from transforms.read import hashed_name, relative_name

    assert relative_name("/data/corpus/2024/a.jsonl", "/data/corpus/") == "2024/a.jsonl"
    assert relative_name("gs://b/corpus/a.jsonl", "gs://b/") == "corpus/a.jsonl"
    assert relative_name("/data/caf\udcff.txt", "/data/") == "caf\\xff.txt"
    assert relative_name("/data/\ud800.txt", "/data/") == "\\ud800.txt"
    assert relative_name("/data/caf\udcff.txt", "/data/").encode("utf-8")
    key = KEY.encode()
    assert hashed_name("/x/a.txt", "/x/", key) == hashed_name("gs://b/y/a.txt", "gs://b/y/", key)
    assert hashed_name("/x/a.txt", "/x/", key) != hashed_name("/x/a.txt", "/x/", b"q" * 32)
    assert hashed_name("/x/a.txt", "/x/", key) != hashed_name("/x/b.txt", "/x/", key)


def test_input_base_is_the_pattern_before_its_first_glob(tmp_path, monkeypatch):
    from pipeline.storage import resolve_input

    (tmp_path / "corpus" / "2024").mkdir(parents=True)
    monkeypatch.chdir(tmp_path)
    root = f"{tmp_path}/corpus/"
    assert resolve_input("corpus/2024/*.jsonl").base == root + "2024/"
    assert resolve_input("corpus/**/*.jsonl").base == root
    assert resolve_input("corpus/20[0-9][0-9]/a.jsonl").base == root
    assert resolve_input("corpus/2024/a.jsonl").base == root + "2024/"
    folder = resolve_input("corpus/", output="corpus/out")
    assert (folder.pattern, folder.base, folder.directory, folder.exclude) == (
        root + "**", root, True, root + "out/")
    assert resolve_input("gs://bucket/c/*.jsonl").base == "gs://bucket/c/"


# ----------------------------------------------------------------- completion and overwrite


def test_overwrite_keeps_the_old_run_when_the_new_one_fails(rigged_model_dir, tmp_path, monkeypatch):
    import apache_beam as beam

    import pipeline.run as launcher
    from models.model_dir import ModelError

    source = write_jsonl(tmp_path / "a.jsonl", [{"id": "a", "text": "Ada met Bob."}])
    output = tmp_path / "out"
    args = ["--input", str(source), "--output", str(output)] + base_args(rigged_model_dir)
    run(args)
    before = {p: p.read_bytes() for p in output.rglob("*") if p.is_file()}

    # A broken model: refused before anything is touched.
    with pytest.raises(ModelError):
        run(["--input", str(source), "--output", str(output), "--overwrite",
             "--model", str(tmp_path / "no-model")])
    assert {p: p.read_bytes() for p in output.rglob("*") if p.is_file()} == before

    # A job that fails while it runs: its run folder goes, the old run stays.
    real_build = launcher.build

    def failing_build(pipeline, config, run_dir):
        outputs = real_build(pipeline, config, run_dir)
        pipeline | "Boom" >> beam.Create([1]) | beam.Map(_explode)
        return outputs

    monkeypatch.setattr(launcher, "build", failing_build)
    with pytest.raises(Exception, match="boom"):
        run(args + ["--overwrite"])
    assert {p: p.read_bytes() for p in output.rglob("*") if p.is_file()} == before
    assert sorted(p.name for p in output.iterdir()) == ["_SUMMARY.json", "annotations",
                                                         "dead_letters"]


def _explode(_):
    raise ValueError("boom")


def killed_run(output: Path) -> None:
    """What kills leave behind: a run folder, Beam temp folders, flat-layout shards, parts without summary."""
    (output / ".larvatus-run-0123abcd" / "annotations" / "beam-temp-part-1").mkdir(parents=True)
    (output / ".larvatus-run-0123abcd" / "annotations" / "beam-temp-part-1" / "x").write_text("")
    (output / "beam-temp-annotations-99").mkdir()
    (output / "annotations-00000-of-00001.parquet").write_bytes(b"PAR1")
    (output / "annotations").mkdir()
    (output / "annotations" / "part-00000-of-00001.parquet").write_bytes(b"PAR1")


def test_an_incomplete_run_is_refused_as_incomplete_and_overwrite_cleans_it(
        rigged_model_dir, tmp_path):
    from pipeline.options import OptionsError

    source = write_jsonl(tmp_path / "a.jsonl", [{"id": "a", "text": "Ada met Bob."}])
    output = tmp_path / "out"
    output.mkdir()
    killed_run(output)
    (output / "notes.txt").write_text("not ours")
    args = ["--input", str(source), "--output", str(output)] + base_args(rigged_model_dir)
    with pytest.raises(OptionsError, match="incomplete Larvatus run .*no _SUMMARY.json"):
        run(args)
    run(args + ["--overwrite"])
    assert tree(output) == [
        "_SUMMARY.json", "annotations", "annotations/part-00000-of-00001.parquet",
        "dead_letters", "dead_letters/part-00000-of-00001.parquet", "notes.txt"]


def test_output_states(tmp_path):
    from pipeline.storage import inspect_output

    assert inspect_output(str(tmp_path / "absent")).kind == "free"
    (tmp_path / "other").mkdir()
    (tmp_path / "other" / "notes.txt").write_text("")
    assert inspect_output(str(tmp_path / "other")).kind == "free"
    (tmp_path / "file").write_text("")
    assert inspect_output(str(tmp_path / "file")).kind == "file"
    empty_run = tmp_path / "empty-run"
    (empty_run / ".larvatus-run-00ff").mkdir(parents=True)   # killed before writing a byte
    assert inspect_output(str(empty_run)).kind == "incomplete"

    done = tmp_path / "done"
    (done / "annotations").mkdir(parents=True)
    (done / "annotations" / "part-00000-of-00001.parquet").write_bytes(b"")
    listed = {"annotations": ["annotations/part-00000-of-00001.parquet"], "dead_letters": []}
    (done / "_SUMMARY.json").write_text(json.dumps({"complete": True, "files": listed}))
    assert inspect_output(str(done)).kind == "complete"
    (done / "_SUMMARY.json").write_text(json.dumps({"files": listed}))   # no completion mark
    assert "no completion mark" in inspect_output(str(done)).problem
    (done / "_SUMMARY.json").write_text('{"complete": tr')   # torn write
    assert "unreadable" in inspect_output(str(done)).problem
    listed["annotations"].append("annotations/part-00001-of-00002.parquet")
    (done / "_SUMMARY.json").write_text(json.dumps({"complete": True, "files": listed}))
    state = inspect_output(str(done))
    assert state.kind == "incomplete" and "1 of the 2 files" in state.problem


def test_show_says_incomplete_run_instead_of_raising(tmp_path, capsys):
    from pipeline.show import main as show_main

    (tmp_path / "out").mkdir()
    killed_run(tmp_path / "out")
    assert show_main([str(tmp_path / "out")]) == 1
    printed = capsys.readouterr().out
    assert printed.startswith("incomplete run in ") and "no _SUMMARY.json" in printed
    assert ".larvatus-run-0123abcd/ (1 files)" in printed and "--overwrite" in printed
    assert show_main([str(tmp_path / "nothing")]) == 1
    assert "no Larvatus run" in capsys.readouterr().out


# ----------------------------------------------------------------------- honest summary


def test_no_metrics_means_unchecked_counts_and_a_failed_job(
        rigged_model_dir, tmp_path, monkeypatch, capsys):
    import pipeline.run as launcher

    source = write_jsonl(tmp_path / "a.jsonl", [{"id": "a", "text": "Ada met Bob."}])
    output = tmp_path / "out"
    monkeypatch.setattr(launcher, "query_counters", lambda result: None)
    code = main(["--input", str(source), "--output", str(output)] + base_args(rigged_model_dir))
    assert code == 1
    assert "reported no metrics" in capsys.readouterr().err
    summary = json.loads((output / "_SUMMARY.json").read_text())
    assert summary["metrics_available"] is False and summary["counts_add_up"] is False
    assert summary["records_in"] is None and summary["records_out"] is None
    assert summary["complete"] is True   # the files are all there; their counts are unknown
    assert rows(output, "annotations")[0]["id"] == "a"


def test_query_counters_tells_a_failed_query_from_zero_counts():
    from pipeline.summary import query_counters, summarize

    class NoMetrics:
        def metrics(self):
            raise NotImplementedError

    class EmptyMetrics:
        def metrics(self):
            return self

        def query(self):
            return {"counters": [], "distributions": []}

    assert query_counters(NoMetrics()) is None
    for counters in (None, query_counters(EmptyMetrics()), {"records_in": 0}):
        summary = summarize(counters, model={}, options={}, wall_seconds=0)
        assert summary["metrics_available"] is False and summary["counts_add_up"] is False
    ok = summarize({"files_read": 1, "records_in": 2, "records_out": 1, "dead_letter_too_large": 1},
                   model={}, options={}, wall_seconds=0)
    assert ok["metrics_available"] and ok["counts_add_up"]


# ------------------------------------------------------------------ a non-local filesystem


@pytest.fixture
def object_store(tmp_path, monkeypatch):
    from tests import objectstore

    root = tmp_path / "store"
    root.mkdir()
    monkeypatch.setenv(objectstore.ROOT_ENV, str(root))
    return root / "bucket"


def test_a_job_on_an_object_store_writes_every_file_where_it_belongs(
        rigged_model_dir, object_store, tmp_path, monkeypatch):
    from apache_beam.io.filesystems import FileSystems

    from pipeline.options import OptionsError
    from pipeline.show import report

    write_jsonl(object_store / "corpus" / "a.jsonl", [{"text": "Ada met Bob."}],
                raw_lines=(b"{",))
    workdir = tmp_path / "cwd"
    workdir.mkdir()
    monkeypatch.chdir(workdir)
    args = ["--input", "larvtest://bucket/corpus/", "--output", "larvtest://bucket/out"] \
        + base_args(rigged_model_dir)
    summary = run(args)
    assert summary["counts_add_up"] and summary["records_in"] == 2
    assert list(workdir.iterdir()) == []   # no local ./larvtest:/... folder
    stored = sorted(m.path for m in FileSystems.match(["larvtest://bucket/out/**"])[0].metadata_list)
    assert stored == ["larvtest://bucket/out/_SUMMARY.json",
                      "larvtest://bucket/out/annotations/part-00000-of-00001.parquet",
                      "larvtest://bucket/out/dead_letters/part-00000-of-00001.parquet"]
    with FileSystems.open("larvtest://bucket/out/annotations/part-00000-of-00001.parquet") as f:
        assert pq.read_table(f).column("source").to_pylist() == ["a.jsonl:1"]
    complete, text = report("larvtest://bucket/out")
    assert complete and "records in 2, out 1, dead-lettered 1" in text
    with pytest.raises(OptionsError, match="--overwrite"):
        run(args)
    assert run(args + ["--overwrite"])["counts_add_up"]
    assert len(FileSystems.match(["larvtest://bucket/out/**"])[0].metadata_list) == 3
    assert list(workdir.iterdir()) == []
