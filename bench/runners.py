"""Each system measured in its own subprocess, with its peak memory."""
# - `measure_hf`: `transformers.pipeline("token-classification")` in PyTorch, in one of
#   `HF_CONFIGS`: "tuned" like Larvatus (Larvatus's window, its overlap as `stride`,
#   batch_size 8) or "users" as users run it (the model's max length, stride=32,
#   batch_size=16); aggregation "first" in both. On `device="cuda"` it runs on the GPU in
#   fp16 when `torch.cuda.is_available()`, else on CPU in fp32 (the result says which).
#   Timed around the `pipe(texts)` call only, after one warm-up call on the first text.
# - `measure_ort`: the raw ONNX Runtime loop over exactly the windows Larvatus builds
#   (`larvatus.transforms.segment` + `larvatus.transforms.encode.encode_many`) and its batches
#   (`larvatus.models.batching.run_in_batches`: token-budget batches of length-sorted windows, pad,
#   model call, softmax), the session made by `OnnxTokenClassifierHandler.load_model`
#   (CUDAExecutionProvider with IO binding on `device="cuda"`). Timed around the loop only,
#   after one warm-up batch; the model calls alone are reported too.
# - `measure_larvatus`: `python -m larvatus.run ... --device D --overwrite` as a
#   subprocess, JSONL in, Parquet out: the whole process's wall time and the figures of its
#   `_SUMMARY.json` (stage_seconds, wall_seconds, words...).
#
# `run_child("bench.runners:measure_ort", params)` runs any such function, `f(**params)`, in
# a fresh `python -m bench.runners` process and returns its result: peaks are then separable
# (in-process measurements report their own `ru_maxrss`, Larvatus the `RUSAGE_CHILDREN` peak
# of its CLI subprocess). Before each it waits (up to `idle_wait` s) for other processes to
# go quiet, and it adds how much CPU they used meanwhile (`others_cpu_seconds`).
#
#     python -m bench.runners check-device --model DIR --device cuda
#
# loads a model directory the way Larvatus does and runs one batch, failing unless the
# device asked for is the one that ran it (bench/gpu.sh uses it).
from __future__ import annotations

import argparse
import glob
import importlib
import json
import os
import resource
import subprocess
import sys
import time
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any, Optional, Sequence

from bench.corpus import CACHE, REPO, read_jsonl
from larvatus.layout import SUMMARY_NAME, annotation_files_pattern, join



# --------------------------------------------------------------------------- machine load

def peak_self_mib() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024  # Linux: KiB


def peak_children_mib() -> float:
    return resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024


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


# --------------------------------------------------------------------------- child processes

