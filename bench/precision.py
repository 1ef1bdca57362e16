"""Redaction quality on both benches side by side: privacy recall, precision and words kept, and CoNLL end to end."""
from __future__ import annotations

import argparse
import json
import sys
import tempfile
from pathlib import Path
from typing import Optional, Sequence

if __package__ in (None, ""):  # `python bench/precision.py`: import bench.* from the root
    sys.path[0] = str(Path(__file__).resolve().parents[1])

USAGE = """\
Runs `bench/privacy.py` (Larvatus only, `--split`, `--redact-labels all`) and
`bench/peers.py --corpus conll --systems larvatus --larvatus-thresholds default --repeats 1
--idle-wait 0` (CoNLL-2003 validation through `larvatus run` with its defaults), then prints
one table: recall, precision, ordinary words kept and the share of redacted model spans that
touch no gold item on the privacy documents; micro F1 and PER/LOC/ORG precision and recall
on CoNLL, typed (label and span must match) and untyped (the span must match a gold
PER/LOC/ORG span, whatever its label: what a redaction needs), each also on the even and the
odd validation documents.

    python bench/precision.py                      # about 3 minutes on 2 CPU cores
    python bench/precision.py --split dev          # the privacy documents for tuning
    python bench/precision.py --from-json PRIVACY.json CONLL.json   # print saved figures

Below it, `bench/utility.py`'s table: designated ordinary words kept and planted names hidden
per language (English, German, French, Spanish, Italian, Dutch; `--utility-copies`).

Rules chosen by reading validation errors flatter the CoNLL figures; the halves show how
much the figure moves between two sets of documents.
"""

REDACTED = ("PER", "LOC", "ORG")


def conll_counts(golds: Sequence, predictions: dict, docs: Optional[set] = None) -> dict:
    """Micro and PER/LOC/ORG counts (typed and untyped) of Larvatus's non-propagated spans."""
    tally = {key: [0, 0, 0] for key in ("micro", "typed", "untyped")}   # tp, fp, fn
    for index, gold in enumerate(golds):
        if docs is not None and index not in docs:
            continue
        found = [e for e in predictions.get(gold.doc_id, ()) if not e[3]]
        pairs = {
            "micro": ({(s.start, s.end, s.label) for s in gold.spans},
                      {(e[0], e[1], e[2]) for e in found if e[2] in REDACTED + ("MISC",)}),
            "typed": ({(s.start, s.end, s.label) for s in gold.spans if s.label in REDACTED},
                      {(e[0], e[1], e[2]) for e in found if e[2] in REDACTED}),
            "untyped": ({(s.start, s.end) for s in gold.spans if s.label in REDACTED},
                        {(e[0], e[1]) for e in found if e[2] in REDACTED}),
        }
        for key, (want, got) in pairs.items():
            tally[key][0] += len(want & got)
            tally[key][1] += len(got - want)
            tally[key][2] += len(want - got)
    return {key: _prf(*counts) for key, counts in tally.items()}


def _prf(tp: int, fp: int, fn: int) -> dict:
    p = tp / (tp + fp) if tp + fp else 0.0
    r = tp / (tp + fn) if tp + fn else 0.0
    return {"precision": p, "recall": r, "f1": 2 * p * r / (p + r) if p + r else 0.0}


def conll_figures(predictions: dict, conll_file: str) -> dict:
    """{"all", "even", "odd"} -> conll_counts over those validation documents."""
    from larvatus.models.conll import read_documents

    golds = read_documents(conll_file)
    halves = {"all": None, "even": set(range(0, len(golds), 2)),
              "odd": set(range(1, len(golds), 2))}
    return {name: conll_counts(golds, predictions, docs) for name, docs in halves.items()}


def privacy_figures(privacy: dict) -> dict:
    score = privacy["systems"]["Larvatus"]["score"]
    return {"recall": score["overall"]["all"]["recall"],
            "names_recall": score["overall"]["names"]["recall"],
            "precision": score["precision"]["precision"],
            "words_kept": score["ordinary_words"]["kept_share"],
            "spans_on_no_gold": score["spans"]["ordinary_share"],
            "name_spans": score["spans"]["name_spans"],
            "items": score["overall"]["all"]["items"],
            "split": privacy["args"].get("split", "?")}


