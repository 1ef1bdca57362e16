"""The output folder is safe: only Larvatus's files are replaced, a failed run keeps the earlier output, a full disk or a bad runner says so in one line."""
from __future__ import annotations

import json
import os
import shutil
import socket
import subprocess
import sys
from pathlib import Path

import pytest

from larvatus import storage
from larvatus.run import _closing_lines, main
from larvatus.remote import StoreOptions
from tests.paths import ROOT
from tests.pipeline.test_storage import annotation_rows, args, snapshot, write_docs

USER_FILES = {"tokenizer.json": "my tokenizer", "annotations-2023/notes.txt": "notes",
              "beam-temp-notes/x.txt": "x", "dead_letter-summary.csv": "a,b\n",
              "annotations/notes.txt": "kept beside the shards"}


def larvatus(*arguments, timeout: float = 600) -> subprocess.CompletedProcess:
    """`larvatus ARGS` as a user runs it: a subprocess from the repository root."""
    return subprocess.run([sys.executable, "-m", "larvatus.cli", *map(str, arguments)],
                          cwd=ROOT, capture_output=True, text=True, timeout=timeout)


def one_line_error(done: subprocess.CompletedProcess) -> str:
    """The command's stderr, checked to be one error line without a traceback."""
    lines = [line for line in done.stderr.splitlines() if line.strip()]
    assert "Traceback" not in done.stderr, done.stderr[-3000:]
    assert len(lines) == 1, done.stderr[-3000:]
    assert lines[0].startswith("larvatus run: error: "), lines
    return lines[0]


def user_files(folder: Path) -> dict:
    for relative, content in USER_FILES.items():
        (folder / relative).parent.mkdir(parents=True, exist_ok=True)
        (folder / relative).write_text(content)
    return {relative: (folder / relative).read_text() for relative in USER_FILES}


# --- what --overwrite may delete


def test_a_folder_of_user_files_is_no_larvatus_run_and_overwrite_leaves_them(
        tmp_path, rigged_model_dir):
    source = write_docs(tmp_path / "in.jsonl")
    out = tmp_path / "out"
    out.mkdir()
    mine = user_files(out)
    assert storage.previous_output(str(out)) == ([], False)
    assert main(args(source, out, rigged_model_dir, "-q")) == 0   # no "INCOMPLETE run"
    assert main(args(write_docs(tmp_path / "two.jsonl", n=2), out, rigged_model_dir, "-q",
                     "--overwrite")) == 0
    assert {relative: (out / relative).read_text() for relative in USER_FILES} == mine
    assert len(annotation_rows(out)) == 2
    assert json.loads((out / "_SUMMARY.json").read_text())["records_in"] == 2


def test_a_tokenizer_json_of_the_user_is_never_replaced_and_ours_is(tmp_path, rigged_model_dir,
                                                                      capsys):
    source = write_docs(tmp_path / "in.jsonl")
    out = tmp_path / "out"
    out.mkdir()
    (out / "tokenizer.json").write_text("my tokenizer")
    assert main(args(source, out, rigged_model_dir, "-q", "--emit-token-ids",
                     "--overwrite")) == 2
    assert "holds a tokenizer.json that Larvatus did not write" in capsys.readouterr().err
    assert (out / "tokenizer.json").read_text() == "my tokenizer"
    assert not (out / "_SUMMARY.json").exists()
    (out / "tokenizer.json").unlink()
    assert main(args(source, out, rigged_model_dir, "-q", "--emit-token-ids")) == 0
    assert json.loads((out / "tokenizer.json").read_text())["model"]
    # the summary names it as the run's: a later --overwrite run replaces it
    assert main(args(source, out, rigged_model_dir, "-q", "--overwrite")) == 0
    assert not (out / "tokenizer.json").exists() and len(annotation_rows(out)) == 3


