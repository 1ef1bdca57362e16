"""Quality per second against the peers: Larvatus, the HF pipeline, spaCy and Presidio."""
from __future__ import annotations

import argparse
import bisect
import json
import os
import re
import sys
import time
from pathlib import Path
from typing import Any, Iterable, Optional, Sequence

if __package__ in (None, ""):  # `python bench/peers.py`: import bench.* from the root
    sys.path[0] = str(Path(__file__).resolve().parents[1])

from bench import report as rep  # noqa: E402
from bench.corpus import CACHE, CONLL_VALID, REPO, CorpusSpec, read_jsonl  # noqa: E402
from bench.runners import run_child  # noqa: E402
from bench.spacy_conll import CONLL_TRAIN  # noqa: E402

USAGE = """\
One run measures, on the same documents, each system in its own subprocess
(`bench.runners.run_child`: peak RSS per system, repeats interleaved):

1. **Larvatus** - `python -m larvatus.run` (DirectRunner, JSONL to Parquet) with `--model`
   (default `models/default`, the embedded default model), the whole process timed
   (start-up included; the pipeline's own wall time is printed beside it). Its entities
   are read back from the Parquet files (model detections; the propagated mentions are
   left out of F1 and counted apart, pattern labels such as DATE are not scored). Two rows
   by default (`--larvatus-thresholds default,1`): the CLI's defaults, whose recall-first
   redaction decision (the default `--redact-threshold`) turns low-probability words of
   PER/LOC/ORG into entities, and `--redact-threshold 1`, the model's argmax tags (the
   entity annotations `larvatus.models.evaluate --text-level` scores).
2. **HF** - `transformers.pipeline("token-classification", aggregation_strategy="first",
   stride=64)` in PyTorch fp32 over the PyTorch checkpoint of the same weights
   (`--hf-checkpoint`, default the checkpoint the model directory records), windows of the model's 256 pieces,
   batch_size 8. Larvatus's models read each word's casing from the token type ids
   (`larvatus_type_ids: casing` in the checkpoint's config): plain `pipeline()` would feed
   zeros, so by default (`--hf-type-ids auto`) a subclass of the pipeline puts each
   piece's word casing there (words as BERT's pre-tokenizer splits them); `zeros` measures
   the pipeline exactly as users would call it.
3. **spaCy** - `nlp.pipe(texts)` with spaCy's small-pipeline NER architecture trained here on
   CoNLL-2003 `train.txt` (`bench.spacy_conll`; en_core_web_sm cannot be installed here),
   or any spaCy pipeline given with `--spacy-model` (e.g. en_core_web_sm where it exists).
4. **Presidio** - `AnalyzerEngine().analyze(text, language="en")` per document with its
   default recognizers, its spaCy NLP engine running the same spaCy model, configured
   (`ner_model_configuration`) to map PER/LOC/ORG to PERSON/LOCATION/ORGANIZATION and to
   ignore MISC (Presidio's stock configuration ignores ORGANIZATION; it is kept here).

spaCy and Presidio run with `import torch` blocked (`--peers-with-torch` lets it through):
neither uses PyTorch, but thinc imports it whenever it is installed, which would add about
315 MiB to their peaks; Larvatus's runtime does not import it either.

The HF, spaCy and Presidio rows time their processing call only, after loading and one
warm-up call on the first document (load time is printed apart). Words/s use Larvatus's
word counts for every row.

Corpora (`--corpus`): "conll" is the CoNLL-2003 validation file rebuilt as raw text (216
documents; `bench.corpus`), where each system's entities are scored against the gold
spans (exact character match, `larvatus.models.metrics`) after mapping its labels to CoNLL's:
PERSON->PER; GPE, LOC, FAC, LOCATION->LOC; ORG, ORGANIZATION->ORG; NORP, EVENT, PRODUCT,
WORK_OF_ART, LAW, LANGUAGE->MISC (Presidio: PERSON, LOCATION, ORGANIZATION only). Micro F1
over the four labels, per label, and over PER/LOC/ORG only (Presidio has no MISC) are
printed. "news" is the 240 news-like documents of the throughput benchmark: speed only.

Usage (from the repository root, in the venv with the `bench` and `train` extras):

    python bench/peers.py                                    # both corpora, 3 repeats
    python bench/peers.py --docs 10 --repeats 1 --spacy-train-minutes 1 --idle-wait 0
    python bench/peers.py --corpus news --systems larvatus,spacy
    python bench/peers.py --model models/default --model runs/model-case-int8 --json p.json
    python bench/peers.py --corpus conll --repeats 1 --cache /tmp/peers   # F1 only, elsewhere

The spaCy model is trained once per (seed, minutes) and cached under
CACHE/spacy-conll/ (`--cache`, default bench/.cache/). The machines this runs on are
noisy: trust medians.
"""

SYSTEMS = ("larvatus", "hf", "spacy", "presidio")
CORPORA = ("conll", "news")
CONLL_LABELS = ("PER", "LOC", "ORG", "MISC")
REDACTED = ("PER", "LOC", "ORG")
PER_LOC_ORG = "PER/LOC/ORG"
DEFAULT_MODEL = "models/default"
DEFAULT_CHECKPOINT = "runs/ckpt-case"

