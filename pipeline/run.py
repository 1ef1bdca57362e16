"""Entry point: `python -m pipeline.run --input GLOB --output DIR [options] [Beam options]`."""
from __future__ import annotations

import glob
import json
import logging
import os
import sys
import time
from typing import Optional, Sequence

import apache_beam as beam
from apache_beam.io.filesystems import FileSystems
from apache_beam.options.pipeline_options import PipelineOptions

from models.handler import OnnxTokenClassifierHandler
from models.model_dir import ModelError, load_model_spec
from pipeline.graph import ANNOTATIONS_PREFIX, DEAD_LETTER_PREFIX, JobConfig, build
from pipeline.options import LarvatusOptions, OptionsError, help_text, pseudonym_key
from transforms import stages
from transforms.encode import default_overlap
from transforms.redact import RedactionPolicy

LOG = logging.getLogger("larvatus")
SUMMARY_NAME = "_SUMMARY.json"


def _check_output(output_dir: str, overwrite: bool) -> None:
    """Refuses to mix a new run's shards with an old one's, unless told to replace them."""
    ours = [p for prefix in (ANNOTATIONS_PREFIX, DEAD_LETTER_PREFIX)
            for p in glob.glob(os.path.join(output_dir, prefix + "-*"))]
    ours += glob.glob(os.path.join(output_dir, SUMMARY_NAME))
    if ours and not overwrite:
        raise OptionsError(
            f"{output_dir} already holds Larvatus output ({len(ours)} files); pass "
            f"--overwrite to replace them or choose another --output.")
    for path in ours:
        os.remove(path)
    os.makedirs(output_dir, exist_ok=True)


def make_config(options: LarvatusOptions) -> JobConfig:
    """Checks the options and the model, failing loudly before any worker starts."""
    if not options.input or not options.output:
        raise OptionsError("--input and --output are required (see --help)")
    if not FileSystems.match([options.input])[0].metadata_list:
        raise OptionsError(f"--input {options.input!r} matches no file")
    spec = load_model_spec(options.model)
    unknown = set(_split_labels(options.redact_labels)) - set(spec.scheme.entity_types)
    if unknown:
        raise OptionsError(
            f"--redact-labels names {sorted(unknown)}, which the model does not predict; "
            f"it predicts {list(spec.scheme.entity_types)}")
    window_length = options.window_length or spec.max_length
    if not 8 <= window_length <= spec.max_length:
        raise OptionsError(
            f"--window-length must be between 8 and the model's {spec.max_length}")
    overlap = options.window_overlap
    if overlap is None:
        overlap = default_overlap(window_length)
    if not 0 <= overlap <= (window_length - 2) // 2:
        raise OptionsError(
            f"--window-overlap must be between 0 and {(window_length - 2) // 2}")
    if options.batch_tokens is not None and options.batch_tokens < window_length:
        raise OptionsError(f"--batch-tokens must be at least the window length {window_length}")
    if options.max_chars < 1:
        raise OptionsError("--max-chars must be positive")
    policy = RedactionPolicy(
        labels=frozenset(_split_labels(options.redact_labels)), style=options.placeholder,
        key=pseudonym_key(options), propagate=options.propagate)
    _check_output(options.output, options.overwrite)
    return JobConfig(
        input_pattern=options.input, output_dir=options.output,
        input_format=options.input_format, id_field=options.id_field,
        text_field=options.text_field, max_chars=options.max_chars, spec=spec,
        device=options.device, batch_tokens=options.batch_tokens,
        intra_op_threads=options.intra_op_threads, window_length=window_length,
        window_overlap=overlap, aggregation=options.aggregation, policy=policy,
        keep_text=options.keep_text)


def _split_labels(value: str) -> list[str]:
    return [label.strip() for label in value.split(",") if label.strip()]


