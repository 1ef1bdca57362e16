"""The Beam graph: read, segment, encode, infer, realign, redact, write."""
from __future__ import annotations

import os
from dataclasses import dataclass
from typing import Optional

import apache_beam as beam
from apache_beam.io import fileio
from apache_beam.ml.inference.base import KeyedModelHandler, RunInference

from models.handler import OnnxTokenClassifierHandler
from models.model_dir import ModelSpec
from pipeline import schemas
from pipeline.layout import ANNOTATIONS_PREFIX, DEAD_LETTER_PREFIX, PARQUET_SUFFIX
from transforms import stages
from transforms.encode import EncodeSettings
from transforms.progress import progress_file
from transforms.redact import RedactionPolicy

# Beam's defaults (1,000 rows, 64 MiB row groups) make peak memory grow with the corpus
# until the buffers fill; small buffers keep it flat (1.245x -> 1.03x for 10x documents).
PARQUET_BUFFER = {"record_batch_size": 100, "row_group_buffer_size": 8 * 1024 * 1024}


@dataclass(frozen=True)
class JobConfig:
    """Everything the graph needs, resolved and checked from the options."""

    input_pattern: str
    output_dir: str
    input_format: str
    id_field: str
    text_field: str
    max_chars: int
    spec: ModelSpec
    device: str
    batch_tokens: Optional[int]
    intra_op_threads: int
    encode_settings: EncodeSettings
    aggregation: str
    policy: RedactionPolicy
    keep_text: bool
    # A local folder where workers keep running totals for the progress line
    # (transforms/progress.py); None: no progress reporting.
    progress_dir: Optional[str] = None

    @property
    def window_length(self) -> int:
        return self.encode_settings.max_length

    @property
    def window_overlap(self) -> int:
        return self.encode_settings.overlap

    @property
    def model_info(self) -> dict:
        return {"name": self.spec.name, "sha256": self.spec.sha256}

    def handler(self) -> OnnxTokenClassifierHandler:
        return OnnxTokenClassifierHandler(
            self.spec, device=self.device, batch_tokens=self.batch_tokens,
            intra_op_threads=self.intra_op_threads)


class AnnotateDocuments(beam.PTransform):
    """Documents -> AnnotatedDocuments, with a dead-letter output (tag `dead_letter`)."""

    def __init__(self, config: JobConfig):
        super().__init__()
        self._config = config

    def expand(self, documents):
        config = self._config
        segmented = documents | "Segment" >> beam.ParDo(stages.Segment()).with_outputs(
            stages.DEAD, main="ok")
        encoded = segmented.ok | "Encode" >> beam.ParDo(stages.Encode(
            config.spec, config.encode_settings)).with_outputs(
                stages.DEAD, main="ok")
        inferred, failed = (
            encoded.ok
            | "RunInference" >> RunInference(KeyedModelHandler(config.handler()))
            .with_exception_handling())
        tagged = inferred | "Realign" >> beam.ParDo(
            stages.Realign(config.spec.scheme, config.aggregation)).with_outputs(
                stages.DEAD, main="ok")
        annotated = tagged.ok | "Redact" >> beam.ParDo(stages.Redact(config.policy))
        failed_inference = failed.failed_inferences | "FailedInference" >> beam.ParDo(
            stages.FailedInferenceToDeadLetters())
        dead = (
            (segmented[stages.DEAD], encoded[stages.DEAD], tagged[stages.DEAD],
             failed_inference)
            | "MergeDeadLetters" >> beam.Flatten())
        return {"annotated": annotated, stages.DEAD: dead}


class ReadDocuments(beam.PTransform):
    """A file pattern -> Documents, with a dead-letter output for undecodable records."""

    def __init__(self, config: JobConfig):
        super().__init__()
        self._config = config

    def expand(self, pbegin):
        config = self._config
        return (
            pbegin
            | "MatchFiles" >> fileio.MatchFiles(config.input_pattern)
            | "ReadMatches" >> fileio.ReadMatches()
            | "ParseRecords" >> beam.ParDo(stages.ReadRecords(
                config.input_format, config.id_field, config.text_field, config.max_chars,
                progress_dir=config.progress_dir))
            .with_outputs(stages.DEAD, main="ok"))


class ToAnnotationRow(beam.DoFn):
    """AnnotatedDocument -> a dict row of the annotation schema, counted as written."""

    def __init__(self, model_info: dict, keep_text: bool, progress_dir: Optional[str] = None):
        self._model = model_info
        self._keep_text = keep_text
        self._progress_dir = progress_dir

    def setup(self):
        self._progress = progress_file(self._progress_dir)

    def process(self, doc):
        stages.count("records_out")
        if self._progress is not None:
            self._progress.add(documents=1, words=doc.num_words)
        yield schemas.annotation_row(doc, self._model, self._keep_text)

    def finish_bundle(self):
        stages.flush_progress(self._progress_dir)


class ToDeadLetterRow(beam.DoFn):
    """DeadLetter -> a dict row of the dead-letter schema (and a document done, for progress)."""

    def __init__(self, progress_dir: Optional[str] = None):
        self._progress_dir = progress_dir

    def setup(self):
        self._progress = progress_file(self._progress_dir)

    def process(self, letter):
        if self._progress is not None:
            self._progress.add(documents=1, dead_lettered=1)
        yield schemas.dead_letter_row(letter)

    def finish_bundle(self):
        stages.flush_progress(self._progress_dir)


def build(pipeline: beam.Pipeline, config: JobConfig) -> dict:
    """Wires the whole job onto `pipeline`; returns its PCollections by name."""
    read = pipeline | "ReadDocuments" >> ReadDocuments(config)
    annotated = read.ok | "Annotate" >> AnnotateDocuments(config)
    dead = (read[stages.DEAD], annotated[stages.DEAD]) | "AllDeadLetters" >> beam.Flatten()
    (annotated["annotated"]
     | "ToRows" >> beam.ParDo(ToAnnotationRow(
         config.model_info, config.keep_text, config.progress_dir))
     | "WriteAnnotations" >> beam.io.WriteToParquet(
         os.path.join(config.output_dir, ANNOTATIONS_PREFIX),
         schemas.annotation_schema(config.keep_text), file_name_suffix=PARQUET_SUFFIX,
         **PARQUET_BUFFER))
    (dead
     | "DeadLetterRows" >> beam.ParDo(ToDeadLetterRow(config.progress_dir))
     | "WriteDeadLetters" >> beam.io.WriteToParquet(
         os.path.join(config.output_dir, DEAD_LETTER_PREFIX), schemas.DEAD_LETTER_SCHEMA,
         file_name_suffix=PARQUET_SUFFIX, **PARQUET_BUFFER))
    return {"annotated": annotated["annotated"], "dead_letters": dead}
