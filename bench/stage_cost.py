"""The work around the model per million words: `larvatus run`'s stage seconds minus inference, medians over repeats."""
from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Optional, Sequence

if __package__ in (None, ""):  # `python bench/stage_cost.py`: import bench.* from the root
    sys.path[0] = str(Path(__file__).resolve().parents[1])

from bench.corpus import CONLL_VALID, conll_documents, make_word_corpus, write_jsonl  # noqa: E402
from bench.runners import read_summary  # noqa: E402

CONLL_TRAIN = CONLL_VALID.with_name("train.txt")

USAGE = """\
Runs `larvatus run` (embedded model, CPU, one process, default options) on a corpus,
`--repeats` times, and prints from each run's _SUMMARY.json the median seconds per stage,
inference, and the cost of the work around the model per million words:

    around = (sum of stage_seconds - stage_seconds["infer"]) / words * 1e6

The corpus: `--corpus news` (default), the benchmark's news documents until `--words`
1,000,000 whitespace words (seed 0: 2,000 documents, 1,167,831 words as Larvatus counts
them), over which start-up costs are spread thin; or `--corpus conll`, the CoNLL-2003
training documents as raw text (the first `--limit` 400, 89,098 words; `--limit 0`: all 946).

Also printed: the whole process's wall time minus inference per million words (start-up,
Beam's per-element work and Parquet included). `--save FILE` keeps the medians as a
baseline, `--baseline FILE` prints the ratios against one (baseline / now: above 1 is
cheaper now). Compare only figures from the same machine.

Usage (from the repository root, in the venv):

    python bench/stage_cost.py --save base.json          # measure and keep as a baseline
    python bench/stage_cost.py --baseline base.json      # measure again, print the ratios
    python bench/stage_cost.py --against ../base/.venv/bin/python   # interleaved with another
                                                         # checkout's larvatus, ratios against it
    python bench/stage_cost.py --words 100000 --repeats 1   # a quick look
    python bench/stage_cost.py --corpus conll --limit 0   # the CoNLL training documents
    python bench/stage_cost.py -- --placeholder indexed  # extra `larvatus run` options
"""


def run_once(corpus: Path, work: Path, extra: Sequence[str], python: str = sys.executable,
             module: str = "larvatus.cli") -> dict:
    """One `larvatus run` in a subprocess: its summary's stage seconds, words and wall time."""
    output = work / "out"
    command = [python, "-m", module, "run", "--input", str(corpus),
               "--output", str(output), "--progress", "off", "-q", "--device", "cpu",
               "--overwrite", *extra]
    # A venv's interpreter (CHECKOUT/.venv/bin/python) runs from its checkout's root, where
    # an older checkout's top-level packages import from.
    venv_bin = Path(python).parent
    root = venv_bin.parent.parent if venv_bin.name == "bin" and venv_bin.parent.name.startswith(".") \
        else None
    started = time.perf_counter()
    subprocess.run(command, check=True, cwd=root)
    wall = time.perf_counter() - started
    summary = read_summary(str(output))
    return {"stage_seconds": summary["stage_seconds"], "words": summary["words"],
            "process_seconds": wall}


def figures(run: dict) -> dict:
    """The derived figures of one run (seconds, and seconds per million words)."""
    stages = run["stage_seconds"]
    infer = stages.get("infer", 0.0)
    total = sum(stages.values())
    per_mw = 1e6 / max(run["words"], 1)
    return {"stages_total": total, "infer": infer, "around": total - infer,
            "around_per_mw": (total - infer) * per_mw,
            "process_minus_infer_per_mw": (run["process_seconds"] - infer) * per_mw,
            "process_seconds": run["process_seconds"],
            **{f"stage_{name}": value for name, value in stages.items()}}


def medians(runs: list[dict]) -> dict:
    """The median of each figure over the runs."""
    per_run = [figures(run) for run in runs]
    keys = sorted({key for found in per_run for key in found})
    return {key: statistics.median(found.get(key, 0.0) for found in per_run) for key in keys}


