"""The in-process API: a Redactor runs the declared stages on texts in this process, with no Beam job."""
from __future__ import annotations

import argparse
import os
import threading
from collections.abc import Iterable, Iterator, Mapping
from typing import Any, Optional, Sequence, Union

from larvatus.models.model_dir import EMBEDDED_DEFAULT
from larvatus.options import OptionsError, job_parser
from larvatus.pipeline_stages import StageRunner
from larvatus.settings import settings_from_options
from larvatus.transforms.read import validate_text
from larvatus.transforms.records import AnnotatedDocument, DeadLetter, Document

# `larvatus run` options that a Redactor does not take, and why: each of the command's
# other options is a keyword argument of the same name (underscores for dashes).
NOT_KEYWORDS = {
    "input": "the texts are the arguments of annotate, pipe and annotate_frame",
    "output": "rows are returned, not written",
    "input_format": "the texts are the arguments, not files",
    "id_field": "ids are annotate's `ids`, annotate_frame's `id_column`, a record's `id`",
    "text_field": "texts are annotate's texts, annotate_frame's `text_column`",
    "keep_fields": "your own data stays beside the rows (annotate_frame keeps the frame's index)",
    "text_ids": "ids of text files read from a folder",
    "overwrite": "nothing is written",
    "max_dead_letter_ratio": "a job's exit status; pipe yields every dead letter",
    "model_copies": "Beam's model sharing across a machine's worker processes",
    "large_model": "Beam's model sharing across a machine's worker processes",
    "share_model": "Beam's DirectRunner worker processes",
    "engine": "the Redactor runs the stages in this process (larvatus.spark for DataFrames)",
    "spark_master": "the Redactor runs the stages in this process (larvatus.spark for DataFrames)",
}
MESSAGE_OPTIONS = ("verbose", "quiet", "progress", "progress_interval", "help_beam")
DEFAULT_BATCH = 64   # texts run together by pipe (they share inference batches)

PipeResult = Union[dict, DeadLetter]


def option_table() -> dict[str, argparse.Action]:
    """Every option of `larvatus run`'s job (not its messages), by keyword name."""
    parser = job_parser("larvatus.Redactor")
    return {action.dest: action for action in parser._actions  # pylint: disable=protected-access
            if action.option_strings and action.dest not in MESSAGE_OPTIONS
            and action.dest != "help"}


def keyword_options() -> tuple[str, ...]:
    """The keyword arguments a Redactor takes: every job option that is not in NOT_KEYWORDS."""
    return tuple(dest for dest in option_table() if dest not in NOT_KEYWORDS)


class DocumentError(ValueError):
    """A text the Redactor could not annotate: its index, the reason and detail a dead letter
    of `larvatus run` would carry (never the text itself)."""

    def __init__(self, index: int, doc_id: Optional[str], reason: str, detail: str):
        super().__init__(f"text {index} (id {doc_id!r}): {reason}: {detail}")
        self.index, self.doc_id, self.reason, self.detail = index, doc_id, reason, detail


def _option_name(action: argparse.Action) -> str:
    shown = [name for name in action.option_strings if "_" not in name]
    return (shown or action.option_strings)[0]


def _value(action: argparse.Action, keyword: str, value: Any):
    """A keyword's value as `larvatus run` would have parsed it from its command line, or
    OptionsError naming the option (the command's checks: type, choices, flags)."""
    name = f"{_option_name(action)} ({keyword}=)"
    if isinstance(action, (argparse._StoreTrueAction, argparse._StoreFalseAction)):
        if not isinstance(value, bool):
            raise OptionsError(f"{name}: must be True or False, not {value!r}")
        return value
    if value is None:
        if action.default is None:
            return None
        raise OptionsError(f"{name}: must not be None (the default is {action.default!r})")
    if isinstance(value, os.PathLike):
        value = os.fspath(value)
    if keyword in ("keep_terms", "always_redact", "label_thresholds") \
            and not isinstance(value, (str, bytes)):
        return value   # a list of terms, a {label: threshold} mapping: checked by the builder
    if isinstance(value, (list, tuple, set, frozenset)):
        if not all(isinstance(item, str) for item in value):
            raise OptionsError(f"{name}: a list must hold strings, not {value!r}")
        value = ",".join(value)
    if isinstance(value, bool) or not isinstance(value, (str, int, float)):
        raise OptionsError(f"{name}: {value!r} is not a valid value")
    text = value if isinstance(value, str) else repr(value)
    try:
        parsed = action.type(text) if action.type is not None else text
    except (TypeError, ValueError, argparse.ArgumentTypeError) as error:
        raise OptionsError(f"{name}: invalid value {value!r} ({error})") from None
    if action.choices is not None and parsed not in action.choices:
        raise OptionsError(f"{name}: invalid choice {value!r} (choose from "
                           f"{', '.join(map(str, action.choices))})")
    return parsed


