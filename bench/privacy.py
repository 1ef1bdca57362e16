"""Privacy benchmark: how much planted personal data Larvatus and Presidio hide, and at what cost."""
from __future__ import annotations

USAGE = """On documents of seven genres (email, chat, medical note, court judgement, HR record, CV,
server log) in five locales with planted personal data and gold spans
(`bench.privacy_corpus`: faker, seeded; `--split test` by default, documents nobody tuned
on; `--split dev` for tuning), it runs

1. **Larvatus** - `python -m larvatus.run --input DOCS.jsonl --output DIR --overwrite
   LARVATUS_ARGS` in a subprocess (`--larvatus-args`, default `--redact-labels all`), then
   reads `DIR/annotations/annotations-*.parquet`. The spans it
   redacted are the entities marked `redacted` when the output has that field, else the
   entities whose label is in the `--redact-labels` set passed (every label for `all`;
   PER,LOC,ORG when the option is absent). Its `redacted_text` is used for the leak check.
   If the run fails its stderr is printed and it is tried once more with
   `--larvatus-fallback-args` (default `--redact-labels PER,LOC,ORG`), which the table says.
2. **Presidio** - `presidio_analyzer.AnalyzerEngine` with its default recognizers and score
   threshold, on a spaCy pipeline (`--presidio-spacy-model`, default a blank English one
   built in bench/.cache/spacy-blank-en: Presidio's pattern recognizers work and its
   spaCy name recognizer finds nothing; give a trained spaCy NER to test names). Every
   finding counts as redacted. tldextract uses its bundled public suffix list (offline).

and prints one table: recall per kind (PER per casing: Titlecase, lowercase, ALL CAPS), the
micro recall over all items, structured kinds and names, precision, leaked items and
documents per second. Definitions (`bench.privacy_corpus.score`): an item is caught when
the redacted spans cover every letter and digit of its gold span, whatever the label;
it leaks when its exact surface string is still in the redacted text; precision is the
share of redacted letters and digits (outside neutral spans: timestamps, countries, bare
years) that lie inside gold spans.

Usage (from the repository root, in the venv with the `bench` extra):

    python bench/privacy.py                          # test split, 140 documents, both systems
    python bench/privacy.py --split dev --docs 35    # tune on dev
    python bench/privacy.py --larvatus-args="--redact-labels PER,LOC,ORG --model runs/model"
    python bench/privacy.py --no-larvatus --presidio-spacy-model runs/spacy-conll
    python bench/privacy.py --formats --misses 5 --json privacy.json

(`--larvatus-args` takes a value that starts with "--": write it with "=".)
Figures are deterministic for a split, seed and document count (and faker's version);
documents/s are not.
"""

import argparse
import glob
import json
import os
import shlex
import subprocess
import sys
import time
from pathlib import Path
from typing import Any, Optional, Sequence

if __package__ in (None, ""):  # `python bench/privacy.py`: import bench.* from the root
    sys.path[0] = str(Path(__file__).resolve().parents[1])

from bench.privacy_corpus import (  # noqa: E402
    CASINGS, DEFAULT_DOCS, KINDS, SPLIT_SEEDS, SPLITS, Document, Prediction, make_split, score)
from larvatus.layout import SUMMARY_NAME, annotation_files_pattern  # noqa: E402

REPO = Path(__file__).resolve().parents[1]
CACHE = REPO / "bench" / ".cache"
BLANK_SPACY = CACHE / "spacy-blank-en"
DEFAULT_LARVATUS_ARGS = "--redact-labels all"
DEFAULT_FALLBACK_ARGS = "--redact-labels PER,LOC,ORG"
LARVATUS_DEFAULT_LABELS = "PER,LOC,ORG"  # pipeline/options.py's --redact-labels default