# Each system's labels to CoNLL's; a label not listed is not scored (DATE, EMAIL...).
LABEL_MAP = {
    "PER": "PER", "PERSON": "PER",
    "LOC": "LOC", "GPE": "LOC", "FAC": "LOC", "LOCATION": "LOC",
    "ORG": "ORG", "ORGANIZATION": "ORG",
    "MISC": "MISC", "NORP": "MISC", "EVENT": "MISC", "PRODUCT": "MISC",
    "WORK_OF_ART": "MISC", "LAW": "MISC", "LANGUAGE": "MISC",
}
# Presidio's findings: only its three NER entity types are scored (NRP is not MISC).
PRESIDIO_MAP = {"PERSON": "PER", "LOCATION": "LOC", "ORGANIZATION": "ORG"}
# Presidio's NLP engine over a spaCy model with CoNLL labels.
PRESIDIO_NER_CONFIGURATION = {
    "model_to_presidio_entity_mapping": {"PER": "PERSON", "LOC": "LOCATION",
                                         "ORG": "ORGANIZATION", "PERSON": "PERSON",
                                         "GPE": "LOCATION", "FAC": "LOCATION",
                                         "NORP": "NRP", "DATE": "DATE_TIME",
                                         "TIME": "DATE_TIME"},
    "labels_to_ignore": ["MISC", "CARDINAL", "EVENT", "LANGUAGE", "LAW", "MONEY", "ORDINAL",
                         "PERCENT", "PRODUCT", "QUANTITY", "WORK_OF_ART"],
}


# --------------------------------------------------------------------------- labels and F1

def map_label(label: str, system: str) -> Optional[str]:
    """A system's entity label as a CoNLL label, or None when it is not scored."""
    table = PRESIDIO_MAP if system.startswith("presidio") else LABEL_MAP
    return table.get(label.upper() if label else label)


def system_of(name: str) -> str:
    """'larvatus-default' -> 'larvatus' (a leg's name to its system)."""
    return name.split("-", 1)[0]


def mapped_spans(spans: Iterable[Sequence], system: str) -> list:
    """[start, end, label(, ...)] predictions as EntitySpans with CoNLL labels (others dropped)."""
    from larvatus.transforms.records import EntitySpan

    out = []
    for span in spans:
        label = map_label(span[2], system)
        if label is not None:
            out.append(EntitySpan(int(span[0]), int(span[1]), label, 1.0))
    return out


def keep_labels(spans: Iterable, labels: Sequence[str]) -> list:
    return [s for s in spans if s.label in labels]


def counts_dict(counts) -> dict:
    return {"precision": round(counts.precision, 4), "recall": round(counts.recall, 4),
            "f1": round(counts.f1, 4), "support": counts.tp + counts.fn,
            "predicted": counts.tp + counts.fp}


def score_predictions(golds: Sequence, predictions: dict, system: str) -> dict:
    """Exact-match scores of one system's predictions ({doc_id: [[start, end, label], ...]}).

    Returns {"micro", "PER", "LOC", "ORG", "MISC", "PER/LOC/ORG"} each with precision,
    recall, f1, support (gold entities) and predicted; a document without predictions
    counts as having none.
    """
    from larvatus.models import metrics

    all_counts, three_counts = [], []
    for gold in golds:
        predicted = mapped_spans(predictions.get(gold.doc_id, ()), system)
        all_counts.append(metrics.document_counts(gold.spans, predicted))
        three_counts.append(metrics.document_counts(keep_labels(gold.spans, REDACTED),
                                                    keep_labels(predicted, REDACTED)))
    totals = metrics.total(all_counts)
    result = {label: counts_dict(totals.get(label, metrics.Counts())) for label in CONLL_LABELS}
    result["micro"] = counts_dict(totals["micro"])
    result[PER_LOC_ORG] = counts_dict(metrics.total(three_counts)["micro"])
    return result


# --------------------------------------------------------------------------- HF casing

# BERT's basic tokenizer: every punctuation character is a word; other runs of
# non-whitespace are words (ASCII punctuation, and the common Unicode punctuation).
_PUNCT = (r"!-/:-@\[-`{-~"  # ASCII punctuation, then common Unicode punctuation
          r"\u00a1\u00a7\u00ab\u00b6\u00b7\u00bb\u00bf\u2010-\u2027\u2030-\u205e\u3000-\u303f")
_BERT_WORD = re.compile(rf"[{_PUNCT}]|[^\s{_PUNCT}]+")


def bert_words(text: str) -> tuple[list[int], list[int]]:
    """Start and end offsets of the words BERT's pre-tokenizer makes of `text`."""
    starts, ends = [], []
    for match in _BERT_WORD.finditer(text):
        starts.append(match.start())
        ends.append(match.end())
    return starts, ends


