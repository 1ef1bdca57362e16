"""The code's shape: layers, the stage template, pure readers, named vocabularies, a Beam-free summary."""
from __future__ import annotations

import ast
import bz2
import gzip
import io
import subprocess
import sys
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from larvatus.transforms import formats
from larvatus.transforms import read as read_lib
from larvatus import beam_stages
from larvatus.transforms import stages
from larvatus.transforms.records import DEAD_LETTER_REASONS, DeadLetter, DeadLetterReason, Document
from larvatus.transforms.redact import OPERATORS, PLACEHOLDER_STYLES
from tests.paths import ROOT


def _imported_packages(path: Path) -> set[str]:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    modules = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            modules |= {alias.name for alias in node.names}
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            modules.add(node.module)
    return {_layer(module) for module in modules}


def _layer(module: str) -> str:
    """The repository folder a module comes from: larvatus.transforms.x -> transforms, larvatus.x -> pipeline."""
    parts = module.split(".")
    if parts[0] != "larvatus":
        return parts[0]
    if len(parts) > 1 and parts[1] in ("transforms", "models"):
        return parts[1]
    return "pipeline"


@pytest.mark.parametrize("path", sorted((ROOT / "transforms").glob("*.py")), ids=lambda p: p.name)
def test_transforms_import_nothing_from_models_or_pipeline(path):
    assert not _imported_packages(path) & {"models", "pipeline"}


@pytest.mark.parametrize("path", sorted((ROOT / "transforms").rglob("*.py")),
                         ids=lambda p: str(p.relative_to(ROOT / "transforms")))
def test_transforms_import_no_beam(path):
    """The pure logic and the declared stages run under any driver: Beam, the Redactor, Spark."""
    assert "apache_beam" not in _imported_packages(path)


@pytest.mark.parametrize("path", sorted((ROOT / "models").glob("*.py")), ids=lambda p: p.name)
def test_models_do_not_import_the_pipeline(path):
    assert "pipeline" not in _imported_packages(path)


RUNNER_OPTIONS = ("StandardOptions", "DirectOptions", "PortableOptions", "DebugOptions")


def test_runner_knowledge_lives_in_one_module():
    """Only larvatus.models.runners reads which runner a job uses and how it starts its workers."""
    readers = {path.relative_to(ROOT).as_posix()
               for package in ("transforms", "models", "pipeline")
               for path in (ROOT / package).glob("*.py")
               if any(name in path.read_text(encoding="utf-8") for name in RUNNER_OPTIONS)}
    assert readers == {"models/runners.py"}


@pytest.mark.parametrize("package", ["transforms", "models", "pipeline"])
def test_every_module_has_a_one_line_docstring(package):
    for path in (ROOT / package).glob("*.py"):
        doc = ast.get_docstring(ast.parse(path.read_text(encoding="utf-8")))
        assert doc and "\n" not in doc.strip(), path


@pytest.mark.parametrize("path", sorted((ROOT / "bench").glob("*.py")), ids=lambda p: p.name)
def test_every_bench_module_has_a_one_line_docstring(path):
    doc = ast.get_docstring(ast.parse(path.read_text(encoding="utf-8")))
    assert doc and "\n" not in doc.strip(), path


@pytest.mark.parametrize("package", ["transforms", "models", "pipeline"])
def test_the_product_imports_nothing_from_bench(package):
    for path in (ROOT / package).glob("*.py"):
        assert "bench" not in _imported_packages(path), path


def test_show_and_summary_do_not_import_beam():
    code = ("import sys, larvatus.show, larvatus.summary; "
            "sys.exit(1 if 'apache_beam' in sys.modules else 0)")
    assert subprocess.run([sys.executable, "-c", code], cwd=ROOT).returncode == 0


def test_dead_letter_reasons_are_a_closed_vocabulary():
    assert "missing_id" not in DEAD_LETTER_REASONS   # never produced: records without id take their source
    assert "segment_error" in DEAD_LETTER_REASONS
    assert DeadLetter("s", DeadLetterReason.TOO_LARGE, "d").reason == "too_large"
    assert type(DeadLetter("s", DeadLetterReason.TOO_LARGE, "d").reason) is str
    with pytest.raises(ValueError):
        DeadLetter("s", "no_such_reason", "d")


def test_one_operator_per_placeholder_style():
    assert set(OPERATORS) == set(PLACEHOLDER_STYLES)


