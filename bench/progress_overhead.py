"""Does the progress line cost anything? `larvatus run` with --progress off vs lines vs bar, interleaved, medians.

Usage (from the repository root):

    python bench/progress_overhead.py                  # 240 news documents, 3 repeats each
    python bench/progress_overhead.py --docs 40 --repeats 1

Each run is a whole `python -m pipeline.cli run` process on the throughput benchmark's news
corpus (bench/corpus.py) with the embedded model; the modes run in turn inside each repeat so
that machine noise hits them alike. Prints each mode's median wall time and its ratio to off.
"""
from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

if __package__ in (None, ""):
    sys.path[0] = str(Path(__file__).resolve().parents[1])

from bench.corpus import CorpusSpec, write_corpus  # noqa: E402

REPO = Path(__file__).resolve().parents[1]
MODES = ("off", "lines", "bar")


def one_run(docs: Path, mode: str, workdir: Path) -> float:
    started = time.perf_counter()
    done = subprocess.run(
        [sys.executable, "-m", "pipeline.cli", "run", "--input", str(docs), "--output",
         str(workdir / f"out-{mode}"), "--overwrite", "--progress", mode,
         "--progress-interval", "1"],
        cwd=REPO, capture_output=True, text=True)
    seconds = time.perf_counter() - started
    if done.returncode != 0:
        raise SystemExit(f"{mode} run failed:\n{done.stderr[-3000:]}")
    return seconds


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--docs", type=int, default=240)
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args(argv)
    docs = Path(write_corpus(CorpusSpec("news", args.docs))["path"])
    times = {mode: [] for mode in MODES}
    with tempfile.TemporaryDirectory() as tmp:
        for repeat in range(args.repeats):
            for mode in MODES:
                times[mode].append(one_run(docs, mode, Path(tmp)))
                print(f"repeat {repeat + 1} {mode}: {times[mode][-1]:.1f} s", flush=True)
    off = statistics.median(times["off"])
    print(f"\n{args.docs} documents, {args.repeats} repeats, whole process, median seconds:")
    for mode in MODES:
        median = statistics.median(times[mode])
        print(f"  --progress {mode:<5} {median:7.1f} s   x{median / off:.3f} of off")
    return 0


if __name__ == "__main__":
    sys.exit(main())
