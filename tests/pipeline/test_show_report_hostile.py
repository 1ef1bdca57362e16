"""`show` and `report` on output folders that others could have written: escaped, one-line errors, no symlink followed."""
from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from larvatus.cli import main
from larvatus.report import build_report
from larvatus.run import run
from larvatus.show import printable, show, summary_problem
from tests.paths import ROOT

HOSTILE_ID = "b\x1b[31mRED\x1b]0;owned\x07\u202e<img src=x onerror=alert(1)>"
HOSTILE_TEXT = "Call \x1b[2J Jane at home <script>alert(1)</script> about 555-1234."


@pytest.fixture(scope="module")
def finished(tmp_path_factory, rigged_fp32_model_dir) -> Path:
    """A finished run whose ids and texts carry terminal escapes and HTML."""
    folder = tmp_path_factory.mktemp("hostile")
    source = folder / "in.jsonl"
    source.write_text(json.dumps({"id": HOSTILE_ID, "text": HOSTILE_TEXT}) + "\n"
                      + json.dumps({"id": "plain", "text": "Jane Doe met ACME in Paris."}) + "\n")
    out = folder / "out"
    run(["--input", str(source), "--output", str(out), "--model", str(rigged_fp32_model_dir),
         "--device", "cpu"])
    return out


@pytest.fixture
def copy(finished, tmp_path) -> Path:
    target = tmp_path / "out"
    shutil.copytree(finished, target)
    return target


def larvatus_process(*args):
    """The console command in a process of its own."""
    return subprocess.run([sys.executable, "-m", "larvatus.cli", *map(str, args)],
                          cwd=ROOT, capture_output=True, text=True, timeout=300)


@pytest.fixture
def larvatus(capsys):
    """The command's own entry point in this process (its status, stdout and stderr)."""
    def call(*args):
        capsys.readouterr()
        status = main([str(a) for a in args])
        out, err = capsys.readouterr()
        return subprocess.CompletedProcess(args, status, out, err)

    return call


def edit_summary(folder: Path, change) -> None:
    path = folder / "_SUMMARY.json"
    summary = json.loads(path.read_text())
    change(summary)
    path.write_text(json.dumps(summary))


def assert_one_line_error(done, prog: str, *words: str, status: int = 1) -> None:
    assert done.returncode == status, (done.returncode, done.stderr[-2000:])
    assert "Traceback" not in done.stderr
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith(f"larvatus {prog}: error: "), done.stderr
    for word in words:
        assert word in lines[0], lines[0]


def test_printable_escapes_what_a_terminal_would_act_on():
    assert printable("Zoë Ångström 東京") == "Zoë Ångström 東京"
    assert printable("a\x1b[31mb\x07\x9bc\u202ed") == "a\\x1b[31mb\\x07\\x9bc\\u202ed"
    assert printable("line\nbreak\ttab") == "line break tab"


def test_show_prints_no_control_sequences_from_ids_and_text(finished):
    done = larvatus_process("show", finished)
    assert done.returncode == 0, done.stderr[-2000:]
    assert "\x1b" not in done.stdout and "\x07" not in done.stdout and "\u202e" not in done.stdout
    assert "[b\\x1b[31mRED\\x1b]0;owned\\x07\\u202e<img" in done.stdout
    assert "Call \\x1b[2J" in done.stdout


def test_report_escapes_ids_text_and_summary_values(copy, larvatus):
    def poison(summary):
        summary["model"]["name"] = "<script>alert('model')</script>"
        summary["entities_by_label"]["<img src=x onerror=alert(2)>"] = 1
        summary["dead_lettered_by_reason"]["<svg onload=alert(3)>"] = 1
        summary["audit"]["findings_by_kind"]["<iframe src=x>"] = 1
        summary["checks"] = {"failures": ["<img src=x onerror=alert(4)>"]}
        summary["wall_seconds"] = 1.5

    edit_summary(copy, poison)
    done = larvatus("report", copy)
    assert done.returncode == 0, done.stderr[-2000:]
    page = (copy / "report.html").read_text()
    tags = set(re.findall(r"<\s*([a-zA-Z]+)", page))
    assert not tags & {"img", "svg", "iframe"}, tags
    assert page.count("<script>") == 1          # the page's own search function
    assert "&lt;img src=x onerror=alert(1)&gt;" in page          # the id
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in page       # the text
    assert "&lt;script&gt;alert(&#x27;model&#x27;)&lt;/script&gt;" in page
    assert "Jane" not in page


@pytest.mark.parametrize("change, words", [
    (lambda s: s.update(wall_seconds="<img src=x onerror=alert(1)>"),
     ("'wall_seconds' is not a number of seconds",)),
    (lambda s: s.pop("records_in"), ("'records_in' is missing",)),
    (lambda s: s.update(records_out="12"), ("'records_out' is not a count",)),
    (lambda s: s.update(entities_by_label=["PER"]), ("'entities_by_label' is not counts",)),
    (lambda s: s.update(audit={"documents_flagged": "many"}), ("'audit' is not",)),
    (lambda s: s.update(options={"keep_text": "yes"}), ("'options' is not",)),
])
@pytest.mark.parametrize("command", ["show", "report"])
def test_a_summary_with_missing_or_ill_typed_fields_is_one_line(copy, larvatus, change, words, command):
    edit_summary(copy, change)
    done = larvatus(command, copy)
    assert_one_line_error(done, command, "_SUMMARY.json: not a summary Larvatus wrote", *words)
    assert "<img" not in done.stderr                     # the value is not echoed
    assert not (copy / "report.html").exists()


