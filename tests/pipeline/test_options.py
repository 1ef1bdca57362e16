"""Options that would silently do the wrong thing are refused or read as documented."""
from __future__ import annotations

import json
import signal
import subprocess
import sys
import time

import pyarrow.parquet as pq
import pytest

from larvatus.arguments import attach_dash_values
from larvatus.options import OptionsError, resolve_redact_labels
from larvatus.transforms.redact import KeySource, SecretKeyError
from tests.paths import ROOT

KEY = "0123456789abcdef0123456789abcdef"


def larvatus_run(*args, env=None, timeout=300):
    return subprocess.run([sys.executable, "-m", "larvatus.cli", "run", *map(str, args)],
                          cwd=ROOT, capture_output=True, text=True, timeout=timeout, env=env)


@pytest.fixture
def source(tmp_path):
    path = tmp_path / "in.jsonl"
    path.write_text(json.dumps({"id": "a", "text": "Jane Doe met ACME in Paris."}) + "\n")
    return path


@pytest.mark.parametrize("more, message", [
    (["--id-field", "text"], "--id-field and --text-field both name 'text'"),
    (["--progress-interval", "0"], "--progress_interval: must be at least 0.1 second"),
    (["--progress-interval", "nan"], "--progress_interval: must be at least 0.1 second"),
    (["--pseudonym-key-file", "KEYFILE"], "--pseudonym-key-file is read only with --placeholder "
                                          "pseudonym"),
])
def test_options_that_would_be_ignored_or_misread_are_refused(
        rigged_fp32_model_dir, source, tmp_path, more, message):
    key_file = tmp_path / "key"
    key_file.write_text(KEY)
    more = [str(key_file) if m == "KEYFILE" else m for m in more]
    done = larvatus_run("--input", source, "--output", tmp_path / "out", "--model",
                        rigged_fp32_model_dir, "--device", "cpu", *more)
    assert done.returncode == 2, done.stderr[-2000:]
    assert message in done.stderr and "Traceback" not in done.stderr
    assert not (tmp_path / "out").exists()


def test_the_key_is_stripped_the_same_from_a_file_and_the_environment(tmp_path, monkeypatch):
    key_file = tmp_path / "key"
    key_file.write_text(f"  {KEY}\n")
    monkeypatch.setenv("LARVATUS_TEST_KEY", f"{KEY}\n")
    from_env = KeySource(env="LARVATUS_TEST_KEY").load()
    assert from_env == KeySource(file=str(key_file)).load() == KEY.encode()


@pytest.mark.parametrize("blank", [" " * 20, "\t\n" * 12])
def test_a_blank_key_is_refused(tmp_path, monkeypatch, blank):
    monkeypatch.setenv("LARVATUS_TEST_KEY", blank)
    with pytest.raises(SecretKeyError, match="blank"):
        KeySource(env="LARVATUS_TEST_KEY").load()
    key_file = tmp_path / "key"
    key_file.write_text(blank)
    with pytest.raises(SecretKeyError, match="blank"):
        KeySource(file=str(key_file)).load()


def test_a_label_removal_is_read_as_a_value_and_starts_from_the_defaults():
    assert attach_dash_values(["--redact-labels", "-PER", "--quiet"]) == [
        "--redact-labels=-PER", "--quiet"]
    assert attach_dash_values(["--redact-labels", "--quiet"]) == ["--redact-labels", "--quiet"]
    labels = resolve_redact_labels("-PER", ["PER", "LOC", "ORG", "MISC"])
    assert "PER" not in labels and {"LOC", "ORG", "DATE"} <= labels
    assert resolve_redact_labels("-PER", ["PER", "LOC", "ORG", "MISC"]) == \
        resolve_redact_labels("default,-PER", ["PER", "LOC", "ORG", "MISC"])
    with pytest.raises(OptionsError, match="leaves nothing"):
        resolve_redact_labels("PER,-PER", ["PER", "LOC", "ORG", "MISC"])


def test_redact_labels_minus_a_label_runs_from_the_command_line(
        rigged_fp32_model_dir, source, tmp_path):
    out = tmp_path / "out"
    done = larvatus_run("--input", source, "--output", out, "--model", rigged_fp32_model_dir,
                        "--device", "cpu", "--redact-labels", "-PER")
    assert done.returncode == 0, done.stderr[-2000:]
    [row] = [r for f in (out / "annotations").glob("*.parquet") for r in pq.read_table(f).to_pylist()]
    assert row["redacted_text"].startswith("Jane Doe met [ORG]")


@pytest.mark.slow
def test_sigterm_does_what_ctrl_c_does(rigged_fp32_model_dir, tmp_path):
    source = tmp_path / "in.jsonl"
    source.write_text("".join(json.dumps({"id": f"d{i}", "text": "Jane Doe met ACME. " * 400})
                              + "\n" for i in range(400)))
    out = tmp_path / "out"
    child = subprocess.Popen(
        [sys.executable, "-m", "larvatus.cli", "run", "--input", str(source), "--output",
         str(out), "--model", str(rigged_fp32_model_dir), "--device", "cpu"],
        cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    deadline = time.time() + 300
    while not list(out.glob(".larvatus-staging-*")):
        assert child.poll() is None and time.time() < deadline, child.communicate()[1][-3000:]
        time.sleep(0.2)
    time.sleep(3)
    assert child.poll() is None, "the job finished before it could be stopped"
    child.send_signal(signal.SIGTERM)
    _, stderr = child.communicate(timeout=300)
    assert child.returncode == 130, stderr[-3000:]
    assert "interrupted; the run's temporary files were removed" in stderr
    assert not list(out.glob(".larvatus-*")) and not (out / "_SUMMARY.json").exists()
