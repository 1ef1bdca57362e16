"""Progress of a running job: the workers' side channel, the launcher's snapshot, the real command."""
from __future__ import annotations

import fcntl
import io
import json
import logging
import os
import re
import struct
import subprocess
import sys
import termios

import pytest

from larvatus.progress import ProgressSettings, Snapshot
from larvatus.transforms.progress import DOCUMENTS, FIELDS, CountingReader, ProgressFile, read_totals
from tests.paths import ROOT


def totals(**values):
    return {**dict.fromkeys(FIELDS, 0), **values}


def test_progress_files_of_several_processes_add_up(tmp_path):
    first, second = ProgressFile(str(tmp_path)), ProgressFile(str(tmp_path))
    first.add(documents=2, words=30, records=3)
    second.add(documents=1, dead_lettered=1, bytes_read=100, records=1)
    first.flush()
    second.flush()
    assert read_totals(str(tmp_path)) == totals(documents=3, dead_lettered=1, words=30,
                                                 bytes=100, records=4)
    (tmp_path / "junk.progress.json").write_text("{half")     # a file being replaced
    assert read_totals(str(tmp_path))[DOCUMENTS] == 3
    assert read_totals(str(tmp_path / "gone")) == totals()


def test_counting_reader_counts_every_way_of_reading():
    reader = CountingReader(io.BytesIO(b"line one\nline two\nrest"))
    assert reader.readline() == b"line one\n"
    assert reader.read(4) == b"line"
    buffer = bytearray(5)
    reader.readinto(buffer)
    assert reader.count == 9 + 4 + 5


def test_snapshot_share_done_waits_for_annotation_not_just_reading():
    read_all = Snapshot(totals(bytes=1000, records=100, documents=25, words=2500), 10.0, 1000)
    assert read_all.read_fraction == 1.0 and read_all.fraction == 0.25
    assert read_all.eta_seconds == pytest.approx(30.0)
    line = read_all.line()
    assert "25 documents" in line and "250 words/s" in line and "25% done" in line
    assert "ETA 30s" in line
    unknown = Snapshot(totals(documents=5, words=10), 2.0, None)
    assert unknown.fraction is None and unknown.eta_seconds is None
    assert "starting" in Snapshot(totals(), 0.0, 10).line()


def test_auto_mode_is_a_bar_on_a_terminal_and_lines_in_a_log():
    master, slave = os.openpty()
    try:
        with os.fdopen(slave, "w") as tty:
            # a pty of unknown width (`script` without a terminal): tqdm would draw nothing
            fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", 0, 0, 0, 0))
            assert ProgressSettings.choose("auto", quiet=False, stream=tty) == "lines"
            fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", 40, 120, 0, 0))
            assert ProgressSettings.choose("auto", quiet=False, stream=tty) == "bar"
            assert ProgressSettings.choose("auto", quiet=True, stream=tty) == "off"
    finally:
        os.close(master)
    assert ProgressSettings.choose("auto", quiet=False, stream=io.StringIO()) == "lines"
    assert ProgressSettings.choose("lines", quiet=True) == "lines"


def test_log_lines_do_not_run_into_a_live_bar(monkeypatch):
    from tqdm import tqdm

    from larvatus.logs import CliHandler

    stderr = io.StringIO()
    monkeypatch.setattr(sys, "stderr", stderr)
    handler = CliHandler("larvatus run")
    record = logging.LogRecord("larvatus", logging.INFO, __file__, 1, "worker ready", None, None)
    bar = tqdm(total=10, file=stderr, desc="larvatus run", ncols=80)
    bar.update(3)
    handler.emit(record)
    bar.close()
    # tqdm.write cleared the bar's line first: the message starts a line of its own
    assert re.search(r"(^|[\r\n])larvatus run: worker ready\n", stderr.getvalue())
    assert "%|" not in stderr.getvalue().split("larvatus run: worker ready")[0].split("\r")[-1]
    plain = io.StringIO()
    monkeypatch.setattr(sys, "stderr", plain)
    handler.emit(record)            # no bar: a plain line, tqdm not consulted
    assert plain.getvalue() == "larvatus run: worker ready\n"


def corpus(tmp_path, n=40):
    source = tmp_path / "in.jsonl"
    source.write_text("".join(json.dumps({"id": f"d{i}", "text": "Jane Doe met ACME. " * 60})
                              + "\n" for i in range(n)) + "{broken\n")
    return source


def larvatus_run(*args):
    return subprocess.run([sys.executable, "-m", "larvatus.cli", "run", *map(str, args)],
                          cwd=ROOT, capture_output=True, text=True, timeout=900)


@pytest.mark.slow
@pytest.mark.parametrize("workers", [None, 2])
def test_progress_lines_on_the_direct_runner(tmp_path, rigged_model_dir, workers):
    more = ["--direct_num_workers", workers, "--direct_running_mode", "multi_processing"] \
        if workers else []
    done = larvatus_run("--input", corpus(tmp_path), "--output", tmp_path / "out", "--model",
                        rigged_model_dir, "--device", "cpu", "--progress-interval", "0.2", *more)
    assert done.returncode == 0, done.stderr[-3000:]
    assert "larvatus run: progress:" in done.stderr     # stderr is not a terminal: lines
    final = [line for line in done.stderr.splitlines() if line.startswith("larvatus run: done:")]
    assert final and "41 documents (1 dead-lettered)" in final[0], done.stderr[-2000:]
    assert "records: 41 in, 40 annotated, 1 dead-lettered" in done.stdout
    # worker processes log at ERROR once they have read their options (pipeline/logs.py)
    for noise in ("Discarding unparseable args", "control channel", "Pipeline_options"):
        assert noise not in done.stderr, done.stderr[-3000:]


@pytest.mark.slow
def test_progress_bar_and_off(tmp_path, rigged_model_dir):
    bar = larvatus_run("--input", corpus(tmp_path), "--output", tmp_path / "bar", "--model",
                       rigged_model_dir, "--device", "cpu", "--progress", "bar")
    assert bar.returncode == 0 and "100%|" in bar.stderr
    off = larvatus_run("--input", corpus(tmp_path), "--output", tmp_path / "off", "--model",
                       rigged_model_dir, "--device", "cpu", "--progress", "off")
    assert off.returncode == 0 and "run: progress:" not in off.stderr and "%|" not in off.stderr
