"""Entry point: `python -m pipeline.run --input GLOB --output DIR [options] [Beam options]`."""
from __future__ import annotations

import contextlib
import json
import logging
import signal
import sys
import threading
import time
from typing import Optional, Sequence

import apache_beam as beam
from apache_beam.io.filesystem import BeamIOError
from apache_beam.options.pipeline_options import PipelineOptions

from models.handler import OnnxTokenClassifierHandler
from models.model_dir import ModelError, load_model_spec
from pipeline import storage
from pipeline.graph import JobConfig, build
from pipeline.layout import SUMMARY_NAME
from pipeline.options import (
    LarvatusOptions, OptionsError, file_name_key_env, help_text, pseudonym_key,
)
from pipeline.storage import OutputError
from pipeline.summary import query_counters, summarize
from transforms.encode import default_overlap
from transforms.redact import RedactionPolicy

LOG = logging.getLogger("larvatus")


def _option_error(option: str, error: ValueError) -> OptionsError:
    return OptionsError(f"{option}: {error}")


def make_config(options: LarvatusOptions) -> JobConfig:
    """Checks the options and the model, failing loudly before any worker starts.

    Bounds live where each setting is defined (EncodeSettings, the handler, the
    redaction policy); their ValueErrors become option errors here. Touches no
    output file.
    """
    if not options.input or not options.output:
        raise OptionsError("--input and --output are required (see --help)")
    output = storage.absolute(options.output)
    files = _check_input(options.input, output)
    try:
        storage.check_output(output, options.overwrite)
    except OutputError as error:
        raise OptionsError(str(error)) from error
    key_env = file_name_key_env(options)
    spec = load_model_spec(options.model)
    unknown = set(_split_labels(options.redact_labels)) - set(spec.scheme.entity_types)
    if unknown:
        raise OptionsError(
            f"--redact-labels names {sorted(unknown)}, which the model does not predict; "
            f"it predicts {list(spec.scheme.entity_types)}")
    window_length = spec.max_length if options.window_length is None else options.window_length
    overlap = default_overlap(window_length) if options.window_overlap is None \
        else options.window_overlap
    try:
        settings = spec.encode_settings(spec.load_tokenizer(), overlap, window_length)
    except ValueError as error:
        raise _option_error("--window-length/--window-overlap", error) from error
    if options.max_chars < 1:
        raise OptionsError("--max-chars must be positive")
    try:
        policy = RedactionPolicy(
            labels=frozenset(_split_labels(options.redact_labels)), style=options.placeholder,
            key=pseudonym_key(options), propagate=options.propagate)
    except ValueError as error:
        raise _option_error("--placeholder", error) from error
    config = JobConfig(
        input_pattern=files.pattern, output_dir=output,
        input_format=options.input_format, id_field=options.id_field,
        text_field=options.text_field, max_chars=options.max_chars, spec=spec,
        device=options.device, batch_tokens=options.batch_tokens,
        intra_op_threads=options.intra_op_threads, encode_settings=settings,
        aggregation=options.aggregation, policy=policy, keep_text=options.keep_text,
        input_files=files, text_ids=options.text_ids, key_env=key_env)
    try:
        config.handler()
    except ValueError as error:
        raise _option_error("--batch-tokens/--intra-op-threads", error) from error
    return config


def _check_input(given: str, output: str) -> storage.InputFiles:
    """--input resolved (local paths absolute, a folder read recursively) and matching files."""
    try:
        files = storage.resolve_input(given, output)
        matched = storage.match_input(files)
    except (ValueError, BeamIOError) as error:   # no filesystem for the scheme, listing failed
        raise OptionsError(f"--input {given!r}: {error}") from error
    if not matched:
        if files.directory:
            raise OptionsError(
                f"--input {given!r} is a folder with no file to read (names starting with "
                f". or _ are skipped, and so is --output)")
        raise OptionsError(f"--input {given!r} matches no file")
    return files


def _split_labels(value: str) -> list[str]:
    return [label.strip() for label in value.split(",") if label.strip()]


def _summary_options(config: JobConfig) -> dict:
    # With hashed names no path at all goes into the output: a folder can be a name too.
    hashed = config.text_ids == "hash"
    return {
        "input": None if hashed else config.input_pattern,
        "input_base": None if hashed else config.files.base, "text_ids": config.text_ids,
        "aggregation": config.aggregation,
        "redact_labels": sorted(config.policy.labels), "placeholder": config.policy.style,
        "propagate": config.policy.propagate, "window_length": config.window_length,
        "window_overlap": config.window_overlap, "keep_text": config.keep_text}


