"""Throughput benchmark: Larvatus end to end against the Hugging Face pipeline and raw ONNX Runtime."""
from __future__ import annotations

import argparse
import json
import os
import sys
import time
from pathlib import Path
from typing import Any, Optional, Sequence

if __package__ in (None, ""):  # `python bench/throughput.py`: import bench.* from the root
    sys.path[0] = str(Path(__file__).resolve().parents[1])

from bench import report as rep  # noqa: E402
from bench.corpus import CACHE, CONLL_VALID, KINDS, CorpusSpec  # noqa: E402
from bench.runners import HF_CONFIGS, run_child  # noqa: E402

USAGE = """\
One run measures, on the same documents (`bench.corpus`) and the same weights
(`bench.weights`: the packaged MiniLM-L6-H384 with a fresh, seeded CoNLL head, speed not
depending on training; or `--model DIR --checkpoint CKPT`), each in its own subprocess
(`bench.runners`):

1. **HF** - `transformers.pipeline("token-classification", aggregation_strategy="first")`
   in PyTorch, `--hf-config`: "tuned" like Larvatus (windows of 256, stride 64,
   batch_size 8) and/or "users" as users run it (the model's max length, stride=32,
   batch_size=16); timed around the `pipe(texts)` call only, after a warm-up call. On
   `--device cuda` it runs on the GPU in fp16 when torch has CUDA, else on CPU in fp32.
2. **raw ORT** - Larvatus's own windows and batches through `larvatus.models.batching.run_in_batches`
   and the handler's session (CUDA with IO binding on `--device cuda`), the loop alone
   timed after a warm-up batch: the ceiling for inference.
3. **Larvatus** - `python -m larvatus.run --device D` on the DirectRunner, JSONL to
   Parquet, the whole process timed (start-up, imports and the model check included),
   with its `_SUMMARY.json` (time per stage, inference included).

Weights built here are exported twice: on CPU int8 (Larvatus's default there) and fp32 (the
same precision as HF's), on CUDA fp16 and fp32 (`--no-fp32`: the first only). Measurements
are repeated `--repeats` times, interleaved; medians, min and max are printed with the
ratios, peak memory and Larvatus's time per stage. Before each measurement the driver
waits (up to `--idle-wait` s) for other processes to go quiet and reports how much CPU
they used meanwhile.

Usage (from the repository root, in the venv with the `train` extra):

    python bench/throughput.py                        # 240 news-like documents, 3 repeats
    python bench/throughput.py --docs 20 --repeats 1  # a quick check
    python bench/throughput.py --words 1000000        # a million words, start-up amortised
    python bench/throughput.py --targets              # the three speed-target ratios, one run
    python bench/throughput.py --corpus long          # 24 documents of 5,000-15,000 words
    python bench/throughput.py --memory-scaling       # Larvatus peak RSS on N and 10N docs
    python bench/throughput.py --device cuda          # see bench/gpu.sh
    python bench/throughput.py --model models/default --checkpoint runs/ckpt --json out.json
    python bench/throughput.py --targets --model models/default --model-label embedded \
        --checkpoint fresh-head                       # the embedded model; HF on the same
                                                      # architecture with the bench's head

The machines this runs on are noisy: trust medians over several repeats, not one run.
"""

PRECISIONS = {"cpu": ("int8", "fp32"), "cuda": ("fp16", "fp32")}


# --------------------------------------------------------------------------- preparation

FRESH_HEAD = "fresh-head"   # --checkpoint: HF on the bench's own checkpoint (same architecture)


def corpus_spec(args: argparse.Namespace) -> CorpusSpec:
    return CorpusSpec(args.corpus, args.docs, args.words, args.seed, args.conll_file)


