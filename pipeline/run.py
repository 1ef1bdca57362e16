"""Entry point: `python -m larvatus.run --input GLOB --output DIR [options] [Beam options]`."""
from __future__ import annotations

import dataclasses
import errno
import json
import logging
import os
import shlex
import shutil
import signal
import sys
import threading
import time
from typing import Optional, Sequence

import apache_beam as beam
from apache_beam.io.filesystems import FileSystems
from apache_beam.options.pipeline_options import PipelineOptions

from larvatus.models.handler import OnnxTokenClassifier
from larvatus.models.model_dir import EMBEDDED_DEFAULT, ModelError
from larvatus.models.runners import (
    available_cores, processes_per_machine, runner_name, runs_locally,
)
from larvatus.graph import JobConfig, build
from larvatus import arguments, logs, preflight, remote, storage
from larvatus.layout import DEAD_LETTERS_DIR, ML_TOKENIZER_NAME, join
from larvatus.options import (
    DEFAULT_ID_FIELD, LarvatusOptions, OptionsError, add_launcher_args, check_beam_options,
    help_text, job_parser, resolve_keep_fields,
)
from larvatus.progress import ProgressSettings, human_bytes
from larvatus.sharing import SharingError, plan_sharing
from larvatus.summary import (
    check_files_read, check_published, checks, dead_letter_failure, query_counters, summarize,
)
from larvatus.settings import (  # noqa: F401  (the settings builders, importable from here too)
    ml_settings, option_error, parse_label_thresholds, read_labelled_terms, read_terms,
    settings_from_options,
)
from larvatus.transforms.mlout import placeholder_token, tokenizer_with_placeholders
from larvatus.transforms.read import input_base

LOG = logging.getLogger("larvatus")


def _check_input(options: LarvatusOptions, input_pattern: str, output_dir: str) -> tuple[str, ...]:
    """The input as options name it: files (not a folder) matched, outside --output, with
    the fields named, and an id field that is not the text. Returns the --keep-fields."""
    if (storage.is_local(input_pattern) or not any(c in input_pattern for c in "*?[")) \
            and storage.is_folder(input_pattern):
        raise OptionsError(preflight.folder_hint(options.input))
    if options.id_field == options.text_field:
        raise OptionsError(
            f"--id-field and --text-field both name {options.text_field!r}: every id would be "
            f"a copy of its whole text; name the id field, or leave --id-field out")
    files = preflight.input_files(input_pattern)
    if not files:
        raise OptionsError(f"--input {options.input!r} matches no file")
    preflight.check_output_outside_input(input_pattern, files, output_dir)
    preflight.check_matched(input_pattern, files)
    keep_fields = resolve_keep_fields(options.keep_fields, options.text_field)
    preflight.check_fields(
        files, options.input_format,
        options.id_field if options.id_field != DEFAULT_ID_FIELD else None, options.text_field,
        keep_fields)
    preflight.check_text_ids(files, options.input_format, options.text_ids)
    preflight.check_refusals(files, options.input_format)
    return keep_fields


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
    keep_fields = _check_input(options, input_pattern, output_dir)
    if not 0 <= options.max_dead_letter_ratio <= 1:
        raise OptionsError("--max-dead-letter-ratio must be between 0 and 1")
    if storage.is_local(output_dir) and os.path.exists(output_dir) \
            and not os.path.isdir(output_dir):
        raise OptionsError(f"--output {options.output} is a file; give a folder")
    config = JobConfig(
        input_pattern=input_pattern, output_dir=output_dir, input_base=input_base(input_pattern),
        text_ids=options.text_ids,
        input_format=options.input_format, id_field=options.id_field,
        text_field=options.text_field,
        processes_per_machine=processes_per_machine(options),
        model_copies=options.model_copies, large_model=options.large_model,
        keep_fields=keep_fields, settings=settings_from_options(options))
    try:
        config.handler()
    except ValueError as error:
        raise option_error("--batch-tokens/--intra-op-threads/--model-copies", error) from error
    return config