class _Interrupts:
    """Notes SIGINT (Ctrl-C) during the job, so that an interrupt is never taken for a failure.

    Beam and native libraries may wrap the KeyboardInterrupt (tokenizers and ONNX
    Runtime turn it into a RuntimeError) or a DoFn may catch it; the flag says
    what happened whatever arrives. `deferred()` holds SIGINT back while a
    finished run is moved into place (a few renames), so that a folder is never
    left half replaced by a late Ctrl-C. Only in the main thread, and only where
    SIGINT is not ignored (a background job keeps ignoring it).
    """

    def __init__(self):
        self.requested = False
        self._active = (threading.current_thread() is threading.main_thread()
                        and signal.getsignal(signal.SIGINT) is signal.default_int_handler)

    def _raise(self, signum, frame):
        self.requested = True
        # Beam logs the interrupt once per stage it unwinds, with tracebacks; the job is
        # stopping on purpose, so the launcher's one line says it all.
        logging.disable(logging.CRITICAL)
        raise KeyboardInterrupt

    def _note(self, signum, frame):
        self.requested = True

    @contextlib.contextmanager
    def _handled_by(self, handler):
        if not self._active:
            yield
            return
        previous = signal.signal(signal.SIGINT, handler)
        try:
            yield
        finally:
            signal.signal(signal.SIGINT, previous)

    def watching(self):
        return self._handled_by(self._raise)

    def deferred(self):
        return self._handled_by(self._note)


def run(argv: Optional[Sequence[str]] = None, test_pipeline: Optional[beam.Pipeline] = None) -> dict:
    """Runs the job and returns its summary (also written to OUTPUT/_SUMMARY.json).

    Lifecycle: every check first (`make_config`, touching nothing); the job
    writes into a fresh OUTPUT/.larvatus-run-<hex>/; only once it has finished
    are its files moved into place (replacing an old run with --overwrite) and
    `_SUMMARY.json` written, last, with `"complete": true`. A failed or
    interrupted job removes its run folder and leaves the output as it was.
    """
    argv = list(sys.argv[1:] if argv is None else argv)
    pipeline_options = PipelineOptions(argv)
    options = pipeline_options.view_as(LarvatusOptions)
    config = make_config(options)
    # Load the model once here too: a broken model fails now, not on a worker.
    probe = OnnxTokenClassifierHandler(config.spec, device=config.device).load_model()
    LOG.info("model %s loads on %s", config.spec.name, probe.device)
    launcher_device = probe.device
    del probe
    interrupts = _Interrupts()
    output_existed = storage.is_directory(config.output_dir)
    run_dir = storage.start_run(config.output_dir)
    finishing = False
    try:
        with interrupts.watching():
            started = time.perf_counter()
            pipeline = test_pipeline or beam.Pipeline(options=pipeline_options)
            build(pipeline, config, run_dir)
            result = pipeline.run()
            result.wait_until_finish()
        if interrupts.requested:   # caught and swallowed somewhere inside the job
            raise KeyboardInterrupt
        summary = summarize(
            query_counters(result), wall_seconds=time.perf_counter() - started,
            model={**config.model_info, "path": config.spec.path,
                   "launcher_device": launcher_device},
            options=_summary_options(config))
        with interrupts.deferred():
            finishing = True
            summary = storage.finish_run(
                config.output_dir, run_dir, summary, replace=options.overwrite)
    except BaseException as error:
        if interrupts.requested:
            logging.disable(logging.NOTSET)
        if not finishing:   # once files move, a half-moved folder reads as incomplete: keep it
            _discard(run_dir, config.output_dir if not output_existed else None)
        if interrupts.requested and not isinstance(error, KeyboardInterrupt):
            raise KeyboardInterrupt from error
        raise
    if not summary["metrics_available"]:
        LOG.error("the runner reported no metrics: the output is complete but its counts "
                  "could not be checked (%s says metrics_available: false)", SUMMARY_NAME)
    elif not summary["counts_add_up"]:
        LOG.error("counts do not add up: %s in, %s out, %s dead-lettered",
                  summary["records_in"], summary["records_out"], summary["dead_lettered"])
    return summary


def _discard(run_dir: str, created_output: Optional[str]) -> None:
    try:
        storage.discard_run(run_dir, created_output)
    except Exception as error:  # never hide the job's own error behind a clean-up error
        LOG.error("could not remove the run folder %s: %s", run_dir, error)


def main(argv: Optional[Sequence[str]] = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    if "-h" in argv or "--help" in argv:
        print(help_text())
        return 0
    logging.basicConfig(level=logging.INFO, format="%(levelname)s %(name)s: %(message)s")
    try:
        summary = run(argv)
    except (OptionsError, ModelError, OutputError) as error:
        print(f"larvatus: error: {error}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("larvatus: interrupted: the run's temporary folder was removed, no summary was "
              "written, and the output folder holds what it held before.", file=sys.stderr)
        return 130
    print(json.dumps({k: summary[k] for k in (
        "records_in", "records_out", "dead_lettered", "dead_lettered_by_reason",
        "entities_by_label", "wall_seconds")}, indent=2))
    if not summary["metrics_available"]:
        print("larvatus: error: the runner reported no metrics, so the record counts could "
              "not be checked; the output was written (see _SUMMARY.json).", file=sys.stderr)
    return 0 if summary["counts_add_up"] else 1


if __name__ == "__main__":
    sys.exit(main())
