"""Thin, named Beam wrappers around the pure stage functions, with counters and dead-letter outputs."""
from __future__ import annotations

import logging
import time
from typing import Iterable, Optional

import apache_beam as beam
from apache_beam import pvalue
from apache_beam.metrics import Metrics

from models.handler import InferenceFailure
from transforms.labels import LabelScheme
from transforms import encode as encode_lib
from transforms import read as read_lib
from transforms.realign import realign
from transforms.records import (
    AnnotatedDocument, DeadLetter, Document, EncodedDocument, SegmentedDocument,
    TaggedDocument,
)
from transforms.redact import RedactionPolicy, redact
from transforms.segment import english_tokenizer, segment

LOG = logging.getLogger(__name__)
NAMESPACE = "larvatus"
DEAD = "dead_letter"
INPUT_FORMATS = ("jsonl", "text", "parquet")
_EXTENSIONS = {".jsonl": "jsonl", ".json": "jsonl", ".ndjson": "jsonl", ".txt": "text",
               ".text": "text", ".parquet": "parquet", ".pq": "parquet"}


def format_for_path(path: str, requested: str = "auto") -> str:
    """The input format for a file: the one requested, or the one its extension names."""
    if requested != "auto":
        return requested
    name = path.lower()
    for suffix in (".gz", ".bz2", ".zst", ".deflate"):
        if name.endswith(suffix):
            name = name[: -len(suffix)]
    for extension, fmt in _EXTENSIONS.items():
        if name.endswith(extension):
            return fmt
    return "text"


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


class ReadRecords(beam.DoFn):
    """Reads one matched file into Documents; undecodable records go to the dead-letter output."""

    def __init__(self, input_format: str, id_field: str, text_field: str, max_chars: int):
        self._format = input_format
        self._id_field = id_field
        self._text_field = text_field
        self._max_chars = max_chars

    def process(self, readable_file) -> Iterable:
        path = readable_file.metadata.path
        fmt = format_for_path(path, self._format)
        timer = _Timer("read")
        emitted = 0
        try:
            for result in self._records(readable_file, path, fmt, timer):
                emitted += 1
                count("records_in")
                if isinstance(result, DeadLetter):
                    yield dead_letter(result)
                else:
                    yield result
        except Exception as error:  # a file that breaks mid-way: record where
            count("records_in")
            yield dead_letter(DeadLetter(
                f"{path}:after-record-{emitted}", "unreadable_file",
                f"{type(error).__name__} after {emitted} records"))

    def _records(self, readable_file, path: str, fmt: str, timer: _Timer):
        if fmt == "text":
            with timer:
                result = read_lib.parse_text_file(readable_file.read(), path, self._max_chars)
            yield result
        elif fmt == "jsonl":
            with readable_file.open() as handle:
                for number, line in enumerate(handle, start=1):
                    if not line.strip():
                        count("blank_lines_skipped")
                        continue
                    with timer:
                        result = read_lib.parse_json_line(
                            line.rstrip(b"\r\n"), f"{path}:{number}", self._id_field,
                            self._text_field, self._max_chars)
                    yield result
        else:
            import pyarrow.parquet as pq

            with readable_file.open() as handle:
                parquet = pq.ParquetFile(handle)
                columns = [c for c in (self._id_field, self._text_field)
                           if c in parquet.schema_arrow.names]
                row_number = 0
                for batch in parquet.iter_batches(columns=columns, batch_size=1024):
                    for row in batch.to_pylist():
                        with timer:
                            result = read_lib.parse_row(
                                row, f"{path}#row={row_number}", self._id_field,
                                self._text_field, self._max_chars)
                        row_number += 1
                        yield result


class Segment(beam.DoFn):
    """Document -> SegmentedDocument (spaCy words with offsets)."""

    def setup(self):
        english_tokenizer()  # load spaCy's rules once per worker, not on the first document

    def process(self, document: Document):
        try:
            with _Timer("segment"):
                segmented = segment(document)
        except Exception as error:
            yield dead_letter(DeadLetter(
                document.source, "encode_error", f"segmentation: {_safe_detail(error)}",
                document.doc_id))
            return
        count("words", segmented.num_words)
        yield segmented


class Encode(beam.DoFn):
    """SegmentedDocument -> (source, EncodedDocument), the tokenizer loaded once per DoFn instance."""

    def __init__(self, model_spec, overlap: int, max_length: Optional[int]):
        self._spec = model_spec
        self._overlap = overlap
        self._max_length = max_length

    def setup(self):
        self._tokenizer = self._spec.load_tokenizer()
        self._settings = self._spec.encode_settings(
            self._tokenizer, self._overlap, self._max_length)

    def process(self, segmented: SegmentedDocument):
        document = segmented.document
        try:
            with _Timer("encode"):
                encoded = encode_lib.encode(segmented, self._tokenizer, self._settings)
        except Exception as error:
            yield dead_letter(DeadLetter(
                document.source, "encode_error", _safe_detail(error), document.doc_id))
            return
        count("wordpieces", encoded.num_pieces)
        count("windows", len(encoded.windows))
        count("window_tokens", encoded.num_tokens)
        yield document.source, encoded


class Realign(beam.DoFn):
    """(source, PredictionResult) -> TaggedDocument: window merge, word tags, spans."""

    def __init__(self, scheme: LabelScheme, aggregation: str):
        self._scheme = scheme
        self._aggregation = aggregation

    def process(self, keyed_result):
        _, result = keyed_result
        encoded: EncodedDocument = result.example
        document = encoded.segmented.document
        if isinstance(result.inference, InferenceFailure):
            yield dead_letter(DeadLetter(
                document.source, "inference_error", result.inference.detail, document.doc_id))
            return
        try:
            with _Timer("realign"):
                spans = realign(encoded, result.inference, self._scheme, self._aggregation)
        except Exception as error:
            yield dead_letter(DeadLetter(
                document.source, "realign_error", _safe_detail(error), document.doc_id))
            return
        yield TaggedDocument(encoded.segmented, spans, encoded.num_pieces, len(encoded.windows))


class Redact(beam.DoFn):
    """TaggedDocument -> AnnotatedDocument: overlaps resolved, names replaced."""

    def __init__(self, policy: RedactionPolicy):
        self._policy = policy

    def process(self, tagged: TaggedDocument):
        with _Timer("redact"):
            entities, text, replacements = redact(tagged.segmented, tagged.entities, self._policy)
        for entity in entities:
            count(f"entities_{entity.label}")
            if entity.propagated:
                count("entities_propagated")
        yield AnnotatedDocument(
            document=tagged.segmented.document, entities=entities, redacted_text=text,
            replacements=replacements, num_words=tagged.segmented.num_words,
            num_pieces=tagged.num_pieces, num_windows=tagged.num_windows)


class FailedInferenceToDeadLetters(beam.DoFn):
    """RunInference's own failed batches (keyed documents, exception) -> DeadLetters."""

    def process(self, failed):
        batch, error = failed
        for _, encoded in batch:
            document = encoded.segmented.document
            yield DeadLetter(document.source, "inference_error", _safe_detail(error),
                             document.doc_id)
            count("dead_letter_inference_error")