def show(result: dict, baseline: Optional[dict]) -> None:
    """Prints the medians (and ratios baseline / now when a baseline is given)."""
    print(f"corpus: {result['corpus']} - {result['words']:,} words, "
          f"{result['repeats']} repeats (medians)")
    base = baseline["medians"] if baseline else {}
    for key, value in result["medians"].items():
        line = f"  {key:<30} {value:10.3f}"
        if key in base and value > 0:
            line += f"   baseline {base[key]:10.3f}   ratio {base[key] / value:6.2f}x"
        print(line)
    if baseline:
        now, then = result["medians"]["around_per_mw"], base["around_per_mw"]
        print(f"stage seconds minus inference per million words: {then:.2f} -> {now:.2f} "
              f"({then / now:.2f}x cheaper)")


def parse_args(argv: Optional[Sequence[str]] = None) -> tuple[argparse.Namespace, list[str]]:
    argv = list(sys.argv[1:] if argv is None else argv)
    extra = argv[argv.index("--") + 1:] if "--" in argv else []
    argv = argv[:argv.index("--")] if "--" in argv else argv
    parser = argparse.ArgumentParser(description=__doc__, epilog=USAGE,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--corpus", choices=("news", "conll"), default="news")
    parser.add_argument("--words", type=int, default=1_000_000,
                        help="news: whole documents until this many words")
    parser.add_argument("--conll", type=Path, default=CONLL_TRAIN, help="CoNLL-2003 file")
    parser.add_argument("--limit", type=int, default=400,
                        help="conll: the first N documents (0: all)")
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--save", type=Path, default=None, help="write the result here")
    parser.add_argument("--baseline", type=Path, default=None, help="ratios against this")
    parser.add_argument("--against", default=None, metavar="PYTHON",
                        help="also run this interpreter's larvatus (another checkout's venv), "
                             "repeats interleaved, and print the ratios against it")
    parser.add_argument("--against-module", default="larvatus.cli", metavar="MODULE",
                        help="the command-line module of the `--against` checkout (older "
                             "checkouts: pipeline.cli, run from that checkout's root)")
    return parser.parse_args(argv), extra


def measure(records: list, origin: str, args: argparse.Namespace, extra: Sequence[str]) -> dict:
    """Runs the repeats (interleaved with `--against`'s when given); returns the results."""
    pythons = {"current": (sys.executable, "larvatus.cli")}
    if args.against:
        pythons["against"] = (args.against, args.against_module)
    runs: dict[str, list] = {name: [] for name in pythons}
    with tempfile.TemporaryDirectory(prefix="larvatus-cost-") as tmp:
        corpus = Path(tmp) / "corpus.jsonl"
        write_jsonl(records, corpus)
        for repeat in range(args.repeats):
            for name, python in pythons.items():
                runs[name].append(run_once(corpus, Path(tmp), extra, *python))
                found = figures(runs[name][-1])
                print(f"run {repeat + 1} {name}: around {found['around_per_mw']:.2f} s per "
                      f"million words, infer {found['infer']:.2f} s", flush=True)
    return {name: {"corpus": f"{origin} ({len(records)} documents)", "words": found_runs[0]["words"],
                   "repeats": len(found_runs), "extra": list(extra),
                   "medians": medians(found_runs), "runs": found_runs}
            for name, found_runs in runs.items()}


def main(argv: Optional[Sequence[str]] = None) -> int:
    args, extra = parse_args(argv)
    baseline = json.loads(args.baseline.read_text(encoding="utf-8")) if args.baseline else None
    if args.corpus == "news":
        records, origin = make_word_corpus(args.words, seed=0)
    else:
        records, origin = conll_documents(args.conll, args.limit or None)
    results = measure(records, origin, args, extra)
    result = results["current"]
    if "against" in results:
        result["against"] = results["against"]
        baseline = results["against"]
    show(result, baseline)
    if args.save:
        args.save.write_text(json.dumps(result, indent=2, sort_keys=True) + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    os.environ.setdefault("PYTHONHASHSEED", "0")
    sys.exit(main())