def ml_outputs_summary(config: JobConfig) -> dict:
    """What `_SUMMARY.json` says of the ML outputs: the tokenizer file and placeholder ids, the vectors' origin."""
    ml = config.ml
    summary: dict = {}
    if ml.token_ids:
        summary["token_ids"] = {"column": "redacted_input_ids", "tokenizer": ML_TOKENIZER_NAME,
                                "placeholder_ids": {placeholder_token(label): token
                                                    for label, token in ml.placeholder_ids}}
    if ml.embeddings is not None:
        summary["embeddings"] = {"layer": ml.embeddings.layer,
                                 "pooling": ml.embeddings.pooling,
                                 "graph_output": config.spec.hidden_outputs[ml.embeddings.layer]}
    return summary


def _ml_extras(config: JobConfig, summary: dict) -> dict[str, bytes]:
    """The ML outputs' part of the summary (added to it) and their files (name -> bytes)."""
    extra = {}
    if config.ml is not None:
        summary["ml_outputs"] = ml_outputs_summary(config)
        if config.ml.token_ids:
            extended, _ = tokenizer_with_placeholders(
                config.spec.load_tokenizer(), [label for label, _ in config.ml.placeholder_ids])
            extra[ML_TOKENIZER_NAME] = extended.to_str(pretty=True).encode("utf-8")
    return extra


def _extra_names(config: JobConfig) -> tuple[str, ...]:
    """The files beside the folders that the run writes into its output (`_ml_extras`)."""
    return (ML_TOKENIZER_NAME,) if config.ml is not None and config.ml.token_ids else ()


def _with_sharing(argv: list, options: LarvatusOptions, pipeline_options: PipelineOptions,
                  config: JobConfig, device: str) -> tuple[PipelineOptions, JobConfig]:
    """The Beam options and job config with what --share-model adds (see `larvatus.sharing`)."""
    try:
        sharing = plan_sharing(argv, options.share_model, device, available_cores())
    except SharingError as error:
        raise OptionsError(str(error)) from error
    if not sharing.arguments:
        return pipeline_options, config
    shared = PipelineOptions([*argv, *sharing.arguments])
    LOG.info("--share-model: %d worker processes sharing %s model cop%s on %s (%s)",
             sharing.workers, options.model_copies or 1,
             "y" if (options.model_copies or 1) == 1 else "ies", device,
             " ".join(sharing.arguments))
    view = shared.view_as(LarvatusOptions)
    return shared, dataclasses.replace(
        config, processes_per_machine=processes_per_machine(shared),
        model_copies=view.model_copies, large_model=view.large_model)


def _summary_options(config: JobConfig) -> dict:
    return {
        "input": config.input_pattern, "aggregation": config.aggregation,
        "redact_labels": sorted(config.policy.labels), "placeholder": config.policy.style,
        "redact_threshold": config.decision.threshold if config.decision else None,
        "label_thresholds": dict(config.decision.label_thresholds) if config.decision else {},
        "keep_terms": len(config.policy.keep_terms),
        "always_redact_terms": len(config.policy.always_redact),
        "phone_regions": list(config.patterns.phone_regions),
        "propagate": config.policy.propagate, "window_length": config.window_length,
        "window_overlap": config.window_overlap, "keep_text": config.keep_text,
        "record_timeout": config.record_timeout}


def _check_utf8(argv: Sequence[str]) -> None:
    """Refuses arguments that are not valid UTF-8 (a file name's undecodable bytes): Beam
    carries every option as UTF-8 text and would fail on them once the job starts."""
    for arg in argv:
        try:
            arg.encode("utf-8")
        except UnicodeEncodeError:
            shown = arg.encode("utf-8", "surrogateescape").decode("utf-8", "backslashreplace")
            raise OptionsError(
                f"{shown}: not valid UTF-8 (the bytes shown as \\xNN), and Beam passes every "
                f"option as UTF-8 text; rename the file or folder, or match that part of an "
                f"--input path with a wildcard (files found by a pattern may have any name)"
            ) from None


