"""The report shows each risky document's own row, also when ids repeat."""
from __future__ import annotations

import json

import pyarrow.parquet as pq

from larvatus.report import build_report
from larvatus.run import run


def test_the_report_shows_the_risky_row_not_another_with_the_same_id(
        rigged_fp32_model_dir, tmp_path):
    source = tmp_path / "in.jsonl"
    source.write_text("".join(json.dumps({"id": "dup", "text": text}) + "\n" for text in (
        "clean words only here.", "risky words only there.")))
    out = tmp_path / "out"
    run(["--input", str(source), "--output", str(out), "--model", str(rigged_fp32_model_dir),
         "--device", "cpu"])
    [path] = list((out / "annotations").glob("*.parquet"))
    table = pq.read_table(path)
    rows = table.to_pylist()
    assert [r["id"] for r in rows] == ["dup", "dup"]
    rows.sort(key=lambda r: not r["redacted_text"].startswith("clean"))   # the clean row first
    risky = rows[1]
    assert risky["redacted_text"].startswith("risky")
    risky["audit"] = {**risky["audit"], "findings": 5}     # what the audit would flag
    pq.write_table(type(table).from_pylist(rows, schema=table.schema), path)
    page = build_report(str(out), samples=1)
    riskiest = page.split("Riskiest documents")[1].split("All documents")[0]
    assert "audit findings 5" in riskiest
    assert "risky words" in riskiest and "clean words" not in riskiest
