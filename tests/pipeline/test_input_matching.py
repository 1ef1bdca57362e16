"""What --input matches: `**` as zero or more folders, a folder's hint that works as printed, links out of the folder, empty files, CSV/TSV refusals at start."""
from __future__ import annotations

import json
import os
import shlex
import subprocess
import sys
from pathlib import Path

import pyarrow.parquet as pq
import pytest

from larvatus import preflight
from larvatus.run import main
from tests.paths import ROOT


def larvatus_run(*args, cwd=ROOT, timeout=400):
    return subprocess.run([sys.executable, "-m", "larvatus.cli", "run", *map(str, args)],
                          cwd=cwd, capture_output=True, text=True, timeout=timeout)


def parquet_rows(folder: Path) -> list[dict]:
    return [r for f in sorted(folder.glob("*.parquet")) for r in pq.read_table(f).to_pylist()]


def refusal(capsys, *argv) -> str:
    """The one line `larvatus run` prints when it refuses argv at start (exit 2)."""
    assert main(list(map(str, argv))) == 2
    err = capsys.readouterr().err.strip()
    assert "\n" not in err and "Traceback" not in err, err
    return err


@pytest.fixture
def nested(tmp_path) -> Path:
    folder = tmp_path / "nested"
    (folder / "2024" / "deep").mkdir(parents=True)
    for name in ("top.txt", "2024/mid.txt", "2024/deep/low.txt", "2024/skip.csv"):
        (folder / name).write_text("Jane Doe wrote.\n")
    return folder


def _names(pattern: str) -> list[str]:
    return sorted(os.path.basename(m.path) for m in preflight.input_files(pattern))


def test_double_star_matches_zero_or_more_folders(nested):
    assert _names(f"{nested}/**/*.txt") == ["low.txt", "mid.txt", "top.txt"]
    assert _names(f"{nested}/**/deep/*.txt") == ["low.txt"]
    assert _names(f"{nested}/2024/**/*.txt") == ["low.txt", "mid.txt"]
    assert _names(f"{nested}/*.txt") == ["top.txt"]
    assert _names(f"{nested}/**") == ["low.txt", "mid.txt", "skip.csv", "top.txt"]


def test_double_star_is_matched_alike_by_the_launcher_and_the_workers(nested):
    from larvatus.graph import MatchInput

    pattern = f"{nested}/**/*.txt"
    on_worker = sorted(m.path for m in MatchInput.process(None, pattern))
    assert on_worker == sorted(m.path for m in preflight.input_files(pattern))
    assert len(on_worker) == 3


def test_a_folder_hint_names_the_folders_own_files(nested, tmp_path):
    hint = preflight.folder_hint(str(nested))
    assert f"--input '{nested}/**/*.txt'" in hint
    (tmp_path / "none").mkdir()
    assert "no file of a known input format" in preflight.folder_hint(str(tmp_path / "none"))


@pytest.mark.slow
def test_a_folder_as_input_suggests_a_pattern_that_works_as_printed(tmp_path, rigged_model_dir):
    """`--input data/letters` (relative, as a user types it) refused with a pattern; that
    pattern, pasted into a shell, reads the top-level and the nested letters."""
    letters = tmp_path / "data" / "letters"
    (letters / "2024").mkdir(parents=True)
    (letters / "a.txt").write_text("Jane Doe wrote to ACME.")
    (letters / "2024" / "b.txt").write_text("John Smith replied.")
    common = ["--output", "out", "--model", rigged_model_dir, "--device", "cpu", "-q"]
    refused = larvatus_run("--input", "data/letters", *common, cwd=tmp_path)
    assert refused.returncode == 2, refused.stderr[-2000:]
    suggested = refused.stderr.split("--input ", 2)[2].split(" (every")[0]
    done = larvatus_run(*shlex.split(f"--input {suggested}"), *common, cwd=tmp_path)
    assert done.returncode == 0, done.stderr[-2000:]
    rows = parquet_rows(tmp_path / "out" / "annotations")
    assert sorted(r["source"] for r in rows) == ["2024/b.txt", "a.txt"]


def test_a_link_out_of_the_input_folder_is_refused_at_start(tmp_path, capsys):
    secret = tmp_path / "private" / "diary.txt"
    secret.parent.mkdir()
    secret.write_text("Jane Doe's diary.")
    data = tmp_path / "in"
    data.mkdir()
    (data / "a.txt").write_text("Public text.")
    os.symlink(secret, data / "b.txt")
    err = refusal(capsys, "--input", f"{data}/*.txt", "--output", tmp_path / "out")
    assert "symbolic link" in err and "b.txt" in err and "diary" not in err
    assert not (tmp_path / "out").exists()


