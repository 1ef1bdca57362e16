"""Thin, named Beam wrappers around the pure stage functions, with counters and dead-letter outputs."""
from __future__ import annotations

import logging
import os
import socket
import threading
from collections import Counter
from typing import Iterable, Optional, Union

import apache_beam as beam
from apache_beam.io.filesystem import CompressionTypes

from larvatus.transforms import annotate as annotate_lib
from larvatus.transforms import encode as encode_lib
from larvatus.transforms import formats
from larvatus.transforms import language as language_lib
from larvatus.transforms import lexicon
from larvatus.transforms import mlout as mlout_lib
from larvatus.transforms import recognizers as patterns_lib
from larvatus.transforms import progress as progress_lib
from larvatus.transforms import read as read_lib
from larvatus.transforms import segment as segment_lib
from larvatus.transforms.labels import LabelScheme
from larvatus.transforms.realign import RedactionDecision
from larvatus.transforms.records import (
    AnnotatedDocument, DeadLetter, DeadLetterReason as Reason, Document, EncodedDocument,
    SegmentedDocument, TaggedDocument,
)
from larvatus.transforms.redact import KeySource, RedactionPolicy, SecretKeyError
from larvatus.transforms.counters import (
    AUDIT_FLAGGED, AUDIT_PREFIX, EMPTY_DOCUMENTS, LANGUAGE_PREFIX, WORKER_PROCESSES,
)
from larvatus.transforms.stage_template import (  # noqa: F401 (the template's names, here too)
    DEAD, Stage, StageChain, StreamStage, _safe_detail, add_time, count, dead_letter,
)

LOG = logging.getLogger(__name__)


class ReadRecords(StreamStage):
    """A matched file -> its Documents, in the format `larvatus.transforms.formats` picks for it;
    undecodable records go to the dead-letter output."""

    stage, failure = "read", Reason.UNREADABLE_FILE

    def __init__(self, input_format: str, id_field: str, text_field: str, max_chars: int,
                 base: str = "", hash_text_ids: bool = False, progress_dir: Optional[str] = None,
                 text_id_key: Optional[KeySource] = None, keep_fields: tuple[str, ...] = ()):
        super().__init__()
        if input_format != "auto":
            formats.input_format(input_format)   # an unknown format fails here, at start
        self._progress_dir = progress_dir
        self._keep_fields = keep_fields
        self._format = input_format
        self._id_field = id_field
        self._text_field = text_field
        self._max_chars = max_chars
        self._base = base
        self._hash_text_ids = hash_text_ids
        self._text_id_key = text_id_key     # where the key is: each worker reads it
        self._key: Optional[bytes] = None

    def setup(self):
        if self._hash_text_ids and self._text_id_key is not None:
            self._key = self._text_id_key.load(read_secret_file)

    def __getstate__(self):
        return {**super().__getstate__(), "_key": None}   # the key never travels with the DoFn

    def _named(self, readable_file) -> tuple[str, formats.InputFormat, str]:
        """The file's path as rows name it, its format, and its records' source (the path, or
        its hash for a format whose ids are paths under --text-ids hash)."""
        path = read_lib.source_name(readable_file.metadata.path, self._base)
        fmt = formats.input_format(formats.format_for_path(path, self._format))
        if self._hash_text_ids and self._text_id_key is not None and self._key is None:
            self.setup()
        hashed = fmt.ids_from_path and self._hash_text_ids
        return path, fmt, read_lib.hashed_name(path, self._key) if hashed else path

    def step(self, readable_file) -> Iterable:
        path, fmt, source = self._named(readable_file)
        count("records_in", 0)   # present even for an empty file: zero is a checked count
        count("files_read")
        special = read_lib.special_file_kind(readable_file.metadata.path)
        if special is not None:
            yield DeadLetter(source, Reason.UNREADABLE_FILE,
                             f"{special}, not a regular file: Larvatus reads only regular files")
            return
        read_bytes = _ReadBytes(self._progress_dir, readable_file.metadata)
        try:
            # Raw bytes: read_records decompresses itself, with bounded memory and
            # an error for a truncated stream (Beam's CompressedFile has neither).
            with readable_file.open(compression_type=CompressionTypes.UNCOMPRESSED) as opened:
                for result in formats.read_records(
                        read_bytes.wrap(opened), path, fmt.name, self._id_field,
                        self._text_field, self._max_chars, source=source,
                        keep_fields=self._keep_fields):
                    if result is not read_lib.BLANK_LINE:
                        read_bytes.report()
                    yield result
        finally:
            read_bytes.finish_file()

    def count_output(self, result) -> None:
        if result is read_lib.BLANK_LINE:
            count("blank_lines_skipped")
            return
        count("records_in")
        if isinstance(result, Document) and not result.text.strip():
            count(EMPTY_DOCUMENTS)

    def failed(self, readable_file, error: Exception, done: int) -> DeadLetter:
        source = self._named(readable_file)[2]
        return DeadLetter(f"{source}:after-record-{done}", Reason.UNREADABLE_FILE,
                          f"{read_lib.describe_read_error(error)} after {done} records")

    def finish_bundle(self):
        flush_progress(self._progress_dir)


