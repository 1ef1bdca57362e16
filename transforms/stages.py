"""Thin, named Beam wrappers around the pure stage functions, with counters and dead-letter outputs."""
from __future__ import annotations

import logging
import time
from typing import Any, Iterable, Optional, Union

import apache_beam as beam
from apache_beam import pvalue
from apache_beam.metrics import Metrics

from transforms import encode as encode_lib
from transforms import progress as progress_lib
from transforms import read as read_lib
from transforms.labels import LabelScheme
from transforms.realign import realign
from transforms.records import (
    AnnotatedDocument, DeadLetter, DeadLetterReason as Reason, Document, EncodedDocument,
    InferenceFailure, SegmentedDocument, TaggedDocument,
)
from transforms.redact import RedactionPolicy, redact
from transforms.segment import english_tokenizer, segment

LOG = logging.getLogger(__name__)
from transforms.counters import NAMESPACE
DEAD = "dead_letter"


def count(name: str, value: int = 1) -> None:
    Metrics.counter(NAMESPACE, name).inc(value)


class _Timer:
    """Adds the wall time of a block to the `time_us_<stage>` counter."""

    def __init__(self, stage: str):
        self._counter = Metrics.counter(NAMESPACE, f"time_us_{stage}")

    def __enter__(self):
        self._start = time.perf_counter()

    def __exit__(self, *exc):
        self._counter.inc(int((time.perf_counter() - self._start) * 1e6))


def dead_letter(letter: DeadLetter):
    count(f"dead_letter_{letter.reason}")
    return pvalue.TaggedOutput(DEAD, letter)


def _safe_detail(error: Exception) -> str:
    # Exception messages can quote their input; keep only the type.
    return type(error).__name__


class Stage(beam.DoFn):
    """One pipeline step: the template owns timing, failure routing and counting.

    A subclass names its `stage` (the `time_us_<stage>` counter) and its
    `failure` reason, and writes `step` (the pure call; it may return a
    DeadLetter) and, if it has any, `count_output`. An exception in `step`
    dead-letters the element with the exception's type as detail, never its
    message (messages can quote text).
    """

    stage: str = ""
    failure: Reason = Reason.ENCODE_ERROR

    def document_of(self, element) -> Document:
        raise NotImplementedError

    def step(self, element) -> Union[Any, DeadLetter]:
        raise NotImplementedError

    def count_output(self, result) -> None:
        pass

    def process(self, element) -> Iterable:
        try:
            with _Timer(self.stage):
                result = self.step(element)
        except Exception as error:
            document = self.document_of(element)
            yield dead_letter(DeadLetter(
                document.source, self.failure, _safe_detail(error), document.doc_id))
            return
        if isinstance(result, DeadLetter):
            yield dead_letter(result)
            return
        self.count_output(result)
        yield result


class ReadRecords(beam.DoFn):
    """Reads one matched file into Documents; undecodable records go to the dead-letter output."""

    def __init__(self, input_format: str, id_field: str, text_field: str, max_chars: int,
                 progress_dir: Optional[str] = None):
        self._format = input_format
        self._id_field = id_field
        self._text_field = text_field
        self._max_chars = max_chars
        self._progress_dir = progress_dir

    def process(self, readable_file) -> Iterable:
        path = readable_file.metadata.path
        fmt = read_lib.format_for_path(path, self._format)
        timer = _Timer("read")
        emitted = 0
        read_bytes = _ReadBytes(self._progress_dir, readable_file.metadata)
        try:
            with readable_file.open() as opened:
                handle = read_bytes.wrap(opened)
                records = read_lib.read_records(
                    handle, path, fmt, self._id_field, self._text_field, self._max_chars)
                while True:
                    with timer:
                        result = next(records, StopIteration)
                    if result is StopIteration:
                        break
                    read_bytes.report()
                    if result is read_lib.BLANK_LINE:
                        count("blank_lines_skipped")
                        continue
                    emitted += 1
                    count("records_in")
                    yield dead_letter(result) if isinstance(result, DeadLetter) else result
        except Exception as error:  # a file that breaks mid-way: record where
            count("records_in")
            yield dead_letter(DeadLetter(
                f"{path}:after-record-{emitted}", Reason.UNREADABLE_FILE,
                f"{type(error).__name__} after {emitted} records"))
        read_bytes.finish()

    def finish_bundle(self):
        flush_progress(self._progress_dir)


