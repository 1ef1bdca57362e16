"""Where a job's files go inside its output folder: one place for every name."""
from __future__ import annotations

ANNOTATIONS_PREFIX = "annotations"
DEAD_LETTER_PREFIX = "dead_letter"
SUMMARY_NAME = "_SUMMARY.json"
PARQUET_SUFFIX = ".parquet"