def options_namespace(chosen: Mapping[str, Any]) -> argparse.Namespace:
    """`larvatus run`'s option namespace: its defaults, with these keywords checked as the
    command checks its arguments. An unknown keyword is a TypeError."""
    table = option_table()
    allowed = keyword_options()
    unknown = sorted(set(chosen) - set(allowed))
    if unknown:
        raise TypeError(f"Redactor() got unknown options {unknown}; it takes {list(allowed)}")
    namespace = argparse.Namespace(**{dest: action.default for dest, action in table.items()})
    for keyword, value in chosen.items():
        setattr(namespace, keyword, _value(table[keyword], keyword, value))
    return namespace


class Redactor:
    """Annotates and redacts texts in this process, as `larvatus run` does with the same options.

    It runs the pipeline's one declared stage list (`larvatus.pipeline_stages`): the same
    stages, order, per-record time bound and dead-letter reasons as the job. The model
    loads once, in the constructor. Options are those of `larvatus run` (`keyword_options()`,
    underscores for dashes), checked the same way: a bad one raises
    `larvatus.options.OptionsError` (a ValueError) naming the option, a bad model
    `larvatus.models.model_dir.ModelError`. Thread-safe: calls from several threads take
    turns on one lock; for parallel work use `pipe(..., n_process=N)`.
    """

    def __init__(self, model: str = EMBEDDED_DEFAULT, redact_labels: Any = "default",
                 **options: Any):
        self._options = {"model": model, "redact_labels": redact_labels, **options}
        self.settings = settings_from_options(options_namespace(self._options))
        self._runner = StageRunner(self.settings)
        self._lock = threading.Lock()

    @property
    def device(self) -> str:
        """Where the model runs: cpu or cuda."""
        return self._runner.stages.model.model.device

    @property
    def schema(self):
        """The pyarrow schema of this Redactor's rows (`larvatus run`'s annotations schema)."""
        return self._runner.schema

    @property
    def model_info(self) -> dict:
        """The `model` column of every row: the model's name and sha256."""
        return self.settings.model_info

    def redact(self, text: str) -> str:
        """The text with its redacted entities replaced by placeholders."""
        return self.annotate([text])[0]["redacted_text"]

    def annotate(self, texts: Iterable[str], ids: Optional[Sequence[str]] = None,
                 sources: Optional[Sequence[str]] = None) -> list[dict]:
        """One dict per text with the columns of an annotations row, in the schema's order
        (`id`, `source`, `redacted_text`, `language`, `entities`, `replacements`, `audit`,
        `model`; `text` with keep_text, the ML columns with emit_token_ids/emit_embeddings).

        `ids` default to the texts' indices ("0", "1", ...), `sources` to `texts[N]`. A text
        that cannot be annotated (too long, not a string, over the time bound...) raises
        DocumentError; `pipe` yields such texts' dead letters instead.
        """
        texts = _texts(texts, "annotate")
        ids = [str(i) for i in range(len(texts))] if ids is None else list(ids)
        sources = [f"texts[{i}]" for i in range(len(texts))] if sources is None else list(sources)
        if not len(texts) == len(ids) == len(sources):
            raise ValueError(f"{len(texts)} texts but {len(ids)} ids and {len(sources)} sources")
        outcomes = self._outcomes(list(zip(texts, ids, sources)))
        for index, outcome in enumerate(outcomes):
            if isinstance(outcome, DeadLetter):
                raise DocumentError(index, outcome.doc_id, outcome.reason, outcome.detail)
        return [self._runner.row(outcome) for outcome in outcomes]

    def pipe(self, records: Iterable[Any], batch_size: int = DEFAULT_BATCH,
             n_process: int = 1) -> Iterator[PipeResult]:
        """Streams records through the pipeline, like spaCy's `nlp.pipe`: yields, in input
        order, one annotations row (a dict, as `annotate` gives) or one
        `larvatus.DeadLetter` (`source`, `reason`, `detail`, `doc_id`; never the text)
        per record, never raising for one bad record.

        A record is a text, or a mapping with `text` and optionally `id` and `source`;
        ids default to the record's position ("0", "1", ...), sources to `records[N]`.
        `batch_size` records are read and run together; `n_process` > 1 runs batches in
        that many worker processes, each loading its own model (rows are the same).
        Each record has the job's time bound per stage (`record_timeout`).
        """
        if isinstance(records, (str, bytes)):
            raise TypeError("pipe takes an iterable of records (texts or dicts), not one string")
        if not isinstance(batch_size, int) or batch_size < 1:
            raise ValueError(f"batch_size must be a positive integer, not {batch_size!r}")
        if not isinstance(n_process, int) or n_process < 1:
            raise ValueError(f"n_process must be a positive integer, not {n_process!r}")
        batches = _batches(records, batch_size)
        if n_process == 1:
            for batch in batches:
                yield from self._pipe_batch(batch)
            return
        yield from _pipe_in_processes(self._options, batches, n_process)

    def _pipe_batch(self, batch: list[tuple[Any, str, str]]) -> list[PipeResult]:
        return [outcome if isinstance(outcome, DeadLetter) else self._runner.row(outcome)
                for outcome in self._outcomes(batch)]

    def estimate(self, texts: Iterable[str], ids: Optional[Sequence[str]] = None,
                 sample: Optional[int] = None, seed: int = 0, copies: Optional[int] = None,
                 items_per_copy: int = 3, kinds: Optional[Sequence[str]] = None):
        """How much personal data gets through on these texts: known items are planted into
        copies of a seeded sample of them and redacted with this Redactor's options.

        Returns a `larvatus.estimate.Estimate`: `rows` per kind and context (planted,
        hidden, partly, missed, `recall`, 95% Wilson `interval`), `outcomes` per item and the
        share of the texts' own words kept. The texts themselves are never changed.
        """
        from larvatus.estimate import run_estimate
        from larvatus.transforms.planting import KINDS

        if isinstance(texts, str):
            raise TypeError("estimate() takes a list of texts, not one string")
        texts = list(texts)
        ids = [str(i) for i in range(len(texts))] if ids is None else [str(i) for i in ids]
        if len(ids) != len(texts):
            raise ValueError(f"{len(texts)} texts but {len(ids)} ids")
        return run_estimate(self, list(zip(ids, texts)), sample, seed, copies, items_per_copy,
                            tuple(kinds) if kinds is not None else KINDS)

    def annotate_frame(self, frame, text_column: str = "text", id_column: Optional[str] = None):
        """A pandas DataFrame of annotation rows on the input frame's index, one per row that
        could be annotated; ids come from `id_column`, else from the index labels.

        A row that cannot be annotated is left out and its dead letter (`id`, `source`,
        `reason`, `detail`) is a row of the DataFrame in `result.attrs["dead_letters"]`, on
        the same index label: the other rows go on.
        """
        import pandas as pd

        from larvatus.schemas import dead_letter_row

        keys = list(frame[id_column]) if id_column is not None else list(frame.index)
        # A missing value (None, NaN, pd.NA) is a record with no text: `missing_text`.
        records = [{"text": None if _missing(text) else text, "id": str(key),
                    "source": f"{text_column}[{label}]"}
                   for text, key, label in zip(frame[text_column], keys, frame.index)]
        results = list(self.pipe(records, batch_size=len(records) or 1))
        good = [i for i, result in enumerate(results) if not isinstance(result, DeadLetter)]
        bad = [i for i, result in enumerate(results) if isinstance(result, DeadLetter)]
        annotated = pd.DataFrame([results[i] for i in good], index=frame.index[good])
        annotated.attrs["dead_letters"] = pd.DataFrame(
            [dead_letter_row(results[i]) for i in bad], index=frame.index[bad],
            columns=["id", "source", "reason", "detail"])
        return annotated

    def _outcomes(self, items: list[tuple[Any, str, str]]) -> list[Union[AnnotatedDocument, DeadLetter]]:
        """Each (text, id, source): its AnnotatedDocument or DeadLetter, in order."""
        checked = [validate_text(doc_id, text, source, self.settings.max_chars)
                   for text, doc_id, source in items]
        documents = [c for c in checked if isinstance(c, Document)]
        with self._lock:
            annotated = iter(self._runner.annotate(documents))
        return [c if isinstance(c, DeadLetter) else next(annotated) for c in checked]


