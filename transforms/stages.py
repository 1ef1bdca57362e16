"""The annotation pipeline, declared once: its stages in order, each a plain Beam-free class, built from the settings."""
from __future__ import annotations

import logging
import os
import socket
import threading
from collections import Counter
from dataclasses import dataclass
from typing import Any, Callable, NamedTuple, Optional, Protocol, Sequence, Union

from larvatus.transforms import annotate as annotate_lib
from larvatus.transforms import encode as encode_lib
from larvatus.transforms import language as language_lib
from larvatus.transforms import mlout as mlout_lib
from larvatus.transforms import recognizers as patterns_lib
from larvatus.transforms import segment as segment_lib
from larvatus.transforms.counters import (
    AUDIT_FLAGGED, AUDIT_PREFIX, ENTITY_PREFIX, LANGUAGE_PREFIX, PROPAGATED, WORKER_PROCESSES,
)
from larvatus.transforms.labels import LabelScheme
from larvatus.transforms.realign import RedactionDecision
from larvatus.transforms.records import (
    AnnotatedDocument, DeadLetter, DeadLetterReason as Reason, Document, EncodedDocument,
    SegmentedDocument, TaggedDocument,
)
from larvatus.transforms.redact import RedactionPolicy, SecretKeyError
from larvatus.transforms.settings import AnnotationSettings
from larvatus.transforms.stage_template import Count, Stage, StageChain  # noqa: F401

LOG = logging.getLogger(__name__)
ReadFile = Callable[[str], bytes]


def _read_local_file(path: str) -> bytes:
    with open(path, "rb") as handle:
        return handle.read()


_WORKING = threading.Lock()
_working_pid: Optional[int] = None


def this_worker() -> str:
    return f"{socket.gethostname()} (pid {os.getpid()})"


def note_working_process(count: Count) -> None:
    """Counts this process in `worker_processes` the first time it annotates a document.

    The counter sums over processes, so the summary shows how many of them
    actually took part (after the Reshuffle, documents spread over workers).
    """
    global _working_pid
    if _working_pid == os.getpid():
        return
    with _WORKING:
        if _working_pid != os.getpid():
            _working_pid = os.getpid()
            count(WORKER_PROCESSES, 1)
            LOG.info("Larvatus worker %s is annotating documents", this_worker())


class Segment(Stage):
    """Document -> SegmentedDocument (spaCy words with offsets)."""

    name, failure = "segment", Reason.SEGMENT_ERROR
    counters = ("words", WORKER_PROCESSES)

    def setup(self):
        segment_lib.english_tokenizer()  # load spaCy's rules once per worker, not on the first document

    def document_of(self, document: Document) -> Document:
        return document

    def step(self, document: Document) -> SegmentedDocument:
        return segment_lib.segment(document)

    def start(self, document: Document, count: Count) -> None:
        note_working_process(count)   # here, not in `step`: Beam counters belong to this thread

    def on_timeout(self) -> None:
        # The overrunning call may still be inside spaCy's tokenizer, whose cache is
        # not safe to share between threads: later documents get a fresh one, built
        # here rather than inside the next document's budget.
        segment_lib.english_tokenizer.cache_clear()
        segment_lib.english_tokenizer()

    def count_output(self, segmented: SegmentedDocument, count: Count) -> None:
        count("words", segmented.num_words)


class Encode(Stage):
    """SegmentedDocument -> EncodedDocument, the tokenizer loaded once per process."""

    name, failure = "encode", Reason.ENCODE_ERROR
    counters = ("wordpieces", "windows", "window_tokens")

    def __init__(self, load_tokenizer: Callable[[], Any], settings: encode_lib.EncodeSettings):
        self._load_tokenizer = load_tokenizer
        self._settings = settings
        self._tokenizer: Optional[encode_lib.WordPieces] = None

    def __getstate__(self):
        return {**self.__dict__, "_tokenizer": None}   # each process loads its own

    def setup(self):
        self._tokenizer = encode_lib.WordPieces(self._load_tokenizer())

    def document_of(self, segmented: SegmentedDocument) -> Document:
        return segmented.document

    def step(self, segmented: SegmentedDocument) -> EncodedDocument:
        if self._tokenizer is None:
            self.setup()
        return encode_lib.encode(segmented, self._tokenizer, self._settings)

    def count_output(self, encoded: EncodedDocument, count: Count) -> None:
        count("wordpieces", encoded.num_pieces)
        count("windows", len(encoded.windows))
        count("window_tokens", encoded.num_tokens)


