"""Random CSV, TSV, JSONL and Parquet bytes through the readers: no crash, every record in the output or the dead letters, counts that add up."""
from __future__ import annotations

import csv
import gzip
import io
import json
from dataclasses import dataclass

import pyarrow as pa
import pyarrow.parquet as pq
from hypothesis import HealthCheck, given, settings, strategies as st

from larvatus.transforms import read as read_lib
from larvatus.transforms.formats import read_records
from larvatus.transforms.records import DEAD_LETTER_REASONS, DeadLetter, Document
from larvatus.beam_stages import ReadRecords

MAX_CHARS = 200
HOSTILE = settings(max_examples=60, deadline=None,
                   suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])

# Text a file may hold: any code point but lone surrogates (which UTF-8 cannot encode).
TEXT = st.text(st.characters(blacklist_categories=("Cs",)), max_size=30)
PLAIN = st.text(st.characters(blacklist_categories=("Cs",),
                              blacklist_characters="\",\t\r\n\x00\ufeff"), min_size=1, max_size=20)
HOSTILE_BYTES = st.lists(st.sampled_from(
    [b",", b"\t", b'"', b"\n", b"\r", b"\r\n", b"\xff", b"\xe9", b"\x00", b"\xef\xbb\xbf", b"{",
     b"}", b"id", b"text", b'"text"', b":", b"Jane Doe", b"a" * 50]) | st.binary(max_size=8),
    max_size=60).map(b"".join)


def _read(data: bytes, fmt: str, path: str, keep: tuple[str, ...] = ()) -> list:
    return list(read_records(io.BytesIO(data), path, fmt, "id", "text", MAX_CHARS,
                             keep_fields=keep))


def _assert_well_formed(results: list, path: str) -> list:
    """Each result a Document, a DeadLetter of the vocabulary or a counted blank line; sources
    unique and rows numbered from 0 without a gap. Returns the records (blank lines left out)."""
    records = [r for r in results if r is not read_lib.BLANK_LINE]
    for record in records:
        assert isinstance(record, (Document, DeadLetter)), record
        if isinstance(record, Document):
            assert len(record.text) <= MAX_CHARS
            record.text.encode("utf-8")          # writable as Parquet
        else:
            assert record.reason in DEAD_LETTER_REASONS
    sources = [r.source for r in records if not r.source.endswith("#header")]
    assert len(set(sources)) == len(sources)
    if path.endswith((".csv", ".tsv")):
        assert sources == [f"{path}#row={n}" for n in range(len(sources))]
    return records


@HOSTILE
@given(HOSTILE_BYTES, st.sampled_from(["csv", "tsv"]))
def test_any_bytes_as_csv_or_tsv_end_in_records_without_a_crash(data, fmt):
    _assert_well_formed(_read(b"id,text,note\n".replace(b",", b"," if fmt == "csv" else b"\t")
                              + data, fmt, f"f.{fmt}", ("note",)), f"f.{fmt}")


@HOSTILE
@given(HOSTILE_BYTES)
def test_any_bytes_as_a_header_end_in_records_without_a_crash(data):
    _assert_well_formed(_read(data, "csv", "f.csv"), "f.csv")


@dataclass(frozen=True)
class Row:
    """One drawn CSV row: its id, text and kept note."""

    id: str
    text: str
    note: str


ROWS = st.lists(st.builds(Row, PLAIN, TEXT.filter(lambda t: len(t) <= MAX_CHARS), TEXT),
                max_size=8)


@HOSTILE
@given(ROWS, st.sampled_from([("\r\n", csv.QUOTE_MINIMAL), ("\n", csv.QUOTE_ALL)]),
       st.booleans())
def test_csv_written_by_the_csv_module_reads_back_exactly(rows, dialect, bom):
    # With "\n" line ends the csv module leaves a field holding a lone "\r" unquoted, which
    # no reader can tell from a line end: such files are written with every field quoted.
    buffer = io.StringIO()
    writer = csv.writer(buffer, lineterminator=dialect[0], quoting=dialect[1])
    writer.writerow(["id", "text", "note"])
    writer.writerows([(row.id, row.text, row.note) for row in rows])
    data = ("\ufeff" if bom else "").encode() + buffer.getvalue().encode("utf-8")
    records = _assert_well_formed(_read(data, "csv", "f.csv", ("note",)), "f.csv")
    assert [(r.doc_id, r.text, dict(r.fields)["note"]) for r in records] == [
        (row.id, row.text, row.note) for row in rows]


@HOSTILE
@given(st.lists(st.tuples(PLAIN, PLAIN | st.just('"Stop," she said'), PLAIN), max_size=8),
       st.sampled_from(["\n", "\r\n", "\r"]))
def test_tsv_reads_back_each_line_as_written_quotes_and_all(rows, ending):
    data = ending.join("\t".join(row) for row in [("id", "text", "note"), *rows]) + ending
    records = _assert_well_formed(_read(data.encode(), "tsv", "f.tsv"), "f.tsv")
    assert [(r.doc_id, r.text) for r in records] == [(row[0], row[1]) for row in rows]