# Presidio entity types -> our kinds (only for the per-label counts: scores ignore labels).
PRESIDIO_KINDS = {
    "PERSON": "PER", "LOCATION": "LOC", "GPE": "LOC", "ORGANIZATION": "ORG", "NRP": "NRP",
    "EMAIL_ADDRESS": "EMAIL", "PHONE_NUMBER": "PHONE", "CREDIT_CARD": "CARD",
    "IBAN_CODE": "IBAN", "IP_ADDRESS": "IP", "MAC_ADDRESS": "IP", "URL": "URL",
    "DATE_TIME": "DATE", "UK_NINO": "ID", "UK_NHS": "ID", "US_SSN": "ID", "US_ITIN": "ID",
    "US_PASSPORT": "ID", "US_DRIVER_LICENSE": "ID", "MEDICAL_LICENSE": "ID",
    "US_BANK_NUMBER": "CODE", "CRYPTO": "CODE", "UUID": "CODE", "AGE": "AGE",
}


# --------------------------------------------------------------------------- corpus files

def write_jsonl(documents: Sequence[Document], path: Path, with_gold: bool = False) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "w", encoding="utf-8") as handle:
        for document in documents:
            record = document.to_json() if with_gold else document.record()
            handle.write(json.dumps(record, ensure_ascii=False) + "\n")


# --------------------------------------------------------------------------- Larvatus

def redact_label_set(larvatus_args: Sequence[str]) -> Optional[frozenset[str]]:
    """The --redact-labels value among the arguments: a set, or None for `all`."""
    value = LARVATUS_DEFAULT_LABELS
    for i, arg in enumerate(larvatus_args):
        if arg == "--redact-labels" and i + 1 < len(larvatus_args):
            value = larvatus_args[i + 1]
        elif arg.startswith("--redact-labels="):
            value = arg.split("=", 1)[1]
    labels = frozenset(label.strip() for label in value.split(",") if label.strip())
    return None if {label.lower() for label in labels} & {"all"} else labels


def annotation_files(out_dir: Path) -> list[str]:
    """The run's annotation shards (pipeline/layout.py names them)."""
    return sorted(glob.glob(annotation_files_pattern(str(out_dir))))


def read_annotations(out_dir: Path) -> list[dict]:
    import pyarrow.parquet as pq

    rows: list[dict] = []
    for path in annotation_files(out_dir):
        table = pq.read_table(path)
        columns = [c for c in ("id", "redacted_text", "entities", "replacements")
                   if c in table.column_names]
        rows.extend(table.select(columns).to_pylist())
    return rows


def is_redacted_entity(entity: dict, labels: Optional[frozenset[str]]) -> bool:
    if entity.get("redacted") is not None:
        return bool(entity["redacted"])
    return labels is None or entity["label"] in labels


def rebuilt_matches(text: str, redacted_text: str, spans: Sequence[tuple[int, int]],
                    replacements: Sequence[dict]) -> Optional[bool]:
    """Whether the text with these spans swapped for the replacements' placeholders, in
    order, is the redacted text (None when it cannot be checked: overlapping spans)."""
    if any(a[1] > b[0] for a, b in zip(spans, spans[1:])):
        return None
    if len(spans) != len(replacements):
        return False
    out, pos = [], 0
    for (start, end), rep in zip(spans, sorted(replacements, key=lambda r: r["start"])):
        out.append(text[pos:start])
        out.append(rep.get("placeholder") or redacted_text[rep["start"]:rep["end"]])
        pos = end
    out.append(text[pos:])
    return "".join(out) == redacted_text


