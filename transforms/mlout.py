"""Outputs for machine-learning datasets: redacted WordPiece ids and contextual embeddings (pure)."""
from __future__ import annotations

from bisect import bisect_left, bisect_right
from dataclasses import dataclass, replace
from typing import Mapping, Optional, Sequence

import numpy as np

from larvatus.transforms.recognizers import placeholder_order
from larvatus.transforms.records import (
    AnnotatedDocument, DocumentPieces, EncodedDocument, EntitySpan, MlOutputs, SegmentedDocument,
    Vocabulary,
)


class EmbeddingLayer(Vocabulary):
    """Which hidden states the vectors come from (the usual choices for NER and sentence features)."""

    LAST = "last"
    SECOND_TO_LAST = "second_to_last"
    SUM_LAST_FOUR = "sum_last_four"


class EmbeddingPooling(Vocabulary):
    """How the document vector comes from its pieces: their mean, or the [CLS] vector
    (averaged over the windows of a long document)."""

    MEAN = "mean"
    CLS = "cls"


EMBEDDING_LAYERS = EmbeddingLayer.names()
EMBEDDING_POOLINGS = EmbeddingPooling.names()


@dataclass(frozen=True)
class EmbeddingSettings:
    """--embedding-layer and --embedding-pooling."""

    layer: str = EmbeddingLayer.LAST.value
    pooling: str = EmbeddingPooling.MEAN.value

    def __post_init__(self):
        if self.layer not in EMBEDDING_LAYERS:
            raise ValueError(f"embedding layer must be one of {EMBEDDING_LAYERS}, got {self.layer!r}")
        if self.pooling not in EMBEDDING_POOLINGS:
            raise ValueError(
                f"embedding pooling must be one of {EMBEDDING_POOLINGS}, got {self.pooling!r}")


@dataclass(frozen=True)
class MlSettings:
    """What the ML outputs stage writes.

    Args:
      placeholder_ids: (label, token id) pairs of the placeholder tokens added to the
        tokenizer, for --emit-token-ids; empty: no token ids.
      embeddings: layer and pooling for --emit-embeddings; None: no vectors.
    """

    placeholder_ids: tuple[tuple[str, int], ...] = ()
    embeddings: Optional[EmbeddingSettings] = None

    @property
    def token_ids(self) -> bool:
        return bool(self.placeholder_ids)

    @property
    def placeholders(self) -> dict[str, int]:
        return dict(self.placeholder_ids)


def placeholder_token(label: str) -> str:
    """The special token standing for one redacted entity of `label`: `[PER]`, `[EMAIL]`, ..."""
    return f"[{label}]"


def tokenizer_with_placeholders(tokenizer, labels: Sequence[str]):
    """A copy of `tokenizer` with one special token per label, and their ids.

    Labels are added in `placeholder_order`, so the same label set always gets the same
    ids and registering a pattern label never moves the others' ids; a token the vocabulary
    already holds keeps its id.

    Returns:
      (the new `tokenizers.Tokenizer`, {label: token id}).
    """
    from tokenizers import AddedToken, Tokenizer

    extended = Tokenizer.from_str(tokenizer.to_str())
    labels = placeholder_order(labels)
    extended.add_special_tokens([
        AddedToken(placeholder_token(label), special=True, normalized=False, single_word=False)
        for label in labels])
    return extended, {label: extended.token_to_id(placeholder_token(label)) for label in labels}


def document_pieces(encoded: EncodedDocument) -> tuple[np.ndarray, np.ndarray]:
    """The whole document's piece ids and word index per piece, windows undone (no [CLS]/[SEP])."""
    ids = np.zeros(encoded.num_pieces, dtype=np.int64)
    words = np.full(encoded.num_pieces, -1, dtype=np.int64)
    for window in encoded.windows:
        start, end = window.piece_offset, window.piece_offset + len(window) - 2
        ids[start:end] = window.input_ids[1:-1]
        words[start:end] = window.word_ids[1:-1]
    return ids, words


def merge_piece_vectors(encoded: EncodedDocument, window_hidden: Sequence[np.ndarray]) -> np.ndarray:
    """One vector per document piece from overlapping windows, as tags are merged
    (`larvatus.transforms.realign.word_probabilities`): each piece takes its vector from the window
    where it stands farthest from an inner edge.

    Args:
      encoded: the document and its windows.
      window_hidden: per window, hidden states of shape (len(window), hidden), [CLS] and
        [SEP] included.

    Returns:
      float32 array of shape (pieces, hidden).
    """
    if len(window_hidden) != len(encoded.windows):
        raise ValueError(f"{len(window_hidden)} hidden states for {len(encoded.windows)} windows")
    total = encoded.num_pieces
    size = window_hidden[0].shape[-1] if len(window_hidden) else 0
    vectors = np.zeros((total, size), dtype=np.float32)
    best = np.full(total, -1.0)
    for window, hidden in zip(encoded.windows, window_hidden):
        if hidden.ndim != 2 or hidden.shape[0] != len(window):
            raise ValueError(
                f"hidden states of shape {hidden.shape} for a window of {len(window)} pieces")
        start, length = window.piece_offset, len(window) - 2
        end = start + length
        positions = np.arange(length, dtype=float)
        left = positions if start > 0 else np.full(length, np.inf)
        right = (length - 1 - positions) if end < total else np.full(length, np.inf)
        distance = np.minimum(left, right)
        better = distance > best[start:end]
        if not better.any():
            continue
        best[start:end] = np.where(better, distance, best[start:end])
        vectors[start:end][better] = hidden[1:-1][better]
    return vectors


