"""Print where a job's output went, its counts, and a few redacted examples (never original text)."""
from __future__ import annotations

import argparse
import math
import os
import sys
import textwrap
import unicodedata
from typing import Callable, Optional

import pyarrow as pa
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


def count_argument(value: str) -> int:
    """argparse type: a whole number, 0 or more."""
    try:
        number = int(value)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{value!r} is not a whole number") from None
    if number < 0:
        raise argparse.ArgumentTypeError(f"{value!r} is negative (give 0 or more)")
    return number


# Characters a terminal may act on instead of showing: C0 and C1 controls (ESC starts
# colour, cursor and title sequences) and the bidirectional overrides that reorder a line.
_BIDI_CONTROLS = frozenset("\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069\u200e\u200f")


def printable(text: str) -> str:
    """`text` safe to print on a terminal: control and bidi characters written as escapes
    (`\\x1b`, `\\u202e`); tabs and line breaks become spaces."""
    if text.isprintable():
        return text
    out = []
    for char in text:
        if char in "\t\n\r":
            out.append(" ")
        elif char in _BIDI_CONTROLS or unicodedata.category(char) in ("Cc", "Cs"):
            out.append(char.encode("unicode_escape", "backslashreplace").decode("ascii"))
        else:
            out.append(char)
    return "".join(out)


class IncompleteRun(Exception):
    """The folder holds no finished run (no readable _SUMMARY.json); `status` is the exit status."""

    status = 1


class NoRunThere(IncompleteRun):
    """The folder does not exist, or is a file: a wrong argument (exit status 2, as `run` gives)."""

    status = 2


class DamagedOutput(IncompleteRun):
    """A finished run's files that cannot be read as Larvatus wrote them (exit status 1)."""


def _type_problem(name: str, found: pa.DataType) -> Optional[str]:
    """Why column `name` of this type is not as Larvatus writes it, or None. `entities`
    varies with the options (--keep-text, --emit-embeddings add fields): the fields that
    show and report read must be there."""
    from larvatus.schemas import annotation_schema

    if name == "entities":
        fields = found.value_type if pa.types.is_list(found) else None
        if (fields is not None and pa.types.is_struct(fields)
                and all(fields.get_field_index(f) >= 0 for f in ("start", "end", "label"))
                and pa.types.is_integer(fields.field("start").type)
                and pa.types.is_integer(fields.field("end").type)
                and pa.types.is_string(fields.field("label").type)):
            return None
        return f"column 'entities' has type {str(found)[:80]}, not the type Larvatus writes"
    schema = annotation_schema(keep_text=True)
    if name in schema.names and found != schema.field(name).type:
        return f"column {name!r} has type {str(found)[:80]}, not the type Larvatus writes"
    return None


def read_annotations(path: str, columns: list[str]) -> pa.Table:
    """The columns of an annotations file; DamagedOutput, in one line, when it is not one."""
    try:
        with storage.open_binary(path) as handle:
            table = pq.read_table(handle, columns=columns)
    except (pa.ArrowException, OSError, ValueError) as error:
        first_line = (str(error).strip().splitlines() or [type(error).__name__])[0][:200]
        raise DamagedOutput(f"{path}: not a readable annotations file ({first_line})") from None
    for name in columns:
        problem = _type_problem(name, table.schema.field(name).type)
        if problem:
            raise DamagedOutput(f"{path}: {problem}")
    return table


def riskiest_positions(files: list[str], count: int) -> list[tuple[int, int, int]]:
    """(findings, file index, row index) of the `count` documents with the most audit
    findings (ties in file order): a row's position, since ids may repeat."""
    ranked: list[tuple[int, int, int]] = []   # (-findings, file index, row index)
    for file_index, path in enumerate(files):
        table = read_annotations(path, ["audit"])
        findings = [a["findings"] if a else 0 for a in table.column("audit").to_pylist()]
        ranked += [(-f, file_index, row) for row, f in enumerate(findings)]
    return [(-negative, file_index, row) for negative, file_index, row in sorted(ranked)[:count]]


def riskiest(files: list[str], count: int) -> list[tuple[int, dict]]:
    """The `count` documents with the most audit findings (ties in file order), with their rows.

    Ranks on the audit column alone, then reads only the chosen rows' text.
    """
    out = []
    for findings, file_index, row in riskiest_positions(files, count):
        table = read_annotations(files[file_index], ["id", "redacted_text"])
        out.append((findings, table.slice(row, 1).to_pylist()[0]))
    return out


def _count(value) -> bool:
    return isinstance(value, int) and not isinstance(value, bool) and value >= 0