def larvatus_predictions(documents: Sequence[Document], rows: Sequence[dict],
                         labels: Optional[frozenset[str]]) -> tuple[dict, dict]:
    """Predictions by document id, and diagnostics about the output."""
    by_id = {d.id: d for d in documents}
    predictions: dict[str, Prediction] = {}
    diagnostics: dict[str, Any] = {
        "rows": len(rows), "unknown_ids": 0, "duplicate_ids": 0, "entities": 0,
        "entities_redacted": 0, "entities_propagated": 0, "redacted_by_label": {},
        "entities_by_label": {}, "has_redacted_field": False, "rebuild_checked": 0,
        "rebuild_mismatch": 0, "rebuild_mismatch_ids": [], "out_of_range_spans": 0}
    for row in rows:
        document = by_id.get(row.get("id"))
        if document is None:
            diagnostics["unknown_ids"] += 1
            continue
        if document.id in predictions:
            diagnostics["duplicate_ids"] += 1
        spans = []
        for entity in row.get("entities") or []:
            diagnostics["entities"] += 1
            diagnostics["entities_by_label"][entity["label"]] = \
                diagnostics["entities_by_label"].get(entity["label"], 0) + 1
            diagnostics["entities_propagated"] += bool(entity.get("propagated"))
            if "redacted" in entity:
                diagnostics["has_redacted_field"] = True
            if not (0 <= entity["start"] < entity["end"] <= len(document.text)):
                diagnostics["out_of_range_spans"] += 1
            if is_redacted_entity(entity, labels):
                diagnostics["entities_redacted"] += 1
                diagnostics["redacted_by_label"][entity["label"]] = \
                    diagnostics["redacted_by_label"].get(entity["label"], 0) + 1
                spans.append((entity["start"], entity["end"], entity["label"]))
        spans.sort()
        redacted_text = row.get("redacted_text")
        if redacted_text is not None and row.get("replacements") is not None:
            matches = rebuilt_matches(document.text, redacted_text,
                                      [(s, e) for s, e, _ in spans], row["replacements"])
            if matches is not None:
                diagnostics["rebuild_checked"] += 1
                if not matches:
                    diagnostics["rebuild_mismatch"] += 1
                    if len(diagnostics["rebuild_mismatch_ids"]) < 10:
                        diagnostics["rebuild_mismatch_ids"].append(document.id)
        predictions[document.id] = Prediction(tuple(spans), redacted_text)
    diagnostics["documents_missing"] = sum(d.id not in predictions for d in documents)
    return predictions, diagnostics


def run_larvatus_once(docs_path: Path, out_dir: Path, log_path: Path, larvatus_args: list[str],
                      timeout: Optional[float]) -> dict:
    command = [sys.executable, "-m", "larvatus.run", "--input", str(docs_path),
               "--output", str(out_dir), "--overwrite", *larvatus_args]
    started = time.perf_counter()
    try:
        done = subprocess.run(command, cwd=REPO, capture_output=True, text=True, timeout=timeout,
                              env={**os.environ, "PYTHONUNBUFFERED": "1"})
        returncode, stdout, stderr = done.returncode, done.stdout, done.stderr
    except subprocess.TimeoutExpired as error:
        returncode = None
        stdout = error.stdout.decode() if isinstance(error.stdout, bytes) else (error.stdout or "")
        stderr = (error.stderr.decode() if isinstance(error.stderr, bytes)
                  else (error.stderr or "")) + f"\n[timed out after {timeout} s]"
    seconds = time.perf_counter() - started
    log_path.write_text(f"$ {shlex.join(command)}\n--- stdout\n{stdout}\n--- stderr\n{stderr}",
                        encoding="utf-8")
    return {"command": command, "returncode": returncode, "seconds": seconds,
            "stderr": stderr, "log": str(log_path)}