def test_summary_problem_accepts_what_run_writes(finished):
    assert summary_problem(json.loads((finished / "_SUMMARY.json").read_text())) is None


@pytest.mark.parametrize("command", ["show", "report"])
def test_a_corrupt_or_foreign_annotations_file_is_one_line(copy, larvatus, command):
    [parquet] = (copy / "annotations").glob("*.parquet")
    parquet.write_bytes(parquet.read_bytes()[:100])          # cut short
    assert_one_line_error(larvatus(command, copy), command, parquet.name,
                          "not a readable annotations file")
    pq.write_table(pa.table({"id": ["x"], "redacted_text": [7], "audit": [None],
                             "replacements": [None]}), parquet)   # Parquet, not ours
    assert_one_line_error(larvatus(command, copy), command, parquet.name,
                          "column 'audit' has type null, not the type Larvatus writes")


@pytest.mark.parametrize("options", [{}, {"keep_text": True}, {"keep_text": True, "embeddings": True},
                                     {"token_ids": True, "kept": ("team",)}])
def test_every_schema_a_run_writes_is_read(tmp_path, options):
    from larvatus.schemas import annotation_schema
    from larvatus.show import read_annotations

    path = tmp_path / "annotations-00000-of-00001.parquet"
    schema = annotation_schema(**options)
    pq.write_table(schema.empty_table(), path)
    columns = ["id", "redacted_text", "replacements", "audit"] + (
        ["text", "entities"] if options.get("keep_text") else [])
    assert read_annotations(str(path), columns).num_rows == 0


def test_show_and_report_of_a_file_say_it_is_a_file(finished, larvatus):
    for command in ("show", "report"):
        done = larvatus(command, finished / "_SUMMARY.json")
        assert_one_line_error(done, command, "is a file, not a folder", status=2)
        assert "no such folder" not in done.stderr


@pytest.mark.parametrize("args", [("show", "--examples", "-1"), ("report", "--samples", "-2"),
                                  ("report", "--max-documents", "-5")])
def test_negative_counts_are_refused(finished, larvatus, args):
    done = larvatus(args[0], finished, *args[1:])
    assert done.returncode == 2 and "is negative" in done.stderr and "Traceback" not in done.stderr


def test_report_makes_the_missing_folders_of_its_output(finished, larvatus, tmp_path):
    target = tmp_path / "missing" / "dir" / "r.html"
    done = larvatus("report", finished, "--output", target)
    assert done.returncode == 0, done.stderr
    assert target.read_text().startswith("<!DOCTYPE html>")
    blocked = tmp_path / "a-file"
    blocked.write_text("mine")
    done = larvatus("report", finished, "--output", blocked / "r.html")   # a file in the way
    assert_one_line_error(done, "report", "cannot write", str(blocked), status=2)
    assert blocked.read_text() == "mine"
    done = larvatus("report", finished, "--output", tmp_path)             # a folder
    assert_one_line_error(done, "report", "it is a folder", status=2)


def test_report_replaces_a_symlink_instead_of_writing_through_it(copy, larvatus, tmp_path):
    outside = tmp_path / "outside.txt"
    outside.write_text("not yours")
    (copy / "report.html").unlink(missing_ok=True)
    os.symlink(outside, copy / "report.html")
    done = larvatus("report", copy)
    assert done.returncode == 0, done.stderr
    assert outside.read_text() == "not yours"
    assert not (copy / "report.html").is_symlink()
    assert (copy / "report.html").read_text().startswith("<!DOCTYPE html>")
    assert [p.name for p in copy.iterdir() if p.name.startswith(".report-")] == []


def test_in_process_calls_agree(finished):
    assert "\x1b" not in show(str(finished), examples=5)
    assert "<img" not in build_report(str(finished))


# --- property tests: whatever a shared folder's files hold

from hypothesis import HealthCheck, given, settings, strategies as st  # noqa: E402

JSON_VALUES = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats() | st.text(max_size=30),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=10), inner,
                                                                max_size=3),
    max_leaves=8)


@given(st.text())
def test_printable_never_lets_a_control_character_through(text):
    import unicodedata

    shown = printable(text)
    assert not [c for c in shown if unicodedata.category(c) in ("Cc", "Cs")
                or c in "\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069\u200e\u200f"]


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(field=st.sampled_from(["records_in", "records_out", "dead_lettered", "words",
                              "wordpieces", "windows", "wall_seconds", "entities_propagated",
                              "dead_lettered_by_reason", "entities_by_label", "audit", "checks",
                              "options", "model", "counts_add_up", "metrics_available"]),
       value=JSON_VALUES)
def test_any_summary_value_is_shown_escaped_or_refused_in_one_line(finished, field, value):
    from unittest import mock

    from larvatus import storage
    from larvatus.show import IncompleteRun

    summary = json.loads((finished / "_SUMMARY.json").read_text())
    summary[field] = value
    with mock.patch.object(storage, "read_json", lambda path: summary):
        try:
            page = build_report(str(finished))
        except IncompleteRun as error:
            assert f"{field!r} is" in str(error) and "\n" not in str(error)
            return
    assert not re.search(r"<\s*(img|svg|iframe|a|object|embed)\b", page, re.I)
    assert page.count("<script>") == 1