def _missing(value: Any) -> bool:
    """Whether a frame's cell is a missing value (None, NaN, NaT, pd.NA), not a text."""
    import pandas as pd

    return not isinstance(value, str) and bool(pd.api.types.is_scalar(value) and pd.isna(value))


def _texts(texts: Any, method: str) -> list:
    if isinstance(texts, (str, bytes)):
        raise TypeError(f"{method} takes a list of texts, not one string: use redact(text) "
                        f"or {method}([text])")
    return list(texts)


def _record(position: int, record: Any) -> tuple[Any, str, str]:
    """(text, id, source) of one pipe record; a malformed record keeps what it has, and the
    text check (validate_text) dead-letters it."""
    if isinstance(record, Mapping):
        doc_id = record.get("id")
        return (record.get("text"), str(position) if doc_id is None else str(doc_id),
                str(record.get("source") or f"records[{position}]"))
    return record, str(position), f"records[{position}]"


def _batches(records: Iterable[Any], size: int) -> Iterator[list[tuple[Any, str, str]]]:
    batch: list = []
    for position, record in enumerate(records):
        batch.append(_record(position, record))
        if len(batch) >= size:
            yield batch
            batch = []
    if batch:
        yield batch


_WORKER_REDACTOR: Optional[Redactor] = None


def _start_worker(options: dict) -> None:
    global _WORKER_REDACTOR
    _WORKER_REDACTOR = Redactor(**options)


def _worker_batch(batch: list) -> list[PipeResult]:
    return _WORKER_REDACTOR._pipe_batch(batch)  # pylint: disable=protected-access


def _pipe_in_processes(options: dict, batches: Iterator[list], processes: int) -> Iterator[PipeResult]:
    """Batches run in `processes` spawned worker processes (each its own Redactor), in order."""
    import multiprocessing

    context = multiprocessing.get_context("spawn")   # no fork of a process holding ONNX threads
    with context.Pool(processes, initializer=_start_worker, initargs=(options,)) as pool:
        for results in pool.imap(_worker_batch, batches):
            yield from results
