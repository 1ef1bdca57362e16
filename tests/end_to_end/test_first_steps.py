"""A new user's first commands, run for real: the printed next step, -v anywhere, help, show and report."""
from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from larvatus.options import COMMON_OPTIONS, OptionsError, resolve_phone_regions
from larvatus.transforms.recognizers import DEFAULT_PHONE_REGIONS
from tests.paths import ROOT

BIN = Path(sys.executable).parent


def larvatus(*args, env=None, cwd=ROOT):
    return subprocess.run([sys.executable, "-m", "larvatus.cli", *map(str, args)], cwd=cwd,
                          capture_output=True, text=True, env=env, timeout=600)


@pytest.fixture(scope="module")
def finished(tmp_path_factory, rigged_model_dir):
    """A finished run of the tiny model with `default,+VN` phone regions, launched from a
    shell where `larvatus` is not on PATH."""
    folder = tmp_path_factory.mktemp("first")
    corpus = folder / "in.jsonl"
    corpus.write_text('{"id": "a", "text": "Alice met Bob."}\n{"id": "b", "text": "x"}\n')
    env = {**os.environ, "PATH": "/usr/bin:/bin"}
    env.pop("LARVATUS_COMMAND", None)
    done = larvatus("run", "--input", corpus, "--output", folder / "out",
                    "--model", rigged_model_dir, "--phone-regions", "default,+VN", env=env)
    assert done.returncode == 0, done.stderr[-3000:]
    return folder / "out", done


@pytest.mark.parametrize("before", [["-v"], ["-vv"], ["-q"], ["-v", "-q"]])
def test_message_options_before_the_command_are_accepted(tmp_path, before):
    done = larvatus(*before, "run", "--input", tmp_path / "none.jsonl", "--output", tmp_path / "o")
    assert done.returncode == 2
    assert "matches no file" in done.stderr, done.stderr


@pytest.mark.slow
def test_phone_regions_default_plus_one_adds_to_the_defaults(finished):
    output, _ = finished
    summary = json.loads((output / "_SUMMARY.json").read_text())
    assert summary["options"]["phone_regions"] == [*DEFAULT_PHONE_REGIONS, "VN"]


@pytest.mark.slow
def test_model_line_is_printed_once_in_plain_words(finished):
    _, done = finished
    lines = [line for line in done.stderr.splitlines() if "model:" in line]
    assert len(lines) == 1, lines
    assert "running on the CPU" in lines[0] and "spinning" not in done.stderr


@pytest.mark.slow
def test_printed_next_step_runs_as_printed(finished):
    output, done = finished
    line = next(line for line in done.stdout.splitlines() if line.startswith("next: "))
    command = line[len("next: "):].split("   or   ")[0]
    shown = subprocess.run(command, shell=True, cwd="/", capture_output=True, text=True,
                           env={**os.environ, "PATH": "/usr/bin:/bin"}, timeout=300)
    assert shown.returncode == 0, (command, shown.stderr)
    assert "records" in shown.stdout or "documents" in shown.stdout


@pytest.mark.slow
def test_report_output_names_the_file(finished, tmp_path):
    output, _ = finished
    target = tmp_path / "page.html"
    done = larvatus("report", output, "--output", target)
    assert done.returncode == 0, done.stderr
    assert target.read_text(encoding="utf-8").lstrip().lower().startswith("<!doctype html")


@pytest.mark.slow
def test_run_local_sh_show_works_on_a_finished_run(finished):
    output, _ = finished
    env = {**os.environ, "PATH": f"{BIN}:/usr/bin:/bin"}
    done = subprocess.run(["./run_local.sh", "show", str(output)], cwd=ROOT, capture_output=True,
                          text=True, env=env, timeout=300)
    assert done.returncode == 0, done.stderr[-2000:]
    missing = subprocess.run(["./run_local.sh", "show", str(output / "absent")], cwd=ROOT,
                             capture_output=True, text=True, env=env, timeout=300)
    assert missing.returncode == 2


@pytest.mark.parametrize("command", ["show", "report"])
def test_show_and_report_exit_2_for_a_missing_folder(tmp_path, command):
    done = larvatus(command, tmp_path / "absent")
    assert done.returncode == 2
    assert "no such folder" in done.stderr


def test_run_help_opens_with_the_common_options_each_shown_once():
    done = larvatus("run", "--help")
    assert done.returncode == 0
    names = re.findall(r"^\s{2}(-{1,2}[\w-]+)", done.stdout, flags=re.MULTILINE)
    listed = [name for name in names if name not in ("-h", "-v", "-q")]
    assert listed[:10] == ["--" + dest.replace("_", "-") for dest in COMMON_OPTIONS]
    assert len(listed) == len(set(listed))
    assert not re.search(r"--\w+_\w+", done.stdout.split("Beam")[0].split("examples:")[0])


def test_underscore_spellings_are_still_accepted(tmp_path):
    done = larvatus("run", "--input_format", "jsonl", "--input", tmp_path / "none.jsonl",
                    "--output", tmp_path / "out")
    assert done.returncode == 2 and "matches no file" in done.stderr


@pytest.mark.parametrize("value, expected", [
    ("default,+VN", (*DEFAULT_PHONE_REGIONS, "VN")),
    ("US,GB", ("US", "GB")),
    ("default,-US", tuple(r for r in DEFAULT_PHONE_REGIONS if r != "US")),
    ("+VN", ("VN",)),
])
def test_phone_regions_grammar(value, expected):
    assert resolve_phone_regions(value) == expected


def test_phone_regions_naming_nothing_is_refused():
    with pytest.raises(OptionsError):
        resolve_phone_regions("default,-US,-GB,-IE,-IN,-AU,-DE,-FR,-ES,-IT,-NL")
