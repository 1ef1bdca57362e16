"""`larvatus report OUT`: a self-contained HTML page of a finished job: counts, audit findings marked inline, every document."""
from __future__ import annotations

import html
import os
import sys
import tempfile
from typing import Optional, Sequence

from larvatus.models.command_line import ArgumentParser, parse_or_report
from larvatus import remote, storage
from larvatus.layout import annotation_files_pattern, join
from larvatus.show import (
    IncompleteRun, check_failures, count_argument, finished_summary, read_annotations,
    riskiest_positions,
)

REPORT_NAME = "report.html"
SAMPLE_CHARS = 3000   # of each sample document's redacted text
# Placeholder colours: names warm, places green, organisations blue, identifiers grey.
COLORS = {"PER": "#f6b26b", "LOC": "#93c47d", "ORG": "#6fa8dc", "MISC": "#c27ba0",
          "ADDRESS": "#b6d7a8", "DATE": "#d9d2e9"}
PATTERN_COLOR = "#cccccc"

CSS = """
body { font-family: system-ui, -apple-system, Segoe UI, sans-serif; margin: 2em auto;
       max-width: 70em; color: #222; }
h1 { font-size: 1.6em; } h2 { font-size: 1.2em; margin-top: 1.6em; }
table { border-collapse: collapse; margin: .5em 0; }
td, th { border: 1px solid #ddd; padding: .25em .7em; text-align: left; }
td.n { text-align: right; font-variant-numeric: tabular-nums; }
.banner { background: #fce8e6; border: 2px solid #d93025; padding: .8em; font-weight: bold; }
.ok { color: #188038; } .bad { color: #d93025; font-weight: bold; }
.doc { border: 1px solid #eee; border-radius: 6px; padding: .2em 1em; margin: 1em 0; }
.meta { color: #666; font-size: .9em; }
.text { white-space: pre-wrap; line-height: 1.9; }
mark.entity { padding: .1em .3em; border-radius: .3em; color: #222; }
mark.finding { background: #fff; outline: 2px solid #d93025; padding: 0 .15em; }
details { border-bottom: 1px solid #eee; padding: .2em 0; }
"""
# Documents listed under "All documents" (each reachable by its id in the search box).
MAX_DOCUMENTS = 1000
SEARCH_JS = """
function larvatusFilter(q) {
  q = q.toLowerCase();
  for (const d of document.querySelectorAll('details[data-id]'))
    d.style.display = d.dataset.id.toLowerCase().includes(q) ? '' : 'none';
}
"""


def _text(value) -> str:
    """Any value read from a file, as HTML text (escaped, quotes included)."""
    return html.escape(str(value), quote=True)


def _count(value: int) -> str:
    """A count read from a file, with thousands separators, as HTML text."""
    return _text(f"{value:,}")


def _table(rows: Sequence[tuple], header: tuple) -> str:
    head = "".join(f"<th>{html.escape(str(h))}</th>" for h in header)
    body = "".join(
        "<tr>" + "".join(
            f'<td class="n">{v:,}</td>' if isinstance(v, int) else f"<td>{html.escape(str(v))}</td>"
            for v in row) + "</tr>" for row in rows)
    return f"<table><tr>{head}</tr>{body}</table>" if rows else "<p>none</p>"


def render_marked(text: str, placeholders: Sequence[tuple],
                  findings: Sequence[tuple[int, int, str]] = ()) -> str:
    """Redacted text as HTML: each placeholder a coloured mark showing its text once (its
    label in the tooltip, or the tooltip given as a fourth item: `provenance_titles`), each
    audit finding outlined in red with its kind in the tooltip."""
    marks = sorted([(p[0], p[1], "p", p[2], p[3] if len(p) > 3 else p[2]) for p in placeholders]
                   + [(s, e, "f", kind, kind) for s, e, kind in findings])
    out, cursor = [], 0
    for start, end, what, name, title in marks:
        if start < cursor or end > len(text) or end <= start:
            continue
        out.append(html.escape(text[cursor:start]))
        inner = html.escape(text[start:end])
        if what == "p":
            color = COLORS.get(name, PATTERN_COLOR)
            out.append(f'<mark class="entity" style="background:{color}" '
                       f'title="{html.escape(title)}">{inner}</mark>')
        else:
            out.append(f'<mark class="finding" title="audit: {html.escape(name)}">{inner}</mark>')
        cursor = end
    out.append(html.escape(text[cursor:]))
    return f"<div class='text'>{''.join(out)}</div>"


