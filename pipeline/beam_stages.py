"""Beam's adapter of the declared stages: DoFns around stage chains, Beam counters, dead-letter outputs, the file reader."""
from __future__ import annotations

import gc
import time
from typing import Iterable, Optional, Sequence

import apache_beam as beam
from apache_beam import pvalue
from apache_beam.io.filesystem import CompressionTypes
from apache_beam.metrics import Metrics
from apache_beam.utils.windowed_value import WindowedValue

from larvatus.key_files import read_secret_file
from larvatus.transforms import formats
from larvatus.transforms import progress as progress_lib
from larvatus.transforms import read as read_lib
from larvatus.transforms import stage_template
from larvatus.transforms.counters import DEAD_LETTER_PREFIX, EMPTY_DOCUMENTS, NAMESPACE, TIME_PREFIX
from larvatus.transforms.records import DeadLetter, DeadLetterReason as Reason, Document
from larvatus.transforms.redact import KeySource
from larvatus.transforms.stage_template import Stage, safe_detail

DEAD = "dead_letter"


def count(name: str, value: int = 1) -> None:
    """Adds `value` to the Larvatus Beam counter `name` (a stage template `Count`)."""
    Metrics.counter(NAMESPACE, name).inc(value)


def dead_letter(letter: DeadLetter):
    """A dead letter on the dead-letter output, counted under its reason."""
    count(f"{DEAD_LETTER_PREFIX}{letter.reason}")
    return pvalue.TaggedOutput(DEAD, letter)


def _tagged(outcome):
    """A chain's outcome as a DoFn output: a dead letter (already counted) on its output."""
    return pvalue.TaggedOutput(DEAD, outcome) if isinstance(outcome, DeadLetter) else outcome


class BeamStageChain(beam.DoFn):
    """A chain of declared stages as one Beam step (`larvatus.transforms.stage_template.StageChain`).

    The chain owns the time budget, failure routing, timing and counting; this DoFn
    feeds it elements, `batch_size` at a time (they wait in the DoFn until that many
    have come or the bundle ends, and leave with their own timestamp and window), adds
    its counts to Beam counters and puts its dead letters on the `dead_letter` output.
    Its setup loads every stage, then freezes what they loaded (`freeze_loaded_objects`).
    """

    def __init__(self, stages: Sequence[Stage], record_timeout: Optional[float] = None,
                 batch_size: int = 1):
        super().__init__()
        if batch_size < 1:
            raise ValueError(f"batch_size must be at least 1; got {batch_size}")
        self._chain = stage_template.StageChain(stages, record_timeout)
        self._batch_size = batch_size
        self._waiting: list = []

    def __getstate__(self):
        return {**self.__dict__, "_waiting": []}

    @property
    def stages(self) -> tuple[Stage, ...]:
        return self._chain.stages

    def setup(self):
        self._chain.setup()
        freeze_loaded_objects()

    def teardown(self):
        self._chain.close()

    def start_bundle(self):
        self._waiting = []

    def process(self, element, timestamp=beam.DoFn.TimestampParam,
                window=beam.DoFn.WindowParam) -> Iterable:
        if self._batch_size == 1:
            [outcome] = self._chain.run([element], count)
            yield _tagged(outcome)
            return
        self._waiting.append((element, timestamp, window))
        if len(self._waiting) >= self._batch_size:
            yield from self._flush()

    def finish_bundle(self) -> Iterable:
        yield from self._flush()

    def _flush(self) -> Iterable:
        waiting, self._waiting = self._waiting, []
        if not waiting:
            return
        outcomes = self._chain.run([element for element, _, _ in waiting], count)
        for (_, timestamp, window), outcome in zip(waiting, outcomes):
            output = _tagged(outcome)
            if isinstance(output, pvalue.TaggedOutput):
                yield pvalue.TaggedOutput(
                    output.tag, WindowedValue(output.value, timestamp, (window,)))
            else:
                yield WindowedValue(output, timestamp, (window,))


def freeze_loaded_objects() -> None:
    """Moves every object alive now (the models, tokenizers and rule tables setup loaded)
    out of the cyclic garbage collector's reach, after one last collection.

    They live as long as the worker, and the collector's passes over the oldest
    generation walked them all again and again, inside the stages' time. Reference
    counting still frees them; only a reference cycle alive now and dropped later would
    outlive its use.
    """
    gc.collect()
    gc.freeze()


class _Timer:
    """Adds the wall time of a block to the `time_us_<stage>` counter."""

    def __init__(self, stage: str):
        self._stage = stage

    def __enter__(self):
        self._start = time.perf_counter()

    def __exit__(self, *exc):
        count(f"{TIME_PREFIX}{self._stage}", int((time.perf_counter() - self._start) * 1e6))


class StreamStage(beam.DoFn):
    """A DoFn stage whose `step` yields any number of results for one element (a file -> its records).

    The template times each result as it comes (`time_us_<stage>`), hands every one to
    `count_output` (dead letters, and None for something only counted, such as a blank
    line, included), passes Documents on and dead letters to their output. An exception
    part-way ends the element with the dead letter `failed` makes of it, told how many
    results came before (a dead letter's detail names the error's kind, never its message).
    """

    name: str = ""
    failure: Reason = Reason.UNREADABLE_FILE

    def step(self, element) -> Iterable:
        raise NotImplementedError

    def count_output(self, result) -> None:
        pass

    def failed(self, element, error: Exception, done: int) -> DeadLetter:
        raise NotImplementedError

    def process(self, element) -> Iterable:
        timer, done = _Timer(self.name), 0
        try:
            results = iter(self.step(element))
            while True:
                with timer:
                    result = next(results, StopIteration)
                if result is StopIteration:
                    return
                done += result is not None
                yield from self._route(result)
        except Exception as error:   # a file that breaks mid-way: record where
            yield from self._route(self.failed(element, error, done))

    def _route(self, result) -> Iterable:
        self.count_output(result)
        if isinstance(result, DeadLetter):
            yield dead_letter(result)
        elif result is not None:
            yield result


class ReadRecords(StreamStage):
    """A matched file -> its Documents, in the format `larvatus.transforms.formats` picks for it;
    undecodable records go to the dead-letter output."""

    name, failure = "read", Reason.UNREADABLE_FILE

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



class FailedInferenceToDeadLetters(beam.DoFn):
    """RunInference's own failed batches (keyed documents, exception) -> DeadLetters."""

    def process(self, failed):
        batch, error = failed
        for _, encoded in batch:
            document = encoded.segmented.document
            yield DeadLetter(document.source, Reason.INFERENCE_ERROR, safe_detail(error),
                             document.doc_id)
            count("dead_letter_inference_error")