def prepare(options: dict) -> dict:
    """Builds (or reuses) weights and model directories, writes the corpora, counts them.

    Runs in a child process (it imports torch); `options` is vars() of the CLI's args.
    """
    from bench.corpus import corpus_counts, write_corpus
    from bench.weights import bench_models
    from larvatus.models.model_dir import load_model_spec
    from larvatus.transforms.encode import default_overlap

    args = argparse.Namespace(**options)
    checkpoint = str(Path(args.checkpoint).resolve()) \
        if args.checkpoint and args.checkpoint != FRESH_HEAD else None
    if args.model:
        models = {args.model_label: str(Path(args.model).resolve())}
        if args.checkpoint == FRESH_HEAD:   # HF on the same architecture, the bench's head
            checkpoint, _ = bench_models((), args.seed, args.entity_rate)
    else:
        precisions = PRECISIONS[args.device][:1 if args.no_fp32 else 2]
        checkpoint, models = bench_models(precisions, args.seed, args.entity_rate)
    first = next(iter(models.values()))
    window = load_model_spec(first).max_length
    overlap = default_overlap(window)
    spec = corpus_spec(args)
    specs = {"corpus": spec, "scaled": spec.scaled(10)} if args.memory_scaling else {"corpus": spec}
    corpora = {}
    for key, each in specs.items():
        written = write_corpus(each, CACHE)
        corpora[key] = {**written, **corpus_counts(Path(first), Path(written["path"]), overlap)}
    return {"models": models, "checkpoint": checkpoint, "window": window, "overlap": overlap,
            **corpora}


# --------------------------------------------------------------------------- measurements

def larvatus_extra(args: argparse.Namespace) -> list[str]:
    return ["--batch-tokens", str(args.batch_tokens)] if args.batch_tokens else []


def legs(args: argparse.Namespace, prepared: dict) -> list[tuple[str, str, dict]]:
    """(name, runner, params) of every measurement: HF rows, raw ORT and Larvatus per model."""
    docs = prepared["corpus"]["path"]
    out: list[tuple[str, str, dict]] = []
    if prepared["checkpoint"] and args.hf_config != "none":
        configs = list(HF_CONFIGS) if args.hf_config == "both" else [args.hf_config]
        for config in configs:
            out.append((f"hf-{config}", "bench.runners:measure_hf", {
                "checkpoint": prepared["checkpoint"], "docs": docs, "config": config,
                "window": prepared["window"], "overlap": prepared["overlap"],
                "batch_size": args.hf_batch_size, "device": args.device}))
    for label, model_dir in prepared["models"].items():
        out.append((f"ort-{label}", "bench.runners:measure_ort", {
            "model_dir": model_dir, "docs": docs, "overlap": prepared["overlap"],
            "device": args.device, "batch_tokens": args.batch_tokens}))
    for label, model_dir in prepared["models"].items():
        out.append((f"larvatus-{label}", "bench.runners:measure_larvatus", {
            "model_dir": model_dir, "docs": docs, "out": str(CACHE / f"out-{label}"),
            "log": str(CACHE / f"log-pipeline-{label}.txt"), "device": args.device,
            "extra": larvatus_extra(args)}))
    return out


def benchmark(args: argparse.Namespace, prepared: dict) -> dict:
    """The interleaved, repeated measurements; returns every run's figures by name."""
    planned = legs(args, prepared)
    runs: dict[str, list[dict]] = {name: [] for name, _, _ in planned}
    for repeat in range(args.repeats):
        for name, call, params in planned:
            result = run_child(call, params, tag=name, idle_wait=args.idle_wait)
            runs[name].append(result)
            print(f"  repeat {repeat + 1}/{args.repeats} {name:<16} {result['seconds']:8.2f} s"
                  f"  peak {result['peak_rss_mib']:7.0f} MiB{rep.disturbance(result)}", flush=True)
    return {"runs": runs}


def memory_scaling(args: argparse.Namespace, prepared: dict) -> dict:
    """Larvatus's peak RSS on the corpus and on 10 times it (first model), one run each.

    Peak RSS hardly varies between runs, unlike time, so this does not repeat.
    """
    label, model_dir = next(iter(prepared["models"].items()))
    results = {}
    for key in ("corpus", "scaled"):
        corpus = prepared[key]
        run = run_child("bench.runners:measure_larvatus", {
            "model_dir": model_dir, "docs": corpus["path"], "out": str(CACHE / f"out-mem-{key}"),
            "log": str(CACHE / f"log-pipeline-mem-{key}.txt"), "device": args.device,
            "extra": larvatus_extra(args)}, tag=f"mem-{key}", idle_wait=args.idle_wait)
        results[corpus["name"]] = {
            "documents": corpus["documents"], "words": corpus["words"],
            "peak_rss_mib": run["peak_rss_mib"], "seconds": run["seconds"],
            "words_per_s": rep.rate(corpus["words"], run["seconds"])}
        print(f"  Larvatus {label}, {corpus['documents']:,} docs ({corpus['words']:,} words): "
              f"peak {run['peak_rss_mib']:.0f} MiB, {run['seconds']:.1f} s, "
              f"{rep.rate(corpus['words'], run['seconds']):.0f} words/s{rep.disturbance(run)}",
              flush=True)
    small, large = results.values()
    ratio = rep.memory_ratio(small, large)
    print(f"Peak memory ratio for 10x the corpus: {ratio:.3f}"
          f"{rep.verdict(ratio, rep.TARGET_MEMORY_RATIO, at_least=False)}")
    return {"model": model_dir, "by_corpus": results, "peak_ratio": ratio,
            "target": rep.TARGET_MEMORY_RATIO}


