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
        ("f.csv#row=2", "malformed_row"), "fine", ("f.csv#row=4", "too_large")]
    assert all("a" * 10 not in r.detail for r in results if isinstance(r, DeadLetter))


def _letters(results: list) -> list:
    return [(r.source, r.reason, r.doc_id) if isinstance(r, DeadLetter) else (r.source, r.text)
            for r in results if r is not None]


LETTER = b"r1,Dear Ms Fitzwilliam, Chidi Okonkwo called from Leeds about the loan,n\n"


@pytest.mark.parametrize("keep", [(), ("note",)], ids=["plain", "keep-note"])
def test_a_row_with_more_fields_than_the_header_is_a_dead_letter_with_its_id(keep):
    data = b"id,text,note\n" + LETTER + b"r2,fine,n\n"
    results = list(read_records(io.BytesIO(data), "f.csv", "csv", "id", "text", 1000,
                                keep_fields=keep))
    assert _letters(results) == [("f.csv#row=0", "malformed_row", "r1"),
                                 ("f.csv#row=1", "fine")]
    assert "4 fields where the header has 3" in results[0].detail
    assert "Okonkwo" not in results[0].detail and "Leeds" not in results[0].detail


def test_a_row_with_fewer_fields_than_the_header_is_a_dead_letter():
    assert _letters(_read(b"id,text,note\nr1,short\n", "csv")) == [
        ("f.csv#row=0", "malformed_row", "r1")]


def test_an_unbalanced_quote_does_not_swallow_the_rows_after_it():
    data = b'id,text\nr1,"Chidi never closes this\nr2,Ama Mensah\nr3,Leeds\n'
    results = _read(data, "csv")
    assert _letters(results) == [("f.csv#row=0", "malformed_row", "r1"),
                                 ("f.csv#row=1", "Ama Mensah"), ("f.csv#row=2", "Leeds")]
    assert "unbalanced quote" in results[0].detail


def test_a_quote_closed_lines_later_by_a_stray_character_gives_the_lines_back():
    data = b'id,text\nr1,"open\nr2,next\nr3,"x" y\nr4,last\n'
    assert _letters(_read(data, "csv")) == [
        ("f.csv#row=0", "malformed_row", "r1"), ("f.csv#row=1", "next"),
        ("f.csv#row=2", "malformed_row", "r3"), ("f.csv#row=3", "last")]


def test_tsv_has_no_quoting_a_quote_is_text_and_a_row_is_a_line():
    data = b'id\ttext\nr1\t"Stop," she said.\nr2\t"open\nr3\tthird\n'
    assert _letters(_read(data, "tsv", "f.tsv")) == [
        ("f.tsv#row=0", '"Stop," she said.'), ("f.tsv#row=1", '"open'),
        ("f.tsv#row=2", "third")]


def test_a_text_that_is_not_utf8_keeps_its_valid_id():
    assert _letters(_read(b"id,text\nr1,Caf\xe9 M\xfcller\n", "csv")) == [
        ("f.csv#row=0", "invalid_utf8", "r1")]
    assert _letters(_read(b"id,text\nr\xe91,text\n", "csv")) == [
        ("f.csv#row=0", "invalid_utf8", None)]


def test_a_header_naming_the_text_column_twice_dead_letters_each_row():
    assert _letters(_read(b"id,text,text\nr1,a,b\n", "csv")) == [
        ("f.csv#row=0", "malformed_row", "r1")]


def test_an_overlong_row_is_skipped_unread_and_the_next_rows_read():
    from larvatus.transforms.delimited import delimited_record_limit

    limit = delimited_record_limit(10)
    data = b"id,text\nr1," + b"a" * (limit + 10) + b"\nr2,ok\n"
    assert _letters(_read(data, "csv", max_chars=10)) == [
        ("f.csv#row=0", "too_large", None), ("f.csv#row=1", "ok")]


def test_a_long_line_in_a_small_gzip_is_read_in_bounded_memory():
    import gzip
    import tracemalloc

    line = b"r1," + b"a" * (96 << 20) + b"\n"
    data = gzip.compress(b"id,text\n" + line + b"r2,ok\n", compresslevel=1)
    tracemalloc.start()
    try:
        results = _read(data, "csv", "f.csv.gz", max_chars=1000)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert _letters(results) == [("f.csv.gz#row=0", "too_large", None),
                                 ("f.csv.gz#row=1", "ok")]
    assert peak < 48 << 20, f"peak {peak >> 20} MiB"


def test_the_header_sample_reads_a_bounded_part_of_a_long_first_line():
    import tracemalloc

    from larvatus.transforms.formats import input_format

    data = b"id," + b"t" * (64 << 20) + b"\nr1,x\n"
    tracemalloc.start()
    try:
        sample = input_format("csv").sample(io.BytesIO(data), "f.csv")
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert sample is None
    assert peak < 16 << 20, f"peak {peak >> 20} MiB"


def test_the_header_sample_names_repeated_columns():
    from larvatus.transforms.formats import input_format

    sample = input_format("csv").sample(io.BytesIO(b"id,text,text\n1,a,b\n"), "f.csv")
    assert sample.names == {"id", "text"} and sample.repeated == {"text"}


def test_a_utf16_file_is_refused_with_a_conversion_hint():
    from larvatus.transforms.formats import input_format

    data = "id,text\nr1,hello\n".encode("utf-16")
    for fmt in ("csv", "tsv"):
        message = input_format(fmt).refuse(io.BytesIO(data), "f.csv")
        assert "UTF-16" in message and "iconv" in message and "\x00" not in message
        assert input_format(fmt).sample(io.BytesIO(data), "f.csv") is None


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
