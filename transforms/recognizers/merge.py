"""Runs the registered recognizers, resolves overlaps among their spans, and merges them with the model's."""
from __future__ import annotations

import bisect
from dataclasses import replace
from typing import Iterable, Optional

from larvatus.transforms.recognizers.base import LINE_BREAK_RE, keep_disjoint
from larvatus.transforms.recognizers.registry import PatternSettings, kinds
from larvatus.transforms.records import EntitySource, EntitySpan, SegmentedDocument
from larvatus.transforms.separators import fold_separators, normalise_number_runs


def _is_tight(text: str, span: EntitySpan) -> bool:
    """Whether the span is non-empty, on one line, with no whitespace at its edges."""
    piece = text[span.start:span.end]
    return bool(piece) and not piece[0].isspace() and not piece[-1].isspace() \
        and LINE_BREAK_RE.search(piece) is None


def find_patterns(text: str,
                  settings: Optional[PatternSettings] = None) -> tuple[EntitySpan, ...]:
    """Runs the chosen recognizers (all registered ones by default) and resolves overlaps
    among their spans by the kinds' tiers.

    The recognizers read `text` with its separators folded (`fold_separators`: every
    Unicode space as " ", every dash as "-", every decimal digit as ASCII), one character
    for one, so "4111\u00a01111\u00a01111\u00a01111" is a card number like "4111 1111 1111 1111".
    Where digit groups are joined by unusual separators ("4111.1111.1111.1111", "DE89 - 3704
    - ...", "12 / 08 / 1956"), the recognizers also read the text with those runs written the
    usual way (`normalise_number_runs`), and their spans are mapped back to `text`.

    Returns:
      Non-overlapping spans sorted by start; offsets are code-point indices into
      `text`, end-exclusive; no span crosses a line break or has whitespace at its edges.
      Each has source "pattern" and its kind's label as recognizer.
    """
    settings = PatternSettings() if settings is None else settings
    chosen = [kind for kind in kinds() if kind.label in settings.labels]
    tiers = {kind.label: kind.tier for kind in chosen}
    folded = fold_separators(text)
    spans = [span for kind in chosen
             for span in kind.find(folded, settings) if _is_tight(text, span)]
    normalised = normalise_number_runs(folded)
    if normalised is not None:   # digit groups with unusual separators: read them again
        rewritten, origin = normalised
        spans += [span for span in (replace(found, start=origin[found.start],
                                            end=origin[found.end - 1] + 1)
                                    for kind in chosen for found in kind.find(rewritten, settings))
                  if _is_tight(text, span)]
    kept = keep_disjoint(
        _drop_contained(spans), key=lambda s: (tiers[s.label], -len(s), -s.score, s.start, s.end))
    return tuple(replace(span, source=_PATTERN, recognizer=span.label) for span in kept)


_PATTERN = EntitySource.PATTERN.value


def _drop_contained(spans: list[EntitySpan]) -> list[EntitySpan]:
    """Drops spans lying strictly inside a longer one, whatever their tiers: the container
    hides every character ("+1 305 614 9207" read as a phone and its last ten digits as an
    NHS number must not leave "+1" visible)."""
    kept: list[EntitySpan] = []
    reach = -1
    for span in sorted(spans, key=lambda s: (s.start, -s.end)):
        if span.end <= reach and not any(k.start == span.start and k.end == span.end
                                         for k in kept[-1:]):
            continue
        kept.append(span)
        reach = max(reach, span.end)
    return kept


def recognize(segmented: SegmentedDocument,
              settings: Optional[PatternSettings] = None) -> tuple[EntitySpan, ...]:
    """The pattern stage: `find_patterns` on the segmented document's text."""
    return find_patterns(segmented.document.text, settings)


# ----------------------------------------------------------------------------- merge

def _split_at_line_breaks(span: EntitySpan, text: str) -> list[EntitySpan]:
    """The pieces of `span` between line breaks, stripped of whitespace, empty ones dropped."""
    piece = text[span.start:span.end]
    if LINE_BREAK_RE.search(piece) is None and piece == piece.strip():
        return [span]
    pieces = []
    offset = span.start
    for line in LINE_BREAK_RE.split(piece):
        start = offset + len(line) - len(line.lstrip())
        end = offset + len(line.rstrip())
        if start < end:
            pieces.append(replace(span, start=start, end=end))
        offset += len(line) + 1
    return pieces


def merge_spans(model_spans: Iterable[EntitySpan], pattern_spans: Iterable[EntitySpan],
                text: str) -> tuple[EntitySpan, ...]:
    """Joins the model's spans with the pattern spans: patterns win, no span crosses a line break.

    A model span that contains line breaks is first split into its pieces (same label,
    score and flags, each stripped of surrounding whitespace, empty pieces dropped; a
    span without line breaks is only stripped); of a piece that overlaps pattern spans only
    the parts outside them that hold a letter or digit are kept. Pattern spans go through the same splitting (a no-op for `find_patterns`'
    spans). Overlaps among the model spans themselves are left to the redaction step.

    Returns:
      The pattern spans and the surviving model pieces, sorted by (start, end, label).
    """
    patterns = sorted((p for span in pattern_spans for p in _split_at_line_breaks(span, text)),
                      key=lambda s: (s.start, s.end))
    starts = [p.start for p in patterns]
    reach: list[int] = []           # reach[i]: the furthest end among patterns[:i + 1]
    for p in patterns:
        reach.append(max(p.end, reach[-1]) if reach else p.end)
    merged = list(patterns)
    for span in model_spans:
        for piece in _split_at_line_breaks(span, text):
            merged += _outside_patterns(piece, patterns, starts, reach, text)
    return tuple(sorted(merged, key=lambda s: (s.start, s.end, s.label)))


_SEPARATORS = " \t\u00a0,;:"


def _outside_patterns(piece: EntitySpan, patterns: list[EntitySpan], starts: list[int],
                      reach: list[int], text: str) -> list[EntitySpan]:
    """The parts of a model span that no pattern span covers, stripped, each with a letter
    or digit ("Mellestraat 87, Amsterdam" tagged LOC around an ADDRESS keeps "Amsterdam")."""
    i = bisect.bisect_left(starts, piece.end)   # patterns starting before the piece ends
    if not i or reach[i - 1] <= piece.start:
        return [piece]
    parts, cursor = [], piece.start
    for pattern in patterns[:i]:
        if pattern.end <= cursor:
            continue
        if pattern.start > cursor:
            parts.append((cursor, min(pattern.start, piece.end)))
        cursor = max(cursor, pattern.end)
        if cursor >= piece.end:
            break
    if cursor < piece.end:
        parts.append((cursor, piece.end))
    kept = []
    for start, end in parts:
        chunk = text[start:end]
        start, end = start + len(chunk) - len(chunk.lstrip(_SEPARATORS)), \
            start + len(chunk.rstrip(_SEPARATORS))
        if any(ch.isalnum() for ch in text[start:end]):
            kept.append(replace(piece, start=start, end=end))
    return kept