def run_child(call: str, params: dict, tag: Optional[str] = None, idle_wait: float = 0.0,
              timeout: Optional[float] = None, cache: Path = CACHE) -> dict:
    """Runs `module:function(**params)` in a fresh process; returns its result dict.

    Adds `child_wall_seconds`, `idle_wait_seconds` and `others_cpu_seconds`: CPU time
    the machine spent on other processes while it ran (busy time from /proc/stat minus
    the child's own), a gauge of how much the figure was disturbed.
    """
    tag = tag or call.rsplit(":", 1)[-1]
    cache.mkdir(parents=True, exist_ok=True)
    result_path, log_path = cache / f"result-{tag}.json", cache / f"log-{tag}.txt"
    result_path.unlink(missing_ok=True)
    command = [sys.executable, "-m", "bench.runners", "child", "--call", call,
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
        raise SystemExit(f"measurement {tag!r} failed (exit {code}); log {log_path}:\n{tail}")
    result = json.loads(result_path.read_text(encoding="utf-8"))
    result.update(child_wall_seconds=elapsed, idle_wait_seconds=waited)
    if busy_before is not None and busy_after is not None:
        others = (busy_after - busy_before) - (own_after - own_before)
        result["others_cpu_seconds"] = max(others, 0.0)
    return result


def call_function(call: str, params: dict) -> Any:
    """`bench.module:function` called with `params`; only bench's own modules are allowed."""
    module_name, _, function_name = call.partition(":")
    if not module_name.startswith("bench.") or not function_name:
        raise SystemExit(f"--call must name bench.MODULE:FUNCTION, not {call!r}")
    return getattr(importlib.import_module(module_name), function_name)(**params)


# --------------------------------------------------------------------------- HF pipeline

@dataclass(frozen=True)
class HFConfig:
    """How the HF pipeline is called; None window/stride: Larvatus's window/overlap."""

    title: str
    window: Optional[int]  # None: Larvatus's; 0: the model's max length
    stride: Optional[int]
    batch_size: int
    aggregation: str = "first"


HF_CONFIGS = {
    "tuned": HFConfig("tuned like ours", None, None, 8),
    "users": HFConfig("as users run it", 0, 32, 16),
}


def model_max_length(tokenizer, model) -> int:
    """The model's max length: the tokenizer's, within the position embeddings."""
    limit = getattr(model.config, "max_position_embeddings", None) or 512
    declared = tokenizer.model_max_length
    return min(declared, limit) if declared and declared < 1_000_000 else limit


def measure_hf(checkpoint: str, docs: str, config: str = "tuned", window: int = 256,
               overlap: int = 64, batch_size: Optional[int] = None,
               device: str = "cpu") -> dict:
    """transformers' token-classification pipeline over the documents, one call."""
    started = time.perf_counter()
    import torch
    from transformers import AutoModelForTokenClassification, AutoTokenizer, pipeline

    chosen = HF_CONFIGS[config]
    on_gpu = device == "cuda" and torch.cuda.is_available()
    dtype = torch.float16 if on_gpu else torch.float32
    tokenizer = AutoTokenizer.from_pretrained(checkpoint)
    if not tokenizer.is_fast:
        raise SystemExit("stride needs a fast tokenizer")
    model = AutoModelForTokenClassification.from_pretrained(checkpoint, dtype=dtype)
    model.eval()
    length = (window if chosen.window is None else
              chosen.window or model_max_length(tokenizer, model))
    stride = overlap if chosen.stride is None else chosen.stride
    batch = batch_size or chosen.batch_size
    tokenizer.model_max_length = length  # stride chunks are model_max_length pieces long
    tagger = pipeline("token-classification", model=model, tokenizer=tokenizer,
                      aggregation_strategy=chosen.aggregation, stride=stride,
                      device=0 if on_gpu else -1)
    texts = [r["text"] for r in read_jsonl(Path(docs))]
    tagger(texts[:1])  # warm-up: first-call allocations, CUDA kernels
    load_seconds = time.perf_counter() - started
    start = time.perf_counter()
    results = tagger(texts, batch_size=batch)
    if on_gpu:
        torch.cuda.synchronize()
    seconds = time.perf_counter() - start
    # The chunks HF ran, counted with the same tokenizer call its preprocess makes.
    chunks = tokenizer(texts, truncation=True, return_overflowing_tokens=True, stride=stride)
    return {
        "seconds": seconds, "load_seconds": load_seconds, "config": config,
        **asdict(chosen), "window": length, "stride": stride, "batch_size": batch,
        "device": "cuda" if on_gpu else "cpu", "dtype": str(dtype).replace("torch.", ""),
        "asked_device": device, "torch_threads": torch.get_num_threads(),
        "entities": sum(len(r) for r in results), "windows": len(chunks["input_ids"]),
        "window_tokens": sum(len(ids) for ids in chunks["input_ids"]),
        "gpu_peak_mib": torch.cuda.max_memory_allocated() / 2**20 if on_gpu else None,
        "peak_rss_mib": peak_self_mib(),
    }


# --------------------------------------------------------------------------- raw ONNX Runtime

def load_encoded(model_dir: str, docs: str, overlap: int):
    """(spec, encoded documents, seconds to segment and encode) as Larvatus builds them."""
    from larvatus.models.model_dir import load_model_spec
    from larvatus.transforms.encode import encode_many

    from bench.corpus import segment_records

    spec = load_model_spec(model_dir)
    tokenizer = spec.load_tokenizer()
    settings = spec.encode_settings(tokenizer, overlap)
    records = read_jsonl(Path(docs))
    start = time.perf_counter()
    encoded = encode_many(segment_records(records), tokenizer, settings)
    return spec, encoded, time.perf_counter() - start


def load_session(spec, device: str, batch_tokens: Optional[int] = None):
    """The handler's LoadedModel on `device`, refusing a silent fall back to CPU."""
    from larvatus.models.handler import OnnxTokenClassifierHandler

    model = OnnxTokenClassifierHandler(spec, device=device, batch_tokens=batch_tokens).load_model()
    if model.device != device:
        raise SystemExit(f"asked for {device}, ONNX Runtime runs on {model.device}")
    return model


def measure_ort(model_dir: str, docs: str, overlap: int, device: str = "cpu",
                batch_tokens: Optional[int] = None) -> dict:
    """Larvatus's windows and batches through `run_in_batches`, nothing else timed."""
    from larvatus.models.batching import flatten_windows, pad_batch, plan_batches, run_in_batches

    spec, encoded, prep_seconds = load_encoded(model_dir, docs, overlap)
    model = load_session(spec, device, batch_tokens)
    windows = flatten_windows(encoded)
    # The same batches as Larvatus's handler: one window a call for dynamic int8.
    per_call = model.windows_per_call
    batches = plan_batches([len(w) for w in windows], model.batch_tokens, per_call)
    model.run(pad_batch([windows[i] for i in batches[0]]))  # warm-up: the largest batch
    calls = {"seconds": 0.0, "padded": 0}

    def timed_call(feeds):
        calls["padded"] += feeds["input_ids"].size
        start = time.perf_counter()
        logits = model.run(feeds)
        calls["seconds"] += time.perf_counter() - start
        return logits

    start = time.perf_counter()
    run_in_batches(windows, model.batch_tokens, timed_call, per_call)
    seconds = time.perf_counter() - start
    return {
        "seconds": seconds, "session_run_seconds": calls["seconds"],
        "segment_encode_seconds": prep_seconds, "batches": len(batches),
        "batch_tokens": model.batch_tokens, "windows_per_call": per_call,
        "windows": len(windows),
        "window_tokens": sum(len(w) for w in windows), "padded_tokens": calls["padded"],
        "device": model.device, "io_binding": model.io_binding,
        "providers": list(model.session.get_providers()),
        "onnx_file": os.path.basename(model.graph_file), "peak_rss_mib": peak_self_mib(),
    }


def check_device(model_dir: str, device: str) -> dict:
    """Loads the model as Larvatus does and runs one batch of the sample's first windows."""
    from larvatus.models.batching import run_in_batches

    from bench.corpus import SAMPLE
    from larvatus.transforms.encode import default_overlap
    from larvatus.models.model_dir import load_model_spec

    spec = load_model_spec(model_dir)
    _, encoded, _ = load_encoded(model_dir, str(SAMPLE), default_overlap(spec.max_length))
    model = load_session(spec, device)
    windows = [w for doc in encoded[:4] for w in doc.windows]
    probs = run_in_batches(windows, model.batch_tokens, model.run)
    finite = all(bool((p == p).all()) for p in probs)  # no NaN (an fp16 overflow would show)
    if not finite:
        raise SystemExit("the model returned NaN probabilities")
    return {"device": model.device, "providers": list(model.session.get_providers()),
            "onnx_file": os.path.basename(model.graph_file), "windows": len(windows)}


# --------------------------------------------------------------------------- Larvatus

def larvatus_command(model_dir: str, docs: str, out: str, device: str = "cpu",
                     extra: Sequence[str] = ()) -> list[str]:
    return [sys.executable, "-m", "larvatus.run", "--input", docs, "--output", out,
            "--model", model_dir, "--device", device, "--overwrite", *extra]


def read_summary(out: str) -> dict:
    """The job's _SUMMARY.json (pipeline/layout.py names it)."""
    path = Path(join(str(out), SUMMARY_NAME))
    if not path.is_file():
        raise SystemExit(f"no {SUMMARY_NAME} in {out}: the run did not finish")
    return json.loads(path.read_text(encoding="utf-8"))


def annotation_files(out: str) -> list[str]:
    """The job's Parquet annotations (OUT/annotations/annotations-*.parquet)."""
    return sorted(glob.glob(annotation_files_pattern(str(out))))


def measure_larvatus(model_dir: str, docs: str, out: str, log: str, device: str = "cpu",
                     extra: Sequence[str] = ()) -> dict:
    """`python -m larvatus.run` as a subprocess: its wall time, peak RSS and summary."""
    command = larvatus_command(model_dir, docs, out, device, extra)
    start = time.perf_counter()
    with open(log, "w", encoding="utf-8") as handle:
        code = subprocess.call(command, cwd=REPO, stdout=handle, stderr=subprocess.STDOUT)
    seconds = time.perf_counter() - start
    if code != 0:
        raise SystemExit(f"larvatus.run exited {code}; see {log}")
    summary = read_summary(out)
    files = annotation_files(out)
    if not files:
        raise SystemExit(f"larvatus.run wrote no annotations under {out}")
    return {
        "seconds": seconds, "pipeline_wall_seconds": summary["wall_seconds"],
        "stage_seconds": summary.get("stage_seconds", {}), "words": summary.get("words"),
        "wordpieces": summary.get("wordpieces"), "windows": summary.get("windows"),
        "window_tokens": summary.get("window_tokens"),
        "records_out": summary.get("records_out"), "counts_add_up": summary.get("counts_add_up"),
        "beam_counters": summary.get("beam_counters", {}), "device": device,
        "launcher_device": summary.get("model", {}).get("launcher_device"),
        "annotation_files": len(files),
        "annotation_bytes": sum(os.path.getsize(f) for f in files),
        "peak_rss_mib": peak_children_mib(),
    }


# --------------------------------------------------------------------------- entry point

def main(argv: Optional[Sequence[str]] = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.runners",
                                     description=__doc__.split("\n\n")[0])
    commands = parser.add_subparsers(dest="command", required=True)
    child = commands.add_parser("child", help="run one measurement (used by run_child)")
    child.add_argument("--call", required=True)
    child.add_argument("--params", required=True)
    child.add_argument("--result", required=True)
    check = commands.add_parser("check-device", help="run one batch on a device, or fail")
    check.add_argument("--model", required=True)
    check.add_argument("--device", default="cuda", choices=("cpu", "cuda"))
    args = parser.parse_args(argv)
    if args.command == "check-device":
        print(json.dumps(check_device(args.model, args.device)))
        return 0
    result = call_function(args.call, json.loads(args.params))
    Path(args.result).write_text(json.dumps(result, indent=2, default=str), encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
