"""Merge window predictions, realign subword tags to words, and decode entity spans."""
from __future__ import annotations

from typing import Sequence

import numpy as np

from transforms.labels import LabelScheme, decode_spans
from transforms.records import EncodedDocument, EntitySpan, Vocabulary


class Aggregation(Vocabulary):
    """How a word's label probabilities come from its subwords' (transformers' AggregationStrategy)."""

    FIRST = "first"
    AVERAGE = "average"
    MAX = "max"


AGGREGATIONS = Aggregation.names()


def _aggregate(content_probs: np.ndarray, firsts: np.ndarray, aggregation: str) -> np.ndarray:
    """One probability vector per word that starts in the window."""
    if aggregation == Aggregation.FIRST:
        return content_probs[firsts]
    # A word's pieces run from its first piece to the next word's first piece.
    if aggregation == Aggregation.AVERAGE:
        sums = np.add.reduceat(content_probs, firsts, axis=0)
        counts = np.diff(np.append(firsts, content_probs.shape[0]))
        return sums / counts[:, None]
    if aggregation == Aggregation.MAX:
        confidence = content_probs.max(axis=1)
        bounds = np.append(firsts, content_probs.shape[0])
        picks = [a + int(np.argmax(confidence[a:b])) for a, b in zip(bounds[:-1], bounds[1:])]
        return content_probs[picks]
    raise ValueError(f"aggregation must be one of {AGGREGATIONS}, got {aggregation!r}")


def word_predictions(
    encoded: EncodedDocument, window_probs: Sequence[np.ndarray], aggregation: str = "first"
) -> tuple[np.ndarray, np.ndarray]:
    """Picks each word's label probabilities from the window where it stands farthest from an edge.

    Args:
      encoded: the document and its windows.
      window_probs: per window, label probabilities of its content pieces
        (no [CLS]/[SEP]), shape (len(window) - 2, num_labels).
      aggregation: "first" (first subword), "average" or "max" over subwords.

    Returns:
      (label index per word, score per word); words with no piece get label -1.
    """
    num_words = encoded.segmented.num_words
    labels = np.full(num_words, -1, dtype=np.int64)
    scores = np.zeros(num_words, dtype=np.float32)
    best = np.full(num_words, -1.0)
    total = encoded.num_pieces
    if len(window_probs) != len(encoded.windows):
        raise ValueError(
            f"{len(window_probs)} predictions for {len(encoded.windows)} windows")
    for window, probs in zip(encoded.windows, window_probs):
        if probs.ndim != 2 or probs.shape[0] != len(window) - 2:
            raise ValueError(
                f"prediction of shape {probs.shape} for a window of {len(window) - 2} pieces")
        content = slice(1, len(window) - 1)
        firsts = np.flatnonzero(window.first_piece[content])
        if firsts.size == 0:
            continue
        words = window.word_ids[content][firsts]
        start, end = window.piece_offset, window.piece_offset + len(window) - 2
        left = firsts.astype(float) if start > 0 else np.full(firsts.size, np.inf)
        right = (end - start - 1 - firsts).astype(float) if end < total else np.full(firsts.size, np.inf)
        distance = np.minimum(left, right)
        better = distance > best[words]
        if not better.any():
            continue
        vectors = _aggregate(probs, firsts, aggregation)[better]
        chosen = words[better]
        best[chosen] = distance[better]
        labels[chosen] = vectors.argmax(axis=1)
        scores[chosen] = vectors.max(axis=1)
    return labels, scores


def decode_entities(
    encoded: EncodedDocument, word_labels: np.ndarray, word_scores: np.ndarray,
    scheme: LabelScheme,
) -> tuple[EntitySpan, ...]:
    """Decodes word labels into spans in code-point offsets of the original text."""
    tags = [scheme.tags[i] if i >= 0 else None for i in word_labels.tolist()]
    starts, ends = encoded.segmented.word_starts, encoded.segmented.word_ends
    return tuple(
        EntitySpan(
            start=starts[first], end=ends[last - 1], label=entity,
            score=float(word_scores[first:last].mean()))
        for first, last, entity in decode_spans(tags))


def realign(
    encoded: EncodedDocument, window_probs: Sequence[np.ndarray], scheme: LabelScheme,
    aggregation: str = "first",
) -> tuple[EntitySpan, ...]:
    """Window predictions to entity spans: merge, realign to words, decode."""
    labels, scores = word_predictions(encoded, window_probs, aggregation)
    return decode_entities(encoded, labels, scores, scheme)
