"""Larvatus on Apache Spark: the `--engine spark` driver of `larvatus run` and `annotate(df)` for DataFrames."""
from __future__ import annotations

import contextlib
import dataclasses
import functools
import logging
import os
import shutil
import sys
import threading
import time
import uuid
import zlib
from dataclasses import dataclass
from typing import Any, Iterable, Iterator, Optional, Union

from larvatus import schemas, storage
from larvatus import beam_stages
from larvatus.graph import STAGE_BATCH, JobConfig
from larvatus.pipeline_stages import StageRunner
from larvatus.layout import (
    ANNOTATIONS_DIR, ANNOTATIONS_PREFIX, DEAD_LETTER_PREFIX, DEAD_LETTERS_DIR, PARQUET_SUFFIX, join,
)
from larvatus.models.model_dir import location_kind
from larvatus.options import OptionsError
from larvatus.transforms.stage_template import Count, no_count
from larvatus.transforms.counters import NAMESPACE, RECORDS_OUT
from larvatus.transforms.read import validate_text
from larvatus.transforms.records import DeadLetter, DeadLetterReason as Reason, Document

LOG = logging.getLogger("larvatus")

ENGINES = ("beam", "spark")
DEFAULT_MASTER = "local[*]"
PARTITIONS_PER_CORE = 2        # document partitions per core Spark offers (smaller retries)
SPARK_TEMP_PREFIX = ".spark-"  # Spark's own output folders inside the staging folder
ROW, DEAD, COUNTERS, DOCUMENT = "row", "dead", "counters", "document"
# The DataFrame function's columns of the input (the caller's id and text) and its verdict
FRAME_SKIPPED = ("id", "source", "text")
FRAME_DEAD_LETTER = "dead_letter"


class SparkEngineError(OptionsError):
    """A Spark set-up that cannot run this job (a bad option, not bad data)."""


def _pyspark():
    try:
        import pyspark  # noqa: F401
    except ImportError:
        raise SparkEngineError("--engine spark needs pyspark: pip install '.[spark]' "
                               "in the Larvatus checkout (or the built wheel's [spark] extra)") \
            from None
    return pyspark


# ---------------------------------------------------------------------------------------------
# What executors receive, and what each Python worker keeps

@dataclass(frozen=True)
class SparkJob:
    """What every executor needs: the checked job settings (no secret: the pseudonym key is
    named by its file, read by each worker) and the model as the driver checked it."""

    config: JobConfig
    token: str                            # this job's id: the key of its worker cache
    shipped_model: Optional[str] = None   # the model folder's name in SparkFiles, when shipped


def _model_spec(job: SparkJob):
    """The model spec as this worker reaches it: the driver's, or its copy in SparkFiles
    (then checked by sha256 against the driver's as every other location is)."""
    spec = job.config.spec
    if job.shipped_model and location_kind(spec.location) == "local" \
            and not os.path.isdir(spec.location):
        from pyspark import SparkFiles

        spec = dataclasses.replace(spec, location=SparkFiles.get(job.shipped_model))
    return spec


class _Worker:
    """One Python worker's loaded pipeline for one job: the declared stages set up and the
    model loaded once, reused by every task (Spark reuses its Python workers between tasks)."""

    def __init__(self, job: SparkJob):
        settings = dataclasses.replace(job.config.settings, spec=_model_spec(job))
        config = dataclasses.replace(job.config, settings=settings)
        config.store.install()
        self.config = config
        self.reader = beam_stages.ReadRecords(
            config.input_format, config.id_field, config.text_field, config.max_chars,
            base=config.input_base, hash_text_ids=config.text_ids == "hash",
            text_id_key=config.policy.key_source, keep_fields=config.keep_fields)
        self.reader.setup()
        self._runner: Optional[StageRunner] = None
        self._lock = threading.Lock()

    def runner(self) -> StageRunner:
        """The in-process runner of the declared stages (`larvatus.pipeline_stages`), loaded
        on first use."""
        with self._lock:
            if self._runner is None:
                self._runner = StageRunner(self.config.settings,
                                           keep_fields=self.config.keep_fields)
            return self._runner