def pool_document(piece_vectors: np.ndarray, window_hidden: Sequence[np.ndarray],
                  pooling: str) -> Optional[np.ndarray]:
    """The document vector: mean of its piece vectors, or mean of its windows' [CLS] vectors.

    None for a document without pieces (empty or whitespace only).
    """
    if pooling == EmbeddingPooling.MEAN:
        return piece_vectors.mean(axis=0).astype(np.float32) if len(piece_vectors) else None
    if pooling == EmbeddingPooling.CLS:
        if not len(window_hidden):
            return None
        return np.mean([h[0] for h in window_hidden], axis=0).astype(np.float32)
    raise ValueError(f"pooling must be one of {EMBEDDING_POOLINGS}, got {pooling!r}")


def words_touched(segmented: SegmentedDocument, start: int, end: int) -> range:
    """Indices of the words whose characters overlap text[start:end] (a span may cover part of a word)."""
    first = bisect_right(segmented.word_ends, start)
    last = bisect_left(segmented.word_starts, end)
    return range(first, max(first, last))


def redact_piece_ids(ids: np.ndarray, word_of_piece: np.ndarray, segmented: SegmentedDocument,
                     entities: Sequence[EntitySpan], placeholders: Mapping[str, int]) -> np.ndarray:
    """The document's piece ids with each redacted entity's pieces replaced by ONE placeholder id.

    Every piece of every word that a redacted entity touches is hidden, so a name split
    into many pieces leaves none behind, and a span covering part of a word (a pattern
    span inside "mail:jo@x.org") hides the whole word. A word touched by two redacted
    entities goes to the first; entities sharing words share one placeholder.

    Args:
      ids, word_of_piece: the document's pieces (`document_pieces`).
      segmented: the document's words, whose offsets the entities use.
      entities: the final entities; those with `redacted` set are hidden.
      placeholders: label -> placeholder token id.

    Returns:
      int32 array of the redacted document's ids.
    """
    redacted = sorted((e for e in entities if e.redacted), key=lambda e: (e.start, -e.end))
    owner = np.full(segmented.num_words, -1, dtype=np.int64)
    for index, entity in enumerate(redacted):
        touched = words_touched(segmented, entity.start, entity.end)
        block = owner[touched.start:touched.stop]
        block[block < 0] = index
    if not len(ids):
        return np.zeros(0, dtype=np.int32)
    piece_owner = np.where(word_of_piece >= 0, owner[np.maximum(word_of_piece, 0)], -1)
    missing = {e.label for e in redacted if e.label not in placeholders}
    if missing:
        raise ValueError(f"no placeholder token for label(s) {sorted(missing)}")
    owner_ids = np.asarray([placeholders[e.label] for e in redacted] or [0], dtype=np.int64)
    hidden = piece_owner >= 0
    starts_run = np.ones(len(ids), dtype=bool)
    starts_run[1:] = piece_owner[1:] != piece_owner[:-1]
    keep = ~hidden | starts_run
    out = np.where(hidden, owner_ids[np.maximum(piece_owner, 0)], ids)
    return out[keep].astype(np.int32)


def entity_vectors(piece_vectors: np.ndarray, word_of_piece: np.ndarray,
                   segmented: SegmentedDocument, entities: Sequence[EntitySpan],
                   ) -> tuple[Optional[np.ndarray], ...]:
    """Per entity, the mean vector of the pieces of the words it touches (None: no piece)."""
    out = []
    for entity in entities:
        touched = words_touched(segmented, entity.start, entity.end)
        mask = (word_of_piece >= touched.start) & (word_of_piece < touched.stop)
        out.append(piece_vectors[mask].mean(axis=0).astype(np.float32) if mask.any() else None)
    return tuple(out)


def ml_outputs(annotated: AnnotatedDocument, settings: MlSettings) -> AnnotatedDocument:
    """The document with its ML outputs filled in and its bulky piece data dropped."""
    pieces: DocumentPieces = annotated.pieces
    if pieces is None:
        raise ValueError("the document carries no pieces (the realign stage was not asked for them)")
    segmented = SegmentedDocument(annotated.document, pieces.word_starts, pieces.word_ends)
    token_ids = vectors = embedding = None
    if settings.token_ids:
        token_ids = redact_piece_ids(pieces.ids, pieces.word_of_piece, segmented,
                                     annotated.entities, settings.placeholders)
    if settings.embeddings is not None:
        embedding = pieces.document_vector
        vectors = entity_vectors(pieces.vectors, pieces.word_of_piece, segmented,
                                 annotated.entities)
    return replace(annotated, pieces=None, ml=MlOutputs(token_ids, embedding, vectors))


def pieces_of(encoded: EncodedDocument, window_hidden: Optional[Sequence[np.ndarray]],
              embeddings: Optional[EmbeddingSettings]) -> DocumentPieces:
    """What the ML outputs stage needs of a document, taken at realignment."""
    ids, words = document_pieces(encoded)
    vectors = document_vector = None
    if embeddings is not None:
        if window_hidden is None:
            raise ValueError("embeddings asked for, but the inference returned no hidden states")
        vectors = merge_piece_vectors(encoded, window_hidden)
        document_vector = pool_document(vectors, window_hidden, embeddings.pooling)
    segmented = encoded.segmented
    return DocumentPieces(ids, words, segmented.word_starts, segmented.word_ends, vectors,
                          document_vector)