def test_overwrite_never_writes_or_deletes_through_an_annotations_link(tmp_path, rigged_model_dir,
                                                                         capsys):
    source = write_docs(tmp_path / "in.jsonl")
    elsewhere = tmp_path / "elsewhere"
    assert main(args(source, elsewhere, rigged_model_dir, "-q")) == 0
    before = snapshot(elsewhere)
    out = tmp_path / "out"
    out.mkdir()
    (out / "annotations").symlink_to(elsewhere / "annotations", target_is_directory=True)
    (out / "_SUMMARY.json").write_text("{}")
    assert main(args(source, out, rigged_model_dir, "-q", "--overwrite")) == 2
    assert "annotations is a symbolic link" in capsys.readouterr().err
    assert snapshot(elsewhere) == before
    assert (out / "annotations").is_symlink() and (out / "_SUMMARY.json").read_text() == "{}"


def test_a_failed_swap_moves_every_file_back(tmp_path, rigged_model_dir, monkeypatch, capsys):
    """A move that fails half way through the swap (a store that stops answering) puts the
    earlier run's files back and removes the new ones."""
    source = write_docs(tmp_path / "in.jsonl")
    out = tmp_path / "out"
    assert main(args(source, out, rigged_model_dir, "-q")) == 0
    before = snapshot(out)
    real_move = storage._move
    moves = []

    def fail_on_the_third_move(source_path, target_path, parents):
        moves.append(source_path)
        if len(moves) == 3:
            raise storage.StoreTimeout(110, "the store did not answer within 60 s")
        real_move(source_path, target_path, parents)

    monkeypatch.setattr(storage, "_move", fail_on_the_third_move)
    assert main(args(write_docs(tmp_path / "two.jsonl", n=2), out, rigged_model_dir, "-q",
                     "--overwrite")) == 1
    error = capsys.readouterr().err
    assert "could not be moved into" in error and "did not answer within 60 s" in error
    assert "earlier output was left as it was" in error
    assert snapshot(out) == before


# --- a full disk: a small tmpfs (CI runs as root)


@pytest.fixture
def tiny_disk(tmp_path):
    """A 64 KiB tmpfs: room for a tiny run's output, not for a tokenizer (700 KB)."""
    mount = tmp_path / "disk"
    mount.mkdir()
    if os.geteuid() != 0:
        pytest.fail("the full-disk tests mount a 64 KiB tmpfs, which needs root (CI runs as "
                    "root); run them as root")
    done = subprocess.run(["mount", "-t", "tmpfs", "-o", "size=64k", "tmpfs", str(mount)],
                          capture_output=True, text=True)
    if done.returncode != 0:
        pytest.fail(f"mount -t tmpfs failed ({done.stderr.strip()}): the full-disk tests need "
                    f"a machine that lets root mount a tmpfs")
    try:
        yield mount
    finally:
        subprocess.run(["umount", "-l", str(mount)], check=False)


def _fill(disk: Path, leave: int) -> None:
    """Fills the disk but for about `leave` bytes."""
    free = shutil.disk_usage(disk).free
    (disk / "filler").write_bytes(b"\0" * max(0, free - leave))


@pytest.mark.slow
def test_a_full_disk_while_the_new_output_is_written_keeps_the_earlier_output(
        tmp_path, rigged_model_dir, tiny_disk):
    source = write_docs(tmp_path / "in.jsonl")
    out = tiny_disk / "out"
    first = larvatus("run", *args(source, out, rigged_model_dir, "-q"))
    assert first.returncode == 0, first.stderr[-3000:]
    before = snapshot(out)
    done = larvatus("run", *args(source, out, rigged_model_dir, "-q", "--overwrite",
                                 "--emit-token-ids"))
    assert done.returncode == 1
    line = one_line_error(done)
    assert "no space left on the device" in line and "earlier output was left as it was" in line
    assert snapshot(out) == before   # the old rows and summary; no truncated tokenizer.json
    assert sorted(p.name for p in tiny_disk.iterdir()) == ["out"]