_WORKERS: dict[str, _Worker] = {}
_WORKERS_LOCK = threading.Lock()


def _worker(job: SparkJob) -> _Worker:
    """This Python worker's pipeline for `job`, kept on this imported module (Spark ships
    functions of `__main__` by value and would reload their globals for every task)."""
    with _WORKERS_LOCK:
        if job.token not in _WORKERS:
            _WORKERS.clear()   # one job at a time per worker: drop an earlier job's model
            _WORKERS[job.token] = _Worker(job)
        return _WORKERS[job.token]


class _Counters:
    """Larvatus's stage counters of one task, gathered as a Beam job gathers them."""

    def __init__(self):
        from apache_beam.metrics.execution import MetricsContainer
        from apache_beam.runners.worker import statesampler
        from apache_beam.utils.counters import CounterFactory

        self._statesampler = statesampler
        self._container = MetricsContainer("spark")
        self._sampler = statesampler.StateSampler("spark", CounterFactory())
        self._state = self._sampler.scoped_state("larvatus", "process",
                                                 metrics_container=self._container)
        self._counted: dict[str, int] = {}

    def count(self, name: str, value: int = 1) -> None:
        """A `Count` for the declared stages: the counters they write, by name."""
        self._counted[name] = self._counted.get(name, 0) + value

    @contextlib.contextmanager
    def counting(self):
        """Counts into this task's container inside the block (this thread only)."""
        previous = self._statesampler.get_current_tracker()
        self._statesampler.set_current_tracker(self._sampler)
        try:
            with self._state:
                yield
        finally:
            self._statesampler.set_current_tracker(previous)

    def totals(self) -> dict[str, int]:
        """The reader's counters (Beam metrics) and the stages' (counted here), added."""
        totals = {key.metric.name: int(value)
                  for key, value in self._container.get_cumulative().counters.items()
                  if key.metric.namespace == NAMESPACE}
        return _add_counters(totals, self._counted)


def _unwrap(output) -> Union[Document, DeadLetter, Any]:
    """A Beam stage's output as a plain value (a dead letter's TaggedOutput opened)."""
    from apache_beam import pvalue

    return output.value if isinstance(output, pvalue.TaggedOutput) else output


# ---------------------------------------------------------------------------------------------
# THE adapter: the one place where the Spark engine runs Larvatus's annotation stages

def annotate_documents(worker: _Worker, documents: list[Document],
                       count: Count = no_count) -> Iterator[Union[dict, DeadLetter]]:
    """Documents -> their annotation rows (dicts of the annotations schema) or dead letters,
    through the pipeline's one declared stage list, run in this process by `StageRunner`
    (the Redactor's runner): the same stages, order, counters, time bound and dead-letter
    reasons as the Beam graph. The Spark engine runs Larvatus's stages here and nowhere else
    (both `larvatus run --engine spark` and `annotate(df)`)."""
    runner = worker.runner()
    for outcome in runner.annotate(documents, count):
        if isinstance(outcome, DeadLetter):
            yield outcome
        else:
            count(RECORDS_OUT, 1)
            yield runner.row(outcome)


# ---------------------------------------------------------------------------------------------
# Partition functions (module functions: executors import them, never unpickle their code)

def _read_partition(job: SparkJob, files: Iterable[tuple[str, int]]) -> Iterator[tuple]:
    """(path, size) of input files -> ("document", Document) and ("dead", row), then this
    task's ("counters", {...})."""
    from apache_beam.io.filesystem import FileMetadata
    from apache_beam.io.fileio import ReadableFile

    worker = _worker(job)
    counters = _Counters()
    for path, size in files:
        with counters.counting():
            outputs = [_unwrap(output) for output in
                       worker.reader.process(ReadableFile(FileMetadata(path, size)))]
        for output in outputs:
            if isinstance(output, DeadLetter):
                yield DEAD, schemas.dead_letter_row(output)
            else:
                yield DOCUMENT, output
    yield COUNTERS, counters.totals()