def run_larvatus(documents: Sequence[Document], args: argparse.Namespace, workdir: Path) -> dict:
    docs_path = workdir / "docs.jsonl"
    attempts = [shlex.split(args.larvatus_args)]
    if args.larvatus_fallback_args.strip():
        attempts.append(shlex.split(args.larvatus_fallback_args))
    tried = []
    for number, larvatus_args in enumerate(attempts):
        out_dir = workdir / "larvatus-out"
        print(f"Running Larvatus: python -m larvatus.run ... {shlex.join(larvatus_args)}",
              flush=True)
        run = run_larvatus_once(docs_path, out_dir, workdir / f"larvatus-log-{number}.txt",
                                larvatus_args, args.larvatus_timeout)
        tried.append({k: run[k] for k in ("command", "returncode", "seconds", "log")})
        if run["returncode"] == 0 or (run["returncode"] is not None and annotation_files(out_dir)
                                      and run["returncode"] == 1):
            labels = redact_label_set(larvatus_args)
            rows = read_annotations(out_dir)
            predictions, diagnostics = larvatus_predictions(documents, rows, labels)
            summary_path = out_dir / SUMMARY_NAME
            summary = json.loads(summary_path.read_text()) if summary_path.is_file() else {}
            return {"ok": True, "args": larvatus_args, "fallback": number > 0, "attempts": tried,
                    "redact_labels": "all" if labels is None else sorted(labels),
                    "seconds": run["seconds"], "pipeline_seconds": summary.get("wall_seconds"),
                    "predictions": predictions, "diagnostics": diagnostics,
                    "summary": {k: summary.get(k) for k in (
                        "records_in", "records_out", "dead_lettered", "dead_lettered_by_reason",
                        "entities_by_label", "counts_add_up", "wall_seconds", "stage_seconds")}}
        tail = "\n".join(run["stderr"].rstrip().splitlines()[-args.stderr_lines:])
        print(f"Larvatus run failed (exit {run['returncode']}; full log {run['log']}); "
              f"its stderr ends:\n{tail}\n", file=sys.stderr, flush=True)
    return {"ok": False, "attempts": tried}


# --------------------------------------------------------------------------- Presidio

def ensure_blank_spacy(path: Path) -> None:
    if (path / "meta.json").is_file():
        return
    import spacy

    nlp = spacy.blank("en")
    nlp.meta["name"] = "blank_en"
    nlp.meta["description"] = "blank English pipeline (tokenizer only, no NER)"
    path.mkdir(parents=True, exist_ok=True)   # a fresh checkout has no bench/.cache yet
    nlp.to_disk(path)


def spacy_model_info(model: str) -> dict:
    import spacy

    nlp = spacy.load(model)
    return {"model": model, "name": f"{nlp.meta.get('lang', '?')}_{nlp.meta.get('name', '?')}",
            "version": nlp.meta.get("version"), "pipes": list(nlp.pipe_names),
            "ner": "ner" in nlp.pipe_names,
            "ner_labels": list(nlp.get_pipe("ner").labels) if "ner" in nlp.pipe_names else []}


def run_presidio(documents: Sequence[Document], spacy_model: str) -> dict:
    import logging
    from importlib.metadata import version

    import tldextract

    # Offline: the bundled public suffix snapshot instead of a download attempt per process.
    tldextract.extract = tldextract.TLDExtract(suffix_list_urls=())
    logging.getLogger("presidio-analyzer").setLevel(logging.ERROR)
    from presidio_analyzer import AnalyzerEngine
    from presidio_analyzer.nlp_engine import NlpEngineProvider

    if Path(spacy_model).resolve() == BLANK_SPACY.resolve():
        ensure_blank_spacy(BLANK_SPACY)
    info = spacy_model_info(spacy_model)
    started = time.perf_counter()
    provider = NlpEngineProvider(nlp_configuration={
        "nlp_engine_name": "spacy", "models": [{"lang_code": "en", "model_name": spacy_model}]})
    engine = AnalyzerEngine(nlp_engine=provider.create_engine(), supported_languages=["en"])
    load_seconds = time.perf_counter() - started
    predictions: dict[str, Prediction] = {}
    by_type: dict[str, int] = {}
    started = time.perf_counter()
    for document in documents:
        results = engine.analyze(text=document.text, language="en")
        spans = []
        for result in results:
            by_type[result.entity_type] = by_type.get(result.entity_type, 0) + 1
            spans.append((result.start, result.end,
                          PRESIDIO_KINDS.get(result.entity_type, result.entity_type)))
        predictions[document.id] = Prediction(tuple(sorted(spans)))
    seconds = time.perf_counter() - started
    return {"ok": True, "version": version("presidio-analyzer"), "spacy": info,
            "load_seconds": load_seconds, "seconds": seconds, "predictions": predictions,
            "findings_by_type": dict(sorted(by_type.items())),
            "entities": sorted(engine.get_supported_entities("en"))}


# --------------------------------------------------------------------------- report

