"""Merge window predictions, realign subword tags to words, and decode entity spans."""
from __future__ import annotations

import re
from bisect import bisect_left
from dataclasses import dataclass, replace
from itertools import chain
from typing import Optional, Sequence

import numpy as np

from larvatus.transforms.labels import LabelScheme, Tag
from larvatus.transforms.ordinary import NAME_PARTICLES, is_function_word
from larvatus.transforms.records import EncodedDocument, EntitySource, EntitySpan, Vocabulary


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


def word_probabilities(
    encoded: EncodedDocument, window_probs: Sequence[np.ndarray], aggregation: str = "first"
) -> tuple[np.ndarray, np.ndarray]:
    """Picks each word's label probabilities from the window where it stands farthest from an edge.

    Args:
      encoded: the document and its windows.
      window_probs: per window, label probabilities of its content pieces
        (no [CLS]/[SEP]), shape (len(window) - 2, num_labels).
      aggregation: "first" (first subword), "average" or "max" over subwords.

    Returns:
      (probabilities of shape (words, labels), whether each word has a
      prediction); a word with no piece (a zero-width character) has none and
      a row of zeros.
    """
    num_words = encoded.segmented.num_words
    num_labels = window_probs[0].shape[1] if len(window_probs) and window_probs[0].ndim == 2 else 0
    per_word = np.zeros((num_words, num_labels), dtype=np.float32)
    best = np.full(num_words, -1, dtype=np.int64)   # distances in pieces, _FAR for no edge
    total = encoded.num_pieces
    if len(window_probs) != len(encoded.windows):
        raise ValueError(
            f"{len(window_probs)} predictions for {len(encoded.windows)} windows")
    for window, probs in zip(encoded.windows, window_probs):
        size = len(window) - 2
        if probs.ndim != 2 or probs.shape[0] != size:
            raise ValueError(f"prediction of shape {probs.shape} for a window of {size} pieces")
        firsts = window.first_piece[1:-1].nonzero()[0]
        if firsts.size == 0:
            continue
        words = window.word_ids[1:-1][firsts]
        no_left, no_right = not window.piece_offset > 0, not window.piece_offset + size < total
        if no_left and no_right:   # the only window: no edge to stand away from
            better = best[words] < _FAR
            best[words] = _FAR
        else:
            if no_left:
                distance = size - 1 - firsts
            elif no_right:
                distance = firsts
            else:
                distance = np.minimum(firsts, size - 1 - firsts)
            better = distance > best[words]
            if not better.any():
                continue
            best[words[better]] = distance[better]
        if aggregation == Aggregation.FIRST:
            per_word[words[better]] = probs[firsts[better]]
        else:
            per_word[words[better]] = _aggregate(probs, firsts, aggregation)[better]
    return per_word, best >= 0


_FAR = np.iinfo(np.int64).max   # the distance from an edge the document does not have


def word_predictions(
    encoded: EncodedDocument, window_probs: Sequence[np.ndarray], aggregation: str = "first"
) -> tuple[np.ndarray, np.ndarray]:
    """(argmax label index per word, its probability); words with no piece get label -1."""
    probs, predicted = word_probabilities(encoded, window_probs, aggregation)
    if probs.shape[1] == 0:
        return np.full(len(predicted), -1, dtype=np.int64), np.zeros(len(predicted), np.float32)
    labels = np.where(predicted, probs.argmax(axis=1), -1).astype(np.int64)
    scores = np.where(predicted, probs.max(axis=1), 0.0).astype(np.float32)
    return labels, scores


# A span the model types as a kept type (MISC, when not redacted) is hidden only when the
# redacted types together hold at least this share of a word's probability: a real case that
# it names a person, place or organisation, not the recall-first threshold's few per cent
# ("iPhone", "Windows 11", "Parmesan" stay).
OUTSIDE_TYPE_EVIDENCE = 0.5


