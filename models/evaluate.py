"""Score a model directory on CoNLL data through the pipeline's own encode and realign code."""
from __future__ import annotations

import json
import sys
import time
from dataclasses import dataclass, replace
from typing import Callable, Sequence

import numpy as np

from larvatus.models import metrics
from larvatus.models.command_line import ArgumentParser, existing_file, parse_or_report
from larvatus.models.batching import flatten_windows, split_per_document
from larvatus.models.conll import GoldDocument, read_documents
from larvatus.transforms.labels import LabelScheme, name_roles
from larvatus.transforms.encode import EncodeSettings, default_overlap, encode_many
from larvatus.transforms.realign import RedactionDecision, realign
from larvatus.transforms.records import EncodedDocument, EntitySpan, Window
from larvatus.transforms.redact import RedactionPolicy, redact
from larvatus.transforms.segment import segment

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


CASINGS = ("original", "lower", "upper")
REDACTED_TYPES = ("PER", "LOC", "ORG")
DEFAULT_THRESHOLDS = (0.02, 0.05, 0.1, 0.15, 0.2, 0.3, 0.4, 0.5, 0.7, 0.9, 1.0)


def recase(gold: GoldDocument, casing: str) -> GoldDocument:
    """The document written in lower or upper case; offsets stay valid (length-preserving)."""
    if casing == "original":
        return gold
    change = str.lower if casing == "lower" else str.upper
    text = "".join(c2 if len(c2 := change(c)) == 1 else c for c in gold.text)
    return replace(gold, text=text)


@dataclass(frozen=True)
class Predicted:
    """A document's windows and their label probabilities, kept to try many thresholds."""

    encoded: EncodedDocument
    probs: list


def predict_windows(golds: Sequence[GoldDocument], tokenizer, settings: EncodeSettings,
                    run_windows: RunWindows, chunk: int = 32) -> list[Predicted]:
    """Raw-text segmentation, encoding and inference, as the pipeline does them."""
    out: list[Predicted] = []
    for begin in range(0, len(golds), chunk):
        encoded = encode_many([segment(g.document()) for g in golds[begin:begin + chunk]],
                              tokenizer, settings)
        windows = flatten_windows(encoded)
        probs = run_windows(windows) if windows else []
        out += [Predicted(doc, p) for doc, p in zip(encoded, split_per_document(encoded, probs))]
    return out


@dataclass
class TokenCounts:
    """Gold tokens of the redacted types and how many were hidden; redacted tokens and how many were gold."""

    gold: int = 0
    hidden: int = 0
    redacted: int = 0
    redacted_gold: int = 0        # redacted tokens inside a gold entity of a redacted type
    redacted_any_entity: int = 0  # redacted tokens inside any gold entity (MISC included)

    @property
    def recall(self) -> float:
        return self.hidden / self.gold if self.gold else 0.0

    @property
    def precision(self) -> float:
        return self.redacted_gold / self.redacted if self.redacted else 0.0

    @property
    def precision_any_entity(self) -> float:
        return self.redacted_any_entity / self.redacted if self.redacted else 0.0


def redaction_token_counts(gold: GoldDocument, redacted: Sequence[EntitySpan],
                           types: Sequence[str] = REDACTED_TYPES) -> TokenCounts:
    """Token-level redaction counts for one document.

    A gold token is hidden when every one of its characters lies inside a
    redacted span; a token counts as redacted when any of its characters does.
    """
    mask = np.zeros(len(gold.text) + 1, dtype=bool)
    for span in redacted:
        mask[span.start:span.end] = True
    kind = np.zeros(len(gold.text) + 1, dtype=np.int8)   # 2: redacted type, 1: other entity
    for span in gold.spans:
        kind[span.start:span.end] = np.maximum(kind[span.start:span.end],
                                               2 if span.label in types else 1)
    counts = TokenCounts()
    for start, end in zip(gold.token_starts, gold.token_ends):
        token_kind = int(kind[start:end].max()) if end > start else 0
        hidden = bool(mask[start:end].all())
        touched = bool(mask[start:end].any())
        if token_kind == 2:
            counts.gold += 1
            counts.hidden += hidden
        if touched:
            counts.redacted += 1
            counts.redacted_gold += token_kind == 2
            counts.redacted_any_entity += token_kind >= 1
    return counts


def redaction_curve(golds: Sequence[GoldDocument], predicted: Sequence[Predicted], scheme,
                    thresholds: Sequence[float], aggregation: str = "first",
                    types: Sequence[str] = REDACTED_TYPES) -> list[dict]:
    """Token recall and precision of redaction (propagation included) at each threshold."""
    policy = RedactionPolicy(frozenset(types), name_roles=name_roles(scheme))
    rows = []
    for threshold in thresholds:
        decision = RedactionDecision(frozenset(types), threshold)
        total_counts = TokenCounts()
        for gold, pred in zip(golds, predicted):
            spans = realign(pred.encoded, pred.probs, scheme, aggregation, decision)
            entities, _, _ = redact(pred.encoded.segmented, spans, policy)
            c = redaction_token_counts(gold, [e for e in entities if e.redacted], types)
            for name in vars(total_counts):
                setattr(total_counts, name, getattr(total_counts, name) + getattr(c, name))
        rows.append({"threshold": threshold, "recall": round(total_counts.recall, 4),
                     "precision": round(total_counts.precision, 4),
                     "precision_any_entity": round(total_counts.precision_any_entity, 4),
                     "gold_tokens": total_counts.gold, "redacted_tokens": total_counts.redacted})
    return rows