CASING_NAMES = {"title": "Titlecase", "lower": "lowercase", "upper": "ALL CAPS"}


def percent(value: Optional[float]) -> str:
    return "-" if value is None else f"{100 * value:.1f}%"


def table_rows(scores: dict[str, dict], documents: Sequence[Document], formats: bool
               ) -> list[tuple[str, list[str], str]]:
    """(row name, one cell per system, support) for the printed table."""
    any_score = next(iter(scores.values()))
    rows: list[tuple[str, list[str], str]] = []

    def add(name: str, pick) -> None:
        cells = [percent(pick(s)["recall"]) for s in scores.values()]
        rows.append((name, cells, f"{pick(any_score)['items']:,}"))

    for kind in KINDS:
        add(kind, lambda s, k=kind: s["kinds"][k])
        if kind == "PER":
            for casing in CASINGS:
                add(f"  PER {CASING_NAMES[casing]}", lambda s, c=casing: s["per_casing"][c])
        if formats:
            for key in any_score["formats"]:
                if key.split("/")[0] == kind:
                    add(f"  {key}", lambda s, k=key: s["formats"].get(k, {"recall": None, "items": 0}))
    rows.append(("", [""] * len(scores), ""))
    add("all items (micro recall)", lambda s: s["overall"]["all"])
    add("structured (not PER/LOC/ORG)", lambda s: s["overall"]["structured"])
    add("names (PER/LOC/ORG)", lambda s: s["overall"]["names"])
    rows.append(("precision (redacted alnum in gold)",
                 [percent(s["precision"]["precision"]) for s in scores.values()], ""))
    rows.append(("ordinary words kept",
                 [percent(s["ordinary_words"]["kept_share"]) for s in scores.values()],
                 f"{any_score['ordinary_words']['words']:,}"))
    rows.append(("  capitalised ordinary words kept",
                 [percent(s["ordinary_words"]["capitalised_kept_share"]) for s in scores.values()],
                 f"{any_score['ordinary_words']['capitalised']:,}"))
    rows.append(("redacted name spans",
                 [f"{s['spans']['name_spans']:,}" for s in scores.values()], ""))
    rows.append(("  of them on no gold item",
                 [percent(s["spans"]["ordinary_share"]) for s in scores.values()], ""))
    rows.append(("spans on gold taking a word beside it",
                 [f"{s['spans']['edge_wider']:,}" for s in scores.values()], ""))
    rows.append(("spans on gold with punctuation at an edge",
                 [f"{s['spans']['edge_punctuation']:,}" for s in scores.values()], ""))
    rows.append(("spans touching gold",
                 [f"{s['spans']['spans_on_gold']:,}" for s in scores.values()], ""))
    rows.append(("redacted alnum characters",
                 [f"{s['precision']['redacted_alnum']:,}" for s in scores.values()], ""))
    rows.append(("leaked items (surface visible)", [f"{s['leaked']:,}" for s in scores.values()],
                 f"{any_score['overall']['all']['items']:,}"))
    return rows


def print_table(systems: dict[str, dict], documents: Sequence[Document], args: argparse.Namespace,
                seed: int) -> None:
    scores = {name: result["score"] for name, result in systems.items()}
    items = sum(len(d.gold) for d in documents)
    genres = sorted({d.genre for d in documents})
    print(f"\nPrivacy benchmark: split {args.split} (seed {seed}), {len(documents)} documents "
          f"({', '.join(genres)}), {items:,} planted items")
    for name, result in systems.items():
        print(f"  {name}: {describe(name, result)}")
    rows = table_rows(scores, documents, args.formats)
    width = max(len(r[0]) for r in rows) + 2
    header = "".join(f"{name:>12}" for name in scores) + f"{'support':>10}"
    print(f"\n{'recall':<{width}}{header}")
    for name, cells, support in rows:
        print(f"{name:<{width}}" + "".join(f"{c:>12}" for c in cells) + f"{support:>10}")
    speeds = []
    for name, result in systems.items():
        speeds.append(f"{len(documents) / result['seconds']:.1f}" if result["seconds"] else "-")
    print(f"{'documents/s':<{width}}" + "".join(f"{s:>12}" for s in speeds))
    notes = []
    for name, result in systems.items():
        if name == "Larvatus":
            pipeline = result.get("pipeline_seconds")
            notes.append(f"Larvatus: whole process, {result['seconds']:.1f} s"
                         + (f" (pipeline alone {pipeline:.1f} s)" if pipeline else ""))
        else:
            notes.append(f"Presidio: analyze calls, {result['seconds']:.1f} s (engine load "
                         f"{result['load_seconds']:.1f} s)")
    print("  " + "; ".join(notes))