@dataclass(frozen=True)
class RedactionDecision:
    """Recall-first: a span is redacted when its decision score (the largest summed
    probability of every tag of the redacted types over its words) reaches its label's
    threshold, whatever the argmax label says.

    Args:
      types: the model's entity types to redact (PER, LOC, ORG by default).
      threshold: in (0, 1]; 1.0 keeps only argmax decisions in practice.
      label_thresholds: (label, threshold) pairs overriding `threshold` for a label.
    """

    types: frozenset[str]
    threshold: float = 0.5
    label_thresholds: tuple[tuple[str, float], ...] = ()

    def __post_init__(self):
        for label, value in (("", self.threshold), *self.label_thresholds):
            if not 0.0 < value <= 1.0:
                name = f"the {label} threshold" if label else "the redaction threshold"
                raise ValueError(f"{name} must be in (0, 1], got {value}")

    def threshold_for(self, label: str) -> float:
        """The threshold a span of `label` is compared with."""
        return dict(self.label_thresholds).get(label, self.threshold)

    @property
    def lowest(self) -> float:
        return min([self.threshold] + [v for _, v in self.label_thresholds])

    def bar_for(self, label: str) -> float:
        """What a span of `label` must reach to be hidden: its threshold, and for a type the
        options keep (MISC by default) at least `OUTSIDE_TYPE_EVIDENCE`."""
        threshold = self.threshold_for(label)
        return threshold if label in self.types else max(threshold, OUTSIDE_TYPE_EVIDENCE)

    def decides(self, label: str, decision_score: float) -> bool:
        return decision_score >= self.bar_for(label) - 1e-6


def redacted_mass(probs: np.ndarray, scheme: LabelScheme, types: frozenset[str]) -> np.ndarray:
    """Per word, the summed probability of every tag of `types` (the decided quantity)."""
    columns = [i for i, tag in enumerate(scheme.tags) if tag.entity in types]
    if not columns:
        return np.zeros(probs.shape[0], dtype=np.float32)
    return probs[:, columns].sum(axis=1)


def decide_redaction(
    probs: np.ndarray, predicted: np.ndarray, scheme: LabelScheme, decision: RedactionDecision,
) -> tuple[np.ndarray, np.ndarray]:
    """Word labels and redaction flags under the recall-first rule.

    A flagged word whose argmax tag is O takes the most probable tag among the
    redacted types (so it becomes an entity); a flagged word inside an argmax
    entity of another type (MISC) keeps that label and is redacted all the same.
    Words are flagged at the lowest threshold; spans are then held to their label's.

    Returns:
      (label index per word, -1 without prediction; flag per word).
    """
    columns = [i for i, tag in enumerate(scheme.tags) if tag.entity in decision.types]
    labels = np.where(predicted, probs.argmax(axis=1) if probs.shape[1] else -1, -1)
    if not columns:
        return labels.astype(np.int64), np.zeros(len(labels), dtype=bool)
    mass = probs[:, columns].sum(axis=1)
    flagged = predicted & (mass >= decision.lowest - 1e-6)
    outside = np.array([scheme.tags[i].entity is None for i in range(len(scheme.tags))])
    to_relabel = flagged & outside[np.maximum(labels, 0)]
    best_redacted = np.asarray(columns)[probs[:, columns].argmax(axis=1)]
    labels = np.where(to_relabel, best_redacted, labels)
    return labels.astype(np.int64), flagged


def _per_tags(build):
    """`build(tags, *more)` remembered per tags tuple (by identity: hashing the tags costs
    more than what is remembered) and further arguments; at most 16 of them."""
    kept: dict[tuple, tuple] = {}

    def remembered(tags: tuple[Tag, ...], *more):
        key = (id(tags), *more)
        entry = kept.get(key)
        if entry is None or entry[0] is not tags:
            if len(kept) >= 16:
                kept.clear()
            entry = kept[key] = (tags, build(tags, *more))
        return entry[1]

    return remembered


@_per_tags
def _decision_table(tags: tuple[Tag, ...], types: frozenset[str]) -> tuple[np.ndarray, np.ndarray]:
    """The label indices of `types`' tags, and per label index whether its tag is O."""
    columns = np.array([i for i, tag in enumerate(tags) if tag.entity in types], dtype=np.int64)
    return columns, np.array([tag.entity is None for tag in tags])


