"""Does the progress line cost anything? `larvatus run` with --progress off vs lines vs bar, interleaved, medians."""
# Usage (from the repository root, on a quiet machine: on a shared one the spread between
# repeats is larger than the effect measured):
#
#     python bench/progress_overhead.py                  # 240 news documents, 3 repeats each
#     python bench/progress_overhead.py --workers 2      # DirectRunner multi_processing, 2 workers
#     python bench/progress_overhead.py --docs 40 --repeats 1
#
# Each run is a whole `python -m larvatus.cli run` process on the throughput benchmark's news
# corpus (bench/corpus.py) with the embedded model (or --model); the modes run in turn inside
# each repeat so that machine noise hits them alike. `off` writes no progress file at all, so
# the difference includes the workers' side (the counters and the file written every 0.5 s)
# as well as the launcher's polling thread. Prints each mode's median wall time, its ratio to
# off, and the spread (max - min) of off's repeats: a ratio inside that spread is noise.
from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Optional

if __package__ in (None, ""):
    sys.path[0] = str(Path(__file__).resolve().parents[1])

from bench.corpus import CorpusSpec, write_corpus  # noqa: E402

REPO = Path(__file__).resolve().parents[1]
MODES = ("off", "lines", "bar")


def command(docs: Path, mode: str, output: Path, workers: int = 0,
            model: Optional[str] = None) -> list[str]:
    """The `larvatus run` command line of one timed run."""
    args = [sys.executable, "-m", "larvatus.cli", "run", "--input", str(docs), "--output",
            str(output), "--overwrite", "--progress", mode, "--progress-interval", "1"]
    if model:
        args += ["--model", model, "--device", "cpu"]
    if workers:
        args += ["--direct_running_mode", "multi_processing", "--direct_num_workers", str(workers)]
    return args


def one_run(args: list[str]) -> float:
    started = time.perf_counter()
    done = subprocess.run(args, cwd=REPO, capture_output=True, text=True)
    seconds = time.perf_counter() - started
    if done.returncode != 0:
        raise SystemExit(f"{' '.join(args)} failed:\n{done.stderr[-3000:]}")
    return seconds


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--docs", type=int, default=240)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--workers", type=int, default=0,
                        help="DirectRunner multi_processing workers (0: one process).")
    parser.add_argument("--model", default=None, help="--model for the job (default: embedded).")
    args = parser.parse_args(argv)
    if args.docs < 1 or args.repeats < 1 or args.workers < 0:
        parser.error("--docs and --repeats must be positive, --workers 0 or more")
    times = {mode: [] for mode in MODES}
    with tempfile.TemporaryDirectory() as tmp:
        docs = Path(write_corpus(CorpusSpec("news", args.docs), Path(tmp))["path"])
        for repeat in range(args.repeats):
            for mode in MODES:
                run = command(docs, mode, Path(tmp) / f"out-{mode}", args.workers, args.model)
                times[mode].append(one_run(run))
                print(f"repeat {repeat + 1} {mode}: {times[mode][-1]:.1f} s", flush=True)
    off = statistics.median(times["off"])
    where = f"{args.workers} worker processes" if args.workers else "one process"
    print(f"\n{args.docs} documents, {where}, {args.repeats} repeats, whole process, "
          f"median seconds (off's spread {max(times['off']) - min(times['off']):.1f} s):")
    for mode in MODES:
        median = statistics.median(times[mode])
        print(f"  --progress {mode:<5} {median:7.1f} s   x{median / off:.3f} of off")
    return 0


if __name__ == "__main__":
    sys.exit(main())
