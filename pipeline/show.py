"""Print where a job's output went, its counts, and a few redacted examples (never original text)."""
from __future__ import annotations

import json
import os
import sys
import textwrap
from typing import Optional, Sequence

import pyarrow.parquet as pq

from pipeline.arguments import ArgumentParser, UsageError, report_usage_error
from pipeline.layout import SUMMARY_NAME, annotation_files, dead_letter_files

EXAMPLES = """examples:
  larvatus show out/
  larvatus show out/ --examples 10 --width 2000

Reads only the redacted text: nothing printed here quotes the original documents."""


def show(output_dir: str, examples: int = 3, width: int = 400) -> str:
    """A short, shareable report of a finished job."""
    with open(os.path.join(output_dir, SUMMARY_NAME), encoding="utf-8") as handle:
        summary = json.load(handle)
    files = annotation_files(output_dir)
    dead = dead_letter_files(output_dir)
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
    shown = 0
    for path in files:
        for row in pq.read_table(path, columns=["id", "redacted_text"]).to_pylist():
            if shown == examples:
                break
            text = row["redacted_text"]
            snippet = text if len(text) <= width else text[:width] + " ..."
            lines.append(f"[{row['id']}]")
            lines += textwrap.wrap(snippet, 100, initial_indent="  ", subsequent_indent="  ")
            lines.append("")
            shown += 1
    return "\n".join(lines)


def parser(prog: str) -> ArgumentParser:
    result = ArgumentParser(prog=prog, description=__doc__, epilog=EXAMPLES)
    result.add_argument("output", metavar="OUT", help="The --output folder of a finished run.")
    result.add_argument("--examples", type=int, default=3,
                        help="How many redacted documents to print. Default: 3.")
    result.add_argument("--width", type=int, default=400,
                        help="Characters of each document to print. Default: 400.")
    return result


def main(argv: Optional[Sequence[str]] = None, prog: str = "larvatus show") -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    try:
        args = parser(prog).parse_args(argv)
    except UsageError as error:
        return report_usage_error(prog, error, f"See '{prog} --help'.")
    if not os.path.isfile(os.path.join(args.output, SUMMARY_NAME)):
        return report_usage_error(
            prog, f"{args.output} holds no {SUMMARY_NAME}: not the output of a finished "
                  f"larvatus run")
    print(show(args.output, examples=args.examples, width=args.width))
    return 0


if __name__ == "__main__":
    sys.exit(main())
