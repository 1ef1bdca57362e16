"""Print where a job's output went, its counts, and a few redacted examples (never original text)."""
from __future__ import annotations

import os
import sys
import textwrap

import pyarrow.parquet as pq

from larvatus.models.command_line import ArgumentParser, parse_or_report
from larvatus import remote, storage
from larvatus.layout import (
    SUMMARY_NAME, annotation_files_pattern, dead_letter_files_pattern, join,
)

EXAMPLE_COUNT = 3
DESCRIPTION = """Prints a finished job's counts, entities by label, audit totals and the redacted
text of the riskiest documents (never the original text). OUTPUT_DIR may be a local folder
or any Beam filesystem path (gs://, s3://, ...). Exit status 1 for an incomplete run."""
EXAMPLES = """examples:
  larvatus show out/
  larvatus show out/ --examples 10
  larvatus show gs://my-bucket/larvatus/out/"""


def _read_table(path: str, columns: list[str]):
    with storage.open_binary(path) as handle:
        return pq.read_table(handle, columns=columns)


def riskiest_positions(files: list[str], count: int) -> list[tuple[int, int, int]]:
    """(findings, file index, row index) of the `count` documents with the most audit
    findings (ties in file order): a row's position, since ids may repeat."""
    ranked: list[tuple[int, int, int]] = []   # (-findings, file index, row index)
    for file_index, path in enumerate(files):
        table = _read_table(path, ["audit"])
        findings = [a["findings"] if a else 0 for a in table.column("audit").to_pylist()]
        ranked += [(-f, file_index, row) for row, f in enumerate(findings)]
    return [(-negative, file_index, row) for negative, file_index, row in sorted(ranked)[:count]]


def riskiest(files: list[str], count: int) -> list[tuple[int, dict]]:
    """The `count` documents with the most audit findings (ties in file order), with their rows.

    Ranks on the audit column alone, then reads only the chosen rows' text.
    """
    out = []
    for findings, file_index, row in riskiest_positions(files, count):
        table = _read_table(files[file_index], ["id", "redacted_text"])
        out.append((findings, table.slice(row, 1).to_pylist()[0]))
    return out


class IncompleteRun(Exception):
    """The folder holds no finished run (no readable _SUMMARY.json); `status` is the exit status."""

    status = 1


class NoRunThere(IncompleteRun):
    """The folder does not exist: a wrong argument (exit status 2, as `run` gives)."""

    status = 2


def finished_summary(output_dir: str) -> dict:
    """A finished run's _SUMMARY.json; IncompleteRun (saying which case) otherwise."""
    try:
        summary = storage.read_json(join(output_dir, SUMMARY_NAME))
    except storage.UnreadableJson as error:
        raise IncompleteRun(f"{output_dir}: incomplete run: {error}. Run the job again "
                            f"with --overwrite.") from None
    if summary is None:
        leftovers, _ = storage.previous_output(output_dir)
        if not leftovers:
            if storage.is_local(output_dir) and not os.path.isdir(output_dir):
                raise NoRunThere(f"{output_dir}: no such folder (give a finished job's --output)")
            raise IncompleteRun(f"{output_dir}: no Larvatus run there (no {SUMMARY_NAME} "
                                f"and none of a run's files)")
        raise IncompleteRun(
            f"{output_dir}: incomplete run: no {SUMMARY_NAME} (the run was interrupted, failed "
            f"or is still going; {len(leftovers)} files or folders of it are there). Run the "
            f"job again with --overwrite.")
    return summary


def check_failures(summary: dict) -> list[str]:
    """What the run's checks found wrong (too many dead letters, counts unconfirmed), if anything."""
    failures = list((summary.get("checks") or {}).get("failures") or [])
    if not failures and not summary.get("counts_add_up", False):
        failures.append("the counts were not confirmed to add up"
                        + ("" if summary.get("metrics_available", True)
                           else " (the runner returned no metrics)"))
    return failures


def _hidden_and_kept(summary: dict) -> str:
    """Which of the labels found were hidden and which kept, as the report's table says."""
    redacted = set(summary.get("options", {}).get("redact_labels", []))
    found = sorted(summary.get("entities_by_label", {}))
    hidden = [label for label in found if label in redacted]
    kept = [label for label in found if label not in redacted]
    return (f"hidden (in --redact-labels): {', '.join(hidden) or 'none'}; "
            f"kept as written: {', '.join(kept) or 'none'}")


def show(output_dir: str, examples: int = EXAMPLE_COUNT, width: int = 400) -> str:
    """A short, shareable report of a finished job; raises IncompleteRun otherwise."""
    summary = finished_summary(output_dir)
    files = storage.list_files(annotation_files_pattern(output_dir))
    dead = storage.list_files(dead_letter_files_pattern(output_dir))
    lines = [
        f"output: {storage.absolute(output_dir)}",
        f"  annotations: {len(files)} Parquet file(s); dead letters: {len(dead)} file(s); "
        f"summary: {SUMMARY_NAME}",
        f"records in {summary['records_in']}, out {summary['records_out']}, dead-lettered "
        f"{summary['dead_lettered']} {summary['dead_lettered_by_reason'] or ''}".rstrip(),
    ]
    failures = (summary.get("checks") or {}).get("failures")
    if failures:
        lines += [f"FAILED: {failure}" for failure in failures]
    elif not summary.get("counts_add_up", False):
        lines.append("WARNING: the counts were not confirmed to add up"
                     + ("" if summary.get("metrics_available", True)
                        else " (the runner returned no metrics)"))
    lines += [
        f"entities by label: {summary['entities_by_label']} "
        f"(propagated mentions: {summary['entities_propagated']})",
        _hidden_and_kept(summary),
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


def main(argv=None, prog: str = "larvatus show") -> int:
    parser = ArgumentParser(prog=prog, description=DESCRIPTION, epilog=EXAMPLES)
    parser.add_argument("output_dir", metavar="OUTPUT_DIR", help="A finished job's --output.")
    parser.add_argument("--examples", type=int, default=EXAMPLE_COUNT,
                        help=f"Documents shown, riskiest first. Default: {EXAMPLE_COUNT}.")
    remote.add_store_arguments(parser)
    args, status = parse_or_report(parser, argv)
    if args is None:
        return status
    try:
        remote.use_store([args.output_dir], remote.store_options_from_args(args))
    except remote.StoreError as error:
        print(f"{prog}: error: {error}", file=sys.stderr)
        return 2
    try:
        print(show(args.output_dir, args.examples))
    except IncompleteRun as error:
        print(f"{prog}: error: {error}", file=sys.stderr)
        return error.status
    return 0


if __name__ == "__main__":
    from larvatus.arguments import exit_with

    exit_with(main(), hard=True)   # read-only: leave at once (see exit_with)