class _Exploding(stages.Segment):
    def step(self, document):
        raise RuntimeError("Angela Merkel")   # a message that quotes text must not leak


def test_stage_template_dead_letters_failures_with_its_own_reason_and_no_text():
    document = Document("d1", "Angela Merkel spoke.", "f:1")
    [output] = list(beam_stages.BeamStageChain([_Exploding()]).process(document))
    letter = output.value
    assert output.tag == beam_stages.DEAD
    assert (letter.source, letter.reason, letter.doc_id) == ("f:1", "segment_error", "d1")
    assert "Merkel" not in letter.detail


def test_stage_template_passes_results_through():
    [segmented] = list(beam_stages.BeamStageChain([stages.Segment()]).process(
        Document("d1", "Hello there", "f:1")))
    assert segmented.num_words == 2


@pytest.mark.parametrize("codec", [None, gzip, bz2], ids=["plain", "gzip", "bz2"])
def test_read_jsonl_is_a_pure_generator_over_any_stream(codec):
    raw = b'{"id": "a", "text": "one"}\n\n{"id": "b", "text": 3}\nnot json\n'
    handle = io.BytesIO(raw) if codec is None else codec.open(io.BytesIO(codec.compress(raw)))
    results = list(read_lib.read_jsonl(handle, "f.jsonl", "id", "text"))
    assert results[1] is read_lib.BLANK_LINE
    assert isinstance(results[0], Document) and results[0].source == "f.jsonl:1"
    assert [r.reason for r in results[2:]] == ["text_not_string", "invalid_json"]
    assert results[3].source == "f.jsonl:4"


def test_read_text_refuses_a_file_too_large_without_reading_it_whole():
    class Counting(io.BytesIO):
        read_sizes: list = []

        def read(self, size=-1):
            self.read_sizes.append(size)
            return super().read(size)

    handle = Counting(b"x" * 10_000)
    [letter] = list(read_lib.read_text(handle, "big.txt", max_chars=100))
    assert letter.reason == "too_large"
    assert all(0 < size <= 4 * 101 + 4 for size in handle.read_sizes)


def test_read_parquet_yields_rows_with_row_sources():
    buffer = io.BytesIO()
    pq.write_table(pa.table({"id": ["a", "b"], "text": ["one", None], "x": [1, 2]}), buffer)
    buffer.seek(0)
    results = list(read_lib.read_parquet(buffer, "f.parquet", "id", "text"))
    assert results[0].source == "f.parquet#row=0" and results[1].reason == "missing_text"


def test_format_for_path_sees_through_compression():
    assert formats.format_for_path("a/b.JSONL.gz") == "jsonl"
    assert formats.format_for_path("a/b.txt.bz2") == "text"
    assert formats.format_for_path("a/b.parquet", "text") == "text"
    assert formats.format_for_path("a/b.md") == "text"


def test_the_job_does_not_import_pytorch_even_when_it_is_installed():
    code = ("import sys, larvatus.run, larvatus.graph, apache_beam.ml.inference.base; "
            "sys.exit(1 if 'torch' in sys.modules else 0)")
    assert subprocess.run([sys.executable, "-c", code], cwd=ROOT).returncode == 0


MAX_FUNCTION_LINES, MAX_MODULE_LINES = 80, 600
PRODUCT_MODULES = sorted(path for package in ("transforms", "models", "pipeline")
                         for path in (ROOT / package).rglob("*.py"))


def _long_functions(source: str, limit: int) -> list[str]:
    """The functions and methods of a module longer than `limit` lines (decorators and docstring included)."""
    return [f"{node.name} (line {node.lineno}, {node.end_lineno - node.lineno + 1} lines)"
            for node in ast.walk(ast.parse(source))
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef))
            and node.end_lineno - min([node.lineno] + [d.lineno for d in node.decorator_list])
            + 1 > limit]


@pytest.mark.parametrize("path", PRODUCT_MODULES, ids=lambda p: p.relative_to(ROOT).as_posix())
def test_no_product_function_is_over_80_lines_and_no_module_over_600(path):
    source = path.read_text(encoding="utf-8")
    assert len(source.splitlines()) <= MAX_MODULE_LINES
    assert _long_functions(source, MAX_FUNCTION_LINES) == []


def test_the_size_check_finds_a_long_function():
    body = "".join(f"    x{i} = {i}\n" for i in range(80))
    assert _long_functions(f"def long():\n{body}\ndef short():\n    pass\n", 80) == [
        "long (line 1, 81 lines)"]
