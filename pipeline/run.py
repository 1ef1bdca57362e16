"""Entry point: `python -m pipeline.run --input GLOB --output DIR [options] [Beam options]`."""
from __future__ import annotations

import dataclasses
import json
import logging
import os
import signal
import sys
import threading
import time
from typing import Optional, Sequence

import apache_beam as beam
from apache_beam.io.filesystems import FileSystems
from apache_beam.options.pipeline_options import (
    DebugOptions, DirectOptions, PipelineOptions, PortableOptions, StandardOptions,
)

from models.handler import OnnxTokenClassifierHandler
from models.model_dir import ModelError, load_model_spec
from pipeline.graph import JobConfig, build
from pipeline import storage
from pipeline.layout import SUMMARY_NAME, join
from pipeline.options import (
    LarvatusOptions, OptionsError, help_text, pseudonym_key_source, resolve_redact_labels,
)
from pipeline.summary import query_counters, summarize
from transforms.budget import check_record_timeout
from transforms.encode import default_overlap
from transforms.patterns import PATTERN_LABELS, PatternSettings
from transforms.read import input_base
from transforms.realign import RedactionDecision
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
    input_pattern = storage.absolute(options.input)
    output_dir = storage.absolute(options.output)
    if storage.is_local(input_pattern) and os.path.isdir(input_pattern):
        raise OptionsError(
            f"--input {options.input} is a folder; give a file pattern such as "
            f"{join(options.input, '*.jsonl')} or {join(options.input, '**', '*.txt')}")
    if not FileSystems.match([input_pattern])[0].metadata_list:
        raise OptionsError(f"--input {options.input!r} matches no file")
    if storage.is_local(output_dir) and os.path.exists(output_dir) \
            and not os.path.isdir(output_dir):
        raise OptionsError(f"--output {options.output} is a file; give a folder")
    spec = load_model_spec(options.model)
    labels = resolve_redact_labels(options.redact_labels, spec.scheme.entity_types)
    if not labels:
        LOG.warning("--redact-labels none: the output is NOT redacted; it carries every name "
                    "and identifier of the input")
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
        record_timeout = check_record_timeout(options.record_timeout)
    except ValueError as error:
        raise _option_error("--record-timeout", error) from error
    try:
        policy = RedactionPolicy(
            labels=labels, style=options.placeholder,
            key_source=pseudonym_key_source(options), propagate=options.propagate)
    except ValueError as error:
        raise _option_error("--placeholder", error) from error
    model_types = labels & set(spec.scheme.entity_types)
    try:
        decision = RedactionDecision(model_types, options.redact_threshold) if model_types else None
    except ValueError as error:
        raise _option_error("--redact-threshold", error) from error
    try:
        patterns = PatternSettings(labels=labels & set(PATTERN_LABELS),
                                   phone_regions=tuple(_split_labels(options.phone_regions)))
    except ValueError as error:
        raise _option_error("--phone-regions", error) from error
    config = JobConfig(
        input_pattern=input_pattern, output_dir=output_dir, input_base=input_base(input_pattern),
        input_format=options.input_format, id_field=options.id_field,
        text_field=options.text_field, max_chars=options.max_chars, spec=spec,
        device=options.device, batch_tokens=options.batch_tokens,
        intra_op_threads=options.intra_op_threads, encode_settings=settings,
        aggregation=options.aggregation, policy=policy, keep_text=options.keep_text,
        patterns=patterns, decision=decision,
        processes_per_machine=processes_per_machine(options),
        model_copies=options.model_copies, large_model=options.large_model,
        record_timeout=record_timeout)
    try:
        config.handler()
    except ValueError as error:
        raise _option_error("--batch-tokens/--intra-op-threads/--model-copies", error) from error
    return config


def processes_per_machine(options: PipelineOptions) -> int:
    """SDK worker processes the chosen runner starts on each machine (0: one per core).

    DirectRunner: --direct_num_workers in multi_processing mode (0 there means
    one per core), else 1. Dataflow: one per vCPU unless the
    no_use_multiple_sdk_containers experiment asks for one. Portable runners
    (Flink, Spark, PortableRunner): --sdk_worker_parallelism (0: the runner
    decides, counted as one per core). The handler splits the cores between them.
    """
    standard = options.view_as(StandardOptions)
    runner = standard.runner if isinstance(standard.runner, str) else \
        type(standard.runner).__name__ if standard.runner else "DirectRunner"
    runner = runner.rsplit(".", 1)[-1]
    if runner in ("DirectRunner", "BundleBasedDirectRunner", "SwitchingDirectRunner",
                  "FnApiRunner", "TestDirectRunner"):
        direct = options.view_as(DirectOptions)
        if direct.direct_running_mode == "multi_processing":
            return direct.direct_num_workers if direct.direct_num_workers is not None else 1
        return 1
    if runner in ("DataflowRunner", "TestDataflowRunner"):
        experiments = options.view_as(DebugOptions).experiments or []
        return 1 if "no_use_multiple_sdk_containers" in experiments else 0
    parallelism = options.view_as(PortableOptions).sdk_worker_parallelism
    try:
        return max(0, int(parallelism))
    except (TypeError, ValueError):
        return 1


