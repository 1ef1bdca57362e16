"""`larvatus run` (also `python -m pipeline.run`): check everything, run the job with progress, write _SUMMARY.json."""
from __future__ import annotations

import dataclasses
import glob
import json
import logging
import os
import sys
import time
from typing import Optional, Sequence

import apache_beam as beam
from apache_beam.options.pipeline_options import PipelineOptions, StandardOptions

from models.handler import OnnxTokenClassifierHandler
from models.model_dir import ModelError, load_model_spec
from pipeline import arguments, logs, preflight
from pipeline.graph import JobConfig, build
from pipeline.layout import (ANNOTATIONS_PREFIX, DEAD_LETTER_PREFIX, REPORT_NAME, SUMMARY_NAME,
                             dead_letter_files)
from pipeline.options import (DEFAULT_ID_FIELD, LarvatusOptions, OptionsError, add_launcher_args,
                              job_parser, pseudonym_key)
from pipeline.progress import ProgressSettings, human_bytes, is_local_runner
from pipeline.summary import dead_letter_failure, query_counters, summarize
from transforms.encode import default_overlap
from transforms.redact import RedactionPolicy

LOG = logging.getLogger("larvatus")


def prepare_output(output_dir: str, overwrite: bool) -> None:
    """Refuses to mix a new run's shards with an old one's, unless told to replace them."""
    ours = [p for prefix in (ANNOTATIONS_PREFIX, DEAD_LETTER_PREFIX)
            for p in glob.glob(os.path.join(output_dir, prefix + "-*"))]
    ours += glob.glob(os.path.join(output_dir, SUMMARY_NAME))
    ours += glob.glob(os.path.join(output_dir, REPORT_NAME))
    if ours and not overwrite:
        raise OptionsError(
            f"{output_dir} already holds Larvatus output ({len(ours)} files); pass "
            f"--overwrite to replace them or choose another --output.")
    for path in ours:
        os.remove(path)
    os.makedirs(output_dir, exist_ok=True)


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
    files = preflight.input_files(options.input)
    if not files:
        raise OptionsError(f"--input {options.input!r} matches no file")
    preflight.check_fields(files, options.input_format, options.id_field, options.text_field)
    if not 0 <= options.max_dead_letter_ratio <= 1:
        raise OptionsError("--max-dead-letter-ratio must be between 0 and 1")
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
        input_pattern=options.input, output_dir=options.output,
        input_format=options.input_format, id_field=options.id_field or DEFAULT_ID_FIELD,
        text_field=options.text_field, max_chars=options.max_chars, spec=spec,
        device=options.device, batch_tokens=options.batch_tokens,
        intra_op_threads=options.intra_op_threads, encode_settings=settings,
        aggregation=options.aggregation, policy=policy, keep_text=options.keep_text)
    try:
        config.handler()
    except ValueError as error:
        raise _option_error("--batch-tokens/--intra-op-threads", error) from error
    return config


def _split_labels(value: str) -> list[str]:
    return [label.strip() for label in value.split(",") if label.strip()]


def _summary_options(config: JobConfig) -> dict:
    return {
        "input": config.input_pattern, "aggregation": config.aggregation,
        "redact_labels": sorted(config.policy.labels), "placeholder": config.policy.style,
        "propagate": config.policy.propagate, "window_length": config.window_length,
        "window_overlap": config.window_overlap, "keep_text": config.keep_text}


def run(argv: Optional[Sequence[str]] = None, test_pipeline: Optional[beam.Pipeline] = None,
        progress: Optional[ProgressSettings] = None) -> dict:
    """Runs the job and returns its summary (also written to OUTPUT/_SUMMARY.json).

    `argv` holds Larvatus and Beam options (checked for unknown ones by `main`,
    not here); `progress` says how to show progress while the job runs (none
    by default).
    """
    argv = list(sys.argv[1:] if argv is None else argv)
    pipeline_options = PipelineOptions(argv)
    options = pipeline_options.view_as(LarvatusOptions)
    config = make_config(options)
    prepare_output(config.output_dir, options.overwrite)
    # Load the model once here too: a broken model fails now, not on a worker.
    probe = OnnxTokenClassifierHandler(config.spec, device=config.device).load_model()
    LOG.info("model %s loads on %s", config.spec.name, probe.device)
    launcher_device = probe.device
    del probe
    files = preflight.input_files(config.input_pattern)
    size = preflight.total_bytes(files)
    LOG.info("reading %d file(s)%s matching %s", len(files),
             f" ({human_bytes(size)})" if size is not None else "", config.input_pattern)
    monitor = None
    if progress is not None and test_pipeline is None:
        local = is_local_runner(pipeline_options.view_as(StandardOptions).runner)
        monitor = progress.monitor(size, local)
    if monitor is not None and monitor.directory:
        config = dataclasses.replace(config, progress_dir=monitor.directory)
    started = time.perf_counter()
    pipeline = test_pipeline or beam.Pipeline(options=pipeline_options)
    build(pipeline, config)
    if monitor is None:
        result = pipeline.run()
        result.wait_until_finish()
    else:
        with monitor:
            result = pipeline.run()
            monitor.follow(result)
            result.wait_until_finish()
    summary = summarize(
        query_counters(result), wall_seconds=time.perf_counter() - started,
        model={**config.model_info, "path": config.spec.path, "launcher_device": launcher_device},
        options=_summary_options(config))
    with open(os.path.join(config.output_dir, SUMMARY_NAME), "w", encoding="utf-8") as handle:
        json.dump(summary, handle, indent=2)
    if not summary["counts_add_up"]:
        LOG.error("counts do not add up: %s in, %s out, %s dead-lettered",
                  summary["records_in"], summary["records_out"], summary["dead_lettered"])
    return summary


