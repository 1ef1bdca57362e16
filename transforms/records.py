"""Typed, frozen records that travel between pipeline stages."""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Optional

import numpy as np


@dataclass(frozen=True)
class Document:
    """One input record that decoded and validated.

    `source` is unique per input record (file and line or row) and is the
    pipeline's internal key; `doc_id` is the user's id and may repeat.
    """

    doc_id: str
    text: str = field(repr=False)  # never in logs or error messages
    source: str = ""

    def __repr__(self) -> str:
        return f"Document(doc_id={self.doc_id!r}, source={self.source!r}, text=<{len(self.text)} chars>)"


@dataclass(frozen=True)
class DeadLetter:
    """An input record that could not be annotated, and why.

    `reason` is one of `DEAD_LETTER_REASONS`; `detail` never holds document text.
    """

    source: str
    reason: str
    detail: str
    doc_id: Optional[str] = None


DEAD_LETTER_REASONS = (
    "invalid_utf8",
    "invalid_json",
    "not_an_object",
    "missing_id",
    "id_not_string",
    "missing_text",
    "text_not_string",
    "empty_text",
    "invalid_unicode",
    "too_large",
    "unreadable_file",
    "encode_error",
    "inference_error",
    "realign_error",
)


@dataclass(frozen=True)
class SegmentedDocument:
    """A document split into words; offsets are code-point indices, end-exclusive."""

    document: Document
    word_starts: tuple[int, ...]
    word_ends: tuple[int, ...]

    @property
    def num_words(self) -> int:
        return len(self.word_starts)

    def word_text(self, index: int) -> str:
        return self.document.text[self.word_starts[index]:self.word_ends[index]]


@dataclass(frozen=True, eq=False)
class Window:
    """A model input: at most `max_length` wordpieces, specials included.

    Arrays cover the whole input, [CLS] and [SEP] included. `word_ids` holds the
    document-level word index of each piece (-1 for specials); `first_piece` is
    true on the first piece of a word. `piece_offset` is the document-level
    index of the window's first content piece.
    """

    input_ids: np.ndarray
    type_ids: np.ndarray
    word_ids: np.ndarray
    first_piece: np.ndarray
    piece_offset: int

    def __len__(self) -> int:
        return int(self.input_ids.shape[0])


@dataclass(frozen=True, eq=False)
class EncodedDocument:
    """A segmented document and the windows that together cover all its pieces."""

    segmented: SegmentedDocument
    windows: tuple[Window, ...]
    num_pieces: int

    @property
    def num_tokens(self) -> int:
        return sum(len(w) for w in self.windows)


@dataclass(frozen=True)
class EntitySpan:
    """A detected entity: `text[start:end]` in code points, end-exclusive."""

    start: int
    end: int
    label: str
    score: float
    propagated: bool = False

    def __len__(self) -> int:
        return self.end - self.start

    def intersects(self, other: "EntitySpan") -> bool:
        return self.start < other.end and other.start < self.end

    def contains(self, other: "EntitySpan") -> bool:
        return self.start <= other.start and other.end <= self.end


@dataclass(frozen=True)
class Replacement:
    """One redaction: `redacted_text[start:end]` is `placeholder`, standing for a `label`."""

    start: int
    end: int
    label: str
    placeholder: str


@dataclass(frozen=True)
class AnnotatedDocument:
    """The pipeline's result for one document."""

    document: Document
    entities: tuple[EntitySpan, ...]
    redacted_text: str
    replacements: tuple[Replacement, ...] = field(default_factory=tuple)
    num_words: int = 0
    num_pieces: int = 0
    num_windows: int = 0


@dataclass(frozen=True)
class InferenceFailure:
    """Stands in for the predictions of a document whose inference raised (as Beam's PredictionResult sits below its handlers)."""

    detail: str


@dataclass(frozen=True)
class TaggedDocument:
    """A segmented document with the entity spans the model found, before redaction."""

    segmented: SegmentedDocument
    entities: tuple[EntitySpan, ...]
    num_pieces: int
    num_windows: int