class _ReadBytes:
    """Reports how far into a file the reader is, for the progress ETA (in the file's own,
    raw bytes, compressed or not): counted as read, the rest when the file is done."""

    def __init__(self, progress_dir: Optional[str], metadata):
        self._progress = progress_lib.progress_file(progress_dir)
        self._size = metadata.size_in_bytes or 0
        self._counting: Optional[progress_lib.CountingReader] = None
        self._reported = 0

    def wrap(self, handle):
        if self._progress is None:
            return handle
        self._counting = progress_lib.CountingReader(handle)
        return self._counting

    def report(self) -> None:
        """One more record read."""
        if self._progress is not None:
            self._progress.add(records=1)
        if self._counting is not None:
            self._add(min(self._counting.count, self._size))

    def finish_file(self) -> None:
        if self._progress is not None:
            self._add(self._size)

    def _add(self, done: int) -> None:
        if done > self._reported:
            self._progress.add(bytes_read=done - self._reported)
            self._reported = done


def flush_progress(progress_dir: Optional[str]) -> None:
    """Writes this process's progress totals now (at the end of a bundle)."""
    progress = progress_lib.progress_file(progress_dir)
    if progress is not None:
        progress.flush()


_WORKING = threading.Lock()
_working_pid: Optional[int] = None


def note_working_process() -> None:
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
            count(WORKER_PROCESSES)
            LOG.info("Larvatus worker %s is annotating documents", _this_worker())


class Segment(Stage):
    """Document -> SegmentedDocument (spaCy words with offsets)."""

    stage, failure = "segment", Reason.SEGMENT_ERROR

    def setup(self):
        segment_lib.english_tokenizer()  # load spaCy's rules once per worker, not on the first document

    def document_of(self, document: Document) -> Document:
        return document

    def step(self, document: Document) -> SegmentedDocument:
        return segment_lib.segment(document)

    def start(self, document: Document) -> None:
        note_working_process()   # here, not in `step`: Beam counters belong to this thread

    def on_timeout(self) -> None:
        # The overrunning call may still be inside spaCy's tokenizer, whose cache is
        # not safe to share between threads: later documents get a fresh one, built
        # here rather than inside the next document's budget.
        segment_lib.english_tokenizer.cache_clear()
        segment_lib.english_tokenizer()

    def count_output(self, segmented: SegmentedDocument) -> None:
        count("words", segmented.num_words)


class Encode(Stage):
    """SegmentedDocument -> (source, EncodedDocument), the tokenizer loaded once per DoFn instance."""

    stage, failure = "encode", Reason.ENCODE_ERROR

    def __init__(self, model_spec, settings: encode_lib.EncodeSettings,
                 record_timeout: Optional[float] = None):
        super().__init__(record_timeout)
        self._spec = model_spec
        self._settings = settings

    def setup(self):
        self._tokenizer = encode_lib.WordPieces(self._spec.load_tokenizer())

    def document_of(self, segmented: SegmentedDocument) -> Document:
        return segmented.document

    def step(self, segmented: SegmentedDocument):
        encoded = encode_lib.encode(segmented, self._tokenizer, self._settings)
        return segmented.document.source, encoded

    def count_output(self, keyed) -> None:
        encoded: EncodedDocument = keyed[1]
        count("wordpieces", encoded.num_pieces)
        count("windows", len(encoded.windows))
        count("window_tokens", encoded.num_tokens)


class Realign(Stage):
    """(source, PredictionResult) -> TaggedDocument: window merge, word tags, spans."""

    stage, failure = "realign", Reason.REALIGN_ERROR

    def __init__(self, scheme: LabelScheme, aggregation: str,
                 decision: Optional[RedactionDecision] = None,
                 record_timeout: Optional[float] = None,
                 ml: Optional[mlout_lib.MlSettings] = None):
        super().__init__(record_timeout)
        self._scheme = scheme
        self._aggregation = aggregation
        self._decision = decision
        self._ml = ml   # keep the document's pieces (and vectors) for EmitMlOutputs

    def document_of(self, keyed_result) -> Document:
        return keyed_result[1].example.segmented.document

    def step(self, keyed_result) -> Union[TaggedDocument, DeadLetter]:
        result = keyed_result[1]
        return annotate_lib.tag(result.example, result.inference, self._scheme,
                                self._aggregation, self._decision, self._ml)