def casing_type_ids(text: str, offsets: Sequence[Sequence[int]], special: Sequence[int],
                    words: Optional[tuple[list[int], list[int]]] = None) -> list[int]:
    """Each piece's token type id as Larvatus's casing models expect: its word's casing.

    `offsets` are the pieces' (start, end) in `text`, `special` their special-token mask
    (special tokens take 0). The word of a piece is the BERT pre-tokenizer word holding
    its first character (`larvatus.transforms.encode.casing_type` of that word).
    """
    from larvatus.transforms.encode import casing_type

    starts, ends = words if words is not None else bert_words(text)
    types = []
    cache: dict[int, int] = {}
    for (start, end), is_special in zip(offsets, special):
        if is_special or end <= start:
            types.append(0)
            continue
        index = bisect.bisect_right(starts, start) - 1
        if index < 0 or start >= ends[index]:
            types.append(0)
            continue
        if index not in cache:
            cache[index] = casing_type(text[starts[index]:ends[index]])
        types.append(cache[index])
    return types


def casing_pipeline_class():
    """TokenClassificationPipeline whose chunks carry casing token type ids."""
    import torch
    from transformers import TokenClassificationPipeline

    class CasingTokenClassificationPipeline(TokenClassificationPipeline):
        def preprocess(self, sentence, offset_mapping=None, **preprocess_params):
            words = bert_words(sentence) if isinstance(sentence, str) else None
            for model_inputs in super().preprocess(sentence, offset_mapping, **preprocess_params):
                if words is not None and "offset_mapping" in model_inputs:
                    offsets = model_inputs["offset_mapping"][0].tolist()
                    special = model_inputs["special_tokens_mask"][0].tolist()
                    model_inputs["token_type_ids"] = torch.tensor(
                        [casing_type_ids(sentence, offsets, special, words)], dtype=torch.long)
                yield model_inputs

    return CasingTokenClassificationPipeline


# --------------------------------------------------------------------------- measurements

def _write_predictions(path: Optional[str], predictions: dict) -> None:
    if path:
        Path(path).write_text(json.dumps(predictions), encoding="utf-8")


def measure_hf_peer(checkpoint: str, docs: str, window: int = 256, overlap: int = 64,
                    batch_size: int = 8, type_ids: str = "auto",
                    predictions: Optional[str] = None) -> dict:
    """The HF token-classification pipeline over the documents, one timed call."""
    started = time.perf_counter()
    import torch
    from transformers import AutoModelForTokenClassification, AutoTokenizer, pipeline

    from bench.runners import peak_self_mib

    tokenizer = AutoTokenizer.from_pretrained(checkpoint)
    model = AutoModelForTokenClassification.from_pretrained(checkpoint, dtype=torch.float32)
    model.eval()
    declared = getattr(model.config, "larvatus_type_ids", "zeros")
    used = declared if type_ids == "auto" else type_ids
    tokenizer.model_max_length = window  # stride chunks are model_max_length pieces long
    extra = {"pipeline_class": casing_pipeline_class()} if used == "casing" else {}
    tagger = pipeline("token-classification", model=model, tokenizer=tokenizer,
                      aggregation_strategy="first", stride=overlap, device=-1, **extra)
    records = read_jsonl(Path(docs))
    texts = [r["text"] for r in records]
    tagger(texts[:1])
    load_seconds = time.perf_counter() - started
    start = time.perf_counter()
    with torch.inference_mode():
        results = tagger(texts, batch_size=batch_size)
    seconds = time.perf_counter() - start
    _write_predictions(predictions, {
        r["id"]: [[e["start"], e["end"], e["entity_group"]] for e in found]
        for r, found in zip(records, results)})
    return {"seconds": seconds, "load_seconds": load_seconds, "window": window,
            "stride": overlap, "batch_size": batch_size, "type_ids": used,
            "model_type_ids": declared, "torch_threads": torch.get_num_threads(),
            "entities": sum(len(r) for r in results), "checkpoint": checkpoint,
            "peak_rss_mib": peak_self_mib()}


def block_torch() -> bool:
    """Makes `import torch` fail in this process (before spaCy is imported); True if it did.

    thinc imports PyTorch whenever it is installed (+315 MiB of RSS here), though neither
    spaCy's CNN pipelines nor Presidio use it: blocked, they run as installed without it.
    """
    if "torch" in sys.modules:
        return sys.modules["torch"] is None
    sys.modules["torch"] = None  # type: ignore[assignment]
    return True


def measure_spacy_peer(model: str, docs: str, predictions: Optional[str] = None,
                       without_torch: bool = True, batch_size: Optional[int] = None) -> dict:
    """`nlp.pipe(texts)` with a spaCy pipeline, one timed pass."""
    started = time.perf_counter()
    torch_blocked = block_torch() if without_torch else False
    import spacy

    from bench.runners import peak_self_mib

    nlp = spacy.load(model)
    records = read_jsonl(Path(docs))
    texts = [r["text"] for r in records]
    nlp(texts[0])
    load_seconds = time.perf_counter() - started
    start = time.perf_counter()
    batch = batch_size or nlp.batch_size  # None: the pipeline's own (its config's [nlp])
    parsed = list(nlp.pipe(texts, batch_size=batch))
    seconds = time.perf_counter() - start
    _write_predictions(predictions, {
        r["id"]: [[e.start_char, e.end_char, e.label_] for e in doc.ents]
        for r, doc in zip(records, parsed)})
    return {"seconds": seconds, "load_seconds": load_seconds, "pipeline": list(nlp.pipe_names),
            "batch_size": batch,
            "model_name": f"{nlp.meta.get('lang')}_{nlp.meta.get('name')}",
            "spacy_version": spacy.__version__, "entities": sum(len(d.ents) for d in parsed),
            "torch_blocked": torch_blocked, "peak_rss_mib": peak_self_mib()}


