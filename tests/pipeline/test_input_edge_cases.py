"""Odd inputs: endless lines, FIFOs and devices, names that look like records, files that vanish, input that holds the output."""
from __future__ import annotations

import json
import os
import subprocess
import sys
import tracemalloc
import zlib
from pathlib import Path

import pyarrow.parquet as pq
import pytest

from larvatus import preflight
from larvatus.run import main
from larvatus.transforms.read import source_name, special_file_kind
from tests.paths import ROOT


def larvatus_run(*args, timeout=300):
    return subprocess.run([sys.executable, "-m", "larvatus.cli", "run", *map(str, args)],
                          cwd=ROOT, capture_output=True, text=True, timeout=timeout)


def parquet_rows(folder: Path) -> list[dict]:
    return [r for f in sorted(folder.glob("*.parquet")) for r in pq.read_table(f).to_pylist()]


def test_the_field_check_reads_a_bounded_sample_of_an_endless_line(tmp_path):
    """A small gzip expanding to 128 MiB without a newline costs the launcher about the
    sample's size, not the line's."""
    path = tmp_path / "bomb.jsonl.gz"
    compressor = zlib.compressobj(9, zlib.DEFLATED, 31)
    with open(path, "wb") as handle:
        handle.write(compressor.compress(b'{"text": "'))
        block = b"a" * (1 << 20)
        for _ in range(128):
            handle.write(compressor.compress(block))
        handle.write(compressor.flush())
    assert path.stat().st_size < 1 << 20
    tracemalloc.start()
    try:
        objects, seen = preflight.jsonl_fields(str(path))
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert (objects, seen) == (0, {})
    assert peak < 16 << 20, f"peak {peak >> 20} MiB"


def test_the_field_check_still_reads_the_first_records(tmp_path):
    path = tmp_path / "a.jsonl"
    path.write_text("".join(json.dumps({"id": i, "body": "x"}) + "\n" for i in range(500)))
    objects, seen = preflight.jsonl_fields(str(path))
    assert objects == preflight.SAMPLE_RECORDS and seen == {"id": objects, "body": objects}


def test_special_files_are_named_by_kind(tmp_path):
    os.mkfifo(tmp_path / "pipe")
    os.symlink("/dev/zero", tmp_path / "zero.jsonl")
    (tmp_path / "plain.txt").write_text("x")
    assert special_file_kind(str(tmp_path / "pipe")) == "a FIFO"
    assert special_file_kind(str(tmp_path / "zero.jsonl")) == "a device"
    assert special_file_kind(str(tmp_path / "plain.txt")) is None
    assert special_file_kind("gs://bucket/pipe") is None


def test_a_name_never_reads_as_another_files_record():
    assert source_name("/d/a.jsonl:1", "/d") == "a.jsonl%3A1"
    assert source_name("/d/a%3A1", "/d") == "a%253A1"
    assert source_name("/d/sub/a.jsonl", "/d") == "sub/a.jsonl"


def test_fifos_devices_and_record_like_names_end_in_rows_or_dead_letters(
        rigged_fp32_model_dir, tmp_path):
    data = tmp_path / "in"
    data.mkdir()
    (data / "a.jsonl").write_text(json.dumps({"id": "j", "text": "Jane Doe met ACME."}) + "\n")
    (data / "a.jsonl:1").write_text("Jane Doe wrote this text file.")
    os.mkfifo(data / "pipe.jsonl")
    os.symlink("/dev/zero", data / "zero.jsonl")
    out = tmp_path / "out"
    try:
        done = larvatus_run("--input", f"{data}/*", "--output", out, "--model",
                            rigged_fp32_model_dir, "--device", "cpu",
                            "--max-dead-letter-ratio", "0.6", timeout=240)
    except subprocess.TimeoutExpired:
        pytest.fail("the job hung on a FIFO or a device")
    assert done.returncode == 0, done.stderr[-2000:]
    rows = parquet_rows(out / "annotations")
    sources = sorted(r["source"] for r in rows)
    assert sources == ["a.jsonl%3A1", "a.jsonl:1"]
    dead = parquet_rows(out / "dead_letters")
    assert sorted((d["source"], d["reason"], d["detail"].split(",")[0]) for d in dead) == [
        ("pipe.jsonl", "unreadable_file", "a FIFO"), ("zero.jsonl", "unreadable_file", "a device")]
    summary = json.loads((out / "_SUMMARY.json").read_text())
    assert summary["records_in"] == 4 and summary["counts_add_up"]


def test_files_that_vanish_after_listing_fail_the_checks(rigged_fp32_model_dir, tmp_path,
                                                         monkeypatch, capsys):
    data = tmp_path / "in"
    data.mkdir()
    for name in ("a", "b", "c"):
        (data / f"{name}.jsonl").write_text(json.dumps({"id": name, "text": "Jane Doe."}) + "\n")
    listed = preflight.input_files
    calls = []

    def list_then_one_vanishes(pattern):
        files = listed(pattern)
        calls.append(pattern)
        if len(calls) == 2:        # the launcher's last look; then c.jsonl is deleted
            (data / "c.jsonl").unlink()
        return files

    monkeypatch.setattr(preflight, "input_files", list_then_one_vanishes)
    out = tmp_path / "out"
    code = main(["--input", f"{data}/*.jsonl", "--output", str(out), "--model",
                 str(rigged_fp32_model_dir), "--device", "cpu", "--quiet"])
    assert code == 1
    summary = json.loads((out / "_SUMMARY.json").read_text())
    assert summary["files"] == {"listed": 3, "read": 2}
    assert summary["records_in"] == 2 and summary["checks"]["passed"] is False
    assert "1 vanished" in capsys.readouterr().err


@pytest.mark.parametrize("pattern, path, matches", [
    ("/d/**", "/d/out/_SUMMARY.json", True),
    ("/d/*", "/d/out/_SUMMARY.json", False),
    ("/d/**/*.parquet", "/d/out/annotations/a.parquet", True),
    ("/d/*/*.json", "/d/out/_SUMMARY.json", True),
    ("/d/*.jsonl", "/d/out/_SUMMARY.json", False),
    ("/d/[ab].txt", "/d/a.txt", True),
    ("/d/[!ab].txt", "/d/a.txt", False),
])
def test_glob_matching_follows_path_parts(pattern, path, matches):
    assert preflight.glob_matches(pattern, path) is matches


def test_an_input_that_matches_the_output_is_refused(rigged_fp32_model_dir, tmp_path):
    data = tmp_path / "d"
    data.mkdir()
    (data / "in.jsonl").write_text(json.dumps({"id": "a", "text": "Jane Doe."}) + "\n")
    done = larvatus_run("--input", f"{data}/**", "--output", data / "out", "--model",
                        rigged_fp32_model_dir, "--device", "cpu")
    assert done.returncode == 2, done.stderr[-2000:]
    assert "matches files inside --output" in done.stderr and "--text-field" not in done.stderr
    assert not (data / "out").exists()