@HOSTILE
@given(st.lists(st.tuples(PLAIN, PLAIN), min_size=1, max_size=8), st.data())
def test_one_stray_quote_costs_at_most_its_own_row(rows, data):
    """A quote dropped anywhere into one row's text: every row is still counted, and every
    other row reads back whole (an unbalanced quote swallows nothing)."""
    broken = data.draw(st.integers(0, len(rows) - 1))
    text = rows[broken][1]
    at = data.draw(st.integers(0, len(text)))
    lines = [f"{doc_id},{text}" for doc_id, text in rows]
    lines[broken] = f"{rows[broken][0]},{text[:at]}\"{text[at:]}"
    records = _assert_well_formed(_read(("id,text\n" + "\n".join(lines) + "\n").encode(),
                                        "csv", "f.csv"), "f.csv")
    assert len(records) == len(rows)
    for number, (record, (doc_id, text)) in enumerate(zip(records, rows)):
        if number != broken:
            assert isinstance(record, Document) and (record.doc_id, record.text) == (doc_id, text)
        elif isinstance(record, DeadLetter):
            assert (record.reason, record.doc_id) == ("malformed_row", doc_id)


@HOSTILE
@given(st.lists(st.builds(Row, PLAIN, PLAIN, PLAIN), min_size=1, max_size=6), st.data())
def test_an_unquoted_comma_is_a_dead_letter_never_a_cut_text(rows, data):
    broken = data.draw(st.integers(0, len(rows) - 1))
    lines = [f"{row.id},{row.text},{row.note}" for row in rows]
    lines[broken] = f"{rows[broken].id},{rows[broken].text}, and more,{rows[broken].note}"
    records = _assert_well_formed(_read(("id,text,note\n" + "\n".join(lines)).encode(), "csv",
                                        "f.csv", ("note",)), "f.csv")
    assert len(records) == len(rows)
    assert (records[broken].reason, records[broken].doc_id) == ("malformed_row", rows[broken].id)
    assert all(isinstance(r, Document) for n, r in enumerate(records) if n != broken)


@HOSTILE
@given(HOSTILE_BYTES | st.lists(st.dictionaries(st.sampled_from(["id", "text", "x"]),
                                                 st.none() | st.integers() | TEXT | st.lists(
                                                     st.integers(), max_size=2)), max_size=5)
       .map(lambda objects: "\n".join(map(json.dumps, objects)).encode()))
def test_any_jsonl_bytes_give_one_result_a_line(data):
    results = _read(data, "jsonl", "f.jsonl")
    _assert_well_formed(results, "f.jsonl")
    lines = data.split(b"\n")
    assert len(results) == len(lines) - (lines[-1] == b"")


COLUMN_VALUES = {
    "string": (pa.string(), st.none() | TEXT),
    "int": (pa.int64(), st.none() | st.integers(-2 ** 63, 2 ** 63 - 1)),
    "binary": (pa.binary(), st.none() | st.binary(max_size=12)),
    "double": (pa.float64(), st.none() | st.floats()),
    "list": (pa.list_(pa.string()), st.none() | st.lists(TEXT, max_size=2)),
}


@HOSTILE
@given(st.sampled_from(sorted(COLUMN_VALUES)), st.sampled_from(sorted(COLUMN_VALUES)),
       st.integers(0, 12), st.data())
def test_any_parquet_columns_give_one_result_a_row(id_kind, text_kind, n, data):
    columns = {}
    for name, kind in (("id", id_kind), ("text", text_kind)):
        arrow_type, values = COLUMN_VALUES[kind]
        columns[name] = pa.array(data.draw(st.lists(values, min_size=n, max_size=n)), arrow_type)
    buffer = io.BytesIO()
    pq.write_table(pa.table(columns), buffer)
    records = _assert_well_formed(_read(buffer.getvalue(), "parquet", "f.parquet", ("id",)),
                                  "f.parquet")
    assert [r.source for r in records] == [f"f.parquet#row={i}" for i in range(n)]


@dataclass(frozen=True)
class _Metadata:
    path: str
    size_in_bytes: int


class _File:
    """What Beam's ReadMatches hands the read stage: metadata and an opener."""

    def __init__(self, path: str, data: bytes):
        self.metadata = _Metadata(path, len(data))
        self._data = data

    def open(self, **_):
        return io.BytesIO(self._data)


@HOSTILE
@given(HOSTILE_BYTES, st.sampled_from(["a.parquet", "a.csv.gz", "a.jsonl.gz", "a.tsv.zst",
                                       "a.txt.bz2", "a.csv"]), st.booleans())
def test_corrupt_files_through_the_read_stage_end_in_dead_letters(data, name, compress):
    if compress and name.endswith(".gz"):
        data = gzip.compress(data)[: len(data) // 2 + 10]   # a truncated gzip stream
    outputs = list(ReadRecords("auto", "id", "text", MAX_CHARS).process(_File(name, data)))
    for output in outputs:
        value = getattr(output, "value", output)
        assert isinstance(value, (Document, DeadLetter)), value
        if isinstance(value, DeadLetter):
            assert value.reason in DEAD_LETTER_REASONS
