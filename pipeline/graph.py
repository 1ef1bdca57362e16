"""The Beam graph: read, segment, encode, infer, realign, redact, write."""
from __future__ import annotations

from dataclasses import dataclass
from typing import Optional

import apache_beam as beam
from apache_beam.io import fileio
from apache_beam.io.filesystems import FileSystems
from apache_beam.ml.inference.base import KeyedModelHandler, RunInference
from apache_beam.options.value_provider import StaticValueProvider

from larvatus.models.beam_handler import OnnxTokenClassifierHandler
from larvatus.models.model_dir import ModelSpec
from larvatus import beam_stages, remote, schemas
from larvatus.key_files import read_secret_file
from larvatus.layout import (
    ANNOTATIONS_DIR, ANNOTATIONS_PREFIX, DEAD_LETTER_PREFIX, DEAD_LETTERS_DIR, PARQUET_SUFFIX, join,
)
from larvatus.transforms import stages
from larvatus.transforms.encode import EncodeSettings
from larvatus.transforms.mlout import MlSettings
from larvatus.transforms.recognizers import PatternSettings
from larvatus.transforms.progress import progress_file
from larvatus.transforms.realign import RedactionDecision
from larvatus.transforms.redact import RedactionPolicy
from larvatus.transforms.settings import AnnotationSettings

# Beam's defaults (1,000 rows, 64 MiB row groups) make peak memory grow with the corpus
# until the buffers fill; small buffers keep it flat (1.245x -> 1.03x for 10x documents).
PARQUET_BUFFER = {"record_batch_size": 100, "row_group_buffer_size": 8 * 1024 * 1024}


@dataclass(frozen=True)
class JobConfig:
    """Everything the graph needs, resolved and checked from the options: where the
    documents come from and go, how the runner shares the model, and the annotation
    settings (`larvatus.transforms.settings.AnnotationSettings`, the Redactor's too)."""

    input_pattern: str
    output_dir: str
    input_format: str
    id_field: str
    text_field: str
    settings: AnnotationSettings
    processes_per_machine: int = 1
    model_copies: Optional[int] = None
    large_model: bool = False
    input_base: str = ""   # sources and fallback ids are relative to it (larvatus.transforms.read.input_base)
    text_ids: str = "path"   # text input: ids from the relative path, or its hash
    # A local folder where workers keep running totals for the progress line
    # (transforms/progress.py); None: no progress reporting.
    progress_dir: Optional[str] = None
    # The job's filesystem options (S3 endpoint, keys...), which every worker stage carries
    store: remote.StoreOptions = remote.StoreOptions()
    keep_fields: tuple[str, ...] = ()   # input fields carried into the annotations as is

    # The annotation settings, read through the job's config.
    spec = property(lambda self: self.settings.spec)
    max_chars = property(lambda self: self.settings.max_chars)
    device = property(lambda self: self.settings.device)
    batch_tokens = property(lambda self: self.settings.batch_tokens)
    intra_op_threads = property(lambda self: self.settings.intra_op_threads)
    encode_settings = property(lambda self: self.settings.encode_settings)
    aggregation = property(lambda self: self.settings.aggregation)
    policy = property(lambda self: self.settings.policy)
    keep_text = property(lambda self: self.settings.keep_text)
    patterns = property(lambda self: self.settings.patterns)
    decision = property(lambda self: self.settings.decision)
    record_timeout = property(lambda self: self.settings.record_timeout)
    ml = property(lambda self: self.settings.ml)

    @property
    def window_length(self) -> int:
        return self.encode_settings.max_length

    @property
    def window_overlap(self) -> int:
        return self.encode_settings.overlap

    @property
    def columns(self) -> schemas.OutputColumns:
        """The annotations' optional columns: --keep-text, the ML outputs, --keep-fields."""
        return schemas.OutputColumns.of(self.keep_text, self.ml, self.keep_fields)

    @property
    def model_info(self) -> dict:
        return self.settings.model_info

    def handler(self) -> OnnxTokenClassifierHandler:
        return OnnxTokenClassifierHandler(
            self.spec, device=self.device, batch_tokens=self.batch_tokens,
            intra_op_threads=self.intra_op_threads,
            processes_per_machine=self.processes_per_machine,
            model_copies=self.model_copies, large_model=self.large_model,
            embedding_layer=self.settings.embedding_layer)


STAGE_BATCH = 16   # documents per hand-off to a stage chain's worker thread


class AnnotateDocuments(beam.PTransform):
    """Documents -> AnnotatedDocuments, with a dead-letter output (tag `dead_letter`)."""

    def __init__(self, config: JobConfig):
        super().__init__()
        self._config = config

    def expand(self, documents):
        config = self._config
        timeout = config.record_timeout
        # The declared stages (larvatus.transforms.stages.declare); the model runs in
        # RunInference, with the same classifier class wrapped as a ModelHandler.
        handler = config.handler()
        declared = stages.declare(config.settings, handler, read_secret_file)
        # One Beam step on each side of the model, one hand-off to the budget's worker
        # thread per STAGE_BATCH documents; each stage still timed, counted, budgeted and
        # dead-lettered under its own name.
        encoded = documents | "SegmentAndEncode" >> beam.ParDo(beam_stages.BeamStageChain(
            declared.before_model, timeout, STAGE_BATCH)).with_outputs(beam_stages.DEAD, main="ok")
        inferred, failed = (
            encoded.ok
            | "KeyBySource" >> beam.Map(_keyed)
            | "RunInference" >> RunInference(KeyedModelHandler(handler))
            .with_exception_handling())
        annotated = (
            inferred
            | "Predictions" >> beam.MapTuple(_inferred)
            | "Annotate" >> beam.ParDo(beam_stages.BeamStageChain(
                declared.after_model, timeout, STAGE_BATCH)).with_outputs(
                    beam_stages.DEAD, main="ok"))
        failed_inference = failed.failed_inferences | "FailedInference" >> beam.ParDo(
            beam_stages.FailedInferenceToDeadLetters())
        done = annotated.ok
        dead = (encoded[beam_stages.DEAD], annotated[beam_stages.DEAD], failed_inference) \
            | "MergeDeadLetters" >> beam.Flatten()
        return {"annotated": done, beam_stages.DEAD: dead}