def presidio_analyzer(model: str):
    """Presidio's AnalyzerEngine with its default recognizers over a spaCy model."""
    from presidio_analyzer import AnalyzerEngine
    from presidio_analyzer.nlp_engine import NlpEngineProvider

    configuration = {"nlp_engine_name": "spacy",
                     "models": [{"lang_code": "en", "model_name": model}],
                     "ner_model_configuration": PRESIDIO_NER_CONFIGURATION}
    engine = NlpEngineProvider(nlp_configuration=configuration).create_engine()
    return AnalyzerEngine(nlp_engine=engine, supported_languages=["en"])


def measure_presidio_peer(model: str, docs: str, predictions: Optional[str] = None,
                          without_torch: bool = True) -> dict:
    """`analyzer.analyze(text, language="en")` for each document, timed together."""
    started = time.perf_counter()
    torch_blocked = block_torch() if without_torch else False
    from bench.runners import peak_self_mib

    analyzer = presidio_analyzer(model)
    records = read_jsonl(Path(docs))
    texts = [r["text"] for r in records]
    analyzer.analyze(text=texts[0], language="en")
    load_seconds = time.perf_counter() - started
    start = time.perf_counter()
    results = [analyzer.analyze(text=text, language="en") for text in texts]
    seconds = time.perf_counter() - start
    by_type: dict[str, int] = {}
    for found in results:
        for r in found:
            by_type[r.entity_type] = by_type.get(r.entity_type, 0) + 1
    _write_predictions(predictions, {
        rec["id"]: [[r.start, r.end, r.entity_type, round(r.score, 3)] for r in found]
        for rec, found in zip(records, results)})
    recognizers = sorted({type(r).__name__ for r in analyzer.registry.recognizers})
    return {"seconds": seconds, "load_seconds": load_seconds, "entities": sum(by_type.values()),
            "entities_by_type": dict(sorted(by_type.items())), "recognizers": recognizers,
            "torch_blocked": torch_blocked, "peak_rss_mib": peak_self_mib()}


def larvatus_entities(out: str) -> dict:
    """{doc_id: [[start, end, label, propagated], ...]} from a job's Parquet files."""
    import pyarrow.parquet as pq

    from bench.runners import annotation_files

    found: dict[str, list] = {}
    for path in annotation_files(out):
        table = pq.read_table(path, columns=["id", "entities"])
        for row in table.to_pylist():
            found.setdefault(row["id"], []).extend(
                [e["start"], e["end"], e["label"], bool(e["propagated"])]
                for e in row["entities"])
    return found


def measure_larvatus_peer(model_dir: str, docs: str, out: str, log: str,
                          predictions: Optional[str] = None, extra: Sequence[str] = ()) -> dict:
    """`python -m larvatus.run` end to end (bench.runners.measure_larvatus), then its entities."""
    from bench.runners import measure_larvatus

    result = measure_larvatus(model_dir, docs, out, log, extra=list(extra))
    result["options"] = list(extra)
    found = larvatus_entities(out)
    _write_predictions(predictions, found)
    result["entities"] = sum(len(v) for v in found.values())
    result["propagated"] = sum(e[3] for v in found.values() for e in v)
    return result


def prepare_peers(model_dir: str, corpora: Sequence[str], docs: Optional[int],
                  seed: int, conll_file: str, cache: str = str(CACHE)) -> dict:
    """Writes the corpora (into `cache`, bench/.cache/ by default) and counts them as Larvatus does."""
    from bench.corpus import corpus_counts, write_corpus
    from larvatus.models.model_dir import load_model_spec
    from larvatus.transforms.encode import default_overlap

    window = load_model_spec(model_dir).max_length
    overlap = default_overlap(window)
    written = {}
    for kind in corpora:
        spec = CorpusSpec(kind, docs, None, seed, conll_file)
        corpus = write_corpus(spec, Path(cache))
        written[kind] = {**corpus, **corpus_counts(Path(model_dir), Path(corpus["path"]), overlap)}
    return {"corpora": written, "window": window, "overlap": overlap}


# --------------------------------------------------------------------------- driver

def model_label(path: str) -> str:
    """A short name for a Larvatus model directory (models/default -> default)."""
    return Path(path).name or str(path)


def larvatus_leg(model_dir: str, threshold: str) -> str:
    """'larvatus-default' (the CLI's defaults) or 'larvatus-default-t1' (--redact-threshold 1)."""
    suffix = "" if threshold == "default" else f"-t{threshold}"
    return f"larvatus-{model_label(model_dir)}{suffix}"


