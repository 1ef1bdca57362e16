"""Where a job's files go inside its output folder: one place for every name.

    OUT/_SUMMARY.json                     written last, `"complete": true`: the run is whole
    OUT/annotations/part-SSSSS-of-NNNNN.parquet
    OUT/dead_letters/part-SSSSS-of-NNNNN.parquet
    OUT/.larvatus-run-<hex>/              a run in progress (or killed): the same tree, moved
                                          into place only once the job has finished
"""
from __future__ import annotations

ANNOTATIONS_DIR = "annotations"
DEAD_LETTERS_DIR = "dead_letters"
DATA_DIRS = (ANNOTATIONS_DIR, DEAD_LETTERS_DIR)
PART_PREFIX = "part"   # Beam appends -SSSSS-of-NNNNN and the suffix
PARQUET_SUFFIX = ".parquet"
SUMMARY_NAME = "_SUMMARY.json"
RUN_DIR_PREFIX = ".larvatus-run-"
BEAM_TEMP_PREFIX = "beam-temp-"   # Beam's own temporary folders (killed runs of old layouts)
LEGACY_PREFIXES = ("annotations-", "dead_letter-")   # the flat layout this one replaced


def is_ours(top_level_name: str) -> bool:
    """Whether a name directly inside OUT belongs to a Larvatus run (finished or not)."""
    return (top_level_name in DATA_DIRS or top_level_name == SUMMARY_NAME
            or top_level_name.startswith((RUN_DIR_PREFIX, BEAM_TEMP_PREFIX))
            or (top_level_name.startswith(LEGACY_PREFIXES)
                and top_level_name.endswith(PARQUET_SUFFIX)))


def is_temporary(top_level_name: str) -> bool:
    """Whether a name directly inside OUT is a run's temporary folder."""
    return top_level_name.startswith((RUN_DIR_PREFIX, BEAM_TEMP_PREFIX))
