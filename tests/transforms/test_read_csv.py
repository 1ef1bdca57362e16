"""CSV and TSV input: one document a row by header, quoted multi-line fields; a JSON array refused at start."""
from __future__ import annotations

import glob
import io
import subprocess
import sys

import pyarrow.parquet as pq
import pytest

from larvatus.transforms.formats import format_for_path, read_records
from larvatus.transforms.records import DeadLetter, Document
from tests.paths import ROOT


def _read(data: bytes, fmt: str, path: str = "f.csv", max_chars: int = 1000,
          id_field: str = "id", text_field: str = "text") -> list:
    return list(read_records(io.BytesIO(data), path, fmt, id_field, text_field, max_chars))


@pytest.mark.parametrize("name, fmt", [("a.csv", "csv"), ("a.CSV.gz", "csv"), ("a.tsv", "tsv"),
                                       ("a.tab", "tsv"), ("a.json", "jsonl")])
def test_format_follows_the_extension(name, fmt):
    assert format_for_path(name) == fmt


def test_quoted_fields_keep_delimiters_quotes_and_line_breaks():
    data = 'id,text,other\n1,"Hello, ""Bob""\r\nsecond line",x\n2,plain,y\n'.encode()
    assert [(d.doc_id, d.source, d.text) for d in _read(data, "csv")] == [
        ("1", "f.csv#row=0", 'Hello, "Bob"\r\nsecond line'), ("2", "f.csv#row=1", "plain")]


def test_tsv_rows_split_on_tabs_and_the_bom_is_not_part_of_the_header():
    data = "\ufeffid\ttext\n7\tone, two\n".encode()
    [document] = _read(data, "tsv", "f.tsv")
    assert (document.doc_id, document.text) == ("7", "one, two")


def test_named_columns_and_a_missing_id_falling_back_to_the_source():
    data = b"body,key\nfirst,k1\nsecond,\n"
    docs = _read(data, "csv", id_field="key", text_field="body")
    assert [(d.doc_id, d.text) for d in docs] == [("k1", "first"), ("f.csv#row=1", "second")]


def test_bad_rows_are_dead_lettered_and_the_next_rows_read():
    data = (b"id,text\n1," + b"a" * 300_000 + b"\n2,\xff bad\n3\n4,fine\n5," + b"b" * 50 + b"\n")
    results = _read(data, "csv", max_chars=20)
    assert [(r.source, r.reason) if isinstance(r, DeadLetter) else r.text for r in results] == [
        ("f.csv#row=0", "too_large"), ("f.csv#row=1", "invalid_utf8"),
        ("f.csv#row=2", "missing_text"), "fine", ("f.csv#row=4", "too_large")]
    assert all("a" * 10 not in r.detail for r in results if isinstance(r, DeadLetter))


def _run(*args) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "larvatus.cli", "run", *map(str, args)],
                          cwd=ROOT, capture_output=True, text=True, timeout=600)


def test_a_json_array_file_is_refused_at_start_with_a_hint(tmp_path):
    (tmp_path / "records.json").write_text('[\n  {"id": "1", "text": "Alice"}\n]\n')
    done = _run("--input", tmp_path / "records.json", "--output", tmp_path / "out")
    assert done.returncode == 2
    assert "JSON array" in done.stderr and "JSON Lines" in done.stderr and "jq -c" in done.stderr
    assert not (tmp_path / "out").exists()


def test_a_csv_without_the_text_column_is_refused_with_its_header(tmp_path):
    (tmp_path / "a.csv").write_text("doc,body\n1,Alice\n")
    done = _run("--input", tmp_path / "a.csv", "--output", tmp_path / "out")
    assert done.returncode == 2
    assert "'text' is not a column" in done.stderr and "body, doc" in done.stderr


@pytest.mark.slow
def test_csv_and_tsv_files_become_one_document_a_row(tmp_path, rigged_model_dir):
    folder = tmp_path / "in"
    folder.mkdir()
    (folder / "a.csv").write_text('id,text\nc1,"Alice met ACME,\nthen Bob"\nc2,nobody\n')
    (folder / "b.tsv").write_text("id\ttext\nt1\tCarol, again\n")
    done = _run("--input", folder / "*", "--output", tmp_path / "out", "--model",
                rigged_model_dir, "-q")
    assert done.returncode == 0, done.stderr[-2000:]
    rows = [row for name in glob.glob(str(tmp_path / "out" / "annotations" / "*.parquet"))
            for row in pq.read_table(name, columns=["id", "source", "redacted_text"]).to_pylist()]
    assert sorted((r["id"], r["source"], r["redacted_text"]) for r in rows) == [
        ("c1", "a.csv#row=0", "[PER] met [ORG],\nthen [PER]"), ("c2", "a.csv#row=1", "nobody"),
        ("t1", "b.tsv#row=0", "[PER], again")]
