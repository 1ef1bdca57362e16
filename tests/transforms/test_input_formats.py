"""The input format table: every format is complete, and options, reading, field checks and ids all follow it."""
from __future__ import annotations

import csv
import io
import json
from dataclasses import replace
from itertools import combinations

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from larvatus import preflight
from larvatus.options import OptionsError, job_parser
from larvatus import beam_stages
from larvatus.transforms import formats
from larvatus.transforms.formats import FORMATS, FieldSample, InputFormat
from larvatus.transforms.records import DeadLetter, Document

RECORDS = [{"id": "a", "text": "Ada met Bob.", "lang": "en"},
           {"id": "b", "text": "Carol left.", "lang": "fr"}]


def _delimited(delimiter):
    def write(records):
        out = io.StringIO()
        writer = csv.DictWriter(out, fieldnames=list(records[0]), delimiter=delimiter)
        writer.writeheader()
        writer.writerows(records)
        return out.getvalue().encode()
    return write


def _parquet(records):
    buffer = io.BytesIO()
    pq.write_table(pa.Table.from_pylist(records), buffer)
    return buffer.getvalue()


# A new format needs a writer here: the tests below then read it and check its fields.
WRITERS = {
    "jsonl": lambda records: "".join(json.dumps(r) + "\n" for r in records).encode(),
    "csv": _delimited(","),
    "tsv": _delimited("\t"),
    "text": lambda records: records[0]["text"].encode(),
    "parquet": _parquet,
}


@pytest.mark.parametrize("fmt", FORMATS, ids=lambda fmt: fmt.name)
def test_every_format_has_everything_it_needs(fmt):
    assert fmt.problems() == []
    assert fmt.name in WRITERS, f"add a writer for {fmt.name} to this test"


@pytest.mark.parametrize("fmt", FORMATS, ids=lambda fmt: fmt.name)
def test_every_format_is_picked_by_its_extensions_and_reads_its_documents(fmt):
    data = WRITERS[fmt.name](RECORDS)
    for extension in fmt.extensions:
        assert formats.format_for_path(f"in/doc{extension.upper()}.gz") == fmt.name
    path = f"doc{fmt.extensions[0]}"
    documents = list(formats.read_records(io.BytesIO(data), path, fmt.name, "id", "text",
                                          keep_fields=("lang",)))
    expected = RECORDS[:1] if fmt.ids_from_path else RECORDS
    assert [d.text for d in documents] == [r["text"] for r in expected]
    if fmt.ids_from_path:
        assert [(d.doc_id, d.fields) for d in documents] == [(path, (("lang", None),))]
    else:
        assert [(d.doc_id, d.fields) for d in documents] == [
            (r["id"], (("lang", r["lang"]),)) for r in RECORDS]


@pytest.mark.parametrize("fmt", [f for f in FORMATS if f.has_fields], ids=lambda fmt: fmt.name)
def test_every_format_with_fields_samples_their_names(fmt):
    sample = fmt.sample(io.BytesIO(WRITERS[fmt.name](RECORDS)), "doc")
    assert sample.names == {"id", "text", "lang"}
    assert "doc" in sample.absent


def test_no_extension_is_claimed_twice_or_hidden_in_another():
    extensions = [e for fmt in FORMATS for e in fmt.extensions]
    for one, other in combinations(extensions, 2):
        assert not one.endswith(other) and not other.endswith(one), (one, other)
    assert formats.DEFAULT_FORMAT in formats.format_names()


@pytest.mark.parametrize("broken, problem", [
    (InputFormat("Lines", (".lines",), "one document a line", WRITERS["jsonl"]), "name 'Lines'"),
    (InputFormat("auto", (".lines",), "one document a line", WRITERS["jsonl"]), "name 'auto'"),
    (InputFormat("lines", ("lines",), "one document a line", WRITERS["jsonl"]), "extension"),
    (InputFormat("lines", (), "one document a line", WRITERS["jsonl"]), "no extension"),
    (InputFormat("lines", (".lines",), " ", WRITERS["jsonl"]), "no description"),
    (InputFormat("lines", (".lines",), "x", "read_lines"), "read is not callable"),
    (InputFormat("lines", (".lines",), "x", WRITERS["jsonl"], sample="x"), "sample is not"),
])
def test_an_incomplete_format_says_what_it_lacks(broken, problem):
    assert any(problem in found for found in broken.problems()), broken.problems()


def _read_lines(handle, source, fields):
    for number, line in enumerate(handle.read().decode().splitlines(), 1):
        if line == "boom":
            raise RuntimeError("Angela Merkel")   # a message that quotes text
        yield Document(f"{source}:{number}", line, f"{source}:{number}")


def _sample_lines(handle, path):
    return FieldSample(frozenset({"line"}), f"is not a field of {path}; its fields")


LINES = InputFormat("lines", (".lines",), "one document a line", _read_lines, _sample_lines)


@pytest.fixture
def with_lines(monkeypatch):
    monkeypatch.setattr(formats, "FORMATS", (*FORMATS, LINES))
    return LINES


def test_option_choices_and_help_come_from_the_table(with_lines):
    [action] = [a for a in job_parser("larvatus run")._actions if a.dest == "input_format"]
    assert action.choices == ("auto", "jsonl", "csv", "tsv", "text", "parquet", "lines")
    assert "lines: one document a line" in action.help and ".lines" in action.help
    [id_field] = [a for a in job_parser("larvatus run")._actions if a.dest == "id_field"]
    assert "(jsonl, csv, tsv, parquet, lines)" in id_field.help


def test_the_field_check_and_the_reader_stage_follow_the_table(with_lines, tmp_path):
    path = tmp_path / "in.lines"
    path.write_bytes(b"one\ntwo\nboom\nthree\n")
    files = preflight.input_files(str(path))
    with pytest.raises(OptionsError, match=r"--text-field 'text' is not a field of .*in.lines"):
        preflight.check_fields(files, "auto", None, "text")
    preflight.check_fields(files, "auto", None, "line")
    from apache_beam.io.fileio import ReadableFile

    stage = beam_stages.ReadRecords("auto", "id", "text", 100, base=str(tmp_path))
    assert isinstance(stage, beam_stages.StreamStage)
    outputs = [getattr(out, "value", out) for out in stage.process(ReadableFile(files[0]))]
    assert [d.text for d in outputs[:2]] == ["one", "two"]
    [letter] = outputs[2:]   # the template ends the file with one dead letter, no text in it
    assert isinstance(letter, DeadLetter)
    assert (letter.source, letter.reason) == ("in.lines:after-record-2", "unreadable_file")
    assert letter.detail == "RuntimeError after 2 records"


def test_text_ids_hash_applies_to_the_formats_whose_ids_are_paths(with_lines, tmp_path,
                                                                  monkeypatch):
    (tmp_path / "a.lines").write_text("x\n")
    files = preflight.input_files(str(tmp_path / "a.lines"))
    with pytest.raises(OptionsError, match="applies to text input"):
        preflight.check_text_ids(files, "auto", "hash")
    by_path = replace(LINES, ids_from_path=True)
    monkeypatch.setattr(formats, "FORMATS", (*FORMATS, by_path))
    preflight.check_text_ids(files, "auto", "hash")