class _SigintHandler:
    """Installs `_on_sigint` for Ctrl-C (SIGINT) and SIGTERM inside a `with` block (main
    thread only), then restores the previous handlers; `seen` says whether one came."""

    SIGNALS = (signal.SIGINT, signal.SIGTERM)

    def __init__(self):
        self.seen = False
        self._previous: dict = {}

    def _on_sigint(self, signum, frame):
        self.seen = True

    def __enter__(self):
        if threading.current_thread() is threading.main_thread():
            self._previous = {s: signal.signal(s, self._on_sigint) for s in self.SIGNALS}
        return self

    def __exit__(self, *exc):
        for number, previous in self._previous.items():
            signal.signal(number, previous)
        self._previous = {}
        return False


class _InterruptFlag(_SigintHandler):
    """Remembers a Ctrl-C (SIGINT) or SIGTERM while the job runs, whatever Beam wraps it in."""

    def _on_sigint(self, signum, frame):
        self.seen = True
        # Beam logs the interrupted bundle's traceback; the user asked to stop, so hush it
        logging.getLogger("apache_beam").setLevel(logging.CRITICAL)
        raise KeyboardInterrupt


class _HeldInterrupt(_SigintHandler):
    """Holds a Ctrl-C back while a finished run's files are moved into place (a moment),
    so that an interrupt never leaves the old run half deleted and the new one half moved."""

    def __exit__(self, *exc):
        super().__exit__(*exc)
        if self.seen:
            LOG.warning("an interrupt (Ctrl-C or SIGTERM) came while the output was moved "
                        "into place; it was held back until the move was done")
        return False


class JobFailed(RuntimeError):
    """The job started but failed for a reason that is not the data's (a full disk, a store
    that stopped answering, a runner that cannot start); the message is one line."""


def _causes(error: BaseException) -> list[BaseException]:
    """An exception and those it was raised from or during, outermost first."""
    chain, seen = [], set()
    while error is not None and id(error) not in seen:
        seen.add(id(error))
        chain.append(error)
        error = error.__cause__ or error.__context__
    return chain


# Beam's messages when a runner cannot fetch what it runs on: (start of the message, what).
RUNNER_DOWNLOADS = (("Unable to fetch remote job server jar at ", "its job server jar"),
                    ("Unable to fetch remote prism binary at ", "the Prism runner binary"))


def describe_failure(error: BaseException) -> str:
    """A failure in one line: a full disk, a store timeout, else the innermost message's
    first line (Beam wraps a worker's exception in its own RuntimeError)."""
    chain = _causes(error)
    for cause in chain:
        if isinstance(cause, OSError) and cause.errno == errno.ENOSPC \
                or "No space left on device" in str(cause):
            return "no space left on the device"
        if isinstance(cause, storage.StoreTimeout):
            return str(cause)
    lines = [line.strip() for line in str(error).splitlines() if line.strip()]
    text = lines[0] if lines else type(error).__name__
    return text if len(text) <= 400 else text[:400] + "..."


def _job_failure(error: Exception, pipeline_options: PipelineOptions, output_dir: str,
                 left: Optional[str] = None) -> str:
    """What the command prints when the job failed (not a record: those are dead letters);
    `left` says why the run's temporary files could not be removed, if they could not."""
    runner = runner_name(pipeline_options)
    for cause in _causes(error):
        message = str(cause)
        for start, what in RUNNER_DOWNLOADS:
            if message.startswith(start):
                url = message[len(start):].split(": ", 1)[0]
                stage = message.rpartition("stage the jar at ")[2] \
                    if "stage the jar at " in message else None
                return (f"--runner {runner} needs {what}, which Beam downloads from {url} and "
                        f"could not fetch here (no network?)"
                        + (f"; put it at {stage.rstrip('.')}" if stage else "")
                        + "; nothing was written to --output")
    reason = describe_failure(error)
    where = f" writing {output_dir}" if "no space left" in reason else ""
    cleaned = ("the run's temporary files were removed and any earlier output was left as it "
               "was" if left is None else f"any earlier output was left as it was, but {left}")
    return f"the job failed{where}: {reason}; {cleaned} (-v shows Beam's report)"


