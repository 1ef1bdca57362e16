"""Digests of every output row on the sample corpus and the CoNLL validation text, to show two commits give identical rows."""
from __future__ import annotations

import argparse
import hashlib
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Optional, Sequence

if __package__ in (None, ""):  # `python bench/rows_identical.py`: import bench.* from the root
    sys.path[0] = str(Path(__file__).resolve().parents[1])

from bench.corpus import CONLL_VALID, SAMPLE, conll_documents, write_jsonl  # noqa: E402

USAGE = """Usage (from the repository root, in the venv):

    python bench/rows_identical.py                  # sample news and CoNLL validation, default options
    python bench/rows_identical.py --json a.json    # also write the digests to a file
    python bench/rows_identical.py -- --placeholder label   # extra `larvatus run` options
    python bench/rows_identical.py --drop-fields entities.source,entities.recognizer

`--drop-fields` leaves the named columns (`column`) or fields of a column's structs
(`column.field`, in each item of a list) out of the digests: two commits that differ only
by a new field then show equal digests.

Run it on two commits and compare the printed digests: equal digests mean every row of
annotations/ and dead_letters/ is the same, column by column.
"""


def canonical(value):
    """A row's value as plain JSON types, floats by their shortest repr, bytes as hex."""
    if isinstance(value, dict):
        return {key: canonical(item) for key, item in value.items()}
    if isinstance(value, (list, tuple)):
        return [canonical(item) for item in value]
    if isinstance(value, float):
        return repr(value)
    if isinstance(value, bytes):
        return value.hex()
    return value


def drop_fields(row: dict, paths: Sequence[str]) -> dict:
    """The row without the columns (`name`) or struct fields (`name.field`, in a struct or in
    each struct of a list) that `paths` name; absent ones are ignored."""
    for path in paths:
        column, _, field = path.partition(".")
        if not field:
            row.pop(column, None)
            continue
        value = row.get(column)
        for item in value if isinstance(value, list) else [value]:
            if isinstance(item, dict):
                item.pop(field, None)
    return row


def folder_rows(folder: Path, input_dir: str, drop: Sequence[str] = ()) -> list[dict]:
    """Every row of the Parquet files in `folder`, sources relative to the input folder,
    the `drop` fields left out (`drop_fields`), sorted by id and source."""
    import pyarrow.parquet as pq

    rows = []
    for path in sorted(folder.glob("*.parquet")):
        for row in pq.read_table(path).to_pylist():
            if isinstance(row.get("source"), str):
                row["source"] = row["source"].replace(input_dir.rstrip("/") + "/", "")
            rows.append(canonical(drop_fields(row, drop)))
    return sorted(rows, key=lambda row: (str(row.get("id")), str(row.get("source"))))


def digest(rows: list[dict]) -> str:
    """sha256 of the rows' canonical JSON dump (sorted keys, one row a line)."""
    text = "\n".join(json.dumps(row, sort_keys=True, ensure_ascii=False) for row in rows)
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def run_job(input_path: Path, output: Path, extra: Sequence[str]) -> None:
    """Runs `larvatus run` on one file in a subprocess; fails loudly if the job fails."""
    command = [sys.executable, "-m", "larvatus.cli", "run", "--input", str(input_path),
               "--output", str(output), "--progress", "off", "-q", *extra]
    subprocess.run(command, check=True)


def corpus_digests(name: str, input_path: Path, work: Path, extra: Sequence[str],
                   drop: Sequence[str] = ()) -> dict:
    """The job's row counts and digests for one input file, the `drop` fields left out."""
    output = work / f"out-{name}"
    run_job(input_path, output, extra)
    result = {}
    for folder in ("annotations", "dead_letters"):
        rows = folder_rows(output / folder, str(input_path.parent), drop)
        result[folder] = {"rows": len(rows), "sha256": digest(rows)}
    return result


def inputs(work: Path, conll: Path) -> dict[str, Path]:
    """The input files: the sample news corpus and the CoNLL validation documents as JSONL."""
    records, _ = conll_documents(conll)
    conll_path = work / "conll-valid.jsonl"
    write_jsonl(records, conll_path)
    return {"sample-news": SAMPLE, "conll-valid": conll_path}


def parse_args(argv: Optional[Sequence[str]] = None) -> tuple[argparse.Namespace, list[str]]:
    argv = list(sys.argv[1:] if argv is None else argv)
    extra = argv[argv.index("--") + 1:] if "--" in argv else []
    argv = argv[:argv.index("--")] if "--" in argv else argv
    parser = argparse.ArgumentParser(description=__doc__, epilog=USAGE,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--conll", type=Path, default=CONLL_VALID, help="CoNLL-2003 validation file")
    parser.add_argument("--json", type=Path, default=None, help="also write the digests here")
    parser.add_argument("--drop-fields", default="",
                        help="comma-separated columns or column.field struct fields to leave "
                             "out of the digests (entities.source,entities.recognizer)")
    return parser.parse_args(argv), extra


def main(argv: Optional[Sequence[str]] = None) -> int:
    args, extra = parse_args(argv)
    results = {}
    with tempfile.TemporaryDirectory(prefix="larvatus-rows-") as tmp:
        work = Path(tmp)
        for name, path in inputs(work, args.conll).items():
            drop = [f.strip() for f in args.drop_fields.split(",") if f.strip()]
            results[name] = corpus_digests(name, path, work, extra, drop)
            for folder, found in results[name].items():
                print(f"{name} {folder}: {found['rows']} rows sha256 {found['sha256']}", flush=True)
    if args.json:
        args.json.write_text(json.dumps(results, indent=2, sort_keys=True) + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    os.environ.setdefault("PYTHONHASHSEED", "0")
    sys.exit(main())