def _annotate_partition(job: SparkJob, documents: Iterable[Document]) -> Iterator[tuple]:
    """Documents -> ("row", row) and ("dead", row), then this task's ("counters", {...})."""
    worker = _worker(job)
    counters = _Counters()
    chunk: list[Document] = []
    for document in documents:
        chunk.append(document)
        if len(chunk) == STAGE_BATCH * 4:
            yield from _annotated(worker, counters, chunk)
            chunk = []
    yield from _annotated(worker, counters, chunk)
    yield COUNTERS, counters.totals()


def _annotated(worker: _Worker, counters: _Counters, chunk: list[Document]) -> Iterator[tuple]:
    outputs = list(annotate_documents(worker, chunk, counters.count)) if chunk else []
    for output in outputs:
        if isinstance(output, DeadLetter):
            yield DEAD, schemas.dead_letter_row(output)
        else:
            yield ROW, output


def _kind_is(kind: str, item: tuple) -> bool:
    return item[0] == kind


def _not_document(item: tuple) -> bool:
    return item[0] != DOCUMENT


def _value(item: tuple):
    return item[1]


def _keyed_by_source(document: Document) -> tuple[str, Document]:
    return document.source, document


def _source_partition(source: str) -> int:
    """A stable hash of a record's source (Python's own hash of a string differs per process)."""
    return zlib.crc32(source.encode("utf-8", "surrogatepass"))


def _add_counters(left: dict, right: dict) -> dict:
    total = dict(left)
    for name, value in right.items():
        total[name] = total.get(name, 0) + value
    return total


# ---------------------------------------------------------------------------------------------
# The driver of `larvatus run --engine spark`

def check_options(options, config: JobConfig) -> JobConfig:
    """The job's settings for Spark, checked at start: what only Spark refuses, and ONNX
    Runtime's threads sized for Spark's cores per task (unless --intra-op-threads is set)."""
    _pyspark()
    if not shutil.which("java") and not os.environ.get("JAVA_HOME"):
        raise SparkEngineError("--engine spark needs a Java runtime (17 or later): none is on "
                               "PATH and JAVA_HOME is not set (Debian: apt-get install "
                               "openjdk-17-jre-headless)")
    if not storage.is_local(config.output_dir):
        raise SparkEngineError(
            f"--engine spark writes a local or shared-mount --output (Spark's Hadoop paths "
            f"are not Beam's {config.output_dir.split('://')[0]}:// store); run with the Beam "
            f"engine for an object-store output")
    key = config.policy.key_source
    if key is not None and key.file is None:
        raise SparkEngineError(
            "--engine spark reads the pseudonym key from a file on each executor: give "
            "--pseudonym-key-file (an environment variable would have to travel in "
            "spark.executorEnv, which the Spark UI shows to anyone who can open it)")
    return config


def _sized_for(config: JobConfig, spark) -> JobConfig:
    """ONNX Runtime's threads: Spark's cores per task unless --intra-op-threads is set."""
    threads = config.intra_op_threads or _task_cpus(spark)
    return dataclasses.replace(config, processes_per_machine=1, settings=dataclasses.replace(
        config.settings, intra_op_threads=threads))


def _task_cpus(spark) -> int:
    try:
        return max(1, int(spark.conf.get("spark.task.cpus", "1")))
    except ValueError:
        return 1


@contextlib.contextmanager
def spark_session(master: str) -> Iterator[Any]:
    """The active SparkSession (a notebook's, a test's), or a new one on `master`, stopped
    at the end only when this call started it."""
    _pyspark()
    from pyspark.sql import SparkSession

    active = SparkSession.getActiveSession()
    if active is not None:
        yield active
        return
    os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
    os.environ.setdefault("PYSPARK_DRIVER_PYTHON", sys.executable)
    try:
        session = (SparkSession.builder.master(master).appName("larvatus")
                   .config("spark.ui.showConsoleProgress", "false").getOrCreate())
    except Exception as error:
        raise SparkEngineError(f"--spark-master {master}: Spark did not start "
                               f"({type(error).__name__}: {str(error)[:200]})") from None
    session.sparkContext.setLogLevel("ERROR")
    try:
        yield session
    finally:
        session.stop()