def _discard(staging: str, made_folders: tuple[str, ...]) -> Optional[str]:
    """Removes a failed run's staging folder; a store that does not answer is said, not
    waited on for ever (StoreTimeout). Returns what to tell the user if it could not."""
    try:
        storage.discard(staging, made_folders)
    except Exception as error:   # the run's own failure is what the user must see
        return (f"the run's temporary files in {staging} could not be removed "
                f"({describe_failure(error)}): delete them, or let the next run with "
                f"--overwrite do it")
    return None


def _probe_model(config: JobConfig) -> str:
    """Loads the model once on the launcher, so that a broken model fails now, not on a
    worker; returns the device it runs on here ("cpu" or "cuda")."""
    probe = OnnxTokenClassifier(
        config.spec, device=config.device,
        embedding_layer=config.settings.embedding_layer).load_model()   # with --emit-embeddings: the graph has the hidden outputs
    LOG.info("model: %s (%s), %s labels, running on %s", config.spec.name,
             "the built-in English model" if config.spec.location == EMBEDDED_DEFAULT
             else config.spec.location, "/".join(config.spec.scheme.entity_types),
             "the GPU (CUDA)" if probe.device == "cuda" else "the CPU")
    return probe.device


def _log_failures(summary: dict, known_failures: int) -> None:
    """Logs the failed checks that need saying now: incomplete metrics or counts that do not
    add up, and those found after the first `known_failures` (while publishing)."""
    if not summary["metrics_available"]:
        LOG.error("%s; the output was written but is not known to be complete",
                  summary["checks"]["failures"][0])
    elif not summary["counts_add_up"]:
        LOG.error("%s", summary["checks"]["failures"][0])
    for failure in summary["checks"]["failures"][known_failures:]:   # files lost, rows mixed
        LOG.error("%s", failure)


def _checked_start(argv: list[str]) -> tuple[PipelineOptions, LarvatusOptions, JobConfig]:
    """The job's options and config, every check that needs no model done (stores, output)."""
    _check_utf8(argv)
    pipeline_options = PipelineOptions(argv)
    options = pipeline_options.view_as(LarvatusOptions)
    check_beam_options(pipeline_options)
    FileSystems.set_options(pipeline_options)   # credentials for a remote --model or key file
    store = remote.StoreOptions.of(pipeline_options)
    try:   # a missing library or credential fails now, not in Beam's retries on a worker
        remote.check_stores([options.input, options.output, options.model,
                             options.pseudonym_key_file], store, side="launcher",
                            writable=[options.output])
    except remote.StoreError as error:
        raise OptionsError(str(error)) from None
    config = dataclasses.replace(make_config(options), store=store)
    LOG.debug("settings: %s", json.dumps(_summary_options(config), sort_keys=True))
    try:
        storage.check_output(config.output_dir, options.overwrite,
                             writes=_extra_names(config))
    except (storage.OutputError, storage.StoreTimeout) as error:
        raise OptionsError(f"--output {config.output_dir}: {error}"
                           if isinstance(error, storage.StoreTimeout) else str(error)) from error
    return pipeline_options, options, config


def _new_staging(config: JobConfig) -> tuple[tuple[str, ...], str]:
    """(folders this run made for --output, its fresh staging folder)."""
    made_folders = storage.folders_to_make(config.output_dir)
    try:
        return made_folders, storage.new_staging_dir(config.output_dir)
    except OSError as error:
        storage.remove_empty_folders(made_folders)
        raise JobFailed(f"cannot write in --output {config.output_dir}: "
                        f"{describe_failure(error)}") from error


def _publish(staging: str, config: JobConfig, summary: dict,
             made_folders: tuple[str, ...]) -> None:
    """Moves the finished run into --output (the summary last), or says why it could not."""
    with _HeldInterrupt():
        try:
            storage.publish(staging, config.output_dir, summary, _ml_extras(config, summary),
                            check_published)
        except storage.OutputWriteError as error:
            if error.earlier_kept and _discard(staging, made_folders) is not None:
                LOG.warning("the run's temporary files in %s could not be removed; delete "
                            "them, or let the next run with --overwrite do it", staging)
            raise JobFailed(f"{error}; " + (
                "the new run's files were removed and any earlier output was left as it was"
                if error.earlier_kept else "the new run's files were kept beside them")) from error


