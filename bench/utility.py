"""Utility benchmark: ordinary words kept and planted names hidden, per language, on letters, tickets, product news, medical notes and contracts."""
from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path
from typing import Optional, Sequence

if __package__ in (None, ""):  # `python bench/utility.py`: import bench.* from the root
    sys.path[0] = str(Path(__file__).resolve().parents[1])

USAGE = """\
Renders `bench/utility_corpus.py`'s templates (five genres in English, German, French,
Spanish, Italian and Dutch, names from faker's locale of each language) and runs them through
the in-process `Redactor` (the rows `larvatus run` writes for the same texts and options),
then prints, per language, the share of designated ordinary words kept as written and of
planted names (PER, ORG, CITY) hidden whole, and the names lost.

    python bench/utility.py                       # 120 documents, about a minute on 2 CPU cores
    python bench/utility.py --copies 1            # 30 documents
    python bench/utility.py --redact-labels all --json utility.json

The designated words are the hard ones (capitalised common nouns, openers, labels, products,
drugs), not every word: the share is lower than a count over all words would give.
"""


def table(tally: dict) -> list[str]:
    """One line per language and one for all: words kept, names hidden, names lost."""
    lines = [f"{'utility bench (designated words, planted names)':<48}"
             f"{'words kept':>12}{'names hidden':>16}{'lost':>6}"]
    for key in [k for k in tally if k != "all"] + ["all"]:
        t = tally[key]
        kept = f"{100 * t['kept'] / t['words']:.1f}% of {t['words']}"
        names = f"{100 * t['names_hidden'] / t['names']:.1f}% of {t['names']}"
        label = f"{key} ({t['documents']} documents)"
        lines.append(f"  {label:<46}{kept:>12}{names:>16}{len(t['lost']):>6}")
    return lines


def parse_args(argv: Optional[Sequence[str]] = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter, epilog=USAGE)
    parser.add_argument("--copies", type=int, default=4,
                        help="Documents per language and genre (default 4).")
    parser.add_argument("--redact-labels", default="default",
                        help="--redact-labels of the Redactor (default: default).")
    parser.add_argument("--model", default="embedded:default", help="The model (default embedded).")
    parser.add_argument("--json", default=None, help="Write every figure to this file.")
    parser.add_argument("--lost", action="store_true", help="List the documents of lost names.")
    return parser.parse_args(argv)


def run(copies: int = 4, redact_labels: str = "default",
        model: str = "embedded:default") -> dict:
    """The tally of `utility_corpus.score` for the documents through a Redactor."""
    from bench.utility_corpus import make_documents, score
    from larvatus import Redactor

    documents = make_documents(copies)
    redactor = Redactor(model=model, redact_labels=redact_labels)
    started = time.perf_counter()
    rows = dict(zip((d.doc_id for d in documents),
                    redactor.annotate([d.text for d in documents])))
    tally = score(documents, rows)
    tally["all"]["seconds"] = round(time.perf_counter() - started, 1)
    return tally


def main(argv: Optional[Sequence[str]] = None) -> int:
    args = parse_args(argv)
    tally = run(args.copies, args.redact_labels, args.model)
    print("\n".join(table(tally)))
    if args.lost:
        for key, t in tally.items():
            if key != "all":
                for lost in t["lost"]:
                    print("  lost:", lost)
    if args.json:
        Path(args.json).write_text(json.dumps({"args": vars(args), "tally": tally}, indent=1),
                                   encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
