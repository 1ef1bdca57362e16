"""Runs sharing one --output: no run deletes another's live work, and success means the rows are there."""
from __future__ import annotations

import json
import shutil
import socket
import subprocess
import sys
import time
from pathlib import Path

import pyarrow.parquet as pq
import pytest

from larvatus import storage
from larvatus.layout import STAGING_PREFIX
from larvatus.run import main
from tests.paths import ROOT


def write_docs(path: Path, n: int) -> Path:
    path.write_text("".join(json.dumps({"id": f"d{i}", "text": f"Jane Doe {i} met ACME in Paris."})
                            + "\n" for i in range(n)))
    return path


def command(source, output, model, *more):
    return [sys.executable, "-m", "larvatus.cli", "run", "--input", str(source), "--output",
            str(output), "--model", str(model), "--device", "cpu", "--quiet", *map(str, more)]


def rows(output: Path, folder: str = "annotations") -> int:
    return sum(pq.ParquetFile(f).metadata.num_rows for f in (output / folder).glob("*.parquet"))


def fake_staging(output: Path, name: str, owner: dict, parquet: Path) -> Path:
    """Another run's staging folder: its owner marker and one staged annotation file."""
    staging = output / (STAGING_PREFIX + name)
    (staging / "annotations").mkdir(parents=True)
    shutil.copy(parquet, staging / "annotations" / "annotations-00000-of-00001.parquet")
    (staging / storage.OWNER_NAME).write_text(json.dumps(owner))
    return staging


def test_a_run_keeps_the_staging_of_live_runs_and_removes_only_abandoned_ones(
        rigged_fp32_model_dir, tmp_path):
    source = write_docs(tmp_path / "in.jsonl", 3)
    output = tmp_path / "out"
    first = subprocess.run(command(source, output, rigged_fp32_model_dir), cwd=ROOT,
                           capture_output=True, text=True, timeout=600)
    assert first.returncode == 0, first.stderr[-2000:]
    parquet = next((output / "annotations").glob("*.parquet"))
    alive = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(300)"])
    gone = subprocess.Popen([sys.executable, "-c", "pass"])
    gone.wait()
    host = socket.gethostname()
    try:
        live = fake_staging(output, "live", {"host": host, "pid": alive.pid}, parquet)
        elsewhere = fake_staging(output, "elsewhere", {"host": host + "-other", "pid": 1,
                                                       "started": time.time()}, parquet)
        dead = fake_staging(output, "dead", {"host": host, "pid": gone.pid}, parquet)
        second = subprocess.run(command(source, output, rigged_fp32_model_dir, "--overwrite"),
                                cwd=ROOT, capture_output=True, text=True, timeout=600)
        assert second.returncode == 0, second.stderr[-2000:]
        assert (live / "annotations").is_dir() and len(list(live.rglob("*.parquet"))) == 1
        assert (elsewhere / "annotations").is_dir()
        assert not dead.exists()
        summary = json.loads((output / "_SUMMARY.json").read_text())
        assert rows(output) == summary["records_out"] == 3
        assert summary["published_rows"] == {"annotations": 3, "dead_letters": 0}
    finally:
        alive.kill()
        alive.wait()


def test_which_staging_folders_are_abandoned(tmp_path):
    import time

    host = socket.gethostname()
    unmarked = tmp_path / (STAGING_PREFIX + "unmarked")
    unmarked.mkdir()
    assert storage.is_abandoned(str(unmarked))    # no run of this version leaves none
    mine = storage.new_staging_dir(str(tmp_path))
    assert not storage.is_abandoned(mine)          # this process is alive
    assert not list(tmp_path.glob(".larvatus-new-*"))
    for started, abandoned in ((time.time() - 60, False), (time.time() - 8 * 86400, True)):
        other = tmp_path / (STAGING_PREFIX + f"other{int(started)}")
        other.mkdir()
        (other / storage.OWNER_NAME).write_text(json.dumps(
            {"host": host + "-other", "pid": 1, "started": started}))
        assert storage.is_abandoned(str(other)) is abandoned


def test_published_rows_that_differ_from_the_counts_fail_the_run(
        rigged_fp32_model_dir, tmp_path, monkeypatch, capsys):
    """Another writer's files landing beside this run's (a remote store has no lock) are
    caught before the summary calls the run passed."""
    source = write_docs(tmp_path / "in.jsonl", 2)
    other = tmp_path / "other"
    assert main(["--input", str(source), "--output", str(other), "--model",
                 str(rigged_fp32_model_dir), "--device", "cpu", "--quiet"]) == 0
    intruder = next((other / "annotations").glob("*.parquet"))
    real_rows = storage.published_rows
    output = tmp_path / "out"

    def another_run_lands_once_the_files_are_in_place(folder):
        if Path(folder) == output:
            shutil.copy(intruder, output / "annotations" / "annotations-99999-of-99999.parquet")
        return real_rows(folder)

    monkeypatch.setattr(storage, "published_rows", another_run_lands_once_the_files_are_in_place)
    code = main(["--input", str(source), "--output", str(output), "--model",
                 str(rigged_fp32_model_dir), "--device", "cpu", "--quiet"])
    assert code == 1
    summary = json.loads((output / "_SUMMARY.json").read_text())
    assert summary["checks"]["passed"] is False
    assert summary["published_rows"]["annotations"] == 4 and summary["records_out"] == 2
    assert "another run" in capsys.readouterr().err


@pytest.mark.slow
def test_two_runs_started_together_into_one_output_leave_a_consistent_output(
        rigged_fp32_model_dir, tmp_path):
    output = tmp_path / "out"
    sources = [write_docs(tmp_path / f"in{n}.jsonl", size) for n, size in ((0, 400), (1, 5))]
    runs = [subprocess.Popen(command(s, output, rigged_fp32_model_dir, "--overwrite"), cwd=ROOT,
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
            for s in sources]
    results = [(run.wait(timeout=600), run.stderr.read()) for run in runs]
    summary = json.loads((output / "_SUMMARY.json").read_text())
    assert [code for code, _ in results] == [0, 0], [err[-1500:] for _, err in results]
    assert summary["records_out"] in (400, 5)
    assert rows(output) == summary["records_out"]
    assert not list(output.glob(STAGING_PREFIX + "*"))