def run(argv: Optional[Sequence[str]] = None, test_pipeline: Optional[beam.Pipeline] = None,
        progress: Optional[ProgressSettings] = None) -> dict:
    """Runs the job and returns its summary (also written to OUTPUT/_SUMMARY.json).

    Every check comes first (options, model, output folder); the Parquet files are
    written into a fresh staging folder inside OUTPUT and moved into place, replacing an
    earlier run's files, only once the job has finished; `_SUMMARY.json` is written
    last, so its presence marks a complete run. A failed or interrupted run removes
    its staging folder and leaves the earlier output as it was.
    """
    argv = arguments.attach_dash_values(sys.argv[1:] if argv is None else argv)
    pipeline_options, options, config = _checked_start(argv)
    launcher_device = _probe_model(config)
    on_spark = options.engine == "spark"
    if on_spark:
        from larvatus import spark

        config = spark.check_options(options, config)
    else:
        pipeline_options, config = _with_sharing(argv, options, pipeline_options, config,
                                                 launcher_device)
    made_folders, staging = _new_staging(config)
    files = preflight.input_files(config.input_pattern)
    size = preflight.total_bytes(files)
    LOG.info("reading %d file(s)%s matching %s", len(files),
             f" ({human_bytes(size)})" if size is not None else "", config.input_pattern)
    monitor = None
    if progress is not None and test_pipeline is None and not on_spark \
            and runs_locally(pipeline_options):
        monitor = progress.monitor(size, local=True)
    job = dataclasses.replace(config, output_dir=staging,
                              progress_dir=monitor.directory if monitor else None)
    started = time.perf_counter()
    interrupt = _InterruptFlag()
    try:
        with interrupt:
            if on_spark:
                counters = spark.run_job(job, options.spark_master, files)
            else:
                counters = _run_beam(pipeline_options, job, monitor, test_pipeline)
    except BaseException as error:   # a failed job, or Ctrl-C: the earlier output stays
        left = _discard(staging, made_folders)
        if isinstance(error, Exception) and not interrupt.seen:
            raise JobFailed(_job_failure(error, pipeline_options, config.output_dir,
                                         left)) from error
        if left is not None:
            LOG.warning("%s", left)
        if interrupt.seen and not isinstance(error, KeyboardInterrupt):
            # Beam wraps a KeyboardInterrupt raised inside a DoFn in a RuntimeError
            raise KeyboardInterrupt from error
        raise
    summary = summarize(
        counters, wall_seconds=time.perf_counter() - started,
        model={**config.model_info, "path": config.spec.path, "launcher_device": launcher_device},
        options={**_summary_options(config), "engine": options.engine})
    summary["checks"] = checks(summary, options.max_dead_letter_ratio)
    known_failures = len(summary["checks"]["failures"])   # logged below or by main()
    check_files_read(summary, sum(1 for f in files if not f.path.endswith("/")))
    _publish(staging, config, summary, made_folders)
    _log_failures(summary, known_failures)
    return summary


def _run_beam(pipeline_options: PipelineOptions, job: JobConfig, monitor,
              test_pipeline: Optional[beam.Pipeline]) -> Optional[dict]:
    """Runs the Beam graph to the end; returns its counters (None without metrics)."""
    pipeline = test_pipeline or beam.Pipeline(options=pipeline_options)
    build(pipeline, job)
    if monitor is None:
        result = pipeline.run()
        result.wait_until_finish()
    else:
        with monitor:
            result = pipeline.run()
            result.wait_until_finish()
    return query_counters(result)


def next_step_command(prog: str) -> str:
    """How the user runs `larvatus` from their own shell, for the printed next step:
    $LARVATUS_COMMAND (./run_local.sh sets it), `larvatus` when that is on PATH, else
    this interpreter's `python -m larvatus.cli`."""
    if os.environ.get("LARVATUS_COMMAND"):
        return os.environ["LARVATUS_COMMAND"]
    if shutil.which("larvatus"):
        return prog.rsplit(" ", 1)[0] if prog.startswith("larvatus ") else "larvatus"
    return f"{sys.executable} -m larvatus.cli"


