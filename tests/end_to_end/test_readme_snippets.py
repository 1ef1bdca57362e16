"""The README's and docs/'s code blocks marked runnable run as written, on the sample corpus.

A block is runnable when the line right before its opening fence is `<!-- runnable -->`.
Each document's runnable blocks run in order, in one scratch folder that holds a copy of
the sample corpus at `pipeline/sample/news.jsonl`, so outputs such as `output/sample` land
there: shell blocks with `bash -euo pipefail`, Python blocks with this interpreter; a
`larvatus` command on PATH runs this checkout's code. No block may set the project up
(`./run_local.sh`, `pip install`): that would reinstall inside the test suite.
"""
from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
import textwrap
from dataclasses import dataclass
from pathlib import Path

import pytest

from tests.paths import ROOT

MARKER = "<!-- runnable -->"
LANGUAGES = {"bash": "shell", "sh": "shell", "shell": "shell", "python": "python", "py": "python"}
FORBIDDEN = ("run_local.sh", "pip install")
BLOCK_TIMEOUT = 600
_FENCE_RE = re.compile(r"^(`{3,})\s*([\w+-]*)\s*$")


@dataclass(frozen=True)
class Block:
    """One runnable block: its kind (shell or python), its code and where it starts."""

    kind: str
    code: str
    line: int   # 1-based line of the opening fence


def runnable_blocks(markdown: str, name: str = "<markdown>") -> list[Block]:
    """The blocks marked runnable, in order.

    Raises:
      ValueError: a marker not followed by a fence of a language it can run, or a block
        that is never closed (a typo must not silently leave a block untested).
    """
    lines = markdown.splitlines()
    blocks = []
    for i, line in enumerate(lines):
        if line.strip() != MARKER:
            continue
        fence = _FENCE_RE.match(lines[i + 1]) if i + 1 < len(lines) else None
        if fence is None or fence.group(2).lower() not in LANGUAGES:
            raise ValueError(f"{name}:{i + 1}: {MARKER} must be followed by a ```bash or "
                             f"```python fence")
        end = next((j for j in range(i + 2, len(lines))
                    if lines[j].strip() == fence.group(1)), None)
        if end is None:
            raise ValueError(f"{name}:{i + 2}: the runnable block is never closed")
        blocks.append(Block(LANGUAGES[fence.group(2).lower()],
                            "\n".join(lines[i + 2:end]) + "\n", i + 2))
    return blocks


def documents() -> list[Path]:
    return [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]


def _with_blocks() -> list[Path]:
    return [path for path in documents()
            if runnable_blocks(path.read_text(encoding="utf-8"), path.name)]


def _scratch(tmp_path: Path) -> tuple[Path, dict]:
    """A working folder with the sample corpus, and an environment whose `larvatus` and
    `python` are this checkout's."""
    work = tmp_path / "work"
    (work / "pipeline" / "sample").mkdir(parents=True)
    shutil.copy(ROOT / "pipeline" / "sample" / "news.jsonl", work / "pipeline" / "sample")
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    for name, command in (("larvatus", "-m larvatus.cli"), ("python", "")):
        script = bin_dir / name
        script.write_text(f'#!/bin/sh\nexec "{sys.executable}" {command} "$@"\n')
        script.chmod(0o755)
    env = {**os.environ, "PATH": f"{bin_dir}{os.pathsep}{os.environ.get('PATH', '')}",
           "LARVATUS_CACHE": str(tmp_path / "cache")}
    return work, env


def _run(block: Block, work: Path, env: dict) -> subprocess.CompletedProcess:
    command = (["bash", "-euo", "pipefail", "-c", block.code] if block.kind == "shell"
               else [sys.executable, "-c", block.code])
    return subprocess.run(command, cwd=work, env=env, capture_output=True, text=True,
                          timeout=BLOCK_TIMEOUT)


# --- the extractor ------------------------------------------------------------------------

