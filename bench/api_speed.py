"""In-process API speed: time to the first result of a fresh `Redactor` and documents/s after it."""
# Run from the repository root, in a fresh process each time (imports are part of the first
# result):
#
#     python bench/api_speed.py                      # the sample corpus, 3 passes
#     python bench/api_speed.py --input docs.jsonl --passes 1
#
# Prints one JSON object: seconds to import larvatus and build a Redactor (model loaded),
# seconds to the first redacted text, then documents/s and words/s over `--passes` passes of
# `annotate` on every document of `--input` (JSON Lines with a `text` field).
from __future__ import annotations

import argparse
import json
import os
import platform
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
SAMPLE = ROOT / "pipeline" / "sample" / "news.jsonl"


def measure(texts: list[str], passes: int) -> dict:
    """Seconds to the first result, then the throughput of annotate() on `texts`."""
    started = time.perf_counter()
    from larvatus import Redactor

    redactor = Redactor()
    built = time.perf_counter()
    redactor.redact(texts[0])
    first = time.perf_counter()
    seconds = []
    for _ in range(passes):
        tick = time.perf_counter()
        redactor.annotate(texts)
        seconds.append(time.perf_counter() - tick)
    best = min(seconds)
    words = sum(len(text.split()) for text in texts)
    return {
        "import_and_load_s": round(built - started, 2),
        "first_result_s": round(first - started, 2),
        "documents": len(texts), "words": words, "passes": passes,
        "best_pass_s": round(best, 2),
        "documents_per_s": round(len(texts) / best, 1),
        "words_per_s": round(words / best),
        "device": redactor.device,
        "cpu_cores": len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity")
        else os.cpu_count(),
        "machine": platform.processor() or platform.machine(),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--input", default=str(SAMPLE), help="JSON Lines with a text field.")
    parser.add_argument("--passes", type=int, default=3, help="annotate() passes timed.")
    args = parser.parse_args()
    with open(args.input, encoding="utf-8") as handle:
        texts = [json.loads(line)["text"] for line in handle if line.strip()]
    print(json.dumps(measure(texts, args.passes), indent=2))


if __name__ == "__main__":
    main()
