"""Beam against Spark: `larvatus run` on the same corpus at two sizes, and where Spark's fixed cost is repaid."""
# Run from the repository root (pyspark and a Java runtime installed):
#
#     python bench/engines.py                               # 36 and 360 documents, 1 run each
#     python bench/engines.py --sizes 100,1000 --runs 3 --spark-master 'local[*]'
#
# Each run is a fresh `larvatus run` process (start-up included, as a user meets it) on the
# sample corpus repeated to the size (ids made unique). Prints one JSON object: the median
# wall seconds per engine and size, each engine's fixed cost and seconds per document from
# the two sizes (a straight line through the medians), and the corpus size from which Spark
# is as fast as Beam (null when its per-document time is not smaller).
from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Optional

ROOT = Path(__file__).resolve().parent.parent
SAMPLE = ROOT / "pipeline" / "sample" / "news.jsonl"


def write_corpus(path: Path, documents: int) -> Path:
    """The sample corpus repeated to `documents` records, each id unique."""
    records = [json.loads(line) for line in SAMPLE.read_text(encoding="utf-8").splitlines()]
    with path.open("w", encoding="utf-8") as handle:
        for index in range(documents):
            record = dict(records[index % len(records)], id=f"doc-{index}")
            handle.write(json.dumps(record) + "\n")
    return path


def line_through(small: tuple[int, float], large: tuple[int, float]) -> tuple[float, float]:
    """(fixed seconds, seconds per document) of the line through two (documents, seconds)."""
    (n1, t1), (n2, t2) = small, large
    per_document = (t2 - t1) / (n2 - n1)
    return t1 - per_document * n1, per_document


def break_even(beam: tuple[float, float], spark: tuple[float, float]) -> Optional[float]:
    """Documents from which Spark's line stays at or below Beam's; None when Spark is not
    faster per document (then no corpus is large enough)."""
    (beam_fixed, beam_each), (spark_fixed, spark_each) = beam, spark
    if spark_each >= beam_each:
        return None
    return max(0.0, (spark_fixed - beam_fixed) / (beam_each - spark_each))


def time_run(corpus: Path, engine: str, master: str, model: str) -> float:
    with tempfile.TemporaryDirectory() as output:
        command = [sys.executable, "-m", "larvatus.run", "--input", str(corpus),
                   "--output", output, "--model", model, "--engine", engine, "-q"]
        if engine == "spark":
            command += ["--spark-master", master]
        started = time.perf_counter()
        subprocess.run(command, check=True, cwd=ROOT, stdout=subprocess.DEVNULL)
        return time.perf_counter() - started


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--sizes", default="36,360", help="two corpus sizes, in documents")
    parser.add_argument("--runs", type=int, default=1, help="runs per engine and size")
    parser.add_argument("--spark-master", default="local[*]")
    parser.add_argument("--model", default="embedded:default")
    args = parser.parse_args()
    sizes = sorted(int(size) for size in args.sizes.split(","))
    if len(sizes) != 2 or sizes[0] == sizes[1]:
        parser.error("--sizes takes two different sizes")
    medians: dict[str, dict[int, float]] = {"beam": {}, "spark": {}}
    with tempfile.TemporaryDirectory() as folder:
        for size in sizes:
            corpus = write_corpus(Path(folder) / f"corpus-{size}.jsonl", size)
            seconds: dict[str, list[float]] = {"beam": [], "spark": []}
            for _ in range(args.runs):   # interleaved, so that load on the machine hits both
                for engine in seconds:
                    seconds[engine].append(time_run(corpus, engine, args.spark_master,
                                                    args.model))
            for engine, values in seconds.items():
                medians[engine][size] = statistics.median(values)
    lines = {engine: line_through(*((size, by_size[size]) for size in sizes))
             for engine, by_size in medians.items()}
    print(json.dumps({
        "sizes": sizes, "runs": args.runs, "spark_master": args.spark_master,
        "model": args.model, "cores": os.cpu_count(), "machine": platform.processor() or
        platform.machine(),
        "median_seconds": {engine: {str(size): round(value, 1) for size, value in by_size.items()}
                           for engine, by_size in medians.items()},
        "fixed_seconds": {engine: round(line[0], 1) for engine, line in lines.items()},
        "seconds_per_document": {engine: round(line[1], 4) for engine, line in lines.items()},
        "spark_repaid_from_documents": (None if (n := break_even(lines["beam"], lines["spark"]))
                                        is None else round(n)),
    }, indent=2))


if __name__ == "__main__":
    main()
