"""Where a job's files go inside its output folder: one place for every name."""
from __future__ import annotations

import glob
import os

ANNOTATIONS_PREFIX = "annotations"
DEAD_LETTER_PREFIX = "dead_letter"
SUMMARY_NAME = "_SUMMARY.json"
PARQUET_SUFFIX = ".parquet"
REPORT_NAME = "report.html"   # written by `larvatus report`, not by the job


def annotation_files(output_dir: str) -> list[str]:
    """The annotation Parquet files of a finished job, sorted."""
    return sorted(glob.glob(os.path.join(output_dir, ANNOTATIONS_PREFIX + "-*" + PARQUET_SUFFIX)))


def dead_letter_files(output_dir: str) -> list[str]:
    """The dead-letter Parquet files of a finished job, sorted."""
    return sorted(glob.glob(os.path.join(output_dir, DEAD_LETTER_PREFIX + "-*" + PARQUET_SUFFIX)))