def _split_labels(value: str) -> list[str]:
    return [label.strip() for label in value.split(",") if label.strip()]


def _summary_options(config: JobConfig) -> dict:
    return {
        "input": config.input_pattern, "aggregation": config.aggregation,
        "redact_labels": sorted(config.policy.labels), "placeholder": config.policy.style,
        "redact_threshold": config.decision.threshold if config.decision else None,
        "phone_regions": list(config.patterns.phone_regions),
        "propagate": config.policy.propagate, "window_length": config.window_length,
        "window_overlap": config.window_overlap, "keep_text": config.keep_text,
        "record_timeout": config.record_timeout}


class _InterruptFlag:
    """Remembers a Ctrl-C (SIGINT) while the job runs, whatever Beam wraps it in."""

    def __init__(self):
        self.seen = False
        self._previous = None

    def _handle(self, signum, frame):
        self.seen = True
        # Beam logs the interrupted bundle's traceback; the user asked to stop, so hush it
        logging.getLogger("apache_beam").setLevel(logging.CRITICAL)
        raise KeyboardInterrupt

    def __enter__(self):
        if threading.current_thread() is threading.main_thread():
            self._previous = signal.signal(signal.SIGINT, self._handle)
        return self

    def __exit__(self, *exc):
        if self._previous is not None:
            signal.signal(signal.SIGINT, self._previous)
        return False


def run(argv: Optional[Sequence[str]] = None, test_pipeline: Optional[beam.Pipeline] = None) -> dict:
    """Runs the job and returns its summary (also written to OUTPUT/_SUMMARY.json).

    Every check comes first (options, model, output folder); the Parquet files are
    written into a fresh staging folder inside OUTPUT and moved into place, replacing an
    earlier run's files, only once the job has finished; `_SUMMARY.json` is written
    last, so its presence marks a complete run. A failed or interrupted run removes
    its staging folder and leaves the earlier output as it was.
    """
    argv = list(sys.argv[1:] if argv is None else argv)
    pipeline_options = PipelineOptions(argv)
    options = pipeline_options.view_as(LarvatusOptions)
    FileSystems.set_options(pipeline_options)   # credentials for a remote --model or key file
    config = make_config(options)
    try:
        storage.check_output(config.output_dir, options.overwrite)
    except storage.OutputError as error:
        raise OptionsError(str(error)) from error
    # Load the model once here too: a broken model fails now, not on a worker.
    probe = OnnxTokenClassifierHandler(config.spec, device=config.device).load_model()
    LOG.info("model %s loads on %s", config.spec.name, probe.device)
    launcher_device = probe.device
    del probe
    staging = storage.new_staging_dir(config.output_dir)
    started = time.perf_counter()
    interrupt = _InterruptFlag()
    try:
        with interrupt:
            pipeline = test_pipeline or beam.Pipeline(options=pipeline_options)
            build(pipeline, dataclasses.replace(config, output_dir=staging))
            result = pipeline.run()
            result.wait_until_finish()
            counters = query_counters(result)
    except BaseException as error:   # a failed job, or Ctrl-C: the earlier output stays
        storage.discard(staging)
        if interrupt.seen and not isinstance(error, KeyboardInterrupt):
            # Beam wraps a KeyboardInterrupt raised inside a DoFn in a RuntimeError
            raise KeyboardInterrupt from error
        raise
    summary = summarize(
        counters, wall_seconds=time.perf_counter() - started,
        model={**config.model_info, "path": config.spec.path, "launcher_device": launcher_device},
        options=_summary_options(config))
    storage.publish(staging, config.output_dir, summary)
    if not summary["metrics_available"]:
        LOG.error("the runner returned no metrics, so the record counts cannot be checked; "
                  "the output was written but is not known to be complete")
    elif not summary["counts_add_up"]:
        LOG.error("counts do not add up: %s in, %s out, %s dead-lettered",
                  summary["records_in"], summary["records_out"], summary["dead_lettered"])
    return summary


def main(argv: Optional[Sequence[str]] = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    if "-h" in argv or "--help" in argv:
        print(help_text())
        return 0
    logging.basicConfig(level=logging.INFO, format="%(levelname)s %(name)s: %(message)s")
    try:
        summary = run(argv)
    except (OptionsError, ModelError) as error:
        print(f"larvatus: error: {error}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("larvatus: interrupted; the run's temporary files were removed and any earlier "
              "output was left as it was", file=sys.stderr)
        return 130
    print(json.dumps({k: summary[k] for k in (
        "records_in", "records_out", "dead_lettered", "dead_lettered_by_reason", "counts_add_up",
        "entities_by_label", "wall_seconds")}, indent=2))
    return 0 if summary["counts_add_up"] else 1


def console_main() -> None:
    """The `larvatus` console script and `python -m pipeline.run`: main(), then exit."""
    status = main()
    if status == 130:
        # After Ctrl-C Beam's worker threads may still be unwinding (and re-raising the
        # interrupt at shutdown); the staging folder is gone already, so leave now.
        sys.stdout.flush()
        sys.stderr.flush()
        os._exit(status)
    sys.exit(status)


if __name__ == "__main__":
    console_main()