def test_links_inside_the_folder_and_a_link_named_itself_are_read(tmp_path):
    data = tmp_path / "in"
    (data / "sub").mkdir(parents=True)
    (data / "sub" / "a.txt").write_text("x")
    os.symlink(data / "sub" / "a.txt", data / "b.txt")
    pattern = f"{data}/**/*.txt"
    preflight.check_matched(pattern, preflight.input_files(pattern))
    os.symlink(data / "sub" / "a.txt", tmp_path / "named.txt")
    named = str(tmp_path / "named.txt")
    preflight.check_matched(named, preflight.input_files(named))


def test_an_input_of_empty_files_only_is_refused_and_one_empty_file_reported(tmp_path, capsys):
    (tmp_path / "empty.jsonl").write_bytes(b"")
    err = refusal(capsys, "--input", tmp_path / "empty.jsonl", "--output", tmp_path / "out")
    assert "only empty files" in err
    (tmp_path / "full.jsonl").write_text(json.dumps({"id": "1", "text": "x"}) + "\n")
    pattern = f"{tmp_path}/*.jsonl"
    preflight.check_matched(pattern, preflight.input_files(pattern))   # logs as main set up
    warned = capsys.readouterr().err
    assert "warning: 1 of the 2 input files are empty" in warned and "empty.jsonl" in warned


def test_a_repeated_text_column_is_refused_at_start(tmp_path, capsys):
    (tmp_path / "a.csv").write_text("id,text,text\nr1,Jane Doe,Leeds\n")
    err = refusal(capsys, "--input", tmp_path / "a.csv", "--output", tmp_path / "out")
    assert "'text'" in err and "more than once" in err
    (tmp_path / "b.csv").write_text("id,text,note,note\nr1,Jane Doe,a,b\n")
    err = refusal(capsys, "--input", tmp_path / "b.csv", "--output", tmp_path / "out",
                  "--keep-fields", "note")
    assert "'note'" in err and "more than once" in err


def test_a_utf16_csv_is_refused_without_raw_nul_bytes(tmp_path, capsys):
    (tmp_path / "a.csv").write_bytes("id,text\nr1,Jane Doe\n".encode("utf-16"))
    err = refusal(capsys, "--input", tmp_path / "a.csv", "--output", tmp_path / "out")
    assert "UTF-16" in err and "iconv" in err and "\x00" not in err


def test_header_names_are_printed_escaped(tmp_path, capsys):
    (tmp_path / "a.csv").write_bytes(b"id,bo\x00dy\x1b[31m\nr1,x\n")
    err = refusal(capsys, "--input", tmp_path / "a.csv", "--output", tmp_path / "out")
    assert "'text' is not a column" in err and "bo\\x00dy\\x1b[31m" in err
    assert "\x00" not in err and "\x1b" not in err


LETTERS_CSV = (b"id,text,note\n"
               b"r1,Dear Ms Fitzwilliam, Chidi Okonkwo called from Leeds about the loan,n\n"
               b"r2,Jane Doe wrote,m\n"
               b"r3,Caf\xe9 M\xfcller,o\n"
               b'r4,"Amara never closes this quote,p\n'
               b"r5,John Smith replied,q\n")


@pytest.mark.slow
def test_malformed_csv_rows_end_in_dead_letters_never_in_kept_columns(tmp_path,
                                                                     rigged_model_dir):
    """The real command: a row with an unquoted comma is a dead letter with its id (not a cut
    text whose tail lands unredacted in a kept column), a Latin-1 row keeps its id, an
    unbalanced quote swallows no row, and every row is counted."""
    (tmp_path / "letters.csv").write_bytes(LETTERS_CSV)
    out = tmp_path / "out"
    done = larvatus_run("--input", tmp_path / "letters.csv", "--output", out, "--model",
                        rigged_model_dir, "--device", "cpu", "--keep-fields", "note",
                        "--max-dead-letter-ratio", "0.7", "-q")
    assert done.returncode == 0, done.stderr[-2000:]
    rows = parquet_rows(out / "annotations")
    assert sorted((r["id"], r["note"]) for r in rows) == [("r2", "m"), ("r5", "q")]
    for row in rows:
        assert not {"Okonkwo", "Leeds", "Chidi"} & set(json.dumps(row, default=str).split())
    dead = sorted((d["id"], d["source"], d["reason"]) for d in parquet_rows(out / "dead_letters"))
    assert dead == [("r1", "letters.csv#row=0", "malformed_row"),
                    ("r3", "letters.csv#row=2", "invalid_utf8"),
                    ("r4", "letters.csv#row=3", "malformed_row")]
    summary = json.loads((out / "_SUMMARY.json").read_text())
    assert summary["records_in"] == 5 and summary["counts_add_up"]