def format_report(totals: dict[str, metrics.Counts], title: str) -> str:
    lines = [title, f"{'label':<8}{'precision':>10}{'recall':>10}{'f1':>10}{'gold':>8}"]
    for label, c in totals.items():
        lines.append(f"{label:<8}{c.precision:>10.4f}{c.recall:>10.4f}{c.f1:>10.4f}{c.tp + c.fn:>8}")
    return "\n".join(lines)


def report_dict(totals: dict[str, metrics.Counts]) -> dict:
    return {label: {"precision": round(c.precision, 4), "recall": round(c.recall, 4),
                    "f1": round(c.f1, 4), "support": c.tp + c.fn}
            for label, c in totals.items()}


def _onnx_runner(model_dir: str, device: str):
    from larvatus.models.handler import OnnxTokenClassifierHandler
    from larvatus.models.model_dir import load_model_spec

    spec = load_model_spec(model_dir)
    handler = OnnxTokenClassifierHandler(spec, device=device)
    loaded = handler.load_model()
    tokenizer = spec.load_tokenizer()
    settings = spec.encode_settings(tokenizer, overlap=default_overlap(spec.max_length))
    return spec, tokenizer, settings, lambda windows: handler.run_windows(loaded, windows)


def evaluate_model_dir(model_dir: str, golds: Sequence[GoldDocument], segmentation: str,
                       aggregation: str = "first", device: str = "cpu"):
    """Per-document counts for one ONNX model directory."""
    spec, tokenizer, settings, run_windows = _onnx_runner(model_dir, device)
    predictions = predict_spans(
        golds, segmentation, tokenizer, settings, run_windows, spec.scheme, aggregation)
    return [metrics.document_counts(g.spans, p) for g, p in zip(golds, predictions)]


EXAMPLES = """examples:
  larvatus evaluate --model models/default --data ../shared/data/conll2003/valid.txt
  larvatus evaluate --model models/my-ner --data valid.txt --text-level   # as the job reads text
  larvatus evaluate --model models/my-ner --data valid.txt --compare models/default
  larvatus evaluate --model models/default --data valid.txt --redaction-curve"""


def main(argv: Sequence[str] | None = None, prog: str = "larvatus evaluate") -> int:
    parser = ArgumentParser(prog=prog, description=__doc__, epilog=EXAMPLES)
    parser.add_argument("--model", required=True, help="Model directory.")
    parser.add_argument("--data", required=True, type=existing_file,
                        help="CoNLL-format file (BIO tags).")
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
    parser.add_argument("--redaction-curve", action="store_true",
                        help="Instead of entity F1: token recall and precision of redacting "
                             "PER/LOC/ORG (recall-first threshold, propagation included) at each "
                             "of --thresholds, on raw text, for each of --casings.")
    parser.add_argument("--thresholds", default=",".join(map(str, DEFAULT_THRESHOLDS)))
    parser.add_argument("--casings", default=",".join(CASINGS),
                        help="original, lower, upper: the validation text as written, or "
                             "lowercased / uppercased (names in any casing must be found).")
    args, status = parse_or_report(parser, argv)
    if args is None:
        return status
    golds = read_documents(args.data)
    if args.redaction_curve:
        return _print_redaction_curve(args, golds)
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


def _print_redaction_curve(args, golds: Sequence[GoldDocument]) -> int:
    spec, tokenizer, settings, run_windows = _onnx_runner(args.model, args.device)
    thresholds = [float(t) for t in args.thresholds.split(",")]
    result = {"model": args.model, "data": args.data, "curves": {}}
    for casing in args.casings.split(","):
        cased = [recase(g, casing) for g in golds]
        predicted = predict_windows(cased, tokenizer, settings, run_windows)
        rows = redaction_curve(cased, predicted, spec.scheme, thresholds, args.aggregation)
        result["curves"][casing] = rows
        print(f"{casing} casing: token recall / precision of redacting PER, LOC, ORG")
        print(f"{'threshold':>10}{'recall':>9}{'precision':>11}{'prec. any entity':>18}")
        for row in rows:
            print(f"{row['threshold']:>10}{row['recall']:>9.4f}{row['precision']:>11.4f}"
                  f"{row['precision_any_entity']:>18.4f}")
    if args.json:
        with open(args.json, "w", encoding="utf-8") as handle:
            json.dump(result, handle, indent=2)
    return 0


if __name__ == "__main__":
    sys.exit(main())