def provenance_titles(labels: Sequence[str], entities: Sequence[dict]) -> list[str]:
    """Tooltips for marks of these labels standing for these entities, one for one: the label
    and where the entity came from ("PER (model: PER)", "ORG (rule: legal_form)"); the labels
    alone when the entities do not match them or carry no source (an older run's rows)."""
    if len(entities) != len(labels) or not all(e.get("source") for e in entities):
        return list(labels)
    return [f"{label} ({e['source']}: {e['recognizer']})" for label, e in zip(labels, entities)]


def _marks(row: dict, length: int) -> tuple[list, list]:
    """The placeholders (with their provenance: the i-th redacted entity is the i-th
    replacement) and the audit findings within the first `length` characters."""
    replacements = row["replacements"] or []
    redacted = sorted((e for e in row.get("entities") or () if e.get("redacted")),
                      key=lambda e: e["start"])
    titles = provenance_titles([r["label"] for r in replacements], redacted)
    placeholders = [(r["start"], r["end"], r["label"], title)
                    for r, title in zip(replacements, titles) if r["end"] <= length]
    audit = row.get("audit") or {}
    findings = [(f["start"], f["end"], f["kind"]) for f in audit.get("spans") or []
                if f["end"] <= length]
    return placeholders, findings


def all_documents(files: list[str], limit: int = MAX_DOCUMENTS) -> str:
    """Every document (up to `limit`), folded, with a search box on the id."""
    parts, shown, total = [], 0, 0
    for path in files:
        table = read_annotations(path, ["id", "redacted_text", "replacements", "audit",
                                        "entities"])
        for row in table.to_pylist():
            total += 1
            if shown >= limit:
                continue
            shown += 1
            redacted = row["redacted_text"] or ""
            text = redacted[:SAMPLE_CHARS]
            more = len(redacted) - len(text)
            findings = (row.get("audit") or {}).get("findings", 0)
            doc_id = _text(row["id"])
            parts.append(
                f"<details data-id=\"{doc_id}\"><summary>{doc_id} &middot; audit findings "
                f"{_text(findings)}</summary>{render_marked(text, *_marks(row, len(text)))}"
                + (f"<p class='meta'>{more:,} more characters not shown</p>" if more else "")
                + "</details>")
    note = "" if total <= limit else (
        f"<p class='meta'>{limit:,} of {total:,} documents listed; raise --max-documents "
        f"to list more.</p>")
    return (f"<h2>All documents ({total:,})</h2>"
            "<p><input type='search' placeholder='search by id' "
            "oninput='larvatusFilter(this.value)'></p>" + note + "".join(parts))


