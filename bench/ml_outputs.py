"""What do the ML outputs cost? Inference with and without hidden states, and whole runs with --emit-token-ids / --emit-embeddings on and off: interleaved repeats, medians, ratios to off."""
# Usage (from the repository root):
#
#     python bench/ml_outputs.py                          # 240 news documents, 3 repeats
#     python bench/ml_outputs.py --docs 40 --repeats 1    # a smoke test
#     python bench/ml_outputs.py --model runs/model --baseline-model runs/model-no-hidden
#
# Two measurements on the throughput benchmark's news corpus (bench/corpus.py):
#
# 1. **inference**: the handler's batched loop (`LoadedModel.predict`) over the corpus's
#    windows, timed alone after a warm-up, fetching the tags only, then the tags and the
#    hidden states of each layer choice. With `--baseline-model` (the same checkpoint exported
#    with `--no-hidden-states`) also the tags of a graph without hidden-state outputs: whether
#    their mere presence costs anything.
# 2. **pipeline**: whole `python -m larvatus.cli run` processes with the ML outputs off, with
#    --emit-token-ids, with --emit-embeddings, and with both: wall seconds, the process's
#    CPU seconds (user + system; steadier on a shared host) and its stages' summed DoFn
#    seconds from `_SUMMARY.json` (where the extra work lands).
#
# The modes run in turn inside each repeat, so that machine noise hits them alike. The
# target is at most 10% (ratio <= 1.10) with the outputs on.
from __future__ import annotations

import argparse
import json
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

if __package__ in (None, ""):
    sys.path[0] = str(Path(__file__).resolve().parents[1])

from bench.corpus import CorpusSpec, read_jsonl, segment_records, write_corpus  # noqa: E402

REPO = Path(__file__).resolve().parents[1]
PIPELINE_MODES = {
    "off": [],
    "token-ids": ["--emit-token-ids"],
    "embeddings": ["--emit-embeddings"],
    "both": ["--emit-token-ids", "--emit-embeddings"],
}


def inference_modes(model: str, baseline: str | None) -> dict:
    """Mode name -> (model directory, embedding layer or None)."""
    from larvatus.models.model_dir import load_model_spec

    modes = {}
    if baseline:
        modes["tags, graph without hidden outputs"] = (baseline, None)
    modes["tags"] = (model, None)
    for layer in load_model_spec(model).hidden_outputs:
        modes[f"tags + hidden {layer}"] = (model, layer)
    return modes


def measure_inference(docs: Path, model: str, baseline: str | None, repeats: int) -> dict:
    from larvatus.models.handler import OnnxTokenClassifierHandler
    from larvatus.models.model_dir import load_model_spec
    from larvatus.transforms.encode import default_overlap, encode_many

    records = read_jsonl(docs)
    loaded, windows = {}, {}
    for mode, (directory, layer) in inference_modes(model, baseline).items():
        spec = load_model_spec(directory)
        tokenizer = spec.load_tokenizer()
        settings = spec.encode_settings(tokenizer, default_overlap(spec.max_length))
        encoded = encode_many(segment_records(records), tokenizer, settings)
        windows[mode] = [w for doc in encoded for w in doc.windows]
        handler = OnnxTokenClassifierHandler(spec, device="cpu", embedding_layer=layer)
        loaded[mode] = handler.load_model()
        loaded[mode].predict(windows[mode][:8])   # warm-up
    times = {mode: [] for mode in loaded}
    for repeat in range(repeats):
        for mode, model_ in loaded.items():
            started = time.perf_counter()
            model_.predict(windows[mode])
            times[mode].append(time.perf_counter() - started)
            print(f"inference repeat {repeat + 1} {mode}: {times[mode][-1]:.2f} s", flush=True)
    return times


def children_cpu_seconds() -> float:
    """User + system CPU seconds of this process's finished children so far."""
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def one_run(docs: Path, model: str, flags: list[str], out: Path) -> tuple[float, float, float]:
    """One whole `larvatus run`: (wall seconds, CPU seconds of the process, summed DoFn
    seconds of its stages from _SUMMARY.json)."""
    cpu_before = children_cpu_seconds()
    started = time.perf_counter()
    done = subprocess.run(
        [sys.executable, "-m", "larvatus.cli", "run", "--input", str(docs), "--output",
         str(out), "--overwrite", "--model", model, *flags],
        cwd=REPO, capture_output=True, text=True)
    seconds = time.perf_counter() - started
    if done.returncode != 0:
        raise SystemExit(f"run {flags} failed:\n{done.stderr[-3000:]}")
    stages = json.loads((out / "_SUMMARY.json").read_text(encoding="utf-8"))["stage_seconds"]
    return seconds, children_cpu_seconds() - cpu_before, sum(stages.values())


def measure_pipeline(docs: Path, model: str, repeats: int) -> tuple[dict, dict, dict]:
    """Wall seconds, CPU seconds and summed stage seconds per mode. CPU time is steadier
    than wall time on a shared host (time waiting for a busy core does not count); the
    stage seconds say where the outputs' work lands (inference, realign, ml_outputs)."""
    times = {mode: [] for mode in PIPELINE_MODES}
    cpu = {mode: [] for mode in PIPELINE_MODES}
    stages = {mode: [] for mode in PIPELINE_MODES}
    with tempfile.TemporaryDirectory() as tmp:
        for repeat in range(repeats):
            for mode, flags in PIPELINE_MODES.items():
                wall, used, staged = one_run(docs, model, flags, Path(tmp) / mode)
                times[mode].append(wall)
                cpu[mode].append(used)
                stages[mode].append(staged)
                print(f"pipeline repeat {repeat + 1} {mode}: {wall:.1f} s, {used:.1f} CPU-s, "
                      f"stages {staged:.1f} s", flush=True)
    return times, cpu, stages


def report(title: str, times: dict, reference: str) -> None:
    base = statistics.median(times[reference])
    print(f"\n{title} (median seconds, ratio to '{reference}'):")
    for mode, values in times.items():
        median = statistics.median(values)
        print(f"  {mode:<40} {median:8.2f} s   x{median / base:.3f}   "
              f"(min {min(values):.2f}, max {max(values):.2f})")


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--docs", type=int, default=240)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--model", default="embedded:default",
                        help="Model directory exported with hidden-state outputs.")
    parser.add_argument("--baseline-model", default=None,
                        help="The same checkpoint exported with --no-hidden-states.")
    parser.add_argument("--only", choices=("inference", "pipeline"), default=None)
    args = parser.parse_args(argv)
    docs = Path(write_corpus(CorpusSpec("news", args.docs))["path"])
    if args.only != "pipeline":
        inference = measure_inference(docs, args.model, args.baseline_model, args.repeats)
    if args.only != "inference":
        pipeline, pipeline_cpu, pipeline_stages = measure_pipeline(docs, args.model,
                                                                   args.repeats)
    print(f"\n{args.docs} news documents, {args.repeats} repeats, model {args.model}")
    if args.only != "pipeline":
        report("inference loop", inference, "tags")
    if args.only != "inference":
        report("whole run, wall", pipeline, "off")
        report("whole run, CPU (user + system)", pipeline_cpu, "off")
        report("whole run, stages' summed DoFn time (_SUMMARY.json stage_seconds)",
               pipeline_stages, "off")
    return 0


if __name__ == "__main__":
    sys.exit(main())