def _ship_model(spark, config: JobConfig) -> Optional[str]:
    """A local model folder, sent to every executor with SparkContext.addFile unless the
    master runs them on this machine (they read it where it is); its SparkFiles name."""
    if location_kind(config.spec.location) != "local" \
            or spark.sparkContext.master.startswith("local"):
        return None
    spark.sparkContext.addFile(config.spec.location, recursive=True)
    return os.path.basename(config.spec.location.rstrip("/"))


def run_job(config: JobConfig, master: str, files: list) -> dict[str, int]:
    """Runs the job on Spark, writing Parquet into `config.output_dir` (a staging folder)
    under the names the Beam engine gives them; returns the job's counters.

    Every task's rows, dead letters and counters leave it together, so a task that Spark
    retries (a lost executor, a killed Python worker) counts once.
    """
    from pyspark import StorageLevel

    with spark_session(master) as spark:
        sc = spark.sparkContext
        config = _sized_for(config, spark)
        job = SparkJob(config, uuid.uuid4().hex, _ship_model(spark, config))
        paths = [(f.path, f.size_in_bytes) for f in files if not f.path.endswith("/")]
        read = sc.parallelize(paths, max(1, len(paths))) \
            .mapPartitions(functools.partial(_read_partition, job)) \
            .persist(StorageLevel.MEMORY_AND_DISK)
        partitions = max(1, sc.defaultParallelism * PARTITIONS_PER_CORE)
        annotated = read.filter(functools.partial(_kind_is, DOCUMENT)).map(_value) \
            .map(_keyed_by_source).partitionBy(partitions, _source_partition).values() \
            .mapPartitions(functools.partial(_annotate_partition, job))
        outcomes = read.filter(_not_document).union(annotated) \
            .persist(StorageLevel.MEMORY_AND_DISK)
        try:
            _write(spark, outcomes, ROW, config.columns.schema(),
                   join(config.output_dir, ANNOTATIONS_DIR), ANNOTATIONS_PREFIX, None)
            _write(spark, outcomes, DEAD, schemas.DEAD_LETTER_SCHEMA,
                   join(config.output_dir, DEAD_LETTERS_DIR), DEAD_LETTER_PREFIX, 1)
            counters = outcomes.filter(functools.partial(_kind_is, COUNTERS)).map(_value) \
                .fold({}, _add_counters)
        finally:
            outcomes.unpersist()
            read.unpersist()
        return counters


def _write(spark, outcomes, kind: str, arrow_schema, folder: str, prefix: str,
           files: Optional[int]) -> None:
    """Writes the rows of one kind as Parquet with Larvatus's schema, then names the files
    as the Beam engine does (`annotations-00000-of-00002.parquet`)."""
    from pyspark.sql.pandas.types import from_arrow_schema

    rows = outcomes.filter(functools.partial(_kind_is, kind)).map(_value)
    frame = spark.createDataFrame(rows, from_arrow_schema(arrow_schema))
    if files is not None:
        frame = frame.coalesce(files)
    written = join(os.path.dirname(folder), SPARK_TEMP_PREFIX + os.path.basename(folder))
    frame.write.mode("error").parquet(written)
    parts = sorted(name for name in os.listdir(written) if name.endswith(PARQUET_SUFFIX))
    os.makedirs(folder, exist_ok=True)
    for index, name in enumerate(parts):
        os.replace(join(written, name),
                   join(folder, f"{prefix}-{index:05d}-of-{len(parts):05d}{PARQUET_SUFFIX}"))
    storage.discard(written)


# ---------------------------------------------------------------------------------------------
# `larvatus.spark.annotate(df)`: the annotation columns beside a DataFrame's own