def _seconds(value) -> bool:
    return (isinstance(value, (int, float)) and not isinstance(value, bool)
            and math.isfinite(value) and value >= 0)


def _counts_by_name(value) -> bool:
    return isinstance(value, dict) and all(isinstance(k, str) and _count(v) for k, v in value.items())


def _names(value) -> bool:
    return isinstance(value, list) and all(isinstance(item, str) for item in value)


def _audit(value) -> bool:
    return (isinstance(value, dict) and _count(value.get("documents_flagged", 0))
            and _counts_by_name(value.get("findings_by_kind", {})))


def _checks(value) -> bool:
    return isinstance(value, dict) and _names(value.get("failures") or [])


def _options(value) -> bool:
    return (isinstance(value, dict) and isinstance(value.get("keep_text", False), bool)
            and _names(value.get("redact_labels", [])))


def _model(value) -> bool:
    return isinstance(value, dict) and isinstance(value.get("name", ""), str)


# _SUMMARY.json fields that show and report read: (field, required, check, what it must be).
SUMMARY_FIELDS: tuple[tuple[str, bool, Callable[[object], bool], str], ...] = (
    ("records_in", True, _count, "a count"),
    ("records_out", True, _count, "a count"),
    ("dead_lettered", True, _count, "a count"),
    ("dead_lettered_by_reason", True, _counts_by_name, "counts by reason"),
    ("entities_by_label", True, _counts_by_name, "counts by label"),
    ("entities_propagated", True, _count, "a count"),
    ("words", True, _count, "a count"),
    ("wordpieces", True, _count, "a count"),
    ("windows", True, _count, "a count"),
    ("wall_seconds", True, _seconds, "a number of seconds"),
    ("counts_add_up", False, lambda v: isinstance(v, bool), "true or false"),
    ("metrics_available", False, lambda v: isinstance(v, bool), "true or false"),
    ("audit", False, _audit, "audit totals"),
    ("checks", False, _checks, "the checks and their failures"),
    ("options", False, _options, "the run's options"),
    ("model", False, _model, "the model's name and sha256"),
)


def summary_problem(summary: dict) -> Optional[str]:
    """What makes `summary` unlike a _SUMMARY.json that Larvatus writes, or None. Names the
    field, never its value (a shared folder's file may hold anything)."""
    for name, required, check, meaning in SUMMARY_FIELDS:
        if name not in summary:
            if required:
                return f"{name!r} is missing"
        elif not check(summary[name]):
            return f"{name!r} is not {meaning}"
    return None


def finished_summary(output_dir: str) -> dict:
    """A finished run's _SUMMARY.json; IncompleteRun (saying which case) otherwise."""
    if storage.is_local(output_dir) and os.path.exists(output_dir) \
            and not os.path.isdir(output_dir):
        raise NoRunThere(f"{output_dir}: is a file, not a folder (give a finished job's "
                         f"--output folder)")
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
    problem = summary_problem(summary)
    if problem:
        raise DamagedOutput(f"{join(output_dir, SUMMARY_NAME)}: not a summary Larvatus wrote: "
                            f"{problem}. Run the job again with --overwrite.")
    return summary


def check_failures(summary: dict) -> list[str]:
    """What the run's checks found wrong (too many dead letters, counts unconfirmed), if anything."""
    failures = list((summary.get("checks") or {}).get("failures") or [])
    if not failures and not summary.get("counts_add_up", False):
        failures.append("the counts were not confirmed to add up"
                        + ("" if summary.get("metrics_available", True)
                           else " (the runner returned no metrics)"))
    return failures


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
        lines += [f"FAILED: {printable(failure)}" for failure in failures]
    elif not summary.get("counts_add_up", False):
        lines.append("WARNING: the counts were not confirmed to add up"
                     + ("" if summary.get("metrics_available", True)
                        else " (the runner returned no metrics)"))
    lines += [
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
        text = row["redacted_text"] or ""
        snippet = printable(text if len(text) <= width else text[:width] + " ...")
        lines.append(f"[{printable(str(row['id']))}] audit findings: {findings}")
        lines += textwrap.wrap(snippet, 100, initial_indent="  ", subsequent_indent="  ")
        lines.append("")
    return "\n".join(lines)


def main(argv=None, prog: str = "larvatus show") -> int:
    parser = ArgumentParser(prog=prog, description=DESCRIPTION, epilog=EXAMPLES)
    parser.add_argument("output_dir", metavar="OUTPUT_DIR", help="A finished job's --output.")
    parser.add_argument("--examples", type=count_argument, default=EXAMPLE_COUNT,
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
    from larvatus.pipes import guard_standard_streams

    guard_standard_streams()
    exit_with(main(), hard=True)   # read-only: leave at once (see exit_with)
