"""`larvatus estimate`: how much personal data gets through on the user's own corpus, by planting known items."""
from __future__ import annotations

import argparse
import glob
import html
import json
import os
import sys
import time
from dataclasses import dataclass
from typing import Any, Optional, Sequence

from larvatus.transforms import planting
from larvatus.transforms.records import DeadLetter, Document

DEFAULT_SAMPLE = 200        # documents drawn from the corpus
DEFAULT_MIN_COPIES = 200    # copies planted in all: small corpora get several copies a document
DEFAULT_ITEMS = 3           # items planted into each copy, of distinct kinds
ESTIMATE_FILE = "estimate.json"
ESTIMATE_PAGE = "estimate.html"
PLANTED_FILE = "planted.jsonl"
CONTEXT_CHARS = 40          # characters shown each side of a missed item with keep_text


@dataclass(frozen=True)
class Estimate:
    """What planting found: the table, every item's outcome, words of the user's text kept."""

    rows: tuple[planting.EstimateRow, ...]
    outcomes: tuple[planting.ItemOutcome, ...]
    copies: tuple[planting.PlantedCopy, ...]
    redacted_texts: dict[str, str]
    documents: int
    words: int
    words_kept: int
    failed_copies: int
    seed: int

    @property
    def words_kept_share(self) -> Optional[float]:
        return self.words_kept / self.words if self.words else None

    def row(self, kind: str, context: str = "all") -> Optional[planting.EstimateRow]:
        return next((r for r in self.rows if r.kind == kind and r.context == context), None)

    def as_dict(self) -> dict:
        return {"documents_sampled": self.documents, "copies": len(self.copies),
                "copies_failed": self.failed_copies, "seed": self.seed,
                "items_planted": len(self.outcomes),
                "original_words": self.words, "original_words_kept": self.words_kept,
                "original_words_kept_share": self.words_kept_share,
                "interval": "Wilson score, 95%",
                "table": [row.as_dict() for row in self.rows]}