def targets(args: argparse.Namespace) -> dict:
    """The speed targets in one run: two corpora, then the three ratios.

    1. The news documents (240 by default; `--docs`): HF as users run it, the raw loop
       and Larvatus; Larvatus/HF-users >= 5x and Larvatus/raw >= 0.8, whole process.
    2. A million words (`--words`): the raw loop and Larvatus, start-up amortised;
       Larvatus/raw >= 0.9.
    One precision only (int8 on CPU, fp16 on CUDA), `--repeats` interleaved repeats each.
    """
    phases = (("documents", {"docs": args.docs, "words": None, "hf_config": "users"},
               rep.TARGET_VS_ORT),
              ("million", {"docs": None, "words": args.words or 1_000_000, "hf_config": "none"},
               rep.TARGET_VS_ORT_MILLION))
    out: dict[str, Any] = {}
    for key, overrides, ort_target in phases:
        sub = argparse.Namespace(**{**vars(args), "corpus": "news", "no_fp32": True,
                                    "targets": False, **overrides})
        print(f"\n=== {key}: preparing the {corpus_spec(sub).name} corpus ...", flush=True)
        prepared = run_child("bench.throughput:prepare", {"options": vars(sub)},
                             tag=f"prepare-{key}")
        measured = benchmark(sub, prepared)
        out[key] = {"prepared": prepared, "measured": measured,
                    **rep.report(prepared, measured, sub.repeats, ort_target)}
    label = next(iter(out["documents"]["prepared"]["models"]))
    names = [f"{out[key]['prepared']['corpus']['documents']:,} documents "
             f"({out[key]['prepared']['corpus']['words']:,} words)" for key in ("documents", "million")]
    checks = rep.target_checks(out["documents"]["figures"], out["million"]["figures"], label,
                               names)
    print("\nSpeed targets (words/s ratios; Larvatus timed as a whole process, in brackets "
          "its pipeline wall time):")
    for line in rep.target_lines(checks):
        print(line)
    out["targets"] = checks
    return out


# --------------------------------------------------------------------------- CLI

