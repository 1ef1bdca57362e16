"""`larvatus show` and `report` end with their status every time, never an abort at shutdown."""
from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from larvatus.run import run
from tests.paths import ROOT

TRIES = 8   # the abort at interpreter shutdown came in about 1 run of 12 to 4 of 12


def finished_output(model, tmp_path) -> Path:
    source = tmp_path / "in.jsonl"
    source.write_text(json.dumps({"id": "a", "text": "Jane Doe met ACME in Paris."}) + "\n")
    out = tmp_path / "out"
    run(["--input", str(source), "--output", str(out), "--model", str(model), "--device", "cpu"])
    return out


def test_show_and_report_leave_without_the_interpreters_shutdown(rigged_fp32_model_dir, tmp_path):
    """Where native threads abort: the shutdown is skipped once the output is flushed."""
    out = finished_output(rigged_fp32_model_dir, tmp_path)
    hook = tmp_path / "hook"
    hook.mkdir()
    (hook / "sitecustomize.py").write_text(
        "import atexit, sys\n"
        "atexit.register(lambda: sys.stderr.write('interpreter shutdown ran\\n'))\n")
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(
        [str(hook), *filter(None, [os.environ.get("PYTHONPATH")])])}
    for command, module in ((["show", str(out)], "larvatus.cli"), (["report", str(out)], "larvatus.cli"),
                            ([str(out)], "larvatus.show")):
        done = subprocess.run([sys.executable, "-m", module, *command], cwd=ROOT, env=env,
                              capture_output=True, text=True, timeout=120)
        assert done.returncode == 0, done.stderr[-2000:]
        assert "interpreter shutdown ran" not in done.stderr
        if "show" in module or command[0] == "show":
            assert "records in 1" in done.stdout       # flushed before leaving
    help_run = subprocess.run([sys.executable, "-m", "larvatus.cli", "run", "--help"], cwd=ROOT,
                              env=env, capture_output=True, text=True, timeout=120)
    assert "interpreter shutdown ran" in help_run.stderr    # the hook works; run exits normally


@pytest.mark.slow
def test_show_and_report_exit_cleanly_every_time(rigged_fp32_model_dir, tmp_path):
    out = finished_output(rigged_fp32_model_dir, tmp_path)
    codes = []
    for attempt in range(TRIES):
        command = ["show", str(out)] if attempt % 4 else ["report", str(out)]
        done = subprocess.run([sys.executable, "-m", "larvatus.cli", *command], cwd=ROOT,
                              capture_output=True, text=True, timeout=120)
        codes.append((command[0], done.returncode, done.stderr[-300:]))
        if command[0] == "show":
            assert "records in 1" in done.stdout
    assert all(code == 0 for _, code, _ in codes), codes
