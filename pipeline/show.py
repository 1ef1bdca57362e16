"""Print where a job's output went, its counts, and a few redacted examples (never original text)."""
from __future__ import annotations

import glob
import json
import os
import sys
import textwrap

import pyarrow.parquet as pq

from pipeline.layout import ANNOTATIONS_PREFIX, DEAD_LETTER_PREFIX, SUMMARY_NAME


def riskiest(files: list[str], count: int) -> list[tuple[int, dict]]:
    """The `count` documents with the most audit findings (ties in file order), with their rows.

    Ranks on the audit column alone, then reads only the chosen rows' text.
    """
    ranked: list[tuple[int, int, int]] = []   # (-findings, file index, row index)
    for file_index, path in enumerate(files):
        table = pq.read_table(path, columns=["audit"])
        findings = [a["findings"] if a else 0 for a in table.column("audit").to_pylist()]
        ranked += [(-f, file_index, row) for row, f in enumerate(findings)]
    chosen = sorted(ranked)[:count]
    out = []
    for negative, file_index, row in chosen:
        table = pq.read_table(files[file_index], columns=["id", "redacted_text"])
        out.append((-negative, table.slice(row, 1).to_pylist()[0]))
    return out


def show(output_dir: str, examples: int = 3, width: int = 400) -> str:
    """A short, shareable report of a finished job."""
    with open(os.path.join(output_dir, SUMMARY_NAME), encoding="utf-8") as handle:
        summary = json.load(handle)
    files = sorted(glob.glob(os.path.join(output_dir, ANNOTATIONS_PREFIX + "-*.parquet")))
    dead = sorted(glob.glob(os.path.join(output_dir, DEAD_LETTER_PREFIX + "-*.parquet")))
    lines = [
        f"output: {os.path.abspath(output_dir)}",
        f"  annotations: {len(files)} Parquet file(s); dead letters: {len(dead)} file(s); "
        f"summary: {SUMMARY_NAME}",
        f"records in {summary['records_in']}, out {summary['records_out']}, dead-lettered "
        f"{summary['dead_lettered']} {summary['dead_lettered_by_reason'] or ''}".rstrip(),
        f"entities by label: {summary['entities_by_label']} "
        f"(propagated mentions: {summary['entities_propagated']})",
        f"words {summary['words']}, wordpieces {summary['wordpieces']}, windows "
        f"{summary['windows']}, wall time {summary['wall_seconds']} s",
        "",
    ]
    audit = summary.get("audit", {})
    if audit:
        lines.append(f"audit: {audit.get('documents_flagged', 0)} document(s) with findings "
                     f"{audit.get('findings_by_kind', {})}; riskiest first:")
        lines.append("")
    for findings, row in riskiest(files, examples):
        text = row["redacted_text"]
        snippet = text if len(text) <= width else text[:width] + " ..."
        lines.append(f"[{row['id']}] audit findings: {findings}")
        lines += textwrap.wrap(snippet, 100, initial_indent="  ", subsequent_indent="  ")
        lines.append("")
    return "\n".join(lines)


def main(argv=None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    if len(argv) != 1:
        print("usage: python -m pipeline.show OUTPUT_DIR", file=sys.stderr)
        return 2
    print(show(argv[0]))
    return 0


if __name__ == "__main__":
    sys.exit(main())