def describe(name: str, result: dict) -> str:
    if name == "Larvatus":
        text = f"python -m larvatus.run {shlex.join(result['args'])}"
        if result["fallback"]:
            text += " (fallback: the first arguments failed)"
        diag = result["diagnostics"]
        rule = ("entities marked redacted in the output" if diag["has_redacted_field"] else
                f"entities labelled {result['redact_labels']}")
        text += f"; redacted = {rule}; {diag['entities_redacted']:,} of {diag['entities']:,} entities"
        if diag["documents_missing"]:
            text += f"; {diag['documents_missing']} documents missing (dead-lettered?)"
        return text
    spacy = result["spacy"]
    ner = (f"NER labels {', '.join(spacy['ner_labels'])}" if spacy["ner"]
           else "no NER: PERSON/LOCATION/ORGANIZATION never found")
    return (f"presidio-analyzer {result['version']}, default recognizers and threshold, spaCy "
            f"model {spacy['model']} ({spacy['name']} {spacy['version']}, {ner})")


def print_misses(systems: dict[str, dict], count: int) -> None:
    for name, result in systems.items():
        by_kind: dict[str, list[dict]] = {}
        for miss in result["score"]["misses"]:
            by_kind.setdefault(miss["kind"], []).append(miss)
        print(f"\n{name}: missed items, up to {count} per kind")
        for kind in KINDS:
            for miss in by_kind.get(kind, [])[:count]:
                print(f"  {kind:<7}{miss['fmt']:<18}{miss['value']!r:<40} {miss['id']}")


def print_larvatus_notes(result: dict) -> None:
    diag = result["diagnostics"]
    notes = []
    if diag["rebuild_mismatch"]:
        notes.append(f"{diag['rebuild_mismatch']} of {diag['rebuild_checked']} documents' "
                     f"redacted_text is not the text with the redacted entities replaced "
                     f"(e.g. {', '.join(diag['rebuild_mismatch_ids'][:3])})")
    if diag["out_of_range_spans"]:
        notes.append(f"{diag['out_of_range_spans']} entity spans outside their text")
    if diag["unknown_ids"] or diag["duplicate_ids"]:
        notes.append(f"{diag['unknown_ids']} unknown and {diag['duplicate_ids']} duplicate ids")
    if notes:
        print("Larvatus output notes: " + "; ".join(notes))


# --------------------------------------------------------------------------- CLI

