"""Print where a job's output went, its counts, and a few redacted examples (never original text)."""
from __future__ import annotations

import sys
import textwrap


def show(output_dir: str, examples: int = 3, width: int = 400) -> str:
    """A short, shareable report of a finished job, or why the folder holds no finished job."""
    return report(output_dir, examples, width)[1]


def report(output_dir: str, examples: int = 3, width: int = 400) -> tuple[bool, str]:
    """Whether `output_dir` holds a complete run, and the report (see `show`).

    Reads through Beam's FileSystems (local, gs://, s3://, ...): Beam's IO layer is
    loaded here, not when the module is imported.
    """
    import pyarrow.parquet as pq

    from pipeline import storage
    from pipeline.layout import ANNOTATIONS_DIR, DEAD_LETTERS_DIR, SUMMARY_NAME

    state = storage.inspect_output(output_dir)
    if state.kind == "file":
        return False, f"not an output folder: {state.path} is a file"
    if state.kind == "free":
        return False, f"no Larvatus run in {state.path}"
    if state.kind == "incomplete":
        return False, (f"incomplete run in {state.path}: {state.problem}.\n"
                       f"  found: {state.describe_found()}\n"
                       f"  run the job again with --overwrite to replace it.")
    summary = state.summary
    files = [storage.join(state.path, name) for name in summary["files"][ANNOTATIONS_DIR]]
    dead = summary["files"][DEAD_LETTERS_DIR]
    if summary["metrics_available"]:
        counts = (f"records in {summary['records_in']}, out {summary['records_out']}, "
                  f"dead-lettered {summary['dead_lettered']} "
                  f"{summary['dead_lettered_by_reason'] or ''}").rstrip()
    else:
        counts = "records: unknown (the runner reported no metrics)"
    lines = [
        f"output: {state.path}",
        f"  {ANNOTATIONS_DIR}/: {len(files)} Parquet file(s); {DEAD_LETTERS_DIR}/: "
        f"{len(dead)} file(s); summary: {SUMMARY_NAME}",
        counts,
        f"entities by label: {summary['entities_by_label']} "
        f"(propagated mentions: {summary['entities_propagated']})",
        f"words {summary['words']}, wordpieces {summary['wordpieces']}, windows "
        f"{summary['windows']}, wall time {summary['wall_seconds']} s",
    ]
    if state.temporary:
        lines.append(f"also: {', '.join(state.temporary)} (temporary folders of another run, "
                     f"running or killed; --overwrite removes them)")
    lines.append("")
    shown = 0
    for path in files:
        if shown == examples:
            break
        with storage.open_file(path) as handle:
            rows = pq.read_table(handle, columns=["id", "redacted_text"]).to_pylist()
        for row in rows[: examples - shown]:
            text = row["redacted_text"]
            snippet = text if len(text) <= width else text[:width] + " ..."
            lines.append(f"[{row['id']}]")
            lines += textwrap.wrap(snippet, 100, initial_indent="  ", subsequent_indent="  ")
            lines.append("")
            shown += 1
    return True, "\n".join(lines)


def main(argv=None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    if len(argv) != 1:
        print("usage: python -m pipeline.show OUTPUT_DIR", file=sys.stderr)
        return 2
    complete, text = report(argv[0])
    print(text)
    return 0 if complete else 1


if __name__ == "__main__":
    sys.exit(main())
