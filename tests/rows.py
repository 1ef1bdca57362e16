"""Helpers to compare jobs' output rows."""
from __future__ import annotations

import glob
import os

import pyarrow.parquet as pq

def read_rows(output) -> dict:
    """id -> (redacted_text, entities as (start, end, label, score, propagated)) of a job's annotations."""
    rows = {}
    for name in sorted(glob.glob(os.path.join(str(output), "annotations", "annotations-*.parquet"))):
        for row in pq.read_table(name).to_pylist():
            entities = tuple((e["start"], e["end"], e["label"], e["score"], e["propagated"])
                             for e in row["entities"])
            assert row["id"] not in rows, f"duplicate id {row['id']}"
            rows[row["id"]] = (row["redacted_text"], entities)
    return rows


def differing(a: dict, b: dict) -> list:
    """Ids whose rows differ (present in only one side counts as differing)."""
    return sorted(k for k in set(a) | set(b) if a.get(k) != b.get(k))
