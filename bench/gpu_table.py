"""The GPU table: HF as users run it, the raw ONNX loop and `larvatus run` on one GPU, with nvidia-smi utilisation."""
# Run by `bench/gpu.sh` on a machine with an NVIDIA GPU (and usable on CPU with
# `--device cpu` as a smoke check). Every row runs in its own subprocess
# (`bench.runners`), one after the other, while nvidia-smi samples the GPU's
# utilisation and memory once a second; the row's mean and maximum are printed beside
# its time. Rows, on the same news documents:
#
# 1. HF token-classification pipeline as users run it (fp16 on the GPU), on the bench's
#    checkpoint (`--checkpoint`: the packaged MiniLM-L6 with a seeded head, the same
#    architecture as the embedded model; speed does not depend on training);
# 2. the raw ONNX Runtime loop over Larvatus's windows, the embedded model on the GPU
#    (its fp16 variant, derived from the shipped int8 file and cached);
# 3. `larvatus run --device cuda --share-model off` (one process);
# 4. `larvatus run --device cuda --share-model on` (one worker per core, one shared model);
# 5. `larvatus run --device cpu`, the embedded int8 model, one worker per core.
from __future__ import annotations

import argparse
import csv
import io
import json
import os
import statistics
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Optional, Sequence

if __package__ in (None, ""):  # `python bench/gpu_table.py`: import bench.* from the root
    sys.path[0] = str(Path(__file__).resolve().parents[1])

from bench.corpus import CACHE, CONLL_VALID, CorpusSpec  # noqa: E402

EMBEDDED = "embedded:default"
SMI_QUERY = ["nvidia-smi", "--query-gpu=utilization.gpu,memory.used", "--format=csv", "-l", "1"]


@dataclass(frozen=True)
class Leg:
    """One row: its name, its title in the table, and the bench.runners call that measures it."""

    name: str
    title: str
    call: str
    params: dict


@dataclass(frozen=True)
class GpuSamples:
    """nvidia-smi's one-second samples over a row: utilisation (%) and memory used (MiB)."""

    count: int
    mean_utilisation: float
    max_utilisation: float
    max_memory_mib: float


def parse_smi(text: str) -> Optional[GpuSamples]:
    """Samples from nvidia-smi's CSV (`utilization.gpu,memory.used`); None when it has none."""
    utilisation, memory = [], []
    for row in csv.reader(io.StringIO(text)):
        try:
            sample = float(row[0].strip().rstrip(" %")), float(row[1].strip().split()[0])
        except (ValueError, IndexError):
            continue   # the header, a partial last line
        utilisation.append(sample[0])
        memory.append(sample[1])
    if not utilisation:
        return None
    return GpuSamples(len(utilisation), statistics.mean(utilisation), max(utilisation),
                      max(memory))


def plan_legs(docs: str, window: int, overlap: int, workers: int, device: str,
              checkpoint: Optional[str], out: Path) -> list[Leg]:
    """The table's rows, in the order they run (HF only with a checkpoint)."""
    legs: list[Leg] = []
    where = "on the GPU, fp16" if device == "cuda" else "on the CPU"
    if checkpoint:
        legs.append(Leg("hf-users", f"HF token-classification pipeline as users run it, {where}",
                        "bench.runners:measure_hf", {
                            "checkpoint": checkpoint, "docs": docs, "config": "users",
                            "window": window, "overlap": overlap, "batch_size": None,
                            "device": device}))
    legs.append(Leg("ort", f"raw ONNX Runtime loop, Larvatus's windows, {where}",
                    "bench.runners:measure_ort", {
                        "model_dir": EMBEDDED, "docs": docs, "overlap": overlap,
                        "device": device, "batch_tokens": None}))

    def larvatus(name: str, title: str, run_device: str, extra: list[str]) -> Leg:
        return Leg(name, title, "bench.runners:measure_larvatus", {
            "model_dir": EMBEDDED, "docs": docs, "out": str(out / f"out-{name}"),
            "log": str(out / f"log-{name}.txt"), "device": run_device, "extra": extra})

    legs.append(larvatus("larvatus-1", f"`larvatus run --device {device}`, one process",
                         device, ["--share-model", "off"]))
    legs.append(larvatus(
        "larvatus-shared", f"the same, `--share-model on`: {workers} workers, one shared model",
        device, ["--share-model", "on", "--direct_num_workers", str(workers)]))
    if device == "cuda":
        legs.append(larvatus(
            "larvatus-cpu", f"embedded int8 model, `--device cpu`, {workers} workers", "cpu",
            ["--direct_num_workers", str(workers), "--direct_running_mode", "multi_processing"]))
    return legs