def _closing_lines(summary: dict, output_dir: str, prog: str,
                   store: remote.StoreOptions = remote.StoreOptions()) -> list[str]:
    """What a finished job prints on stdout: counts, where things are, what to run next
    (with the store options `show` and `report` need to reach a remote output)."""
    entities = ", ".join(f"{label} {count:,}" for label, count in sorted(
        summary["entities_by_label"].items(), key=lambda kv: -kv[1])) or "none"
    dead = summary["dead_lettered"]
    reasons = ", ".join(f"{r} {c:,}" for r, c in sorted(summary["dead_lettered_by_reason"].items()))
    command = next_step_command(prog)
    target = shlex.quote(output_dir)
    if not storage.is_local(output_dir):
        target += "".join(f" {flag}" for flag in remote.next_step_flags(store))
    return [
        f"records: {summary['records_in']:,} in, {summary['records_out']:,} annotated, "
        f"{dead:,} dead-lettered{f' ({reasons})' if dead else ''}",
        f"entities: {entities}",
        f"words: {summary['words']:,} in {summary['wall_seconds']:,.1f} s",
        f"output: {output_dir}",
        f"next: {command} show {target}   or   {command} report {target}",
    ]


def _launcher_options(argv: Sequence[str], prog: str):
    """(the launcher's own options, the rest: Larvatus and Beam options for the job)."""
    parser = arguments.ArgumentParser(prog=prog, add_help=False)
    add_launcher_args(parser)
    return parser.parse_known_args(list(argv))


def _beam_help(prog: str) -> str:
    parser = arguments.beam_parser()
    parser.prog = prog
    return parser.format_help()


def main(argv: Optional[Sequence[str]] = None, prog: str = "larvatus run") -> int:
    """`larvatus run`: strict options, logging, then the job; returns the exit status.

    0 done; 1 the job failed (a full disk, a store that stopped answering, a runner
    that cannot start: one line) or failed a check (too many dead letters, counts that do
    not add up or could not be checked); 2 a bad command line, option, input or
    model (nothing ran); 130 interrupted.
    """
    argv = arguments.attach_dash_values(sys.argv[1:] if argv is None else argv)
    checked, unchecked = arguments.split_unchecked(argv)
    if "-h" in checked or "--help" in checked:
        print(help_text(prog))
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
    job_argv += logs.worker_log_options(verbosity, job_argv + unchecked,
                                        runs_locally(PipelineOptions(job_argv + unchecked)))
    progress = ProgressSettings(ProgressSettings.choose(launcher.progress, launcher.quiet),
                                launcher.progress_interval, prog)
    held: list = []
    try:
        with logs.library_errors_held(show_on_failure=verbosity >= 1) as held:
            summary = run(job_argv + unchecked, progress=progress)
    except (OptionsError, ModelError) as error:
        print(f"{prog}: error: {error}", file=sys.stderr)
        return 2
    except JobFailed as error:
        cause = logs.worker_error(held)   # the runner may say only that the job failed
        print(f"{prog}: error: {error}" + (f" (the worker said: {cause})" if cause else ""),
              file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        print(f"{prog}: interrupted; the run's temporary files were removed and any earlier "
              "output was left as it was", file=sys.stderr)
        return 130
    job_options = PipelineOptions(job_argv + unchecked)
    options = job_options.view_as(LarvatusOptions)
    output_dir = storage.absolute(options.output)
    if not launcher.quiet:
        print("\n".join(_closing_lines(summary, output_dir, prog,
                                        remote.StoreOptions.of(job_options))))
    status = 0 if summary["counts_add_up"] and summary["checks"]["passed"] else 1
    failure = dead_letter_failure(summary, options.max_dead_letter_ratio)
    if failure:
        print(f"{prog}: error: {failure}. The output is written; each dead letter's reason "
              f"and detail are in {join(output_dir, DEAD_LETTERS_DIR)}.", file=sys.stderr)
        status = 1
    return status


def console_main() -> None:
    """`python -m larvatus.run`: main(), then exit (larvatus.arguments.exit_with)."""
    from larvatus.pipes import guard_standard_streams

    guard_standard_streams()
    arguments.exit_with(main())


if __name__ == "__main__":
    console_main()
