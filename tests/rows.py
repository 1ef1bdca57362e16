"""Helpers to compare jobs' output rows, and what is known about the embedded model's batch dependence."""
from __future__ import annotations

import glob
import os

import pyarrow.parquet as pq

# The embedded models whose int8 *dynamic* quantization makes a window's tags depend on
# the other windows in its batch (activation scales are computed per batch). Tests that
# need batch-independent rows expect a difference on these and exact equality on any
# other embedded model: replacing models/default flips them without editing the tests.
BATCH_DEPENDENT_EMBEDDED_SHA256 = {
    "7515f97082eeae8a5bdf6ba36700aa1338c93fc3343da5b4d6874649c663684d",  # the first MiniLM-L6 int8 (commit e7eb3b5)
}


def embedded_model_is_batch_dependent() -> bool:
    from models.model_dir import load_model_spec

    return load_model_spec().sha256 in BATCH_DEPENDENT_EMBEDDED_SHA256


def read_rows(output) -> dict:
    """id -> (redacted_text, entities as (start, end, label, score, propagated)) of a job's annotations."""
    rows = {}
    for name in sorted(glob.glob(os.path.join(str(output), "annotations-*.parquet"))):
        for row in pq.read_table(name).to_pylist():
            entities = tuple((e["start"], e["end"], e["label"], e["score"], e["propagated"])
                             for e in row["entities"])
            assert row["id"] not in rows, f"duplicate id {row['id']}"
            rows[row["id"]] = (row["redacted_text"], entities)
    return rows


def differing(a: dict, b: dict) -> list:
    """Ids whose rows differ (present in only one side counts as differing)."""
    return sorted(k for k in set(a) | set(b) if a.get(k) != b.get(k))