def table(privacy: dict, conll: dict) -> list[str]:
    """The side-by-side table."""
    def pct(value: float) -> str:
        return f"{100 * value:.1f}%"

    def three(key: str, measure: str) -> str:
        return " / ".join(f"{conll[h][key][measure]:.4f}" for h in ("all", "even", "odd"))

    lines = [f"{'privacy bench (' + privacy['split'] + ' split, ' + str(privacy['items']) + ' items)':<48}"
             f"{'Larvatus':>10}",
             f"{'  recall, all items / names':<48}{pct(privacy['recall']):>10} / "
             f"{pct(privacy['names_recall'])}",
             f"{'  precision (redacted letters and digits in gold)':<48}"
             f"{pct(privacy['precision']):>10}",
             f"{'  ordinary words kept':<48}{pct(privacy['words_kept']):>10}",
             f"{'  redacted model spans touching no gold item':<48}"
             f"{pct(privacy['spans_on_no_gold']):>10} of {privacy['name_spans']:,}",
             "",
             f"{'CoNLL-2003 validation end to end':<48}{'all / even docs / odd docs':>28}",
             f"{'  micro F1':<48}{three('micro', 'f1'):>28}",
             f"{'  PER/LOC/ORG precision, typed':<48}{three('typed', 'precision'):>28}",
             f"{'  PER/LOC/ORG recall, typed':<48}{three('typed', 'recall'):>28}",
             f"{'  PER/LOC/ORG precision, untyped (redaction)':<48}"
             f"{three('untyped', 'precision'):>28}",
             f"{'  PER/LOC/ORG recall, untyped (redaction)':<48}{three('untyped', 'recall'):>28}"]
    return lines


def parse_args(argv: Optional[Sequence[str]] = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter, epilog=USAGE)
    parser.add_argument("--split", choices=("dev", "test"), default="test",
                        help="Privacy documents (default test).")
    parser.add_argument("--conll-file", default=None,
                        help="CoNLL file (default: the validation file bench/peers.py reads).")
    parser.add_argument("--utility-copies", type=int, default=2,
                        help="Documents per language and genre of bench/utility.py, whose "
                             "table is printed below (0: skip it; default 2).")
    parser.add_argument("--from-json", nargs=2, metavar=("PRIVACY", "CONLL"), default=None,
                        help="Print the figures of saved --json outputs of bench/privacy.py and "
                             "bench/peers.py instead of running them.")
    return parser.parse_args(argv)


def main(argv: Optional[Sequence[str]] = None) -> int:
    args = parse_args(argv)
    from bench import peers, privacy as privacy_bench

    conll_file = args.conll_file or str(peers.CONLL_VALID)
    if args.from_json:
        privacy_path, conll_path = args.from_json
    else:
        out = Path(tempfile.mkdtemp(prefix="larvatus-precision-"))
        privacy_path, conll_path = str(out / "privacy.json"), str(out / "conll.json")
        if privacy_bench.main(["--split", args.split, "--no-presidio", "--json", privacy_path]):
            return 1
        if peers.main(["--corpus", "conll", "--systems", "larvatus", "--larvatus-thresholds",
                       "default", "--repeats", "1", "--idle-wait", "0", "--conll-file",
                       conll_file, "--json", conll_path]):
            return 1
    conll = json.loads(Path(conll_path).read_text(encoding="utf-8"))
    predictions_path = Path(conll["args"]["cache"]) / "peers-pred-conll-larvatus-default.json"
    predictions = json.loads(predictions_path.read_text(encoding="utf-8"))
    privacy = json.loads(Path(privacy_path).read_text(encoding="utf-8"))
    print()
    print("\n".join(table(privacy_figures(privacy),
                          conll_figures(predictions, conll["args"]["conll_file"]))))
    if args.utility_copies and not args.from_json:
        from bench import utility

        print()
        print("\n".join(utility.table(utility.run(args.utility_copies))))
    return 0


if __name__ == "__main__":
    sys.exit(main())