def parse_args(argv: Optional[Sequence[str]] = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(
        prog="python bench/privacy.py", description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter, epilog=USAGE)
    corpus = parser.add_argument_group("corpus (bench.privacy_corpus)")
    corpus.add_argument("--split", choices=SPLITS, default="test",
                        help="test (default: documents nobody tuned on) or dev (for tuning).")
    corpus.add_argument("--docs", type=int, default=DEFAULT_DOCS,
                        help=f"Documents (default {DEFAULT_DOCS}, the genres in turn).")
    corpus.add_argument("--seed", type=int, default=None,
                        help="Override the split's seed (dev %(dev)d, test %(test)d)." % SPLIT_SEEDS)
    systems = parser.add_argument_group("systems")
    systems.add_argument("--larvatus-args", default=DEFAULT_LARVATUS_ARGS,
                         help=f"Arguments after --input/--output/--overwrite (default "
                              f"{DEFAULT_LARVATUS_ARGS!r}; write --larvatus-args=\"...\").")
    systems.add_argument("--larvatus-fallback-args", default=DEFAULT_FALLBACK_ARGS,
                         help=f"Tried once if the first run fails (default "
                              f"{DEFAULT_FALLBACK_ARGS!r}; '' for no retry).")
    systems.add_argument("--larvatus-timeout", type=float, default=3600.0,
                         help="Seconds before a Larvatus run is given up (default 3600).")
    systems.add_argument("--presidio-spacy-model", default=str(BLANK_SPACY),
                         help="spaCy pipeline (path or package) for Presidio's NLP engine "
                              "(default: a blank English one, built on first use).")
    systems.add_argument("--no-larvatus", action="store_true", help="Skip Larvatus.")
    systems.add_argument("--no-presidio", action="store_true", help="Skip Presidio.")
    out = parser.add_argument_group("output")
    out.add_argument("--formats", action="store_true",
                     help="Also print recall per format (phone style, date style, id type...).")
    out.add_argument("--misses", type=int, default=0, metavar="N",
                     help="Print up to N missed items per kind for each system.")
    out.add_argument("--stderr-lines", type=int, default=40,
                     help="Lines of a failed Larvatus run's stderr to print (default 40).")
    out.add_argument("--workdir", default=None,
                     help="Where the corpus, Larvatus's output and logs go (default "
                          "bench/.cache/privacy/SPLIT-DOCS[-seedS]).")
    out.add_argument("--json", default=None, help="Write every figure to this file.")
    args = parser.parse_args(argv)
    if args.docs < 1:
        parser.error("--docs must be positive")
    if args.no_larvatus and args.no_presidio:
        parser.error("nothing to run: drop --no-larvatus or --no-presidio")
    return args


def main(argv: Optional[Sequence[str]] = None) -> int:
    args = parse_args(argv)
    seed = SPLIT_SEEDS[args.split] if args.seed is None else args.seed
    documents = make_split(args.split, args.docs, seed)
    name = f"{args.split}-{args.docs}" + ("" if args.seed is None else f"-seed{args.seed}")
    workdir = Path(args.workdir) if args.workdir else CACHE / "privacy" / name
    write_jsonl(documents, workdir / "docs.jsonl")
    write_jsonl(documents, workdir / "gold.jsonl", with_gold=True)
    print(f"{len(documents)} documents, {sum(len(d.gold) for d in documents):,} planted items: "
          f"{workdir / 'docs.jsonl'} (gold in gold.jsonl)", flush=True)
    systems: dict[str, dict] = {}
    failed: dict[str, dict] = {}
    if not args.no_larvatus:
        result = run_larvatus(documents, args, workdir)
        (systems if result["ok"] else failed)["Larvatus"] = result
    if not args.no_presidio:
        print(f"Running Presidio (spaCy model {args.presidio_spacy_model}) ...", flush=True)
        try:
            systems["Presidio"] = run_presidio(documents, args.presidio_spacy_model)
        except Exception as error:  # report it, keep the other row
            print(f"Presidio failed: {type(error).__name__}: {error}", file=sys.stderr)
            failed["Presidio"] = {"ok": False, "error": f"{type(error).__name__}: {error}"}
    for result in systems.values():
        result["score"] = score(documents, result.pop("predictions"))
    if systems:
        print_table(systems, documents, args, seed)
        if "Larvatus" in systems:
            print_larvatus_notes(systems["Larvatus"])
        if args.misses:
            print_misses(systems, args.misses)
    for name in failed:
        print(f"{name}: no figures (the run failed; see above)")
    if args.json:
        output = {"args": vars(args), "seed": seed, "documents": len(documents),
                  "items": sum(len(d.gold) for d in documents), "workdir": str(workdir),
                  "systems": systems, "failed": failed, "python": sys.version.split()[0]}
        Path(args.json).write_text(json.dumps(output, indent=2, default=str), encoding="utf-8")
        print(f"\nAll figures written to {args.json}")
    return 0 if systems and not failed else 1


if __name__ == "__main__":
    sys.exit(main())