def build_report(output_dir: str, samples: int = 5, max_documents: int = MAX_DOCUMENTS,
                 estimate_dir: Optional[str] = None) -> str:
    """The report's HTML; raises IncompleteRun for a folder without a finished run.
    `estimate_dir`: a `larvatus estimate` folder whose table joins the page."""
    summary = finished_summary(output_dir)
    files = storage.list_files(annotation_files_pattern(output_dir))
    kept_text = bool(summary.get("options", {}).get("keep_text"))
    parts = [f"<h1>Larvatus report</h1><p class='meta'>{_text(output_dir)}</p>"]
    if kept_text:
        parts.append("<p class='banner'>WARNING: this run kept the original text "
                     "(--keep-text). This page shows it: it is NOT shareable.</p>")
    failures = check_failures(summary)
    parts.append(
        f"<p>Records: {_count(summary['records_in'])} in, {_count(summary['records_out'])} "
        f"annotated, {_count(summary['dead_lettered'])} dead-lettered. "
        + ("<span class='ok'>Every record is accounted for.</span>" if not failures else
           " ".join(f"<span class='bad'>FAILED: {_text(f)}.</span>" for f in failures))
        + f" Words: {_count(summary['words'])}; wall time {_text(summary['wall_seconds'])} s."
          f" Model: {_text(summary.get('model', {}).get('name', '?'))}.</p>")
    redacted = set(summary.get("options", {}).get("redact_labels", []))
    parts.append("<h2>Entities by label</h2>" + _table(
        [(label, count, "yes" if label in redacted else "no") for label, count in sorted(
            summary.get("entities_by_label", {}).items(), key=lambda kv: -kv[1])],
        ("label", "entities", "in --redact-labels"))
        + "<p class='meta'>Entities of a label not in --redact-labels are kept as written. "
          "A span the model calls MISC is hidden only when it gives names, places and "
          "organisations together at least half its probability, and it is then counted and "
          "shown under that label ([ORG], [LOC], [PER]), never as [MISC].</p>")
    parts.append("<h2>Dead letters by reason</h2>" + _table(
        sorted(summary.get("dead_lettered_by_reason", {}).items(), key=lambda kv: -kv[1]),
        ("reason", "records")))
    audit = summary.get("audit", {})
    parts.append(
        f"<h2>Audit: what still looks personal after redaction</h2><p>"
        f"{_count(audit.get('documents_flagged', 0))} document(s) with findings.</p>"
        + _table(sorted(audit.get("findings_by_kind", {}).items(), key=lambda kv: -kv[1]),
                 ("kind", "findings")))
    parts.append("<h2>Riskiest documents first (redacted text, placeholders highlighted)</h2>")
    parts.append("<p class='meta'>Placeholders are coloured by label; what the audit still "
                 "finds is outlined in red (hover for its kind).</p>")
    for findings, file_index, row in riskiest_positions(files, samples):
        parts.append(_sample(files[file_index], row, findings, kept_text))
    if estimate_dir is not None:
        from larvatus.estimate import report_section

        parts.append(report_section(estimate_dir))
    parts.append(all_documents(files, max_documents))
    return ("<!DOCTYPE html><html lang='en'><head><meta charset='utf-8'>"
            f"<title>Larvatus report</title><style>{CSS}</style>"
            f"<script>{SEARCH_JS}</script></head><body>"
            + "\n".join(parts) + "</body></html>")


def _sample(path: str, position: int, findings: int, kept_text: bool) -> str:
    """The document at row `position` of the annotation file `path` (ids may repeat)."""
    columns = ["id", "redacted_text", "replacements", "audit", "entities"] + (
        ["text"] if kept_text else [])
    table = read_annotations(path, columns)
    row = table.slice(position, 1).to_pylist()[0]
    text = (row["redacted_text"] or "")[:SAMPLE_CHARS]
    out = [f"<div class='doc'><p class='meta'>id {_text(row['id'])} &middot; "
           f"audit findings {_text(findings)}</p>{render_marked(text, *_marks(row, len(text)))}"]
    if kept_text:
        original = (row["text"] or "")[:SAMPLE_CHARS]
        shown = [e for e in row["entities"] or [] if e["end"] <= len(original)]
        ents = [(e["start"], e["end"], e["label"], title) for e, title in
                zip(shown, provenance_titles([e["label"] for e in shown], shown))]
        out.append("<p class='meta'>original text (kept with --keep-text)</p>"
                   + render_marked(original, ents))
    out.append("</div>")
    return "".join(out)