def _decide(probs: np.ndarray, predicted: np.ndarray, scheme: LabelScheme,
            decision: RedactionDecision) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(argmax label, `decide_redaction`'s label, `redacted_mass`) per word, each computed once;
    for probabilities of at least one label."""
    columns, outside = _decision_table(scheme.tags, decision.types)
    argmax = np.where(predicted, probs.argmax(axis=1), -1)
    if not columns.size:
        return argmax, argmax, np.zeros(probs.shape[0], dtype=np.float32)
    redacted = probs[:, columns]
    mass = redacted.sum(axis=1)
    relabel = (predicted & (mass >= decision.lowest - 1e-6)
               & outside[np.maximum(argmax, 0)]).nonzero()[0]
    labels = argmax.copy()
    labels[relabel] = columns[redacted[relabel].argmax(axis=1)]
    return argmax, labels, mass


@_per_tags
def _tag_table(tags: tuple[Tag, ...]) -> tuple[np.ndarray, np.ndarray, np.ndarray, tuple[str, ...]]:
    """Per label index, and one more for "no tag": entity number (-1 for none), whether the
    tag opens a span (B, S) and whether it closes one (E, S); and the entity names."""
    names = tuple(sorted({tag.entity for tag in tags if tag.entity is not None}))
    entity = np.array([-1 if t.entity is None else names.index(t.entity) for t in tags] + [-1])
    opens = np.array([t.role in ("B", "S") for t in tags] + [False])
    closes = np.array([t.role in ("E", "S") for t in tags] + [False])
    return entity, opens, closes, names


def decode_label_runs(word_labels: np.ndarray, scheme: LabelScheme) -> list[tuple[int, int, str]]:
    """`decode_spans` of the words' tags (label index per word, -1 for none), over whole arrays:
    a word opens a span when its tag is B or S, or follows no open span of its type (O, no
    tag, E, S or another type before it); the span runs until the next word that opens one
    or has no entity tag."""
    firsts, lasts, entities = _label_runs(word_labels, scheme)
    names = _tag_table(scheme.tags)[3]
    return list(zip(firsts.tolist(), lasts.tolist(), [names[k] for k in entities.tolist()]))


_TRUE = np.ones(1, dtype=bool)


def _label_runs(word_labels: np.ndarray, scheme: LabelScheme) -> tuple[np.ndarray, np.ndarray,
                                                                        np.ndarray]:
    """`decode_label_runs` as arrays: first word, end word and entity number of each run."""
    entity_of, opens, closes, _ = _tag_table(scheme.tags)
    index = np.where(word_labels >= 0, word_labels, len(scheme.tags))
    entity = entity_of[index]
    in_entity = entity >= 0
    open_before = np.zeros(len(index), dtype=bool)
    open_before[1:] = in_entity[:-1] & ~closes[index[:-1]] & (entity[:-1] == entity[1:])
    starts = in_entity & (opens[index] | ~open_before)
    breaks = np.concatenate((~in_entity | starts, _TRUE)).nonzero()[0]
    firsts = starts.nonzero()[0]
    return firsts, breaks[np.searchsorted(breaks, firsts, side="right")], entity[firsts]


def _span_mean(scores: np.ndarray, first: int, last: int) -> float:
    """`float(scores[first:last].mean())` for float32 scores, without `mean`'s overhead:
    the same float32 sum, divided in double precision and rounded to float32 as `mean` does."""
    if last - first == 1:
        return float(scores[first])
    if scores.dtype != np.float32:
        return float(scores[first:last].mean())
    return float(np.float32(float(np.add.reduce(scores[first:last])) / (last - first)))


_SHORT_RUN = 8   # float32 add.reduce sums fewer values than this one after the other
_MANY_RUNS = 8   # runs of several words worth one pass over arrays


def _span_means(scores: np.ndarray, firsts: np.ndarray, lasts: np.ndarray) -> list[float]:
    """`_span_mean` of each run (its first and end word). Over whole arrays where runs of
    several words are many: add.reduce sums a float32 slice shorter than `_SHORT_RUN` one value
    after the other from 0, as adding their values column by column (0 past a run's end) does."""
    if scores.dtype != np.float32:
        return [_span_mean(scores, a, b) for a, b in zip(firsts.tolist(), lasts.tolist())]
    means = scores[firsts].tolist()   # a one-word run's mean is its word's score
    lengths = lasts - firsts
    several = (lengths > 1).nonzero()[0]
    if len(several) < _MANY_RUNS:
        for k in several.tolist():
            means[k] = _span_mean(scores, int(firsts[k]), int(lasts[k]))
        return means
    firsts, lasts, lengths = firsts[several], lasts[several], lengths[several]
    width = int(min(lengths.max(), _SHORT_RUN - 1))
    index = firsts[:, None] + np.arange(width)
    values = np.where(index < lasts[:, None], scores[np.minimum(index, len(scores) - 1)],
                      np.float32(0))
    sums = np.zeros(len(firsts), dtype=np.float32)
    for column in range(width):
        sums += values[:, column]
    for k, mean in zip(several.tolist(),
                       (sums.astype(np.float64) / lengths).astype(np.float32).tolist()):
        means[k] = mean
    for j in np.flatnonzero(lengths >= _SHORT_RUN).tolist():
        means[int(several[j])] = _span_mean(scores, int(firsts[j]), int(lasts[j]))
    return means


def _span_max(values: np.ndarray, runs: Sequence[tuple[int, int, str]]) -> list[float]:
    """`float(values[first:last].max())` for each of sorted, disjoint, non-empty runs."""
    if not runs:
        return []
    bounds = np.fromiter(chain.from_iterable((first, last) for first, last, _ in runs),
                         np.int64, 2 * len(runs))
    return _span_maxima(values, bounds[0::2], bounds[1::2])


def _span_maxima(values: np.ndarray, firsts: np.ndarray, lasts: np.ndarray) -> list[float]:
    """`_span_max` of runs given as arrays of their first and end words."""
    bounds = np.empty(2 * len(firsts), dtype=np.int64)
    bounds[0::2], bounds[1::2] = firsts, lasts
    padded = np.concatenate((values, values[:1]))   # a run may end at len(values)
    return np.maximum.reduceat(padded, bounds)[0::2].tolist()


def decode_entities(
    encoded: EncodedDocument, word_labels: np.ndarray, word_scores: np.ndarray,
    scheme: LabelScheme,
) -> tuple[EntitySpan, ...]:
    """Decodes word labels into spans in code-point offsets of the original text."""
    starts, ends = encoded.segmented.word_starts, encoded.segmented.word_ends
    return tuple(
        EntitySpan(
            start=starts[first], end=ends[last - 1], label=entity,
            score=_span_mean(word_scores, first, last), source=_MODEL, recognizer=entity)
        for first, last, entity in decode_label_runs(word_labels, scheme))


def _runs(labels: np.ndarray, argmax: np.ndarray, scheme: LabelScheme,
          words: "_Words") -> list[tuple[int, int, str]]:
    """Entity runs, the model's own (argmax) spans apart from the words the recall-first rule
    relabelled: such a word joins an adjacent entity of the model's only when it looks like
    a name part ("Scott" after "Brian", "Counties" after "Minor") or sits between two parts of
    one ("ST . LOUIS"); "witness", "from" and "misidentified" form spans of their own.
    """
    relabelled = labels != argmax
    if not relabelled.any():
        return decode_label_runs(labels, scheme)   # sorted already: nothing to join
    own, lent = _own_and_lent(labels, relabelled, scheme)
    by_end = {last: k for k, (_, last, _) in enumerate(own)}
    by_start = {first: k for k, (first, _, _) in enumerate(own)}
    merged = [list(span) for span in own]
    into = list(range(len(own)))   # where a bridged span went

    def find(k: Optional[int]) -> Optional[int]:
        while k is not None and into[k] != k:
            k = into[k]
        return k

    alone = []
    for first, last, entity in lent:
        before, after = find(by_end.get(first)), find(by_start.get(last))
        run = words[first:last]
        parts = all(_name_part(w) or w.lower() in _PARTICLES | _STREETS for w in run)
        if before is not None and after is not None and (
                parts or last - first == 1 and run[0] in _BRIDGES) and (
                "of" not in run or merged[before][2] == merged[after][2]):   # "Karlsruhe of Germany"
            longer = max(merged[before], merged[after], key=lambda m: m[1] - m[0])
            merged[before][1:] = [merged[after][1], longer[2]]
            merged[after], into[after] = None, before
        elif before is not None and parts and _name_part(run[-1]):
            merged[before][1] = last
        elif after is not None and parts and (_name_part(run[0]) or run[0].lower() in _STREETS):
            merged[after][0] = first
        else:
            alone.append((first, last, entity))
    return sorted([tuple(m) for m in merged if m is not None] + alone)


def _own_and_lent(labels: np.ndarray, relabelled: np.ndarray, scheme: LabelScheme) -> tuple[
        list[tuple[int, int, str]], list[tuple[int, int, str]]]:
    """`decode_label_runs` of the labels the model chose itself (-1 on relabelled words) and of
    the relabelled words' (-1 elsewhere), both decoded at once with a word without a label
    between them."""
    n = len(labels)
    both = np.concatenate(
        (np.where(relabelled, -1, labels), (-1,), np.where(relabelled, labels, -1)))
    runs = decode_label_runs(both, scheme)
    split = bisect_left(runs, (n + 1,))
    return runs[:split], [(first - n - 1, last - n - 1, e) for first, last, e in runs[split:]]


# Lowercase words inside a name; joiners are not ("Shell and Caltex" are two firms).
_PARTICLES = NAME_PARTICLES | frozenset({"of", "al", "el"})
_BRIDGES = frozenset(".-'’&/")   # punctuation inside a name ("ST . LOUIS"); not a list's comma
_STREETS = frozenset("rue via calle avenida strada boulevard avenue chemin allée impasse quai "
                     "place piazza viale corso plaza paseo camino".split())   # before a name: "rue Augustin"


def _name_part(word: str) -> bool:
    """A word that may continue a name: capitalised (or of a script without case), no
    function word, greeting or role ("Court" may, "Inspector" and "The" may not)."""
    letter = next((c for c in word if c.isalpha()), "")
    return bool(letter) and (letter.isupper() or letter == letter.lower() == letter.upper()) \
        and not is_function_word(word)


def realign(
    encoded: EncodedDocument, window_probs: Sequence[np.ndarray], scheme: LabelScheme,
    aggregation: str = "first", decision: Optional[RedactionDecision] = None,
) -> tuple[EntitySpan, ...]:
    """Window predictions to entity spans: merge, realign to words, decide, decode.

    Without a `decision`, spans are the argmax decoding and none is marked
    `redacted` (the redaction policy then goes by label alone). With one, each span
    carries its `decision_score` and is marked `redacted` when that reaches its label's
    threshold (`RedactionDecision.decides`).
    """
    text = encoded.segmented.document.text
    if decision is None:
        labels, scores = word_predictions(encoded, window_probs, aggregation)
        return _with_content(decode_entities(encoded, labels, scores, scheme), text)
    probs, predicted = word_probabilities(encoded, window_probs, aggregation)
    if not predicted.any():   # no window (an empty document) or only zero-piece words
        return ()
    argmax, labels, mass = _decide(probs, predicted, scheme, decision)
    scores = np.where(predicted, probs[np.arange(len(labels)), np.maximum(labels, 0)],
                      0.0).astype(np.float32)
    starts, ends = encoded.segmented.word_starts, encoded.segmented.word_ends
    runs = _runs(labels, argmax, scheme, _Words(text, starts, ends))
    if not runs:
        return ()
    firsts, lasts, entities = zip(*runs)
    first_words, end_words = np.array(firsts, dtype=np.int64), np.array(lasts, dtype=np.int64)
    thresholds = {entity: decision.bar_for(entity) - 1e-6 for entity in set(entities)}
    spans = [
        EntitySpan(start, end, entity, score, False, decided >= thresholds[entity], decided,
                   _MODEL, entity)
        for start, end, entity, score, decided in zip(
            [starts[first] for first in firsts], [ends[last - 1] for last in lasts], entities,
            _span_means(scores, first_words, end_words), _span_maxima(mass, first_words, end_words))
        if text[start:start + 1].isalnum() or _ALNUM.search(text, start, end) is not None]
    if any(s.redacted and s.label not in decision.types for s in spans):
        spans = _as_names(spans, probs, scheme, decision.types, starts, ends)
    return tuple(spans)


def _as_names(spans: list[EntitySpan], probs: np.ndarray, scheme: LabelScheme,
              types: frozenset[str], starts: Sequence[int], ends: Sequence[int]) -> list[EntitySpan]:
    """Spans of a kept type (MISC) that made their case to be hidden (`OUTSIDE_TYPE_EVIDENCE`),
    relabelled as the redacted type holding most of their words' probability: what is hidden
    is hidden as a name, place or organisation, never under a label the options keep."""
    names = sorted(types & set(scheme.entity_types))
    columns = {name: [i for i, tag in enumerate(scheme.tags) if tag.entity == name]
               for name in names}
    out = []
    for span in spans:
        if span.redacted and span.label not in types and names:
            first = bisect_left(starts, span.start)
            last = bisect_left(ends, span.end) + 1
            words = probs[first:last]
            best = max(names, key=lambda name: float(words[:, columns[name]].sum()))
            span = replace(span, label=best)
        out.append(span)
    return out


_MODEL = EntitySource.MODEL.value


class _Words:
    """The words of a text, cut out only when a slice of them is asked for."""

    def __init__(self, text: str, starts: Sequence[int], ends: Sequence[int]):
        self._text, self._starts, self._ends = text, starts, ends

    def __getitem__(self, words: slice) -> list[str]:
        return [self._text[a:b] for a, b in zip(self._starts[words], self._ends[words])]


def _with_content(spans: tuple[EntitySpan, ...], text: str) -> tuple[EntitySpan, ...]:
    """Drops spans without a letter or digit: a lone "-" tagged as a name names nobody, and
    redacting it would spread to every other "-" by propagation (`realign` drops them so too,
    before it builds them)."""
    return tuple(s for s in spans if text[s.start:s.start + 1].isalnum()
                 or _ALNUM.search(text, s.start, s.end) is not None)


_ALNUM = re.compile(r"[^\W_]")   # what str.isalnum() accepts: \w is isalnum() or "_"