class Inferred(NamedTuple):
    """A document's windows and the model's output for them (an InferenceFailure when it
    failed): what the Realign stage reads, with the field names of Beam's PredictionResult."""

    example: EncodedDocument
    inference: Any


class Classifier(Protocol):
    """What the model stage needs of a model runner (`larvatus.models.handler.OnnxTokenClassifier`)."""

    def load_model(self) -> Any: ...

    def predict_documents(self, batch: Sequence[EncodedDocument], model: Any) -> list: ...


class Infer:
    """EncodedDocuments -> Inferred, a batch at a time: the model, loaded once per process.

    Not a per-element Stage: documents share inference batches. A document whose windows
    fail gets an InferenceFailure, which Realign dead-letters as `inference_error`; the
    Beam graph runs the same classifier class inside RunInference instead.
    """

    name, failure = "inference", Reason.INFERENCE_ERROR

    def __init__(self, classifier: Classifier):
        self.classifier = classifier
        self.model: Any = None

    def setup(self) -> None:
        if self.model is None:
            self.model = self.classifier.load_model()

    def predict(self, batch: Sequence[EncodedDocument]) -> list[Inferred]:
        if self.model is None:
            self.setup()
        if not batch:
            return []
        return [Inferred(encoded, inference) for encoded, inference in
                zip(batch, self.classifier.predict_documents(list(batch), self.model))]


class Realign(Stage):
    """Inferred -> TaggedDocument: window merge, word tags, spans."""

    name, failure = "realign", Reason.REALIGN_ERROR

    def __init__(self, scheme: LabelScheme, aggregation: str,
                 decision: Optional[RedactionDecision] = None,
                 ml: Optional[mlout_lib.MlSettings] = None):
        self._scheme = scheme
        self._aggregation = aggregation
        self._decision = decision
        self._ml = ml   # keep the document's pieces (and vectors) for EmitMlOutputs

    def document_of(self, inferred: Inferred) -> Document:
        return inferred.example.segmented.document

    def step(self, inferred: Inferred) -> Union[TaggedDocument, DeadLetter]:
        return annotate_lib.tag(inferred.example, inferred.inference, self._scheme,
                                self._aggregation, self._decision, self._ml)


class DetectPatterns(Stage):
    """TaggedDocument -> TaggedDocument: structured personal data found by pattern recognizers
    and merged with the model's spans (a pattern span beats an overlapping model span; model
    spans are cut at line breaks)."""

    name, failure = "patterns", Reason.PATTERN_ERROR

    def __init__(self, settings: patterns_lib.PatternSettings):
        self._settings = settings

    def document_of(self, tagged: TaggedDocument) -> Document:
        return tagged.segmented.document

    def step(self, tagged: TaggedDocument) -> TaggedDocument:
        return annotate_lib.add_patterns(tagged, self._settings)


