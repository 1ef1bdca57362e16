"""The output folder as a user meets it on the command line: bad --output, refusals, Ctrl-C, show."""
from __future__ import annotations

import json
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
SAMPLE = ROOT / "pipeline" / "sample" / "news.jsonl"


def command(module: str, *args) -> list[str]:
    return [sys.executable, "-m", module, *map(str, args)]


def run_cli(*args, module="pipeline.run"):
    return subprocess.run(command(module, *args), cwd=ROOT, capture_output=True, text=True,
                          timeout=600)


def small_input(tmp_path: Path) -> Path:
    source = tmp_path / "in.jsonl"
    source.write_text('{"id": "a", "text": "Ada met Bob."}\n', encoding="utf-8")
    return source


def snapshot(folder: Path) -> dict:
    return {str(p.relative_to(folder)): p.read_bytes() if p.is_file() else None
            for p in folder.rglob("*")}


def test_output_that_is_a_file_is_a_clear_error(rigged_model_dir, tmp_path):
    source = small_input(tmp_path)
    target = tmp_path / "taken.txt"
    target.write_text("keep me")
    for output, message in ((target, "is a file; give a folder"),
                            (target / "below", "is a file, so no folder can be made there")):
        done = run_cli("--input", source, "--output", output, "--model", rigged_model_dir)
        assert done.returncode == 2, done.stderr[-2000:]
        assert message in done.stderr and "Traceback" not in done.stderr
    assert target.read_text() == "keep me"


def test_an_incomplete_output_is_refused_and_show_says_incomplete_run(rigged_model_dir, tmp_path):
    output = tmp_path / "out"
    (output / "annotations").mkdir(parents=True)
    (output / "annotations" / "part-00000-of-00002.parquet").write_bytes(b"PAR1")
    (output / "beam-temp-dead_letter-1f2e").mkdir()
    done = run_cli("--input", small_input(tmp_path), "--output", output,
                   "--model", rigged_model_dir, "--device", "cpu")
    assert done.returncode == 2
    assert "holds an incomplete Larvatus run (no _SUMMARY.json" in done.stderr
    assert "annotations/ (1 files)" in done.stderr and "--overwrite" in done.stderr
    shown = run_cli(output, module="pipeline.show")
    assert shown.returncode == 1 and "Traceback" not in shown.stderr
    assert shown.stdout.startswith(f"incomplete run in {output}: no _SUMMARY.json")


@pytest.mark.slow
def test_ctrl_c_exits_130_removes_its_files_and_keeps_the_old_run(rigged_model_dir, tmp_path):
    lines = [line for line in SAMPLE.read_text(encoding="utf-8").splitlines() if line.strip()]
    corpus = tmp_path / "corpus.jsonl"
    with corpus.open("w", encoding="utf-8") as handle:   # long enough to be interrupted
        for copy in range(40):
            for line in lines:
                record = json.loads(line)
                record["id"] = f"{record['id']}-{copy}"
                handle.write(json.dumps(record) + "\n")
    output = tmp_path / "out"
    model = ["--model", rigged_model_dir, "--device", "cpu"]
    first = run_cli("--input", small_input(tmp_path), "--output", output, *model)
    assert first.returncode == 0, first.stderr[-2000:]
    before = snapshot(output)

    job = subprocess.Popen(
        command("pipeline.run", "--input", corpus, "--output", output, "--overwrite", *model),
        cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    deadline = time.monotonic() + 300
    while not list(output.glob(".larvatus-run-*")):   # the job has started
        assert job.poll() is None and time.monotonic() < deadline, job.communicate()[1][-2000:]
        time.sleep(0.2)
    time.sleep(3)
    assert job.poll() is None, "the job finished before it could be interrupted"
    job.send_signal(signal.SIGINT)
    stdout, stderr = job.communicate(timeout=300)
    assert job.returncode == 130, stderr[-3000:]
    assert "interrupted" in stderr and "Traceback" not in stderr
    assert stdout == ""   # no partial summary printed
    assert snapshot(output) == before   # no run folder, no beam-temp, the old run intact
