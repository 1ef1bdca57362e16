"""Score a model directory on CoNLL data through the pipeline's own encode and realign code."""
from __future__ import annotations

import argparse
import json
import sys
import time
from typing import Callable, Sequence

import numpy as np

from models import metrics
from models.batching import flatten_windows, split_per_document
from models.conll import GoldDocument, read_documents
from transforms.labels import LabelScheme
from transforms.encode import EncodeSettings, default_overlap, encode_many
from transforms.realign import realign
from transforms.records import EntitySpan, Window
from transforms.segment import segment

RunWindows = Callable[[Sequence[Window]], list[np.ndarray]]
SEGMENTATIONS = ("gold", "text")


def predict_spans(
    golds: Sequence[GoldDocument], segmentation: str, tokenizer, settings: EncodeSettings,
    run_windows: RunWindows, scheme: LabelScheme, aggregation: str = "first",
    chunk: int = 32,
) -> list[tuple[EntitySpan, ...]]:
    """The spans a model finds in each document, the way the pipeline finds them.

    Args:
      segmentation: "gold" uses the CoNLL tokens as words; "text" runs the
        pipeline's spaCy segmentation on the rebuilt raw text.
      run_windows: label probabilities for windows (ONNX Runtime or PyTorch).
    """
    if segmentation not in SEGMENTATIONS:
        raise ValueError(f"segmentation must be one of {SEGMENTATIONS}")
    predictions: list[tuple[EntitySpan, ...]] = []
    for begin in range(0, len(golds), chunk):
        part = golds[begin:begin + chunk]
        segmented = [g.gold_tokens() if segmentation == "gold" else segment(g.document())
                     for g in part]
        encoded = encode_many(segmented, tokenizer, settings)
        windows = flatten_windows(encoded)
        probs = run_windows(windows) if windows else []
        for doc, doc_probs in zip(encoded, split_per_document(encoded, probs)):
            predictions.append(realign(doc, doc_probs, scheme, aggregation))
    return predictions


def format_report(totals: dict[str, metrics.Counts], title: str) -> str:
    lines = [title, f"{'label':<8}{'precision':>10}{'recall':>10}{'f1':>10}{'gold':>8}"]
    for label, c in totals.items():
        lines.append(f"{label:<8}{c.precision:>10.4f}{c.recall:>10.4f}{c.f1:>10.4f}{c.tp + c.fn:>8}")
    return "\n".join(lines)


def report_dict(totals: dict[str, metrics.Counts]) -> dict:
    return {label: {"precision": round(c.precision, 4), "recall": round(c.recall, 4),
                    "f1": round(c.f1, 4), "support": c.tp + c.fn}
            for label, c in totals.items()}


def evaluate_model_dir(model_dir: str, golds: Sequence[GoldDocument], segmentation: str,
                       aggregation: str = "first", device: str = "cpu"):
    """Per-document counts for one ONNX model directory."""
    from models.handler import OnnxTokenClassifierHandler
    from models.model_dir import load_model_spec

    spec = load_model_spec(model_dir)
    handler = OnnxTokenClassifierHandler(spec, device=device)
    loaded = handler.load_model()
    tokenizer = spec.load_tokenizer()
    settings = spec.encode_settings(tokenizer, overlap=default_overlap(spec.max_length))
    predictions = predict_spans(
        golds, segmentation, tokenizer, settings,
        lambda windows: handler.run_windows(loaded, windows), spec.scheme, aggregation)
    return [metrics.document_counts(g.spans, p) for g, p in zip(golds, predictions)]


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m models.evaluate", description=__doc__)
    parser.add_argument("--model", required=True, help="Model directory.")
    parser.add_argument("--data", required=True, help="CoNLL-format file (BIO tags).")
    parser.add_argument("--compare", default=None,
                        help="A second model directory: prints the paired bootstrap p-value "
                             "of the F1 difference.")
    parser.add_argument("--text-level", action="store_true",
                        help="Rebuild each document as raw text and segment it as the pipeline "
                             "does, instead of using the gold tokens.")
    parser.add_argument("--aggregation", default="first", choices=("first", "average", "max"))
    parser.add_argument("--device", default="cpu", choices=("auto", "cpu", "cuda"))
    parser.add_argument("--samples", type=int, default=1000, help="Bootstrap resamples.")
    parser.add_argument("--json", default=None, help="Also write the figures to this file.")
    args = parser.parse_args(argv)
    golds = read_documents(args.data)
    segmentation = "text" if args.text_level else "gold"
    started = time.perf_counter()
    counts_a = evaluate_model_dir(args.model, golds, segmentation, args.aggregation, args.device)
    totals_a = metrics.total(counts_a)
    print(format_report(totals_a, f"{args.model} on {args.data} ({segmentation} segmentation, "
                                  f"{time.perf_counter() - started:.0f} s)"))
    result = {"model": args.model, "data": args.data, "segmentation": segmentation,
              "scores": report_dict(totals_a)}
    if args.compare:
        counts_b = evaluate_model_dir(args.compare, golds, segmentation, args.aggregation,
                                      args.device)
        totals_b = metrics.total(counts_b)
        print(format_report(totals_b, f"{args.compare}"))
        first, second = (counts_a, counts_b) if totals_a["micro"].f1 >= totals_b["micro"].f1 \
            else (counts_b, counts_a)
        delta, p_value = metrics.paired_bootstrap(first, second, samples=args.samples)
        better = args.model if first is counts_a else args.compare
        print(f"micro-F1 difference {delta:+.4f} in favour of {better}; paired bootstrap "
              f"p = {p_value:.4f} ({args.samples} resamples over {len(golds)} documents)")
        result.update(compare=args.compare, compare_scores=report_dict(totals_b),
                      f1_difference=round(delta, 4), better=better, p_value=p_value)
    if args.json:
        with open(args.json, "w", encoding="utf-8") as handle:
            json.dump(result, handle, indent=2)
    return 0


if __name__ == "__main__":
    sys.exit(main())