def _closing_lines(summary: dict, output_dir: str) -> list[str]:
    """What a finished job prints on stdout: counts, where things are, what to run next."""
    entities = ", ".join(f"{label} {count:,}" for label, count in sorted(
        summary["entities_by_label"].items(), key=lambda kv: -kv[1])) or "none"
    dead = summary["dead_lettered"]
    reasons = ", ".join(f"{r} {c:,}" for r, c in sorted(summary["dead_lettered_by_reason"].items()))
    lines = [
        f"records: {summary['records_in']:,} in, {summary['records_out']:,} annotated, "
        f"{dead:,} dead-lettered{f' ({reasons})' if dead else ''}",
        f"entities: {entities} (redacted: {', '.join(summary['options']['redact_labels'])})",
        f"words: {summary['words']:,} in {summary['wall_seconds']:,.1f} s",
        f"output: {os.path.abspath(output_dir)}",
        f"next: larvatus show {output_dir}   or   larvatus report {output_dir}  (an HTML page)",
    ]
    return lines


def main(argv: Optional[Sequence[str]] = None, prog: str = "larvatus run") -> int:
    """`larvatus run`: strict options, logging and progress, then the job; returns the exit status."""
    argv = list(sys.argv[1:] if argv is None else argv)
    checked, unchecked = arguments.split_unchecked(argv)
    if "-h" in checked or "--help" in checked:
        print(job_parser(prog, arguments.ArgumentParser).format_help())
        return 0
    try:
        launcher, job_argv = _launcher_options(checked, prog)
        if launcher.help_beam:
            print(_beam_help(prog))
            return 0
        arguments.check_job_arguments(job_argv, job_parser(prog, arguments.ArgumentParser))
    except arguments.UsageError as error:
        return arguments.report_usage_error(
            prog, error, f"See '{prog} --help' (Larvatus options) and "
                         f"'{prog} --help-beam' (Beam options).")
    verbosity = -1 if launcher.quiet else launcher.verbose
    logs.configure(prog, verbosity)
    job_argv = _with_harness_log_level(job_argv + unchecked, verbosity)
    progress = ProgressSettings(ProgressSettings.choose(launcher.progress, launcher.quiet),
                                launcher.progress_interval, prog)
    try:
        summary = run(job_argv, progress=progress)
    except (OptionsError, ModelError) as error:
        return arguments.report_usage_error(prog, error)
    output_dir = summary_output(job_argv)
    if not launcher.quiet:
        print("\n".join(_closing_lines(summary, output_dir)))
    status = 0
    if not summary["counts_add_up"]:
        status = 1
    options = PipelineOptions(job_argv).view_as(LarvatusOptions)
    failure = dead_letter_failure(summary, options.max_dead_letter_ratio)
    if failure:
        files = dead_letter_files(output_dir)
        where = files[0] if len(files) == 1 else os.path.join(output_dir, DEAD_LETTER_PREFIX + "-*")
        print(f"{prog}: error: {failure}. The output is written; each dead letter's reason "
              f"and detail are in {where}.", file=sys.stderr)
        status = 1
    return status


def summary_output(job_argv: Sequence[str]) -> str:
    return PipelineOptions(list(job_argv)).view_as(LarvatusOptions).output


def _launcher_options(argv: Sequence[str], prog: str):
    """(the launcher's own options, the rest: Larvatus and Beam options for the job)."""
    parser = arguments.ArgumentParser(prog=prog, add_help=False)
    add_launcher_args(parser)
    return parser.parse_known_args(list(argv))


def _with_harness_log_level(job_argv: list[str], verbosity: int) -> list[str]:
    """Quiets the DirectRunner's worker processes (multi_processing) unless told otherwise.

    Remote runners keep their own default: their workers log to the runner's service.
    """
    if any(a.split("=", 1)[0] == "--default_sdk_harness_log_level" for a in job_argv):
        return job_argv
    if not is_local_runner(PipelineOptions(job_argv).view_as(StandardOptions).runner):
        return job_argv
    return job_argv + [f"--default_sdk_harness_log_level={logs.harness_level(verbosity)}"]


def _beam_help(prog: str) -> str:
    parser = arguments.beam_parser()
    parser.prog = prog
    parser.usage = f"{prog} [Larvatus options] [Beam options]"
    parser.description = ("Beam's own options, accepted by larvatus run beside the Larvatus "
                          "options (any other argument is an error).")
    return parser.format_help()


if __name__ == "__main__":
    sys.exit(main())