class DetectPatterns(Stage):
    """TaggedDocument -> TaggedDocument: structured personal data found by pattern recognizers
    and merged with the model's spans (a pattern span beats an overlapping model span; model
    spans are cut at line breaks)."""

    stage, failure = "patterns", Reason.PATTERN_ERROR

    def __init__(self, settings: patterns_lib.PatternSettings,
                 record_timeout: Optional[float] = None):
        super().__init__(record_timeout)
        self._settings = settings

    def document_of(self, tagged: TaggedDocument) -> Document:
        return tagged.segmented.document

    def step(self, tagged: TaggedDocument) -> TaggedDocument:
        return annotate_lib.add_patterns(tagged, self._settings)


def read_secret_file(path: str) -> bytes:
    """A secret file's bytes through Beam's FileSystems (a local path, gs://, s3://...)."""
    from apache_beam.io.filesystem import CompressionTypes
    from apache_beam.io.filesystems import FileSystems

    with FileSystems.open(path, compression_type=CompressionTypes.UNCOMPRESSED) as handle:
        return handle.read()


def _this_worker() -> str:
    return f"{socket.gethostname()} (pid {os.getpid()})"


class Redact(Stage):
    """TaggedDocument -> AnnotatedDocument: overlaps resolved, names replaced.

    The policy in the graph says where the pseudonym key lives, never the key:
    each worker reads it in `setup` (an environment variable or a secret file).
    """

    stage, failure = "redact", Reason.REDACT_ERROR

    def __init__(self, policy: RedactionPolicy, record_timeout: Optional[float] = None):
        super().__init__(record_timeout)
        self._policy = policy
        self._loaded = None

    def setup(self):
        language_lib.load_model()   # once per worker, not inside the first document's time
        lexicon.load()              # every language's common words, likewise
        try:
            self._loaded = self._policy.with_key(read_secret_file)
        except SecretKeyError as error:
            raise SecretKeyError(
                f"on worker {_this_worker()}: {error}. The launcher found the key, but "
                f"workers read it themselves: make the "
                f"{self._policy.key_source.describe()} available to the worker processes "
                f"(see the README, 'Running at scale').") from error

    def document_of(self, tagged: TaggedDocument) -> Document:
        return tagged.segmented.document

    def step(self, tagged: TaggedDocument) -> AnnotatedDocument:
        if self._loaded is None:
            self.setup()
        return annotate_lib.redact_document(tagged, self._loaded)

    def count_output(self, annotated: AnnotatedDocument) -> None:
        count(f"{LANGUAGE_PREFIX}{annotated.language}")
        for label, entities in Counter(entity.label for entity in annotated.entities).items():
            count(f"entities_{label}", entities)
        propagated = sum(entity.propagated for entity in annotated.entities)
        if propagated:
            count("entities_propagated", propagated)


class AuditRedacted(Stage):
    """AnnotatedDocument -> AnnotatedDocument with the audit of its redacted text (offsets, never strings)."""

    stage, failure = "audit", Reason.AUDIT_ERROR

    def document_of(self, annotated: AnnotatedDocument) -> Document:
        return annotated.document

    def step(self, annotated: AnnotatedDocument) -> AnnotatedDocument:
        return annotate_lib.audit_document(annotated)

    def count_output(self, annotated: AnnotatedDocument) -> None:
        for kind, value in annotated.audit.counts.items():
            if value:
                count(f"{AUDIT_PREFIX}{kind}", value)
        if annotated.audit.total:
            count(AUDIT_FLAGGED)


class EmitMlOutputs(Stage):
    """AnnotatedDocument -> AnnotatedDocument with its ML outputs (--emit-token-ids,
    --emit-embeddings): the redacted piece ids and the vectors, from the final entities."""

    stage, failure = "ml_outputs", Reason.ML_OUTPUT_ERROR

    def __init__(self, settings: mlout_lib.MlSettings, record_timeout: Optional[float] = None):
        super().__init__(record_timeout)
        self._settings = settings

    def document_of(self, annotated: AnnotatedDocument) -> Document:
        return annotated.document

    def step(self, annotated: AnnotatedDocument) -> AnnotatedDocument:
        return mlout_lib.ml_outputs(annotated, self._settings)


class FailedInferenceToDeadLetters(beam.DoFn):
    """RunInference's own failed batches (keyed documents, exception) -> DeadLetters."""

    def process(self, failed):
        batch, error = failed
        for _, encoded in batch:
            document = encoded.segmented.document
            yield DeadLetter(document.source, Reason.INFERENCE_ERROR, _safe_detail(error),
                             document.doc_id)
            count("dead_letter_inference_error")