def _keyed(encoded):
    """An encoded document keyed by its source, for the keyed model handler."""
    return encoded.segmented.document.source, encoded


def _inferred(source, result) -> stages.Inferred:
    """RunInference's PredictionResult as the Realign stage's input."""
    return stages.Inferred(result.example, result.inference)


class ReadDocuments(beam.PTransform):
    """A file pattern -> Documents, with a dead-letter output for undecodable records."""

    def __init__(self, config: JobConfig):
        super().__init__()
        self._config = config

    def expand(self, pbegin):
        config = self._config
        return (
            pbegin
            | "Pattern" >> beam.Create([config.input_pattern])
            | "MatchFiles" >> beam.ParDo(MatchInput(
                config.store, (config.input_pattern, config.output_dir, config.spec.location)))
            | "ReadMatches" >> fileio.ReadMatches()
            | "ParseRecords" >> beam.ParDo(beam_stages.ReadRecords(
                config.input_format, config.id_field, config.text_field, config.max_chars,
                base=config.input_base, hash_text_ids=config.text_ids == "hash",
                progress_dir=config.progress_dir, text_id_key=config.policy.key_source,
                keep_fields=config.keep_fields))
            .with_outputs(beam_stages.DEAD, main="ok"))


class MatchInput(beam.DoFn):
    """A file pattern -> its files' metadata, on a worker given the job's filesystem options.

    Its setup checks that the job's remote stores answer this worker within seconds
    (StoreError naming the store and the machine), instead of Beam's minutes of retries.
    """

    def __init__(self, store: remote.StoreOptions, paths: tuple[str, ...]):
        self._store = store
        self._paths = paths

    def setup(self):
        self._store.install()
        remote.check_stores(self._paths, self._store, side="worker")

    def process(self, pattern: str):
        yield from FileSystems.match([pattern])[0].metadata_list


class StorePath(StaticValueProvider):
    """A sink's path that carries the job's filesystem options: every worker stage that
    holds the sink (initialize, write, finalize) gets them installed on unpickling."""

    def __init__(self, path: str, store: remote.StoreOptions):
        super().__init__(str, path)
        self.store = store


def _same(element, store: remote.StoreOptions):
    """Passes an element on; `store` travels with the stage, installing the options."""
    return element


class ToAnnotationRow(beam.DoFn):
    """AnnotatedDocument -> a dict row of the annotation schema, counted as written."""

    def __init__(self, model_info: dict, columns: schemas.OutputColumns,
                 progress_dir: Optional[str] = None):
        self._model = model_info
        self._columns = columns
        self._progress_dir = progress_dir
        self._progress = None

    def setup(self):
        self._progress = progress_file(self._progress_dir)

    def process(self, doc):
        beam_stages.count("records_out")
        if self._progress is not None:
            self._progress.add(documents=1, words=doc.num_words)
        yield self._columns.row(doc, self._model)

    def finish_bundle(self):
        beam_stages.flush_progress(self._progress_dir)


class ToDeadLetterRow(beam.DoFn):
    """DeadLetter -> a dict row of the dead-letter schema (and a record done, for progress)."""

    def __init__(self, progress_dir: Optional[str] = None):
        self._progress_dir = progress_dir
        self._progress = None

    def setup(self):
        self._progress = progress_file(self._progress_dir)

    def process(self, letter):
        if self._progress is not None:
            self._progress.add(documents=1, dead_lettered=1)
        yield schemas.dead_letter_row(letter)

    def finish_bundle(self):
        beam_stages.flush_progress(self._progress_dir)


def build(pipeline: beam.Pipeline, config: JobConfig) -> dict:
    """Wires the whole job onto `pipeline`; returns its PCollections by name."""
    read = pipeline | "ReadDocuments" >> ReadDocuments(config)
    # Reading a file is not splittable, so without this one worker would annotate every
    # document of a file; after it, documents spread over all workers.
    documents = (read.ok | "SpreadDocuments" >> beam.Reshuffle()
                 | "StoreOptions" >> beam.Map(_same, config.store))
    annotated = documents | "Annotate" >> AnnotateDocuments(config)
    dead = (read[beam_stages.DEAD], annotated[beam_stages.DEAD]) | "AllDeadLetters" >> beam.Flatten()
    (annotated["annotated"]
     | "ToRows" >> beam.ParDo(ToAnnotationRow(
         config.model_info, config.columns, config.progress_dir))
     | "WriteAnnotations" >> beam.io.WriteToParquet(
         StorePath(join(config.output_dir, ANNOTATIONS_DIR, ANNOTATIONS_PREFIX), config.store),
         config.columns.schema(),
         file_name_suffix=PARQUET_SUFFIX,
         **PARQUET_BUFFER))
    (dead
     | "DeadLetterRows" >> beam.ParDo(ToDeadLetterRow(config.progress_dir))
     | "WriteDeadLetters" >> beam.io.WriteToParquet(
         StorePath(join(config.output_dir, DEAD_LETTERS_DIR, DEAD_LETTER_PREFIX), config.store),
         schemas.DEAD_LETTER_SCHEMA,
         file_name_suffix=PARQUET_SUFFIX, **PARQUET_BUFFER))
    return {"annotated": annotated["annotated"], "dead_letters": dead}