class Redact(Stage):
    """TaggedDocument -> AnnotatedDocument: overlaps resolved, names replaced.

    The policy says where the pseudonym key lives, never the key: each process reads
    it in `setup` (an environment variable, or a file through `read_file`).
    """

    name, failure = "redact", Reason.REDACT_ERROR
    counters = (f"{LANGUAGE_PREFIX}<language>", f"{ENTITY_PREFIX}<label>", PROPAGATED)

    def __init__(self, policy: RedactionPolicy, read_file: ReadFile = _read_local_file):
        self._policy = policy
        self._read_file = read_file
        self._loaded: Optional[RedactionPolicy] = None

    def __getstate__(self):
        return {**self.__dict__, "_loaded": None}   # the key never travels with the stage

    def setup(self):
        language_lib.load_model()   # once per worker, not inside the first document's time
        try:
            self._loaded = self._policy.with_key(self._read_file)
        except SecretKeyError as error:
            raise SecretKeyError(
                f"on worker {this_worker()}: {error}. The launcher found the key, but "
                f"workers read it themselves: make the "
                f"{self._policy.key_source.describe()} available to the worker processes "
                f"(see the README, 'Running at scale').") from error

    def document_of(self, tagged: TaggedDocument) -> Document:
        return tagged.segmented.document

    def step(self, tagged: TaggedDocument) -> AnnotatedDocument:
        if self._loaded is None:
            self.setup()
        return annotate_lib.redact_document(tagged, self._loaded)

    def count_output(self, annotated: AnnotatedDocument, count: Count) -> None:
        count(f"{LANGUAGE_PREFIX}{annotated.language}", 1)
        for label, entities in Counter(entity.label for entity in annotated.entities).items():
            count(f"{ENTITY_PREFIX}{label}", entities)
        propagated = sum(entity.propagated for entity in annotated.entities)
        if propagated:
            count(PROPAGATED, propagated)


class AuditRedacted(Stage):
    """AnnotatedDocument -> AnnotatedDocument with the audit of its redacted text (offsets, never strings)."""

    name, failure = "audit", Reason.AUDIT_ERROR
    counters = (f"{AUDIT_PREFIX}<kind>", AUDIT_FLAGGED)

    def document_of(self, annotated: AnnotatedDocument) -> Document:
        return annotated.document

    def step(self, annotated: AnnotatedDocument) -> AnnotatedDocument:
        return annotate_lib.audit_document(annotated)

    def count_output(self, annotated: AnnotatedDocument, count: Count) -> None:
        for kind, value in annotated.audit.counts.items():
            if value:
                count(f"{AUDIT_PREFIX}{kind}", value)
        if annotated.audit.total:
            count(AUDIT_FLAGGED, 1)


class EmitMlOutputs(Stage):
    """AnnotatedDocument -> AnnotatedDocument with its ML outputs (--emit-token-ids,
    --emit-embeddings): the redacted piece ids and the vectors, from the final entities."""

    name, failure = "ml_outputs", Reason.ML_OUTPUT_ERROR

    def __init__(self, settings: mlout_lib.MlSettings):
        self._settings = settings

    def document_of(self, annotated: AnnotatedDocument) -> Document:
        return annotated.document

    def step(self, annotated: AnnotatedDocument) -> AnnotatedDocument:
        return mlout_lib.ml_outputs(annotated, self._settings)


@dataclass(frozen=True)
class AnnotationStages:
    """The pipeline's stages in their one order: the per-document stages before the model,
    the model, the per-document stages after it. Every driver runs this list."""

    before_model: tuple[Stage, ...]
    model: Infer
    after_model: tuple[Stage, ...]

    @property
    def names(self) -> tuple[str, ...]:
        """Each stage's name, in order (the `time_us_<name>` counters)."""
        return (*(s.name for s in self.before_model), self.model.name,
                *(s.name for s in self.after_model))

    def setup(self) -> None:
        for stage in self.before_model:
            stage.setup()
        self.model.setup()
        for stage in self.after_model:
            stage.setup()


def declare(settings: AnnotationSettings, classifier: Classifier,
            read_file: ReadFile = _read_local_file) -> AnnotationStages:
    """The one declared list of stages, from the settings: segment, encode, the model,
    realign, patterns, redact, audit, and the ML outputs when asked for.

    `classifier` runs the model (`larvatus.settings.classifier(settings)`); `read_file`
    reads a pseudonym key file (local, or any filesystem the driver knows).
    """
    after = [Realign(settings.spec.scheme, settings.aggregation, settings.decision,
                     ml=settings.ml),
             DetectPatterns(settings.patterns), Redact(settings.policy, read_file),
             AuditRedacted()]
    if settings.ml is not None:
        after.append(EmitMlOutputs(settings.ml))
    return AnnotationStages(
        before_model=(Segment(), Encode(settings.spec.load_tokenizer, settings.encode_settings)),
        model=Infer(classifier), after_model=tuple(after))
