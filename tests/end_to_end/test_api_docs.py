"""Every Python example of docs/api.md and the README's Python API block runs as written."""
from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from tests.paths import ROOT

BLOCK = re.compile(r"```python\n(.*?)```", re.DOTALL)


def _blocks(path: Path) -> list[str]:
    return BLOCK.findall(path.read_text(encoding="utf-8"))


def _run(code: str, tmp_path: Path) -> subprocess.CompletedProcess:
    env = {key: value for key, value in os.environ.items() if key != "LARVATUS_PSEUDONYM_KEY"}
    return subprocess.run([sys.executable, "-c", code], cwd=tmp_path, capture_output=True,
                          text=True, env=env, timeout=600)


def test_the_docs_hold_examples():
    assert len(_blocks(ROOT / "docs" / "api.md")) >= 5
    assert _blocks(ROOT / "README.md")


@pytest.mark.slow
@pytest.mark.parametrize("index", range(len(_blocks(ROOT / "docs" / "api.md"))))
def test_api_doc_example_runs(index, tmp_path):
    code = _blocks(ROOT / "docs" / "api.md")[index]
    done = _run(code, tmp_path)
    assert done.returncode == 0, (code, done.stderr[-2000:])
    for expected in re.findall(r"#\s*(\d+ \w+)$", code, flags=re.MULTILINE):
        assert expected in done.stdout   # a comment stating what is printed


@pytest.mark.slow
def test_first_api_doc_example_prints_what_the_doc_says(tmp_path):
    text = (ROOT / "docs" / "api.md").read_text(encoding="utf-8")
    stated = re.search(r"```\n\nprints `([^`]+)`", text).group(1)
    done = _run(_blocks(ROOT / "docs" / "api.md")[0], tmp_path)
    assert done.stdout.strip() == stated


@pytest.mark.slow
def test_readme_python_api_block_runs(tmp_path):
    python = [block for block in _blocks(ROOT / "README.md") if "Redactor" in block]
    assert python
    for code in python:
        done = _run(code, tmp_path)
        assert done.returncode == 0, (code, done.stderr[-2000:])
        assert "[PER]" in done.stdout
