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


class FakeClock:
    def __init__(self):
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


def watched(timeline: list[tuple[float, dict]], total_bytes: int, end: float) -> list[str]:
    """The lines a monitor prints in a log for totals that change as `timeline` says, with a
    tick every 5 s (the default --progress-interval) and the job ending at `end`."""
    from larvatus.progress import ProgressMonitor

    clock, stream = FakeClock(), io.StringIO()
    state = {"totals": totals()}
    monitor = ProgressMonitor(ProgressSettings("lines", interval=3600.0), total_bytes,
                              local=False, stream=stream, clock=clock)
    monitor._source = lambda: state["totals"]
    monitor.start()
    tick = 5.0
    while tick < end:
        clock.now = tick
        state["totals"] = [t for at, t in timeline if at <= tick][-1]
        monitor.tick()
        tick += 5.0
    clock.now = end
    state["totals"] = timeline[-1][1]
    monitor.stop()
    return stream.getvalue().splitlines()


def seconds_of(eta: str) -> int:
    minutes = re.match(r"(?:(\d+)m )?(\d+)s", eta)
    return int(minutes.group(1) or 0) * 60 + int(minutes.group(2))


def test_a_short_job_prints_no_repeated_lines_and_no_absurd_eta():
    """74.5 KiB read at once, the model loading for 12 s, then 36 documents in 13 s."""
    size = 76_288
    read = dict(bytes=size, records=36)
    timeline = [(0.0, totals(bytes=1000)), (1.0, totals(**read)),
                (12.0, totals(**read, documents=1, words=120)),
                (17.0, totals(**read, documents=10, words=1200)),
                (22.0, totals(**read, documents=30, words=3600)),
                (25.0, totals(**read, documents=36, words=4320))]
    lines = watched(timeline, size, end=25.5)
    progress = [line for line in lines if ": progress: " in line]
    assert len(progress) == len(set(progress)), lines
    assert sum("no document done yet, 100% of 74.5 KiB read" in line for line in lines) == 1
    assert not any(re.search(r"(^|[^0-9,])0 documents", line) for line in lines), lines
    assert any("1 document, 120 words" in line for line in lines), lines
    for line in progress:
        at = 5.0 * (progress.index(line) + 1)
        eta = re.search(r"ETA ([0-9hms ]+)$", line)
        if eta:       # measured from the first finished document, not from the model's start-up
            assert seconds_of(eta.group(1)) <= 2 * (25.5 - at), lines
    done = lines[-1]
    assert done.startswith("larvatus run: done: 36 documents, 4,320 words; 25.5 s in all")
    assert re.search(r", 1[0-9]\.\d s of it from the first document done, at [0-9,]+ words/s$",
                     done), done


def test_a_job_done_before_the_first_tick_claims_no_rate():
    """The closing line may not divide by the instant between two readings of the totals."""
    lines = watched([(0.0, totals(bytes=500, records=1, documents=1, words=9))], 500, end=4.0)
    assert lines == ["larvatus run: done: 1 document, 9 words; 4.0 s in all"]
    assert Snapshot(totals(documents=1, words=9), 0.0001, 500).words_per_second is None


def test_an_unchanged_job_repeats_its_line_only_once_a_minute():
    stuck = totals(bytes=10, records=2, documents=1, words=5)
    lines = watched([(0.0, stuck)], 100, end=131.0)
    assert len([line for line in lines if ": progress: " in line]) == 3   # 5 s, 65 s, 125 s