def table_lines(words: int, results: Sequence[tuple[Leg, dict, Optional[GpuSamples]]]) -> list[str]:
    """The markdown table: seconds, words/s and the GPU's utilisation for each row."""
    lines = [f"| {words:,} words of news documents | seconds | words/s | GPU util. mean / max "
             f"| GPU memory max |", "|---|---|---|---|---|"]
    for leg, result, smi in results:
        seconds = float(result["seconds"])
        rate = words / seconds if seconds > 0 else float("inf")
        gpu = (f"{smi.mean_utilisation:.0f}% / {smi.max_utilisation:.0f}%",
               f"{smi.max_memory_mib:,.0f} MiB") if smi else ("not sampled", "")
        lines.append(f"| {leg.title} | {seconds:.1f} | {rate:,.0f} | {gpu[0]} | {gpu[1]} |")
    return lines


def measure(leg: Leg, out: Path, sample_gpu: bool) -> tuple[dict, Optional[GpuSamples]]:
    """One row in its own process, nvidia-smi sampling meanwhile when asked."""
    from bench.runners import run_child

    smi_path = out / f"nvidia-smi-{leg.name}.csv"
    sampler = None
    if sample_gpu:
        handle = open(smi_path, "w", encoding="utf-8")
        sampler = subprocess.Popen(SMI_QUERY, stdout=handle, stderr=subprocess.DEVNULL)
    try:
        result = run_child(leg.call, leg.params, tag=f"gpu-{leg.name}", cache=out)
    finally:
        if sampler is not None:
            sampler.terminate()
            sampler.wait(timeout=10)
            handle.close()
    samples = parse_smi(smi_path.read_text(encoding="utf-8")) if sample_gpu else None
    return result, samples


def prepare_corpus(args: argparse.Namespace, out: Path) -> dict:
    """The news corpus and its counts under the embedded model's windows."""
    from bench.corpus import corpus_counts, write_corpus
    from larvatus.models.model_dir import embedded_model_dir, load_model_spec
    from larvatus.transforms.encode import default_overlap

    window = load_model_spec(EMBEDDED).max_length
    overlap = default_overlap(window)
    spec = CorpusSpec("news", None if args.words else args.docs, args.words or None, args.seed,
                      args.conll_file)
    written = write_corpus(spec, out)
    counts = corpus_counts(embedded_model_dir(), Path(written["path"]), overlap)
    return {**written, **counts, "window": window, "overlap": overlap}


def main(argv: Optional[Sequence[str]] = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--device", choices=("cuda", "cpu"), default="cuda")
    parser.add_argument("--words", type=int, default=1_000_000, help="0: use --docs.")
    parser.add_argument("--docs", type=int, default=240)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--conll-file", default=str(CONLL_VALID))
    parser.add_argument("--workers", type=int, default=0, help="0: one per core.")
    parser.add_argument("--checkpoint", default=None,
                        help="HF checkpoint for the HF row (python -m bench.weights); none: no row.")
    parser.add_argument("--out", default=str(CACHE / "gpu"))
    parser.add_argument("--json", default=None)
    args = parser.parse_args(argv)
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    workers = args.workers or len(os.sched_getaffinity(0))
    corpus = prepare_corpus(args, out)
    words = int(corpus["words"])
    print(f"corpus: {corpus['name']}, {words:,} words", flush=True)
    legs = plan_legs(corpus["path"], corpus["window"], corpus["overlap"], workers, args.device,
                     args.checkpoint, out)
    results = []
    for leg in legs:
        result, samples = measure(leg, out, sample_gpu=args.device == "cuda")
        print(f"  {leg.name:<16} {result['seconds']:8.2f} s", flush=True)
        results.append((leg, result, samples))
    print()
    for line in table_lines(words, results):
        print(line)
    if args.json:
        Path(args.json).write_text(json.dumps({
            "corpus": corpus, "workers": workers, "device": args.device,
            "rows": [{"name": leg.name, "title": leg.title, "result": result,
                      "gpu": samples.__dict__ if samples else None}
                     for leg, result, samples in results]}, indent=2, default=str))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
