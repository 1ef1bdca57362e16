"""--keep-fields: other input fields carried into the annotations as string columns, from every format."""
from __future__ import annotations

import glob
import io
import subprocess
import sys

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from larvatus.options import OptionsError, resolve_keep_fields
from larvatus.transforms.formats import read_records
from tests.paths import ROOT


def _fields(data: bytes, fmt: str, keep=("lang", "n")) -> list:
    return [doc.fields for doc in read_records(io.BytesIO(data), f"f.{fmt}", fmt, "id", "text",
                                                  keep_fields=keep)]


def test_jsonl_values_are_kept_as_text_or_json_and_absent_ones_as_none():
    data = b'{"id": 1, "text": "a", "lang": "en", "n": [1, 2]}\n{"text": "b", "n": 3}\n'
    assert _fields(data, "jsonl") == [(("lang", "en"), ("n", "[1, 2]")),
                                      (("lang", None), ("n", "3"))]


def test_csv_values_and_bytes_that_are_not_utf8():
    assert _fields(b"id,text,lang\n1,a,\xff\n", "csv") == [(("lang", "\\xff"), ("n", None))]


def test_parquet_columns_are_read_for_kept_fields():
    buffer = io.BytesIO()
    pq.write_table(pa.table({"id": ["p"], "text": ["a"], "lang": ["fr"], "n": [7]}), buffer)
    buffer.seek(0)
    assert _fields(buffer.getvalue(), "parquet") == [(("lang", "fr"), ("n", "7"))]


def test_text_files_have_none_for_every_kept_field():
    assert _fields(b"hello", "text") == [(("lang", None), ("n", None))]


def test_the_text_field_and_annotation_columns_cannot_be_kept():
    assert resolve_keep_fields(" lang, date ,lang", "text") == ("lang", "date")
    assert resolve_keep_fields("", "text") == ()
    with pytest.raises(OptionsError, match="--keep-text"):
        resolve_keep_fields("lang,body", "body")
    with pytest.raises(OptionsError, match="redacted_text"):
        resolve_keep_fields("redacted_text", "text")


def _run(*args) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "larvatus.cli", "run", *map(str, args)],
                          cwd=ROOT, capture_output=True, text=True, timeout=600)


def test_a_kept_field_in_no_input_file_is_refused_at_start(tmp_path):
    (tmp_path / "a.jsonl").write_text('{"id": "1", "text": "x", "lang": "en"}\n')
    done = _run("--input", tmp_path / "a.jsonl", "--output", tmp_path / "out",
                "--keep-fields", "lang,langauge")
    assert done.returncode == 2
    assert "langauge" in done.stderr and "lang, text" in done.stderr


@pytest.mark.slow
def test_kept_fields_reach_the_annotations_from_csv_jsonl_and_parquet(tmp_path, rigged_model_dir):
    folder = tmp_path / "in"
    folder.mkdir()
    (folder / "a.csv").write_text('id,text,lang\nc,"Alice, again",en\n')
    (folder / "b.jsonl").write_text('{"id": "j", "text": "Bob", "lang": "de", "year": 2020}\n')
    pq.write_table(pa.table({"id": ["p"], "text": ["Carol"], "year": [1999]}),
                   folder / "c.parquet")
    done = _run("--input", folder / "*", "--output", tmp_path / "out", "--model",
                rigged_model_dir, "--keep-fields", "lang,year", "-q")
    assert done.returncode == 0, done.stderr[-2000:]
    rows = [row for name in glob.glob(str(tmp_path / "out" / "annotations" / "*.parquet"))
            for row in pq.read_table(name, columns=["id", "redacted_text", "lang", "year"])
            .to_pylist()]
    assert sorted(rows, key=lambda row: row["id"]) == [
        {"id": "c", "redacted_text": "[PER], again", "lang": "en", "year": None},
        {"id": "j", "redacted_text": "[PER]", "lang": "de", "year": "2020"},
        {"id": "p", "redacted_text": "[PER]", "lang": None, "year": "1999"}]