def parse_args(argv: Optional[Sequence[str]] = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(
        prog="python bench/throughput.py", description=__doc__.split("\n\n")[0],
        formatter_class=argparse.RawDescriptionHelpFormatter, epilog=USAGE)
    corpus = parser.add_argument_group("corpus (bench.corpus)")
    corpus.add_argument("--corpus", choices=KINDS, default="news",
                        help="news-like documents (default), long documents (5,000-15,000 "
                             "words each) or the CoNLL validation documents as raw text.")
    corpus.add_argument("--docs", type=int, default=None,
                        help="Documents (default: 240 news, 24 long, every CoNLL document).")
    corpus.add_argument("--words", type=int, default=None,
                        help="Instead of --docs: whole documents until this many words "
                             "(e.g. 1000000: start-up amortised).")
    corpus.add_argument("--conll-file", default=str(CONLL_VALID),
                        help="CoNLL file for --corpus conll (default the shared valid.txt).")
    corpus.add_argument("--seed", type=int, default=0, help="Documents and head seed.")
    model = parser.add_argument_group("weights (bench.weights)")
    model.add_argument("--entity-rate", type=float, default=0.15,
                       help="Fraction of words the fresh head tags as entities, set through "
                            "the O bias (default 0.15, about CoNLL-2003's rate; 1 leaves the "
                            "head as initialised, which tags most words).")
    model.add_argument("--model", default=None,
                       help="Benchmark this model directory instead of building one.")
    model.add_argument("--checkpoint", default=None,
                       help="With --model: the PyTorch checkpoint it was exported from, for "
                            f"the HF rows (without it HF is skipped); '{FRESH_HEAD}': the HF "
                            "rows run the packaged MiniLM with the bench's fresh head, the "
                            "same architecture as the embedded model (speed does not depend "
                            "on the weights).")
    model.add_argument("--model-label", default="model",
                       help="Name of the --model in the output (default 'model').")
    model.add_argument("--no-fp32", action="store_true",
                       help="Build and measure the device's first precision only (int8 on "
                            "CPU, fp16 on CUDA).")
    run = parser.add_argument_group("measurements (bench.runners)")
    run.add_argument("--device", choices=("cpu", "cuda"), default="cpu",
                     help="cpu (default) or cuda: Larvatus --device cuda, the raw loop on "
                          "CUDAExecutionProvider with IO binding, HF on the GPU in fp16.")
    run.add_argument("--repeats", type=int, default=3,
                     help="Interleaved repeats of each measurement; medians are printed.")
    run.add_argument("--hf-config", choices=("tuned", "users", "both", "none"), default="both",
                     help="HF pipeline tuned like Larvatus, as users run it, both rows "
                          "(default) or none.")
    run.add_argument("--hf-batch-size", type=int, default=None,
                     help="batch_size for the HF call (default: the config's, 8 tuned, 16 users).")
    run.add_argument("--batch-tokens", type=int, default=None,
                     help="Padded tokens per batch for the raw loop and Larvatus (default "
                          "the handler's: 512 on CPU, 65,536 on CUDA).")
    run.add_argument("--targets", action="store_true",
                     help="The three speed-target ratios in one run: the news documents (HF as "
                          "users run it, raw loop, Larvatus; --docs, default 240) and a "
                          "million words (raw loop, Larvatus; --words), first precision only.")
    run.add_argument("--memory-scaling", action="store_true",
                     help="Only measure Larvatus's peak RSS on the corpus and on 10 times it.")
    run.add_argument("--idle-wait", type=float, default=120.0,
                     help="Before each measurement, wait up to this many seconds for other "
                          "processes to go quiet (default 120; 0 disables).")
    run.add_argument("--no-instrumented", action="store_true",
                     help="Accepted for old command lines; does nothing (the summary now "
                          "carries RunInference's time as the 'infer' stage).")
    parser.add_argument("--json", default=None, help="Write every figure to this file.")
    args = parser.parse_args(argv)
    if args.checkpoint and not args.model:
        parser.error("--checkpoint goes with --model (without --model the script builds both)")
    if args.repeats < 1 or (args.docs is not None and args.docs < 1) or (
            args.words is not None and args.words < 1):
        parser.error("--docs, --words and --repeats must be positive")
    if args.docs is not None and args.words is not None and not args.targets:
        parser.error("give --docs or --words, not both (both only with --targets)")
    if args.targets and (args.memory_scaling or args.corpus != "news"):
        parser.error("--targets runs the news corpora; it takes no --memory-scaling or --corpus")
    if args.words is not None and args.corpus == "conll":
        parser.error("--words builds news or long documents; the CoNLL corpus has its own size")
    if args.memory_scaling and args.corpus == "conll":
        parser.error("--memory-scaling needs a corpus that can be made 10 times larger")
    return args


def main(argv: Optional[Sequence[str]] = None) -> int:
    args = parse_args(argv)
    started = time.perf_counter()
    if args.targets:
        output = {"args": vars(args), "python": sys.version.split()[0], "cpus": os.cpu_count(),
                  **targets(args), "total_seconds": time.perf_counter() - started}
        if args.json:
            Path(args.json).write_text(json.dumps(output, indent=2, default=str),
                                       encoding="utf-8")
            print(f"\nAll figures written to {args.json}")
        return 0
    print(f"Preparing weights, model directories and the {corpus_spec(args).name} corpus "
          f"(cached in bench/.cache/) ...", flush=True)
    prepared = run_child("bench.throughput:prepare", {"options": vars(args)}, tag="prepare")
    if args.model and not args.checkpoint:
        print("No --checkpoint: the HF pipeline needs the PyTorch checkpoint, so HF is skipped.")
    output: dict[str, Any] = {"args": vars(args), "prepared": prepared,
                              "python": sys.version.split()[0], "cpus": os.cpu_count()}
    if args.memory_scaling:
        output["memory_scaling"] = memory_scaling(args, prepared)
    else:
        output["measured"] = measured = benchmark(args, prepared)
        output.update(rep.report(prepared, measured, args.repeats))
    output["total_seconds"] = time.perf_counter() - started
    if args.json:
        Path(args.json).write_text(json.dumps(output, indent=2, default=str), encoding="utf-8")
        print(f"\nAll figures written to {args.json}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
