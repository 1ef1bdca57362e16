"""The in-process Redactor: the same rows as `larvatus run`, its options, errors and threads."""
from __future__ import annotations

import glob
import json
import os
import subprocess
import sys
import threading
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from larvatus import schemas
from larvatus.models.conll import read_documents
from tests.paths import ROOT

SAMPLE = ROOT / "pipeline" / "sample" / "news.jsonl"
CONLL_VALID = ROOT.parent / "shared" / "data" / "conll2003" / "valid.txt"


def _cli_rows(input_pattern: str, output: Path, *options: str) -> list[dict]:
    done = subprocess.run(
        [sys.executable, "-m", "larvatus.run", "--input", input_pattern, "--output", str(output),
         "-q", *options], cwd=ROOT, capture_output=True, text=True, timeout=900)
    assert done.returncode == 0, done.stderr[-3000:]
    rows = []
    for name in sorted(glob.glob(str(output / "annotations" / "*.parquet"))):
        rows += pq.read_table(name).to_pylist()
    return sorted(rows, key=lambda row: row["source"])


def _jsonl_records(path: Path) -> list[tuple[str, str, str]]:
    """(id, source, text) of each record, the source named as `larvatus run` names it."""
    records = []
    for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
        if line.strip():
            record = json.loads(line)
            records.append((record["id"], f"{path.name}:{number}", record["text"]))
    return records


def _as_parquet_rows(rows: list[dict], keep_text: bool) -> list[dict]:
    """Rows through the annotations schema, as Parquet stores them (float32 scores)."""
    table = pa.Table.from_pylist(rows, schema=schemas.annotation_schema(keep_text))
    return sorted(table.to_pylist(), key=lambda row: row["source"])


def _api_rows(files: list[Path], keep_text: bool, **options) -> list[dict]:
    from larvatus import Redactor

    records = [record for path in files for record in _jsonl_records(path)]
    redactor = Redactor(keep_text=keep_text, **options)
    rows = redactor.annotate([text for _, _, text in records],
                             ids=[doc_id for doc_id, _, _ in records],
                             sources=[source for _, source, _ in records])
    return _as_parquet_rows(rows, keep_text)


@pytest.mark.slow
def test_redactor_rows_equal_larvatus_run_on_sample_and_conll_validation(tmp_path):
    corpus = tmp_path / "in"
    corpus.mkdir()
    (corpus / "news.jsonl").write_bytes(SAMPLE.read_bytes())
    with open(corpus / "conll.jsonl", "w", encoding="utf-8") as out:
        for document in read_documents(CONLL_VALID):
            out.write(json.dumps({"id": document.doc_id, "text": document.text}) + "\n")
    files = [corpus / "conll.jsonl", corpus / "news.jsonl"]
    cli = _cli_rows(str(corpus / "*.jsonl"), tmp_path / "out")
    api = _api_rows(files, keep_text=False)
    assert len(cli) == 36 + 216
    assert sum(len(row["entities"]) for row in cli) > 3000
    for expected, got in zip(cli, api):
        assert got == expected, expected["source"]
    assert len(api) == len(cli)


@pytest.mark.slow
def test_redactor_rows_equal_larvatus_run_with_other_options(tmp_path):
    options = dict(placeholder="indexed", redact_labels="default,-DATE,MISC",
                   phone_regions="default,+VN", propagate=False, aggregation="max")
    cli = _cli_rows(str(SAMPLE), tmp_path / "out", "--keep-text", "--placeholder", "indexed",
                    "--redact-labels", "default,-DATE,MISC", "--phone-regions", "default,+VN",
                    "--no-propagate", "--aggregation", "max")
    api = _api_rows([SAMPLE], keep_text=True, **options)
    assert [row["source"] for row in api] == [row["source"] for row in cli]
    assert api == cli
    assert any("[PER_1]" in row["redacted_text"] for row in api)


@pytest.fixture(scope="module")
def tiny_redactor(rigged_model_dir):
    from larvatus import Redactor

    return Redactor(model=str(rigged_model_dir), redact_labels="PER,ORG,EMAIL")


def test_redact_returns_the_redacted_text(tiny_redactor):
    assert tiny_redactor.redact("we met Alice at ACME, alice@example.com") == \
        "we met [PER] at [ORG], [EMAIL]"


def test_annotate_rows_carry_ids_sources_and_no_original_text(tiny_redactor):
    rows = tiny_redactor.annotate(["hello Bob", "no names here"])
    assert [(row["id"], row["source"]) for row in rows] == [("0", "texts[0]"), ("1", "texts[1]")]
    assert set(rows[0]) == set(schemas.annotation_schema(False).names)
    assert rows[0]["entities"][0]["label"] == "PER"
    assert "Bob" not in json.dumps(rows)


def test_annotate_frame_keeps_the_frame_index(tiny_redactor):
    pd = pytest.importorskip("pandas")
    frame = pd.DataFrame({"body": ["call Carol", "x"], "key": ["a", "b"]}, index=[10, 20])
    result = tiny_redactor.annotate_frame(frame, text_column="body", id_column="key")
    assert list(result.index) == [10, 20]
    assert list(result["id"]) == ["a", "b"]
    assert list(result["redacted_text"]) == ["call [PER]", "x"]


def test_a_text_that_cannot_be_annotated_raises_document_error_without_its_text(rigged_model_dir):
    from larvatus import DocumentError, Redactor

    redactor = Redactor(model=str(rigged_model_dir), max_chars=10)
    with pytest.raises(DocumentError) as raised:
        redactor.annotate(["fine", "Secretname is far too long"])
    assert (raised.value.index, raised.value.reason) == (1, "too_large")
    assert "Secretname" not in str(raised.value)
    with pytest.raises(DocumentError, match="text_not_string"):
        redactor.annotate([42])


def test_unknown_or_bad_options_fail_at_construction(rigged_model_dir):
    from larvatus import Redactor
    from larvatus.options import OptionsError

    with pytest.raises(TypeError, match="input"):
        Redactor(model=str(rigged_model_dir), input="x.jsonl")
    with pytest.raises(OptionsError, match="redact-labels"):
        Redactor(model=str(rigged_model_dir), redact_labels="NOPE")


def test_threads_sharing_one_redactor_get_the_serial_results(tiny_redactor):
    texts = [f"Person{i} met ACME and Zed{i}" for i in range(40)]
    expected = tiny_redactor.annotate(texts)
    results: dict[int, list] = {}

    def work(n: int) -> None:
        results[n] = tiny_redactor.annotate(texts)

    threads = [threading.Thread(target=work, args=(n,)) for n in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert all(rows == expected for rows in results.values()) and len(results) == 4


def test_import_larvatus_does_not_load_the_api():
    code = ("import sys, larvatus; assert 'larvatus.api' not in sys.modules; "
            "assert 'onnxruntime' not in sys.modules; print(larvatus.Redactor.__name__)")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          cwd=ROOT, env={**os.environ})
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "Redactor"