def annotate(df, text_col: str = "text", id_col: Optional[str] = "id", **options: Any):
    """A Spark DataFrame with the annotation columns of `larvatus run` beside `df`'s own.

    Takes the options of `larvatus.Redactor` (model, redact_labels, placeholder, ...).
    Each row gets `redacted_text`, `language`, `entities`, `replacements`, `audit`,
    `model` (and the ML columns when asked for), equal to the Redactor's for the same text,
    and `dead_letter` (`reason`, `detail`), null unless the row could not be annotated:
    then the annotation columns are null and the reason says why (a missing text,
    too_large, timeout...). Nothing is dropped. `id_col` names the rows' ids (checked to
    exist; None when there is none): the input's own columns stay, so no id is added. With `placeholder="pseudonym"` give `pseudonym_key_file`,
    a file every executor can read.
    """
    _pyspark()
    from pyspark.sql.pandas.types import from_arrow_schema
    from pyspark.sql.types import StructField, StructType

    config = frame_config(text_col, id_col or "id", options)
    names = set(df.columns)
    for needed in (text_col, id_col):
        if needed is not None and needed not in names:
            raise ValueError(f"annotate(): the DataFrame has no column {needed!r} "
                             f"(it has {sorted(names)})")
    added = _frame_schema(config)
    clashes = sorted(names & {field.name for field in added})
    if clashes:
        raise ValueError(f"annotate(): the DataFrame already has columns {clashes}, which "
                         f"the annotations add; rename them first")
    spark = df.sparkSession
    config = _sized_for(config, spark)
    job = SparkJob(config, uuid.uuid4().hex, _ship_model(spark, config))
    spark_added = from_arrow_schema(added)
    schema = StructType([*df.schema.fields,
                         *(StructField(f.name, f.dataType, True) for f in spark_added.fields)])
    return df.mapInArrow(functools.partial(_annotate_batches, job, text_col, id_col), schema)


def frame_config(text_col: str, id_col: str, options: dict) -> JobConfig:
    """The JobConfig of `annotate(df)`: the Redactor's options, checked as it checks them."""
    from larvatus.api import options_namespace
    from larvatus.settings import settings_from_options

    settings = settings_from_options(options_namespace(dict(options)))
    config = JobConfig(
        input_pattern="", output_dir="", input_format="auto", id_field=id_col,
        text_field=text_col, settings=settings)
    key = config.policy.key_source
    if key is not None and key.file is None:
        raise SparkEngineError("annotate(placeholder='pseudonym') reads the key from a file on "
                               "each executor: give pseudonym_key_file")
    return config


def _frame_schema(config: JobConfig):
    import pyarrow as pa

    annotation = config.columns.schema()
    fields = [field for field in annotation if field.name not in FRAME_SKIPPED]
    dead = pa.field(FRAME_DEAD_LETTER, pa.struct([("reason", pa.string()),
                                                  ("detail", pa.string())]))
    return pa.schema([*fields, dead])


def _annotate_batches(job: SparkJob, text_col: str, id_col: Optional[str],
                      batches: Iterable) -> Iterator:
    """mapInArrow's function: each Arrow batch with its annotation columns added."""
    import pyarrow as pa

    worker = _worker(job)
    counters = _Counters()
    added = _frame_schema(worker.config)
    for batch in batches:
        texts = batch.column(text_col).to_pylist()
        ids = batch.column(id_col).to_pylist() if id_col is not None else range(len(texts))
        results: dict[str, Union[dict, DeadLetter]] = {}
        documents = []
        for index, (text, doc_id) in enumerate(zip(texts, ids)):
            source = f"row {index}"
            checked = validate_text(None if doc_id is None else str(doc_id), text, source,
                                    worker.config.max_chars)
            if isinstance(checked, DeadLetter):
                results[source] = checked
            else:
                documents.append(checked)
        for output in annotate_documents(worker, documents, counters.count):
            results[output.source if isinstance(output, DeadLetter) else output["source"]] \
                = output
        rows = []
        for index in range(len(texts)):
            result = results[f"row {index}"]
            if isinstance(result, DeadLetter):
                rows.append({FRAME_DEAD_LETTER: {"reason": result.reason,
                                                 "detail": result.detail}})
            else:
                rows.append({name: result.get(name) for name in added.names})
        table = pa.Table.from_pylist(rows, schema=added)
        yield pa.RecordBatch.from_arrays(
            [*batch.columns, *(column.combine_chunks() for column in table.columns)],
            names=[*batch.schema.names, *added.names])