class _ReadBytes:
    """Reports how far into a file the reader is, for the progress ETA (in the file's own bytes).

    Bytes handed out by an uncompressed file count as they are read; a compressed
    file counts whole when it is done (its decompressed bytes are not its size).
    """

    def __init__(self, progress_dir: Optional[str], metadata):
        self._progress = progress_lib.progress_file(progress_dir)
        self._size = metadata.size_in_bytes or 0
        self._compressed = metadata.path.lower().endswith(read_lib.COMPRESSION_SUFFIXES)
        self._counting: Optional[progress_lib.CountingReader] = None
        self._reported = 0

    def wrap(self, handle):
        if self._progress is None or self._compressed:
            return handle
        self._counting = progress_lib.CountingReader(handle)
        return self._counting

    def report(self) -> None:
        if self._counting is not None:
            done = min(self._counting.count, self._size)
            if done > self._reported:
                self._progress.add(bytes_read=done - self._reported)
                self._reported = done

    def finish(self) -> None:
        if self._progress is not None and self._size > self._reported:
            self._progress.add(bytes_read=self._size - self._reported)
            self._reported = self._size


def flush_progress(progress_dir: Optional[str]) -> None:
    """Writes this process's progress totals now (at the end of a bundle)."""
    progress = progress_lib.progress_file(progress_dir)
    if progress is not None:
        progress.flush()


class Segment(Stage):
    """Document -> SegmentedDocument (spaCy words with offsets)."""

    stage, failure = "segment", Reason.SEGMENT_ERROR

    def setup(self):
        english_tokenizer()  # load spaCy's rules once per worker, not on the first document

    def document_of(self, document: Document) -> Document:
        return document

    def step(self, document: Document) -> SegmentedDocument:
        return segment(document)

    def count_output(self, segmented: SegmentedDocument) -> None:
        count("words", segmented.num_words)


class Encode(Stage):
    """SegmentedDocument -> (source, EncodedDocument), the tokenizer loaded once per DoFn instance."""

    stage, failure = "encode", Reason.ENCODE_ERROR

    def __init__(self, model_spec, settings: encode_lib.EncodeSettings):
        self._spec = model_spec
        self._settings = settings

    def setup(self):
        self._tokenizer = self._spec.load_tokenizer()

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

    def __init__(self, scheme: LabelScheme, aggregation: str):
        self._scheme = scheme
        self._aggregation = aggregation

    def document_of(self, keyed_result) -> Document:
        return keyed_result[1].example.segmented.document

    def step(self, keyed_result) -> Union[TaggedDocument, DeadLetter]:
        result = keyed_result[1]
        encoded: EncodedDocument = result.example
        if isinstance(result.inference, InferenceFailure):
            document = encoded.segmented.document
            return DeadLetter(document.source, Reason.INFERENCE_ERROR, result.inference.detail,
                              document.doc_id)
        spans = realign(encoded, result.inference, self._scheme, self._aggregation)
        return TaggedDocument(encoded.segmented, spans, encoded.num_pieces, len(encoded.windows))


class Redact(Stage):
    """TaggedDocument -> AnnotatedDocument: overlaps resolved, names replaced."""

    stage, failure = "redact", Reason.REDACT_ERROR

    def __init__(self, policy: RedactionPolicy):
        self._policy = policy

    def document_of(self, tagged: TaggedDocument) -> Document:
        return tagged.segmented.document

    def step(self, tagged: TaggedDocument) -> AnnotatedDocument:
        entities, text, replacements = redact(tagged.segmented, tagged.entities, self._policy)
        return AnnotatedDocument(
            document=tagged.segmented.document, entities=entities, redacted_text=text,
            replacements=replacements, num_words=tagged.segmented.num_words,
            num_pieces=tagged.num_pieces, num_windows=tagged.num_windows)

    def count_output(self, annotated: AnnotatedDocument) -> None:
        for entity in annotated.entities:
            count(f"entities_{entity.label}")
            if entity.propagated:
                count("entities_propagated")


class FailedInferenceToDeadLetters(beam.DoFn):
    """RunInference's own failed batches (keyed documents, exception) -> DeadLetters."""

    def process(self, failed):
        batch, error = failed
        for _, encoded in batch:
            document = encoded.segmented.document
            yield DeadLetter(document.source, Reason.INFERENCE_ERROR, _safe_detail(error),
                             document.doc_id)
            count("dead_letter_inference_error")