def _counters(result) -> dict[str, int]:
    """Larvatus's counters, plus RunInference's inference time as `time_us_infer`."""
    counters: dict[str, int] = {}
    try:
        query = result.metrics().query()
    except Exception:  # a runner without metrics support
        return counters
    for counter in query["counters"]:
        if counter.key.metric.namespace != stages.NAMESPACE:
            continue
        value = counter.committed if counter.committed is not None else counter.attempted
        name = counter.key.metric.name
        counters[name] = counters.get(name, 0) + int(value or 0)
    for distribution in query["distributions"]:
        if distribution.key.metric.name == "inference_batch_latency_micro_secs":
            value = distribution.committed or distribution.attempted
            if value is not None:
                counters["time_us_infer"] = counters.get("time_us_infer", 0) + int(value.sum)
                counters["inference_batches"] = counters.get("inference_batches", 0) + value.count
    return counters


def summarize(counters: dict[str, int], config: JobConfig, wall_seconds: float,
              device: str) -> dict:
    """The job's _SUMMARY.json: counts that add up, entities by label, timings, model."""
    dead = {k[len("dead_letter_"):]: v for k, v in counters.items() if k.startswith("dead_letter_")}
    records_in = counters.get("records_in", 0)
    records_out = counters.get("records_out", 0)
    dead_total = sum(dead.values())
    return {
        "records_in": records_in,
        "records_out": records_out,
        "dead_lettered": dead_total,
        "dead_lettered_by_reason": dict(sorted(dead.items())),
        "counts_add_up": records_in == records_out + dead_total,
        "blank_lines_skipped": counters.get("blank_lines_skipped", 0),
        "entities_by_label": {k[len("entities_"):]: v for k, v in sorted(counters.items())
                              if k.startswith("entities_") and k != "entities_propagated"},
        "entities_propagated": counters.get("entities_propagated", 0),
        "words": counters.get("words", 0),
        "wordpieces": counters.get("wordpieces", 0),
        "windows": counters.get("windows", 0),
        "window_tokens": counters.get("window_tokens", 0),
        "stage_seconds": {k[len("time_us_"):]: round(v / 1e6, 3) for k, v in sorted(counters.items())
                          if k.startswith("time_us_")},
        "wall_seconds": round(wall_seconds, 3),
        "model": {**config.model_info, "path": config.spec.path, "launcher_device": device},
        "options": {
            "input": config.input_pattern, "aggregation": config.aggregation,
            "redact_labels": sorted(config.policy.labels), "placeholder": config.policy.style,
            "propagate": config.policy.propagate, "window_length": config.window_length,
            "window_overlap": config.window_overlap, "keep_text": config.keep_text},
        "beam_counters": dict(sorted(counters.items())),
    }


def run(argv: Optional[Sequence[str]] = None, test_pipeline: Optional[beam.Pipeline] = None) -> dict:
    """Runs the job and returns its summary (also written to OUTPUT/_SUMMARY.json)."""
    argv = list(sys.argv[1:] if argv is None else argv)
    pipeline_options = PipelineOptions(argv)
    options = pipeline_options.view_as(LarvatusOptions)
    config = make_config(options)
    # Load the model once here too: a broken model fails now, not on a worker.
    probe = OnnxTokenClassifierHandler(config.spec, device=config.device).load_model()
    LOG.info("model %s loads on %s", config.spec.name, probe.device)
    launcher_device = probe.device
    del probe
    started = time.perf_counter()
    pipeline = test_pipeline or beam.Pipeline(options=pipeline_options)
    build(pipeline, config)
    result = pipeline.run()
    result.wait_until_finish()
    summary = summarize(_counters(result), config, time.perf_counter() - started, launcher_device)
    with open(os.path.join(config.output_dir, SUMMARY_NAME), "w", encoding="utf-8") as handle:
        json.dump(summary, handle, indent=2)
    if not summary["counts_add_up"]:
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
    print(json.dumps({k: summary[k] for k in (
        "records_in", "records_out", "dead_lettered", "dead_lettered_by_reason",
        "entities_by_label", "wall_seconds")}, indent=2))
    return 0 if summary["counts_add_up"] else 1


if __name__ == "__main__":
    sys.exit(main())