def test_only_marked_blocks_are_extracted_in_order():
    markdown = textwrap.dedent("""\
        ```bash
        not marked
        ```
        <!-- runnable -->
        ```bash
        echo one
        echo two
        ```
        text
        <!-- runnable -->
        ````python
        print("```")
        ````
        """)
    blocks = runnable_blocks(markdown)
    assert [(b.kind, b.code, b.line) for b in blocks] == [
        ("shell", "echo one\necho two\n", 5), ("python", 'print("```")\n', 11)]


@pytest.mark.parametrize("markdown", [
    "<!-- runnable -->\nno fence\n",
    "<!-- runnable -->\n```json\n{}\n```\n",
    "<!-- runnable -->\n```bash\necho never closed\n",
    "<!-- runnable -->\n",
])
def test_a_marker_without_a_runnable_block_is_an_error(markdown):
    with pytest.raises(ValueError):
        runnable_blocks(markdown)


def test_every_document_parses_and_the_readme_has_runnable_blocks():
    for path in documents():
        runnable_blocks(path.read_text(encoding="utf-8"), path.name)
    kinds = {b.kind for b in runnable_blocks((ROOT / "README.md").read_text(encoding="utf-8"))}
    assert kinds == {"shell", "python"}


def test_no_runnable_block_sets_the_project_up():
    for path in documents():
        for block in runnable_blocks(path.read_text(encoding="utf-8"), path.name):
            assert not any(word in block.code for word in FORBIDDEN), \
                f"{path.name}:{block.line} installs or sets up; mark it not runnable"


def test_a_failing_block_is_reported(tmp_path):
    work, env = _scratch(tmp_path)
    assert _run(Block("shell", "false\necho after\n", 1), work, env).returncode != 0
    assert _run(Block("python", "raise SystemExit(3)\n", 1), work, env).returncode == 3
    done = _run(Block("shell", "command -v larvatus\n", 1), work, env)
    assert done.returncode == 0 and done.stdout.strip() == str(tmp_path / "bin" / "larvatus")


# --- the blocks themselves -----------------------------------------------------------------

@pytest.mark.slow
@pytest.mark.parametrize("path", _with_blocks(), ids=lambda p: p.relative_to(ROOT).as_posix())
def test_runnable_blocks_run_as_written(path, tmp_path):
    work, env = _scratch(tmp_path)
    for block in runnable_blocks(path.read_text(encoding="utf-8"), path.name):
        done = _run(block, work, env)
        assert done.returncode == 0, (
            f"{path.name}:{block.line} ({block.kind}) exited {done.returncode}:\n"
            f"{block.code}\n--- stdout ---\n{done.stdout[-3000:]}\n"
            f"--- stderr ---\n{done.stderr[-3000:]}")


def test_the_readme_says_where_the_clones_folder_hides_the_package(tmp_path):
    """From the folder holding a clone named `larvatus`, the README's Python snippet imports
    the clone's folder when the package is an editable install: the README must say so."""
    clone = tmp_path / "larvatus"
    shutil.copytree(ROOT, clone, ignore=shutil.ignore_patterns(
        ".git", ".venv", "tests", "bench", "output", "*.egg-info", "__pycache__", "build"))
    done = subprocess.run([sys.executable, "-c", "from larvatus import Redactor"],
                          cwd=tmp_path, capture_output=True, text=True, timeout=300,
                          env={k: v for k, v in os.environ.items() if k != "PYTHONPATH"})
    readme = " ".join((ROOT / "README.md").read_text(encoding="utf-8").split())
    if done.returncode != 0:       # the shadowing happens with this install
        assert "cannot import name 'Redactor'" in done.stderr, done.stderr[-2000:]
        assert ("from its parent folder `import larvatus` finds that folder" in readme
                and "ImportError: cannot import name 'Redactor'" in readme)
    from_clone = subprocess.run([sys.executable, "-c", "from larvatus import Redactor"],
                                cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert from_clone.returncode == 0, from_clone.stderr[-2000:]   # inside the clone: fine
