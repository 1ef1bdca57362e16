"""Typed, frozen records that travel between pipeline stages."""
from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from enum import Enum
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
    # --keep-fields: (name, value as text or None) carried into the annotations row as is
    fields: tuple[tuple[str, Optional[str]], ...] = field(default=(), repr=False)

    def __repr__(self) -> str:
        return f"Document(doc_id={self.doc_id!r}, source={self.source!r}, text=<{len(self.text)} chars>)"


class Vocabulary(str, Enum):
    """A closed set of names that are also plain strings (as transformers' AggregationStrategy)."""

    def __str__(self) -> str:
        return self.value

    @classmethod
    def names(cls) -> tuple[str, ...]:
        return tuple(member.value for member in cls)


class DeadLetterReason(Vocabulary):
    """Why a record is in the dead-letter output: a fixed vocabulary users can filter on."""

    INVALID_UTF8 = "invalid_utf8"
    INVALID_JSON = "invalid_json"
    NOT_AN_OBJECT = "not_an_object"
    ID_NOT_STRING = "id_not_string"
    MISSING_TEXT = "missing_text"
    TEXT_NOT_STRING = "text_not_string"
    INVALID_UNICODE = "invalid_unicode"
    TOO_LARGE = "too_large"
    UNREADABLE_FILE = "unreadable_file"
    MALFORMED_ROW = "malformed_row"
    SEGMENT_ERROR = "segment_error"
    ENCODE_ERROR = "encode_error"
    INFERENCE_ERROR = "inference_error"
    REALIGN_ERROR = "realign_error"
    PATTERN_ERROR = "pattern_error"
    REDACT_ERROR = "redact_error"
    AUDIT_ERROR = "audit_error"
    ML_OUTPUT_ERROR = "ml_output_error"
    TIMEOUT = "timeout"


DEAD_LETTER_REASONS = DeadLetterReason.names()


@dataclass(frozen=True)
class DeadLetter:
    """An input record that could not be annotated, and why.

    `reason` is a `DeadLetterReason` (stored as its plain string); `detail`
    never holds document text.
    """

    source: str
    reason: str
    detail: str
    doc_id: Optional[str] = None

    def __post_init__(self):
        object.__setattr__(self, "reason", DeadLetterReason(self.reason).value)


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


class EntitySource(Vocabulary):
    """Where an entity came from (as Presidio's recognition metadata): the `source` column."""

    MODEL = "model"            # the network's tagging (its recognizer: the model's entity type)
    PATTERN = "pattern"        # a pattern recognizer (its recognizer: the kind's label)
    RULE = "rule"              # a name rule that made or reshaped the span (its recognizer: the rule)
    TERM_LIST = "term_list"    # an --always-redact term (its recognizer: "always_redact")


ENTITY_SOURCES = EntitySource.names()


@dataclass(frozen=True)
class EntitySpan:
    """A detected entity: `text[start:end]` in code points, end-exclusive.

    `redacted` is true when the span is (or must be) rewritten: set by the
    recall-first decision or the pattern stage before redaction, and on the final
    entities for exactly those that were replaced. `score` is the mean probability of
    the span's label over its words; `decision_score` is the quantity the redaction
    threshold compares (the largest summed probability of the redacted types over its
    words), None for spans no model decision made (patterns, rules, term lists).
    `source` (an `EntitySource` value, a plain string) and `recognizer` say what found
    the span: the model and its entity type, a pattern kind, a name rule, or the term list.
    A propagated mention keeps the source and recognizer of the mention it copies.
    """

    start: int
    end: int
    label: str
    score: float
    propagated: bool = False
    redacted: bool = False
    decision_score: Optional[float] = None
    # Provenance is metadata, not identity (as Presidio's RecognizerResult compares without
    # its recognition metadata): two finders of the same span give one entity.
    source: str = field(default=EntitySource.MODEL.value, compare=False)
    recognizer: str = field(default="", compare=False)

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


class AuditKind(Vocabulary):
    """What an audit finding in redacted text looks like."""

    CAPITALIZED = "capitalized"   # a capitalised word, not sentence-initial, not a common word
    DIGITS = "digits"             # a run of 5 or more digits (separators allowed)
    EMAIL = "email"               # something@something
    HANDLE = "handle"             # @name
    UNCASED_NAME = "uncased_name"  # letters of a script without case after a title or label


@dataclass(frozen=True)
class AuditFinding:
    """`redacted_text[start:end]` still looks personal; offsets in code points, end-exclusive."""

    start: int
    end: int
    kind: str


@dataclass(frozen=True)
class Audit:
    """The audit findings of one redacted document; `counts` has every kind."""

    findings: tuple[AuditFinding, ...] = ()

    @property
    def counts(self) -> dict[str, int]:
        counted = Counter(f.kind for f in self.findings)
        return {kind: counted.get(kind, 0) for kind in AuditKind.names()}

    @property
    def total(self) -> int:
        return len(self.findings)


@dataclass(frozen=True, eq=False)
class WindowPredictions:
    """The handler's result for one document when hidden states are fetched too (--emit-embeddings).

    `probs[i]`: label probabilities of window i's content pieces, as without them;
    `hidden[i]`: its hidden states, shape (len(window), hidden size), [CLS] and [SEP] included.
    """

    probs: tuple[np.ndarray, ...]
    hidden: tuple[np.ndarray, ...]


@dataclass(frozen=True, eq=False)
class DocumentPieces:
    """The whole document's WordPieces, windows undone, for the ML outputs (--emit-token-ids,
    --emit-embeddings): `ids` and `word_of_piece` (document word index) per piece, the
    words' offsets, and with embeddings each piece's merged vector and the document vector."""

    ids: np.ndarray
    word_of_piece: np.ndarray
    word_starts: tuple[int, ...]
    word_ends: tuple[int, ...]
    vectors: Optional[np.ndarray] = None
    document_vector: Optional[np.ndarray] = None


@dataclass(frozen=True, eq=False)
class MlOutputs:
    """What --emit-token-ids and --emit-embeddings add to a row: the redacted piece ids, the
    document vector and one vector per entity (None where an entity or document has no piece)."""

    redacted_input_ids: Optional[np.ndarray] = None
    embedding: Optional[np.ndarray] = None
    entity_vectors: Optional[tuple[Optional[np.ndarray], ...]] = None


@dataclass(frozen=True)
class AnnotatedDocument:
    """The pipeline's result for one document; `audit` is what still looks personal in `redacted_text`."""

    document: Document
    entities: tuple[EntitySpan, ...]
    redacted_text: str
    replacements: tuple[Replacement, ...] = field(default_factory=tuple)
    num_words: int = 0
    num_pieces: int = 0
    num_windows: int = 0
    audit: Audit = field(default_factory=Audit)
    pieces: Optional[DocumentPieces] = field(default=None, repr=False)   # only with ML outputs
    ml: Optional[MlOutputs] = field(default=None, repr=False)
    language: str = "und"


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
    pieces: Optional[DocumentPieces] = field(default=None, repr=False)   # only with ML outputs
