"""Parallelism check: the same corpus on one process and on several DirectRunner worker processes.

Runs `python -m pipeline.run` (a subprocess each time, the whole process timed) on the
sample corpus repeated `--copies` times (ids made unique), in these configurations,
interleaved `--repeats` times:

- `1 process`: the DirectRunner's default in-memory mode;
- `2 processes`: `--direct_num_workers 2 --direct_running_mode multi_processing` (the
  handler gives each process cores/2 intra-op threads, spinning off);
- `2 processes, --large-model`: the same with one model copy shared by both processes.

For each it prints the median wall time, the summary's `worker_processes` counter (how
many processes annotated at least one document: the Reshuffle after parsing is what
spreads them) and how many documents' rows (`redacted_text`, or entity spans: start, end,
label; scores aside) differ from the one-process run's. A model whose predictions depend on batch composition (dynamic int8
quantization) makes rows differ between configurations, because documents are batched
differently; a batch-independent model gives 0.

    python bench/parallel.py                     # embedded model, 4 copies, 2 repeats
    python bench/parallel.py --model DIR --copies 2 --repeats 1
"""
from __future__ import annotations

import argparse
import glob
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
SAMPLE = REPO / "pipeline" / "sample" / "news.jsonl"
MULTI = ["--direct_num_workers", "2", "--direct_running_mode", "multi_processing"]
CONFIGS = {
    "1 process": [],
    "2 processes": MULTI,
    "2 processes, --large-model": MULTI + ["--large-model"],
}


def make_corpus(path: Path, copies: int) -> int:
    lines = [json.loads(line) for line in SAMPLE.read_text(encoding="utf-8").splitlines()
             if line.strip()]
    with open(path, "w", encoding="utf-8") as handle:
        for copy in range(copies):
            for doc in lines:
                handle.write(json.dumps({"id": f"{doc['id']}#{copy}", "text": doc["text"]},
                                        ensure_ascii=False) + "\n")
    return copies * len(lines)


def rows(output: Path) -> dict:
    import pyarrow.parquet as pq

    out = {}
    for name in glob.glob(str(output / "annotations-*.parquet")):
        for row in pq.read_table(name).to_pylist():
            # scores are left out: a row differs only if its text or its spans do
            entities = tuple((e["start"], e["end"], e["label"]) for e in row["entities"])
            out[row["id"]] = (row["redacted_text"], entities)
    return out


def run_once(corpus: Path, output: Path, model: str, extra: list[str]) -> dict:
    command = [sys.executable, "-m", "pipeline.run", "--input", str(corpus), "--output",
               str(output), "--model", model, "--overwrite", *extra]
    started = time.perf_counter()
    done = subprocess.run(command, cwd=REPO, capture_output=True, text=True)
    wall = time.perf_counter() - started
    if done.returncode != 0:
        raise SystemExit(f"{' '.join(command)} failed:\n{done.stderr[-3000:]}")
    summary = json.loads((output / "_SUMMARY.json").read_text())
    return {"wall": wall, "workers": summary["beam_counters"].get("worker_processes", 0),
            "records_out": summary["records_out"]}


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--model", default="embedded:default")
    parser.add_argument("--copies", type=int, default=4)
    parser.add_argument("--repeats", type=int, default=2)
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory(prefix="larvatus-parallel-") as tmp:
        tmp = Path(tmp)
        documents = make_corpus(tmp / "corpus.jsonl", args.copies)
        print(f"{documents} documents, {os.cpu_count()} cores, load average "
              f"{os.getloadavg()[0]:.1f} at start")
        results = {name: [] for name in CONFIGS}
        outputs = {}
        for repeat in range(args.repeats):
            for name, extra in CONFIGS.items():
                output = tmp / name.replace(" ", "_").replace(",", "")
                result = run_once(tmp / "corpus.jsonl", output, args.model, extra)
                results[name].append(result)
                outputs[name] = output
                print(f"  run {repeat + 1} {name}: {result['wall']:.1f} s, "
                      f"{result['workers']} worker processes", flush=True)
        reference = rows(outputs["1 process"])
        print("\n| configuration | median wall s | worker processes | rows differing from "
              "1 process | of which redacted_text differs | entity spans differ |")
        print("|---|---|---|---|---|---|")
        for name in CONFIGS:
            walls = [r["wall"] for r in results[name]]
            these = rows(outputs[name])
            assert set(these) == set(reference), "documents missing"
            differ = [k for k in reference if these[k] != reference[k]]
            texts = sum(these[k][0] != reference[k][0] for k in differ)
            spans = sum(these[k][1] != reference[k][1] for k in differ)
            print(f"| {name} | {statistics.median(walls):.1f} | "
                  f"{results[name][-1]['workers']} | {len(differ)} of {len(reference)} | "
                  f"{texts} | {spans} |")
        print(f"\nload average at end {os.getloadavg()[0]:.1f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