def plant_documents(documents: Sequence[tuple[str, str]], sample: Optional[int], seed: int,
                    copies: Optional[int] = None, items_per_copy: int = DEFAULT_ITEMS,
                    kinds: Sequence[str] = planting.KINDS
                    ) -> tuple[list[planting.PlantedCopy], int]:
    """Seeded sample of (id, text) documents, each planted in one or more copies; the number
    of documents sampled."""
    from larvatus.transforms.language import detect_language

    chosen = [documents[i] for i in planting.choose_sample(len(documents), sample, seed)]
    if not chosen:
        return [], 0
    per_document = copies or max(1, -(-DEFAULT_MIN_COPIES // len(chosen)))
    planted = []
    for doc_id, text in chosen:
        language = detect_language(text)
        for index in range(per_document):
            planted.append(planting.plant(doc_id, text, language, index, seed, items_per_copy,
                                          kinds))
    return planted, len(chosen)


def run_estimate(redactor, documents: Sequence[tuple[str, str]], sample: Optional[int] = None,
                 seed: int = 0, copies: Optional[int] = None,
                 items_per_copy: int = DEFAULT_ITEMS,
                 kinds: Sequence[str] = planting.KINDS) -> Estimate:
    """Plant into a seeded sample of `documents`, redact the copies with `redactor` (its
    options are the run's), and count what was hidden."""
    unknown = sorted(set(kinds) - set(planting.KINDS))
    if unknown or not kinds:
        raise ValueError(f"kinds must be some of {', '.join(planting.KINDS)}, got {list(kinds)}")
    planted, sampled = plant_documents(documents, sample, seed, copies, items_per_copy, kinds)
    outcomes: list[planting.ItemOutcome] = []
    redacted_texts: dict[str, str] = {}
    words = kept = failed = 0
    scored = []
    for copy, row in zip(planted, _annotate_each(redactor, planted)):
        if row is None:
            failed += 1
            continue
        spans = [(e["start"], e["end"]) for e in row["entities"] if e["redacted"]]
        copy_outcomes, (copy_words, copy_kept) = planting.score_copy(copy, spans)
        outcomes += copy_outcomes
        words += copy_words
        kept += copy_kept
        redacted_texts[copy.copy_id] = row["redacted_text"]
        scored.append(copy)
    return Estimate(tuple(planting.table(outcomes)), tuple(outcomes), tuple(scored),
                    redacted_texts, sampled, words, kept, failed, seed)


def _annotate_each(redactor, copies: Sequence[planting.PlantedCopy]):
    """Rows of the copies in order; None for a copy the pipeline dead-letters."""
    records = ({"text": c.text, "id": c.copy_id, "source": c.copy_id} for c in copies)
    for result in redactor.pipe(records):
        yield result if isinstance(result, dict) else None


# --- what the command prints and writes -----------------------------------------------------

def _percent(value: Optional[float]) -> str:
    return "-" if value is None else f"{100 * value:.1f}%"


def format_table(estimate: Estimate) -> str:
    """The table the command prints: per kind and context, with 95% Wilson intervals."""
    header = (f"{'kind':<8} {'context':<8} {'planted':>7} {'hidden':>6} {'partly':>6} "
              f"{'missed':>6}  {'hidden whole':>12}  95% interval")
    lines = [header, "-" * len(header)]
    for row in estimate.rows:
        low, high = row.interval
        lines.append(f"{row.kind:<8} {row.context:<8} {row.planted:>7} {row.hidden:>6} "
                     f"{row.partly:>6} {row.missed:>6}  {_percent(row.recall):>12}  "
                     f"{_percent(low)} - {_percent(high)}")
    lines.append("")
    lines.append(f"{estimate.documents} documents sampled, {len(estimate.copies)} planted copies"
                 f" ({estimate.failed_copies} dead-lettered), {len(estimate.outcomes)} items;"
                 f" words of your own text kept: {_percent(estimate.words_kept_share)}")
    return "\n".join(lines)


def _missed_context(copy: planting.PlantedCopy, outcome: planting.ItemOutcome,
                    keep_text: bool) -> str:
    item = outcome.item
    if keep_text:
        start, end = max(0, item.start - CONTEXT_CHARS), min(len(copy.text), item.end + CONTEXT_CHARS)
        before, after = copy.text[start:item.start], copy.text[item.end:end]
    else:   # only the planted words: the template around the item, never the user's text
        before = _planted_edge(copy, item.start, backwards=True)
        after = _planted_edge(copy, item.end, backwards=False)
    return (f"{html.escape(before)}<mark>{html.escape(item.value)}</mark>{html.escape(after)}")


def _planted_edge(copy: planting.PlantedCopy, at: int, backwards: bool) -> str:
    """The planted template text next to an item, up to the user's own text."""
    bounds = sorted(copy.original_spans)
    if backwards:
        start = max([end for _, end in bounds if end <= at], default=0)
        return copy.text[start:at]
    end = min([start for start, _ in bounds if start >= at], default=len(copy.text))
    return copy.text[at:end]


def _table_row(kind, context, planted, hidden, partly, missed, recall: Optional[float],
               interval: Sequence[float]) -> str:
    """One escaped HTML row of the estimate table (the page's and the run report's)."""
    low, high = interval
    return "<tr>" + "".join(f"<td>{html.escape(str(cell))}</td>" for cell in (
        kind, context, planted, hidden, partly, missed, _percent(recall),
        f"{_percent(low)} - {_percent(high)}")) + "</tr>"


def write_page(estimate: Estimate, path: str, keep_text: bool) -> None:
    """A self-contained HTML page: the table, the intervals, and the missed items in context
    (planted words only unless keep_text)."""
    rows = [_table_row(r.kind, r.context, r.planted, r.hidden, r.partly, r.missed, r.recall,
                       r.interval) for r in estimate.rows]
    missed = [o for o in estimate.outcomes if o.outcome != "hidden"]
    copies = {copy.copy_id: copy for copy in estimate.copies}
    items = "".join(
        f"<li><b>{html.escape(o.item.kind)}</b> ({html.escape(o.outcome)}, "
        f"{html.escape(o.item.context)}, {html.escape(o.item.position)}): "
        f"<code>{_missed_context(copies[o.copy_id], o, keep_text)}</code></li>" for o in missed[:500])
    page = f"""<!doctype html><html><head><meta charset="utf-8"><title>Larvatus estimate</title>
<style>body{{font:14px sans-serif;margin:2em}}table{{border-collapse:collapse}}
td,th{{border:1px solid #ccc;padding:2px 8px;text-align:right}}mark{{background:#fbb}}</style>
</head><body><h1>What gets through: an estimate by planting</h1>
<p>{estimate.documents} documents sampled (seed {estimate.seed}), {len(estimate.copies)} planted
copies, {len(estimate.outcomes)} items. An item is <i>hidden</i> when every letter and digit of it
is redacted. Intervals: Wilson score, 95%. <i>cue</i>: the item on a line after the words a form or
letter puts before it (Dear, Tel:, IBAN:, a signature); <i>running</i>: inside a sentence.
Words of your own text kept: {_percent(estimate.words_kept_share)}.</p>
<table><tr><th>kind</th><th>context</th><th>planted</th><th>hidden</th><th>partly</th>
<th>missed</th><th>hidden whole</th><th>95% interval</th></tr>{''.join(rows)}</table>
<h2>Items not hidden whole ({len(missed)})</h2>
<p>{'With the text around them.' if keep_text else 'Planted words only: none of your text is shown (use --keep-text to see it).'}</p>
<ul>{items}</ul></body></html>"""
    with open(path, "w", encoding="utf-8") as handle:
        handle.write(page)


def write_outputs(estimate: Estimate, output: str, keep_text: bool) -> None:
    """estimate.json, estimate.html and the planted copies (with their items' offsets)."""
    os.makedirs(output, exist_ok=True)
    with open(os.path.join(output, ESTIMATE_FILE), "w", encoding="utf-8") as handle:
        json.dump(estimate.as_dict(), handle, indent=2)
    write_page(estimate, os.path.join(output, ESTIMATE_PAGE), keep_text)
    with open(os.path.join(output, PLANTED_FILE), "w", encoding="utf-8") as handle:
        by_item = {(o.copy_id, o.item.start, o.item.end): o.outcome for o in estimate.outcomes}
        for copy in estimate.copies:
            record: dict[str, Any] = {
                "id": copy.copy_id, "language": copy.language,
                "items": [{"kind": i.kind, "context": i.context, "position": i.position,
                           "value": i.value, "start": i.start, "end": i.end,
                           "outcome": by_item.get((copy.copy_id, i.start, i.end))}
                          for i in copy.items],
                "redacted_text": estimate.redacted_texts.get(copy.copy_id)}
            if keep_text:
                record["text"] = copy.text
            handle.write(json.dumps(record, ensure_ascii=False) + "\n")


class UnreadableEstimate(ValueError):
    """An estimate folder without a readable estimate.json (not one, or damaged)."""


def report_section(folder: str, missed_shown: int = 200) -> str:
    """The HTML report's section on an estimate folder: its table with the 95% intervals and
    the items not hidden whole, with where they were planted (planted values only: the
    user's own text is never shown here). Every value read from the files is escaped."""
    path = os.path.join(folder, ESTIMATE_FILE)
    try:
        with open(path, encoding="utf-8") as handle:
            result = json.load(handle)
        table = result["table"]
        rows = [(row["kind"], row["context"], int(row["planted"]), int(row["hidden"]),
                 int(row["partly"]), int(row["missed"]), row["recall"],
                 [float(x) for x in row["interval_95"]]) for row in table]
    except (OSError, ValueError, KeyError, TypeError) as error:
        raise UnreadableEstimate(f"--estimate {folder}: no readable {ESTIMATE_FILE} "
                                 f"({type(error).__name__}); run `larvatus estimate` first")
    cells = "".join(_table_row(*row[:6], row[6] if isinstance(row[6], (int, float)) else None,
                               row[7]) for row in rows)
    missed_items = []
    try:
        with open(os.path.join(folder, PLANTED_FILE), encoding="utf-8") as handle:
            for line in handle:
                for item in json.loads(line).get("items", []):
                    if item.get("outcome") in ("partly", "missed"):
                        missed_items.append(item)
    except (OSError, ValueError):
        pass   # the table stands without the list
    listed = "".join(
        f"<li><b>{html.escape(str(i.get('kind')))}</b> {html.escape(str(i.get('outcome')))} "
        f"({html.escape(str(i.get('context')))}, {html.escape(str(i.get('position')))}): "
        f"<code>{html.escape(str(i.get('value')))}</code></li>"
        for i in missed_items[:missed_shown])
    return (f"<h2>What gets through: estimate by planting ({html.escape(folder)})</h2>"
            f"<p class='meta'>{html.escape(str(result.get('documents_sampled')))} documents "
            f"sampled, {html.escape(str(result.get('items_planted')))} items planted; an item "
            f"is hidden when every letter and digit of it is redacted; intervals: Wilson "
            f"score, 95%. cue: after the words a form or letter puts before it; running: "
            f"inside a sentence.</p><table><tr><th>kind</th><th>context</th><th>planted</th>"
            f"<th>hidden</th><th>partly</th><th>missed</th><th>hidden whole</th>"
            f"<th>95% interval</th></tr>{cells}</table>"
            f"<p>Items not hidden whole: {len(missed_items)} (planted values only)</p>"
            f"<ul>{listed}</ul>")


# --- the command --------------------------------------------------------------------------

def read_documents(pattern: str, input_format: str, id_field: str, text_field: str,
                   max_chars: int) -> tuple[list[tuple[str, str]], int]:
    """(id, text) of every readable document the glob matches, and how many records could not
    be read (they are not sampled)."""
    from larvatus.transforms import formats
    from larvatus.transforms import read as read_lib

    paths = sorted(p for p in glob.glob(pattern, recursive=True) if os.path.isfile(p))
    documents, unreadable = [], 0
    for path in paths:
        fmt = formats.format_for_path(path, input_format)
        with open(path, "rb") as handle:
            for result in formats.read_records(handle, path, fmt, id_field, text_field, max_chars):
                if result is read_lib.BLANK_LINE:
                    continue
                if isinstance(result, Document) and result.text.strip():
                    documents.append((result.doc_id, result.text))
                elif isinstance(result, DeadLetter):
                    unreadable += 1
    return documents, unreadable


def parser(prog: str) -> argparse.ArgumentParser:
    from larvatus.options import job_parser

    parser = job_parser(prog)
    parser.description = ("Estimate how much personal data gets through on your own corpus: "
                          "plant known items into copies of a sample of your documents, redact "
                          "them with the same options as `larvatus run`, and count what was hidden.")
    group = parser.add_argument_group("estimate")
    group.add_argument("--sample", type=int, default=DEFAULT_SAMPLE,
                       help=f"documents drawn from the input (default {DEFAULT_SAMPLE}).")
    group.add_argument("--seed", type=int, default=0, help="seed of the sample and the items.")
    group.add_argument("--copies", type=int, default=None,
                       help=f"planted copies of each sampled document (default: enough for "
                            f"{DEFAULT_MIN_COPIES} copies in all).")
    group.add_argument("--items-per-copy", "--items_per_copy", dest="items_per_copy", type=int,
                       default=DEFAULT_ITEMS, help=f"items planted into each copy "
                                                   f"(1-{len(planting.KINDS)}, default {DEFAULT_ITEMS}).")
    return parser


def _refuse(message: str) -> int:
    print(f"larvatus estimate: error: {message}", file=sys.stderr)
    return 2


def main(argv: Optional[Sequence[str]] = None, prog: str = "larvatus estimate") -> int:
    from larvatus import api
    from larvatus.models.model_dir import ModelError

    args = parser(prog).parse_args(argv)
    if not args.input or not args.output:
        return _refuse("--input and --output are required")
    for name in ("sample", "copies"):
        value = getattr(args, name)
        if value is not None and value < 1:
            return _refuse(f"--{name} must be at least 1, got {value}")
    if not 1 <= args.items_per_copy <= len(planting.KINDS):
        return _refuse(f"--items-per-copy must be 1 to {len(planting.KINDS)}")
    output = os.path.abspath(args.output)
    if os.path.exists(os.path.join(output, "_SUMMARY.json")) or os.path.isdir(
            os.path.join(output, "annotations")):
        return _refuse(f"{args.output} holds the output of `larvatus run`: estimates go to a "
                       f"folder of their own, so that nothing planted mixes with real rows")
    if os.path.isfile(output):
        return _refuse(f"--output {args.output} is a file, not a folder")
    started = time.monotonic()
    documents, unreadable = read_documents(args.input, args.input_format, args.id_field,
                                           args.text_field, args.max_chars)
    if not documents:
        return _refuse(f"--input {args.input!r} gives no readable document")
    table = api.option_table()
    options = {name: getattr(args, name) for name in api.keyword_options()
               if getattr(args, name) != table[name].default}   # what the user chose
    try:
        redactor = api.Redactor(**options)
    except (ValueError, ModelError) as error:   # the options' fault, not the data's
        return _refuse(str(error))
    estimate = run_estimate(redactor, documents, args.sample, args.seed, args.copies,
                            args.items_per_copy)
    write_outputs(estimate, output, args.keep_text)
    print(format_table(estimate))
    if unreadable:
        print(f"{unreadable} records could not be read and were not sampled")
    print(f"written to {args.output} ({ESTIMATE_FILE}, {ESTIMATE_PAGE}, {PLANTED_FILE}) "
          f"in {time.monotonic() - started:.1f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