def recorded_checkpoint(model_dir: str) -> Optional[str]:
    try:
        config = json.loads((Path(model_dir) / "larvatus_model.json").read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    return config.get("checkpoint")


def same_path(a: Optional[str], b: Optional[str]) -> bool:
    if not a or not b:
        return False
    resolve = lambda p: Path(p) if Path(p).is_absolute() else (REPO / p)  # noqa: E731
    return resolve(a).resolve() == resolve(b).resolve()


def legs(args: argparse.Namespace, prepared: dict, spacy_model: Optional[str],
         kind: str) -> list[tuple[str, str, dict]]:
    """(name, call, params) of every measurement on one corpus."""
    corpus = prepared["corpora"][kind]
    docs = corpus["path"]
    cache = Path(args.cache)
    planned = []

    def predictions(name: str) -> str:
        return str(cache / f"peers-pred-{kind}-{name}.json")

    if "larvatus" in args.systems:
        for model_dir in args.model:
            for threshold in args.larvatus_thresholds:
                name = larvatus_leg(model_dir, threshold)
                extra = [] if threshold == "default" else ["--redact-threshold", threshold]
                planned.append((name, "bench.peers:measure_larvatus_peer", {
                    "model_dir": str(Path(model_dir).resolve()), "docs": docs,
                    "out": str(cache / f"peers-out-{kind}-{name}"),
                    "log": str(cache / f"log-peers-pipeline-{kind}-{name}.txt"),
                    "predictions": predictions(name), "extra": extra}))
    if "hf" in args.systems and args.hf_checkpoint:
        planned.append(("hf-pipeline", "bench.peers:measure_hf_peer", {
            "checkpoint": str(Path(args.hf_checkpoint).resolve()), "docs": docs,
            "window": prepared["window"], "overlap": prepared["overlap"],
            "batch_size": args.hf_batch_size, "type_ids": args.hf_type_ids,
            "predictions": predictions("hf-pipeline")}))
    if "spacy" in args.systems and spacy_model:
        planned.append(("spacy-small", "bench.peers:measure_spacy_peer", {
            "model": spacy_model, "docs": docs, "predictions": predictions("spacy-small"),
            "without_torch": not args.peers_with_torch, "batch_size": args.spacy_batch_size}))
    if "presidio" in args.systems and spacy_model:
        planned.append(("presidio-analyzer", "bench.peers:measure_presidio_peer", {
            "model": spacy_model, "docs": docs,
            "predictions": predictions("presidio-analyzer"),
            "without_torch": not args.peers_with_torch}))
    return planned


def read_predictions(path: str) -> dict:
    return json.loads(Path(path).read_text(encoding="utf-8"))


def scored_predictions(predictions: dict, system: str) -> dict:
    """Larvatus's predictions without its propagated mentions; others as they are."""
    if system != "larvatus":
        return predictions
    return {doc: [e for e in spans if not e[3]] for doc, spans in predictions.items()}


def benchmark(args: argparse.Namespace, prepared: dict, spacy_model: Optional[str]) -> dict:
    """Every corpus's legs, repeated and interleaved; F1 of each on the CoNLL corpus."""
    from larvatus.models.conll import read_documents

    output: dict[str, Any] = {}
    for kind in args.corpus:
        planned = legs(args, prepared, spacy_model, kind)
        runs: dict[str, list[dict]] = {name: [] for name, _, _ in planned}
        first_predictions: dict[str, dict] = {}
        stable: dict[str, bool] = {}
        print(f"\n{kind}: {len(planned)} systems, {args.repeats} repeat(s)", flush=True)
        for repeat in range(args.repeats):
            for name, call, params in planned:
                result = run_child(call, params, tag=f"peers-{kind}-{name}",
                                   idle_wait=args.idle_wait, timeout=args.timeout,
                                   cache=Path(args.cache))
                runs[name].append(result)
                found = read_predictions(params["predictions"])
                if name in first_predictions:
                    stable[name] = stable.get(name, True) and found == first_predictions[name]
                else:
                    first_predictions[name] = found
                print(f"  repeat {repeat + 1}/{args.repeats} {name:<22} {result['seconds']:8.2f} s"
                      f"  peak {result['peak_rss_mib']:7.0f} MiB{rep.disturbance(result)}",
                      flush=True)
        scores = {}
        if kind == "conll":
            golds = read_documents(args.conll_file)[:args.docs]
            for name, found in first_predictions.items():
                system = system_of(name)
                scores[name] = score_predictions(golds, scored_predictions(found, system), system)
                if system == "larvatus":
                    with_propagated = score_predictions(golds, found, system)["micro"]
                    scores[name]["with_propagated"] = with_propagated
        output[kind] = {"runs": runs, "scores": scores, "predictions_stable": stable}
    return output


# --------------------------------------------------------------------------- report

def titles_for(args: argparse.Namespace, spacy_record: Optional[dict]) -> dict[str, str]:
    titles = {}
    for model_dir in args.model:
        for threshold in args.larvatus_thresholds:
            how = ("defaults" if threshold == "default"
                   else f"--redact-threshold {threshold}")
            titles[larvatus_leg(model_dir, threshold)] = f"Larvatus {model_dir}, {how}"
    titles["hf-pipeline"] = ("HF pipeline, PyTorch fp32, same weights" +
                             (", type ids 0" if args.hf_type_ids == "zeros" else ""))
    spacy_title = (spacy_record or {}).get("title") or f"spaCy {args.spacy_model}"
    titles["spacy-small"] = spacy_title + (f", nlp.pipe batch_size {args.spacy_batch_size}"
                                           if args.spacy_batch_size else "")
    titles["presidio-analyzer"] = "Presidio AnalyzerEngine (default recognizers + that spaCy model)"
    return titles


def figures(runs: dict[str, list[dict]], words: int) -> dict[str, dict]:
    out = {}
    for name, results in runs.items():
        seconds, fastest, slowest = rep.spread(results)
        entry = {"seconds": seconds, "min_seconds": fastest, "max_seconds": slowest,
                 "words_per_s": rep.rate(words, seconds),
                 "peak_rss_mib": rep.median_of(results, "peak_rss_mib"),
                 "all_seconds": [r["seconds"] for r in results]}
        if all("pipeline_wall_seconds" in r for r in results):
            wall = rep.median_of(results, "pipeline_wall_seconds")
            entry.update(pipeline_wall_seconds=wall, words_per_s_pipeline=rep.rate(words, wall))
        if all("load_seconds" in r for r in results):
            entry["load_seconds"] = rep.median_of(results, "load_seconds")
        out[name] = entry
    return out


def f1_text(score: Optional[dict], key: str) -> str:
    if not score or key not in score:
        return "-"
    return f"{score[key]['f1']:.3f}"


def table_lines(kind: str, figs: dict, scores: dict, titles: dict) -> list[str]:
    head = (f"{'system':<66} {'median s':>8} {'min':>7} {'max':>7} {'words/s':>8} "
            f"{'peak MiB':>8}")
    if kind == "conll":
        head += f" {'micro F1':>8} {'PER':>6} {'LOC':>6} {'ORG':>6} {'MISC':>6} {'P/L/O F1':>8}"
    lines = [head]
    for name, f in figs.items():
        line = (f"{titles.get(name, name)[:66]:<66} {f['seconds']:8.2f} {f['min_seconds']:7.2f} "
                f"{f['max_seconds']:7.2f} {f['words_per_s']:8.0f} {f['peak_rss_mib']:8.0f}")
        if kind == "conll":
            s = scores.get(name)
            line += (f" {f1_text(s, 'micro'):>8} {f1_text(s, 'PER'):>6} {f1_text(s, 'LOC'):>6} "
                     f"{f1_text(s, 'ORG'):>6} {f1_text(s, 'MISC'):>6} {f1_text(s, PER_LOC_ORG):>8}")
        lines.append(line)
    return lines


def detail_lines(name: str, run: dict, fig: dict) -> list[str]:
    system = system_of(name)
    if system == "larvatus":
        return [f"  {name}: pipeline wall {fig.get('pipeline_wall_seconds', 0):.2f} s "
                f"({fig.get('words_per_s_pipeline', 0):,.0f} words/s without start-up); "
                f"{run['entities']:,} entities, {run['propagated']:,} of them propagated "
                f"(not scored)"]
    load = f"load + warm-up {run['load_seconds']:.1f} s not timed"
    if system == "hf":
        return [f"  {name}: {load}; window {run['window']}, stride {run['stride']}, batch "
                f"{run['batch_size']}, token type ids {run['type_ids']} (model trained with "
                f"{run['model_type_ids']}), torch threads {run['torch_threads']}; "
                f"{run['entities']:,} entity groups; {run['checkpoint']}"]
    torch = "; PyTorch import blocked" if run.get("torch_blocked") else "; PyTorch imported"
    if system == "spacy":
        return [f"  {name}: {load}; pipeline {run['pipeline']}, nlp.pipe batch_size "
                f"{run['batch_size']}, spaCy {run['spacy_version']}; {run['entities']:,} "
                f"entities{torch}"]
    by_type = ", ".join(f"{k} {v}" for k, v in run["entities_by_type"].items())
    return [f"  {name}: {load}; {len(run['recognizers'])} recognizers; findings: {by_type}"
            f"{torch}"]


def score_lines(scores: dict, titles: dict) -> list[str]:
    lines = ["Per label on CoNLL validation (precision / recall / F1, gold support):"]
    for name, s in scores.items():
        lines.append(f"  {titles.get(name, name)}")
        for key in (*CONLL_LABELS, "micro", PER_LOC_ORG):
            c = s[key]
            lines.append(f"    {key:<12} P {c['precision']:.4f}  R {c['recall']:.4f}  "
                         f"F1 {c['f1']:.4f}  gold {c['support']:,}  predicted {c['predicted']:,}")
        if "with_propagated" in s:
            c = s["with_propagated"]
            lines.append(f"    micro with the propagated mentions: P {c['precision']:.4f}  "
                         f"R {c['recall']:.4f}  F1 {c['f1']:.4f}")
    return lines


def report(args: argparse.Namespace, prepared: dict, measured: dict,
           spacy_record: Optional[dict]) -> dict:
    titles = titles_for(args, spacy_record)
    result = {}
    for kind, data in measured.items():
        corpus = prepared["corpora"][kind]
        words = corpus["words"]
        figs = figures(data["runs"], words)
        print()
        print(f"{kind}: {corpus['documents']:,} documents from {corpus['origin']}, sha256 "
              f"{corpus['sha256']}: {words:,} words (Larvatus's count, used for every row), "
              f"median {corpus['median_words_per_doc']:.0f} words/doc")
        print(f"Medians of {args.repeats} interleaved repeat(s), with min and max; Larvatus "
              f"timed as a whole process, the others around their processing call.")
        for line in table_lines(kind, figs, data["scores"], titles):
            print(line)
        for name, results in data["runs"].items():
            for line in detail_lines(name, rep.median_run(results), figs[name]):
                print(line)
        unstable = [n for n, ok in data["predictions_stable"].items() if not ok]
        if unstable:
            print(f"  predictions differed between repeats for: {', '.join(unstable)} "
                  f"(F1 is the first repeat's)")
        if data["scores"]:
            print()
            for line in score_lines(data["scores"], titles):
                print(line)
        result[kind] = {"figures": figs, "scores": data["scores"],
                        "predictions_stable": data["predictions_stable"]}
    return result


# --------------------------------------------------------------------------- CLI

def parse_args(argv: Optional[Sequence[str]] = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(
        prog="python bench/peers.py", description=__doc__.split("\n\n")[0],
        formatter_class=argparse.RawDescriptionHelpFormatter, epilog=USAGE)
    parser.add_argument("--corpus", choices=(*CORPORA, "both"), default="both",
                        help="conll (speed and F1), news (speed only) or both (default).")
    parser.add_argument("--docs", type=int, default=None,
                        help="Only the first N documents of each corpus (default: all CoNLL "
                             "validation documents, 240 news documents).")
    parser.add_argument("--conll-file", default=str(CONLL_VALID),
                        help="CoNLL file scored (default the shared valid.txt).")
    parser.add_argument("--seed", type=int, default=0, help="News corpus seed.")
    parser.add_argument("--systems", default=",".join(SYSTEMS),
                        help=f"Comma-separated subset of {','.join(SYSTEMS)} (default all).")
    parser.add_argument("--model", action="append", default=None,
                        help=f"Larvatus model directory (default {DEFAULT_MODEL}); repeat to "
                             "measure several.")
    parser.add_argument("--larvatus-thresholds", default="default,1",
                        help="Larvatus rows by --redact-threshold, comma-separated: 'default' "
                             "runs the CLI's defaults (recall-first: low-probability words of "
                             "PER/LOC/ORG become entities, as redaction wants); 1 keeps the "
                             "model's argmax tags, the entity annotations larvatus.models.evaluate "
                             "scores (default: default,1).")
    parser.add_argument("--hf-checkpoint", default=None,
                        help="PyTorch checkpoint of the same weights for the HF row (default: "
                             "the checkpoint the first --model records in larvatus_model.json, "
                             f"else {DEFAULT_CHECKPOINT}); the row is skipped when it is missing.")
    parser.add_argument("--hf-type-ids", choices=("auto", "casing", "zeros"), default="auto",
                        help="Token type ids for the HF pipeline: auto (default) follows the "
                             "checkpoint's larvatus_type_ids; zeros is plain pipeline().")
    parser.add_argument("--hf-batch-size", type=int, default=8)
    parser.add_argument("--spacy-model", default=None,
                        help="A spaCy pipeline (name or directory) instead of training the "
                             "small architecture here (e.g. en_core_web_sm where installed).")
    parser.add_argument("--spacy-batch-size", type=int, default=None,
                        help="batch_size for nlp.pipe (default: the pipeline's own, 1000 for "
                             "the config `spacy init config` writes; peak memory grows with it).")
    parser.add_argument("--spacy-train-minutes", type=float, default=10.0,
                        help="Training time cap for the spaCy substitute (default 10).")
    parser.add_argument("--spacy-train-steps", type=int, default=None,
                        help="Also stop its training after this many updates.")
    parser.add_argument("--spacy-train-threads", type=int, default=2)
    parser.add_argument("--spacy-train-file", default=str(CONLL_TRAIN),
                        help="CoNLL file the spaCy substitute is trained on (default the "
                             "shared train.txt).")
    parser.add_argument("--spacy-seed", type=int, default=0)
    parser.add_argument("--spacy-retrain", action="store_true",
                        help="Train again even if a cached model exists.")
    parser.add_argument("--peers-with-torch", action="store_true",
                        help="Let spaCy and Presidio import PyTorch (thinc does whenever it is "
                             "installed: +315 MiB peak); by default they run as installed "
                             "without it, as Larvatus's runtime does.")
    parser.add_argument("--repeats", type=int, default=3,
                        help="Interleaved repeats of each measurement; medians are printed.")
    parser.add_argument("--idle-wait", type=float, default=120.0,
                        help="Before each measurement wait up to this many seconds for other "
                             "processes to go quiet (default 120; 0 disables).")
    parser.add_argument("--timeout", type=float, default=3600.0,
                        help="Seconds one measurement may take (default 3600).")
    parser.add_argument("--cache", default=str(CACHE),
                        help="Directory for corpora, outputs, predictions and logs (default "
                             "bench/.cache/; the spaCy substitute is cached there too).")
    parser.add_argument("--json", default=None, help="Write every figure to this file.")
    args = parser.parse_args(argv)
    args.systems = [s.strip() for s in args.systems.split(",") if s.strip()]
    unknown = sorted(set(args.systems) - set(SYSTEMS))
    if unknown:
        parser.error(f"unknown system(s) {unknown}; choose from {SYSTEMS}")
    args.corpus = list(CORPORA) if args.corpus == "both" else [args.corpus]
    args.model = args.model or [DEFAULT_MODEL]
    if args.hf_checkpoint is None:
        args.hf_checkpoint = recorded_checkpoint(args.model[0]) or DEFAULT_CHECKPOINT
    args.larvatus_thresholds = [t.strip() for t in args.larvatus_thresholds.split(",")
                                if t.strip()]
    for threshold in args.larvatus_thresholds:
        if threshold != "default":
            try:
                if not 0.0 < float(threshold) <= 1.0:
                    raise ValueError
            except ValueError:
                parser.error(f"--larvatus-thresholds: {threshold!r} is not 'default' or in (0, 1]")
    if args.repeats < 1 or (args.docs is not None and args.docs < 1):
        parser.error("--docs and --repeats must be positive")
    if args.spacy_train_minutes <= 0:
        parser.error("--spacy-train-minutes must be positive")
    return args


def main(argv: Optional[Sequence[str]] = None) -> int:
    args = parse_args(argv)
    started = time.perf_counter()
    output: dict[str, Any] = {"args": vars(args), "python": sys.version.split()[0],
                              "cpus": os.cpu_count()}
    if "hf" in args.systems:
        if args.hf_checkpoint and not (Path(args.hf_checkpoint) / "config.json").is_file():
            print(f"No checkpoint at {args.hf_checkpoint}: the HF row is skipped.")
            args.hf_checkpoint = None
        for model_dir in args.model:
            recorded = recorded_checkpoint(model_dir)
            if args.hf_checkpoint and not same_path(recorded, args.hf_checkpoint):
                print(f"NOTE: {model_dir} records checkpoint {recorded!r}, not "
                      f"{args.hf_checkpoint}: its row and the HF row are not the same weights.")
    spacy_model, spacy_record = args.spacy_model, None
    if spacy_model is None and {"spacy", "presidio"} & set(args.systems):
        print(f"spaCy substitute: seed {args.spacy_seed}, {args.spacy_train_minutes:g} min cap "
              f"(cached under {Path(args.cache) / 'spacy-conll'}) ...", flush=True)
        spacy_record = run_child("bench.spacy_conll:train_cached", {
            "minutes": args.spacy_train_minutes, "seed": args.spacy_seed,
            "threads": args.spacy_train_threads, "max_steps": args.spacy_train_steps,
            "retrain": args.spacy_retrain, "root": str(Path(args.cache) / "spacy-conll"),
            "train_path": args.spacy_train_file, "valid_path": args.conll_file},
            tag="peers-spacy-train", idle_wait=args.idle_wait, cache=Path(args.cache))
        spacy_model = spacy_record["model"]
        scores = spacy_record["valid_spacy_scorer"]
        print(f"  {'reused' if spacy_record['reused'] else 'trained'} {spacy_model}: "
              f"{spacy_record['steps']} steps, {spacy_record['epochs_completed']} epochs "
              f"completed in {spacy_record['train_seconds']:.0f} s; spaCy scorer on "
              f"valid: P {scores['ents_p']:.4f} R {scores['ents_r']:.4f} F {scores['ents_f']:.4f}")
        output["spacy_training"] = {k: v for k, v in spacy_record.items()}
    print(f"Preparing corpora {', '.join(args.corpus)} ({args.cache}) ...", flush=True)
    prepared = run_child("bench.peers:prepare_peers", {
        "model_dir": str(Path(args.model[0]).resolve()), "corpora": args.corpus,
        "docs": args.docs, "seed": args.seed, "conll_file": args.conll_file,
        "cache": args.cache}, tag="peers-prepare", cache=Path(args.cache))
    output["prepared"] = prepared
    output["measured"] = measured = benchmark(args, prepared, spacy_model)
    output["report"] = report(args, prepared, measured, spacy_record)
    output["total_seconds"] = time.perf_counter() - started
    if args.json:
        Path(args.json).write_text(json.dumps(output, indent=2, default=str), encoding="utf-8")
        print(f"\nAll figures written to {args.json}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
