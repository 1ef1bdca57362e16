"""Where a job's files go inside its output folder: one place for every name."""
from __future__ import annotations

ANNOTATIONS_DIR = "annotations"            # OUT/annotations/annotations-00000-of-00002.parquet
DEAD_LETTERS_DIR = "dead_letters"          # OUT/dead_letters/dead_letter-00000-of-00001.parquet
ANNOTATIONS_PREFIX = "annotations"
DEAD_LETTER_PREFIX = "dead_letter"
ML_TOKENIZER_NAME = "tokenizer.json"      # --emit-token-ids: the tokenizer with placeholder tokens
SUMMARY_NAME = "_SUMMARY.json"             # written last: its presence marks a complete run
PARQUET_SUFFIX = ".parquet"
STAGING_PREFIX = ".larvatus-staging-"      # a run writes here, then moves its files into place
BEAM_TEMP_PREFIX = "beam-temp-"            # what an interrupted Beam write leaves behind
PARTIAL_SUFFIX = ".partial"                # _SUMMARY.json.<id>.partial: renamed into place


def join(base: str, *parts: str) -> str:
    """Joins path parts with "/" (local paths and every Beam filesystem URL alike)."""
    return "/".join([base.rstrip("/"), *parts])


def annotation_files_pattern(output_dir: str) -> str:
    return join(output_dir, ANNOTATIONS_DIR, ANNOTATIONS_PREFIX + "-*" + PARQUET_SUFFIX)


def dead_letter_files_pattern(output_dir: str) -> str:
    return join(output_dir, DEAD_LETTERS_DIR, DEAD_LETTER_PREFIX + "-*" + PARQUET_SUFFIX)
