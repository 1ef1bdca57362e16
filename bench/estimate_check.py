"""Is the planting estimate honest? Its interval against the recall measured on corpora whose truth is known."""
from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Optional, Sequence

if __package__ in (None, ""):  # `python bench/estimate_check.py`: import bench.* from the root
    sys.path[0] = str(Path(__file__).resolve().parents[1])

from bench.corpus import CONLL_VALID  # noqa: E402

USAGE = """Usage (from the repository root, in the venv):

    python bench/estimate_check.py                       # CoNLL validation and the privacy bench
    python bench/estimate_check.py --corpus conll --docs 60
    python bench/estimate_check.py --json check.json

For each corpus and each kind it knows the truth of, it prints the recall measured on the
corpus's own gold items (hidden whole: every letter and digit redacted) and the 95% interval
that `larvatus estimate` gives by planting items of that kind into the same documents. An
honest estimate's interval covers the measured recall.
"""
# Kinds the privacy bench's gold and the planting share (the bench's ID is a national id).
PRIVACY_KINDS = ("PER", "EMAIL", "PHONE", "IBAN", "CARD", "ID", "DATE")


def hidden_whole(text: str, start: int, end: int, mask: bytearray) -> bool:
    positions = [i for i in range(start, end) if text[i].isalnum()]
    return bool(positions) and all(mask[i] for i in positions)


def measured_recall(redactor, documents: Sequence[tuple[str, str, Sequence[tuple[int, int, str]]]]
                    ) -> dict[str, tuple[int, int]]:
    """(hidden whole, gold items) per kind, redacting the documents as they are."""
    from larvatus.transforms.planting import coverage

    rows = redactor.annotate([text for _, text, _ in documents], ids=[d for d, _, _ in documents])
    counts: dict[str, list[int]] = {}
    for (_, text, gold), row in zip(documents, rows):
        mask = coverage(len(text), [(e["start"], e["end"]) for e in row["entities"]
                                    if e["redacted"]])
        for start, end, kind in gold:
            tally = counts.setdefault(kind, [0, 0])
            tally[0] += hidden_whole(text, start, end, mask)
            tally[1] += 1
    return {kind: (hit, total) for kind, (hit, total) in counts.items()}


def conll_documents(count: Optional[int]) -> list[tuple[str, str, list[tuple[int, int, str]]]]:
    from larvatus.models.conll import read_documents

    documents = read_documents(CONLL_VALID)[:count]
    return [(d.doc_id, d.text, [(s.start, s.end, s.label) for s in d.spans if s.label == "PER"])
            for d in documents]


def privacy_documents(count: int) -> list[tuple[str, str, list[tuple[int, int, str]]]]:
    from bench.privacy_corpus import make_split

    return [(d.id, d.text, [(g.start, g.end, g.kind) for g in d.gold
                                if g.kind in PRIVACY_KINDS])
            for d in make_split("dev", count)]


def check(redactor, documents, kinds: Sequence[str], seed: int = 0, copies: int = 2) -> list[dict]:
    """One line per kind: measured recall, the estimate's recall and interval, covered or not."""
    from larvatus.estimate import run_estimate

    measured = measured_recall(redactor, documents)
    estimate = run_estimate(redactor, [(d, t) for d, t, _ in documents], seed=seed,
                            copies=copies, items_per_copy=min(3, len(kinds)), kinds=kinds)
    lines = []
    for kind in kinds:
        hit, total = measured.get(kind, (0, 0))
        row = estimate.row(kind)
        if not total or row is None:
            continue
        low, high = row.interval
        recall = hit / total
        lines.append({"kind": kind, "gold_items": total, "measured_recall": recall,
                      "planted": row.planted, "estimated_recall": row.recall,
                      "interval_95": [low, high], "covered": low <= recall <= high})
    return lines


def main(argv: Optional[Sequence[str]] = None) -> int:
    parser = argparse.ArgumentParser(description=USAGE, formatter_class=argparse.RawTextHelpFormatter)
    parser.add_argument("--corpus", choices=("conll", "privacy", "both"), default="both")
    parser.add_argument("--docs", type=int, default=100, help="documents of each corpus")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--json", type=Path, default=None)
    args = parser.parse_args(argv)
    from larvatus import Redactor

    redactor = Redactor()
    results = {}
    if args.corpus in ("conll", "both"):
        results["conll"] = check(redactor, conll_documents(args.docs), ("PER",), args.seed)
    if args.corpus in ("privacy", "both"):
        results["privacy"] = check(redactor, privacy_documents(args.docs), PRIVACY_KINDS, args.seed)
    for corpus, lines in results.items():
        print(f"{corpus}:")
        print(f"  {'kind':<6} {'gold':>5} {'measured':>9} {'planted':>7} {'estimated':>9}  "
              f"95% interval     covered")
        for line in lines:
            low, high = line["interval_95"]
            print(f"  {line['kind']:<6} {line['gold_items']:>5} {line['measured_recall']:>9.3f} "
                  f"{line['planted']:>7} {line['estimated_recall']:>9.3f}  "
                  f"{low:.3f} - {high:.3f}  {'yes' if line['covered'] else 'NO'}")
    if args.json:
        args.json.write_text(json.dumps(results, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
