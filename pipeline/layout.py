"""Where a job's files go inside its output folder: one place for every name."""
from __future__ import annotations

import re

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
# Files a run may publish beside its folders, owned only when the run's summary names them
# (`ml_outputs`): a file of that name that Larvatus did not write is the user's.
EXTRA_NAMES = (ML_TOKENIZER_NAME,)

# What Larvatus writes in an output folder, by exact relative path (anything else there is
# the user's and is never deleted): the summary, the Parquet shards, a
# summary's partial write, Beam's temporary folders inside our folders, and the staging
# folders of runs (`.larvatus-staging-*`), which hold only what a run put there.
OWN_PATHS = re.compile("|".join([
    re.escape(SUMMARY_NAME),
    re.escape(ANNOTATIONS_DIR) + "/" + re.escape(ANNOTATIONS_PREFIX) + r"-\d{5,}-of-\d{5,}"
    + re.escape(PARQUET_SUFFIX),
    re.escape(DEAD_LETTERS_DIR) + "/" + re.escape(DEAD_LETTER_PREFIX) + r"-\d{5,}-of-\d{5,}"
    + re.escape(PARQUET_SUFFIX),
    re.escape(SUMMARY_NAME) + r"\.[0-9a-f]{12}" + re.escape(PARTIAL_SUFFIX),
    f"(?:{re.escape(ANNOTATIONS_DIR)}|{re.escape(DEAD_LETTERS_DIR)})/"
    + re.escape(BEAM_TEMP_PREFIX) + f"(?:{re.escape(ANNOTATIONS_PREFIX)}|"
    f"{re.escape(DEAD_LETTER_PREFIX)})" + r"-[0-9a-f]{32}",
    re.escape(STAGING_PREFIX) + r"[^/]+",
]))


def join(base: str, *parts: str) -> str:
    """Joins path parts with "/" (local paths and every Beam filesystem URL alike)."""
    return "/".join([base.rstrip("/"), *parts])


def own_entry(relative: str) -> str | None:
    """The part of a path relative to the output folder (with "/") that names one of
    Larvatus's files or folders (OWN_PATHS): the path itself, or the run or temporary
    folder it lies in; None when the path is the user's."""
    parts = relative.split("/")
    for end in range(1, len(parts) + 1):
        head = "/".join(parts[:end])
        if OWN_PATHS.fullmatch(head):
            return head
    return None


def annotation_files_pattern(output_dir: str) -> str:
    return join(output_dir, ANNOTATIONS_DIR, ANNOTATIONS_PREFIX + "-*" + PARQUET_SUFFIX)


def dead_letter_files_pattern(output_dir: str) -> str:
    return join(output_dir, DEAD_LETTERS_DIR, DEAD_LETTER_PREFIX + "-*" + PARQUET_SUFFIX)