@pytest.mark.slow
def test_a_job_on_a_full_disk_fails_in_one_line_and_keeps_the_earlier_output(
        tmp_path, rigged_model_dir, tiny_disk):
    source = write_docs(tmp_path / "in.jsonl", n=40)
    out = tiny_disk / "out"
    first = larvatus("run", *args(write_docs(tmp_path / "small.jsonl", n=1), out,
                                  rigged_model_dir, "-q"))
    assert first.returncode == 0, first.stderr[-3000:]
    before = snapshot(out)
    _fill(tiny_disk, leave=4096)
    done = larvatus("run", *args(source, out, rigged_model_dir, "-q", "--overwrite"))
    assert done.returncode == 1
    line = one_line_error(done)
    assert "no space left on the device" in line
    assert snapshot(out) == before
    assert not list(out.glob(".larvatus-*"))


# --- options refused at start, runners that cannot start


def _closed_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


@pytest.mark.slow
@pytest.mark.parametrize("option, message", [
    (["--runner", "NoSuchRunner"], "--runner NoSuchRunner: Beam knows no such runner"),
    (["--direct_num_workers", "-3"], "--direct_num_workers must be 0 (one per core) or more"),
    (["--max-chars", "99999999999999999999"], "must be between 1 and 2,147,483,647"),
    (["--max-chars", "0"], "must be between 1 and 2,147,483,647"),
], ids=["runner", "workers", "max-chars-huge", "max-chars-zero"])
def test_options_that_cannot_run_are_refused_at_start(tmp_path, rigged_model_dir, option, message):
    source = write_docs(tmp_path / "in.jsonl")
    out = tmp_path / "new" / "out"
    done = larvatus("run", *args(source, out, rigged_model_dir, *option))
    assert done.returncode == 2, done.stderr[-3000:]
    assert "Traceback" not in done.stderr
    assert message in done.stderr.splitlines()[0]
    assert not (tmp_path / "new").exists()


@pytest.mark.slow
@pytest.mark.parametrize("runner", [
    ["--runner", "FlinkRunner", "--flink_job_server_jar", "http://127.0.0.1:{port}/flink.jar"],
    ["--runner", "SparkRunner", "--spark_job_server_jar", "http://127.0.0.1:{port}/spark.jar"],
    ["--runner", "PrismRunner", "--prism_location", "{tmp}/no-prism/prism.zip"],
], ids=["flink", "spark", "prism"])
def test_a_runner_that_cannot_fetch_its_server_says_so_and_leaves_nothing(
        tmp_path, rigged_model_dir, runner):
    """The job servers' downloads point at a closed port (no network needed)."""
    port = _closed_port()
    runner = [a.format(port=port, tmp=tmp_path) for a in runner]
    source = write_docs(tmp_path / "in.jsonl")
    out = tmp_path / "new" / "out"
    done = larvatus("run", *args(source, out, rigged_model_dir, "-q", *runner))
    assert done.returncode == 1
    line = one_line_error(done)
    if runner[1] != "PrismRunner":
        assert f"--runner {runner[1]} needs its job server jar" in line
        assert f"http://127.0.0.1:{port}/" in line and "nothing was written" in line
    assert not (tmp_path / "new").exists()


# --- the printed next step


def test_the_next_step_after_a_remote_run_keeps_the_store_options_and_hides_secrets():
    summary = {"entities_by_label": {}, "dead_lettered": 0, "dead_lettered_by_reason": {},
               "records_in": 1, "records_out": 1, "words": 3, "wall_seconds": 1.0}
    store = StoreOptions((("s3_endpoint_url", "http://127.0.0.1:9000"),
                          ("s3_secret_access_key", "s3cr3t")))
    lines = _closing_lines(summary, "s3://bucket/out", "larvatus run", store)
    assert "show s3://bucket/out --s3_endpoint_url http://127.0.0.1:9000 " \
           "--s3_secret_access_key ..." in lines[-1]
    assert "s3cr3t" not in "\n".join(lines)
    local = _closing_lines(summary, "/data/out", "larvatus run", store)
    assert "--s3_endpoint_url" not in local[-1]
