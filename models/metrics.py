"""Entity-level exact-match precision, recall and F1 (the CoNLL convention), and the paired bootstrap test."""
from __future__ import annotations

import random
from collections import Counter
from dataclasses import dataclass
from typing import Sequence

from larvatus.transforms.records import EntitySpan

SpanKey = tuple[int, int, str]


@dataclass(frozen=True)
class Counts:
    """True positives, false positives and false negatives."""

    tp: int = 0
    fp: int = 0
    fn: int = 0

    def __add__(self, other: "Counts") -> "Counts":
        return Counts(self.tp + other.tp, self.fp + other.fp, self.fn + other.fn)

    @property
    def precision(self) -> float:
        return self.tp / (self.tp + self.fp) if self.tp + self.fp else 0.0

    @property
    def recall(self) -> float:
        return self.tp / (self.tp + self.fn) if self.tp + self.fn else 0.0

    @property
    def f1(self) -> float:
        p, r = self.precision, self.recall
        return 2 * p * r / (p + r) if p + r else 0.0


def _keys(spans: Sequence[EntitySpan]) -> Counter:
    return Counter((s.start, s.end, s.label) for s in spans)


def document_counts(gold: Sequence[EntitySpan], predicted: Sequence[EntitySpan]) -> dict[str, Counts]:
    """Per-label counts for one document: an entity counts only if start, end and label all match."""
    gold_keys, pred_keys = _keys(gold), _keys(predicted)
    labels = {k[2] for k in gold_keys} | {k[2] for k in pred_keys}
    counts = {}
    for label in labels:
        g = Counter({k: v for k, v in gold_keys.items() if k[2] == label})
        p = Counter({k: v for k, v in pred_keys.items() if k[2] == label})
        tp = sum((g & p).values())
        counts[label] = Counts(tp, sum(p.values()) - tp, sum(g.values()) - tp)
    return counts


def total(per_document: Sequence[dict[str, Counts]]) -> dict[str, Counts]:
    """Sums per-label counts over documents; key "micro" holds all labels together."""
    totals: dict[str, Counts] = {}
    for counts in per_document:
        for label, c in counts.items():
            totals[label] = totals.get(label, Counts()) + c
    totals["micro"] = sum(totals.values(), Counts())
    return dict(sorted(totals.items()))


def score(gold: Sequence[Sequence[EntitySpan]], predicted: Sequence[Sequence[EntitySpan]]) -> dict[str, Counts]:
    """Corpus-level counts per label and micro-averaged, documents paired in order."""
    if len(gold) != len(predicted):
        raise ValueError("gold and predicted must list the same documents")
    return total([document_counts(g, p) for g, p in zip(gold, predicted)])


def _micro(per_document: Sequence[dict[str, Counts]]) -> list[Counts]:
    return [sum(c.values(), Counts()) for c in per_document]


def paired_bootstrap(
    a: Sequence[dict[str, Counts]], b: Sequence[dict[str, Counts]], samples: int = 1000,
    seed: int = 0,
) -> tuple[float, float]:
    """Paired bootstrap over documents (Berg-Kirkpatrick et al. 2012; SLP3 4.11).

    Returns (observed micro-F1 difference a - b, p-value): the share of
    resamples whose difference reaches twice the observed one, the test of
    whether a's advantage could be chance (1.0 when a is not ahead).
    """
    if len(a) != len(b):
        raise ValueError("both systems must be scored on the same documents")
    micro_a, micro_b = _micro(a), _micro(b)
    observed = sum(micro_a, Counts()).f1 - sum(micro_b, Counts()).f1
    if observed <= 0:
        return observed, 1.0
    rng = random.Random(seed)
    n = len(micro_a)
    exceed = 0
    for _ in range(samples):
        picks = [rng.randrange(n) for _ in range(n)]
        delta = (sum((micro_a[i] for i in picks), Counts()).f1
                 - sum((micro_b[i] for i in picks), Counts()).f1)
        if delta >= 2 * observed:
            exceed += 1
    return observed, exceed / samples