def main(argv: Optional[Sequence[str]] = None, prog: str = "larvatus report") -> int:
    parser = ArgumentParser(
        prog=prog, description="Write a finished job's HTML report: counts per label, dead-"
        "letter reasons, the audit, the redacted text of the riskiest documents with "
        "their placeholders highlighted and the audit's findings outlined in red, and every "
        "document under a search box. The original text appears only "
        "if the run kept it (--keep-text), under a warning banner.",
        epilog="examples:\n  larvatus report out/            # writes out/report.html\n"
               "  larvatus report out/ --output /tmp/r.html --samples 10")
    parser.add_argument("output_dir", help="A finished job's --output folder.")
    parser.add_argument("--output", "-o", "--html", dest="html", default=None,
                        metavar="FILE",
                        help=f"Where to write the page. Default: OUTPUT_DIR/{REPORT_NAME}.")
    parser.add_argument("--samples", type=count_argument, default=5,
                        help="Documents shown open, riskiest first. Default: 5.")
    parser.add_argument("--max-documents", "--max_documents", dest="max_documents",
                        type=count_argument,
                        default=MAX_DOCUMENTS,
                        help="Documents listed under 'All documents', each found by its id "
                             f"in the page's search box. Default: {MAX_DOCUMENTS}.")
    parser.add_argument("--estimate", default=None, metavar="DIR",
                        help="A `larvatus estimate` folder: its table of what gets through, "
                             "with 95%% intervals, joins the page.")
    remote.add_store_arguments(parser)
    args, status = parse_or_report(parser, argv)
    if args is None:
        return status
    try:
        remote.use_store([args.output_dir, args.html], remote.store_options_from_args(args))
    except remote.StoreError as error:
        print(f"{prog}: error: {error}", file=sys.stderr)
        return 2
    try:
        page = build_report(args.output_dir, args.samples, args.max_documents, args.estimate)
    except IncompleteRun as error:
        print(f"{prog}: error: {error}", file=sys.stderr)
        return error.status
    except ValueError as error:   # an unreadable --estimate folder
        print(f"{prog}: error: {error}", file=sys.stderr)
        return 2
    target = args.html or join(args.output_dir, REPORT_NAME)
    try:
        if storage.is_local(target):
            write_local_page(target, page)
        else:
            with _remote_text(target) as handle:
                handle.write(page)
    except OSError as error:
        print(f"{prog}: error: cannot write {target}: {error.strerror or error}", file=sys.stderr)
        return 2
    print(f"report: {target} (open it in a browser: file://{storage.absolute(target)})"
          if storage.is_local(target) else f"report: {target}")
    return 0


def write_local_page(target: str, page: str) -> None:
    """Writes the page to a local `target`, making its missing folders. The page is written
    beside it and renamed into place: a symlink at `target` is replaced, never followed out
    of the folder, and a reader never sees half a page."""
    folder = os.path.dirname(os.path.abspath(target))
    if os.path.isdir(target) and not os.path.islink(target):
        raise IsADirectoryError(21, "it is a folder; give a file name, such as "
                                    f"{os.path.join(target, REPORT_NAME)}")
    os.makedirs(folder, exist_ok=True)
    handle, private = tempfile.mkstemp(prefix=".report-", suffix=".html.partial", dir=folder)
    try:
        with os.fdopen(handle, "w", encoding="utf-8") as out:
            out.write(page)
        os.chmod(private, 0o644 & ~_umask())
        os.replace(private, target)
    except BaseException:
        if os.path.exists(private):
            os.unlink(private)
        raise


def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask


class _remote_text:
    """A text file on a Beam filesystem, written on close."""

    def __init__(self, path: str):
        self._path = path
        self._chunks: list[str] = []

    def __enter__(self):
        return self

    def write(self, text: str) -> None:
        self._chunks.append(text)

    def __exit__(self, *exc):
        if exc[0] is None:
            from apache_beam.io.filesystems import FileSystems

            with FileSystems.create(self._path, mime_type="text/html") as handle:
                handle.write("".join(self._chunks).encode("utf-8"))
        return False


if __name__ == "__main__":
    from larvatus.arguments import exit_with
    from larvatus.pipes import guard_standard_streams

    guard_standard_streams()
    exit_with(main(), hard=True)   # read-only: leave at once (see exit_with)
