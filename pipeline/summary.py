"""The job summary (_SUMMARY.json): Beam counters gathered into counts that add up, entities, timings."""
from __future__ import annotations

from typing import Any, Optional

from larvatus.transforms.counters import (
    AUDIT_FLAGGED, AUDIT_PREFIX, BLANK_LINES, DEAD_LETTER_PREFIX, EMPTY_DOCUMENTS, ENTITY_PREFIX,
    LANGUAGE_PREFIX, NAMESPACE, PROPAGATED, RECORDS_IN, RECORDS_OUT, TIME_PREFIX,
)

INFERENCE_LATENCY = "inference_batch_latency_micro_secs"


def query_counters(result) -> Optional[dict[str, int]]:
    """Larvatus's counters from a finished Beam result, plus RunInference's time as
    `time_us_infer`; None when the runner gives no metrics (then nothing can be checked)."""
    counters: dict[str, int] = {}
    try:
        query = result.metrics().query()
    except Exception:  # a runner without metrics support
        return None
    for counter in query["counters"]:
        if counter.key.metric.namespace != NAMESPACE:
            continue
        value = counter.committed if counter.committed is not None else counter.attempted
        name = counter.key.metric.name
        counters[name] = counters.get(name, 0) + int(value or 0)
    for distribution in query["distributions"]:
        if distribution.key.metric.name == INFERENCE_LATENCY:
            value = distribution.committed or distribution.attempted
            if value is not None:
                counters["time_us_infer"] = counters.get("time_us_infer", 0) + int(value.sum)
                counters["inference_batches"] = counters.get("inference_batches", 0) + value.count
    return counters


def _with_prefix(counters: dict[str, int], prefix: str, skip: tuple[str, ...] = ()) -> dict[str, int]:
    return {k[len(prefix):]: v for k, v in sorted(counters.items())
            if k.startswith(prefix) and k not in skip}


def summarize(counters: Optional[dict[str, int]], *, model: dict[str, Any],
              options: dict[str, Any], wall_seconds: float) -> dict:
    """The job's _SUMMARY.json: counts that add up, entities by label, timings, model, options.

    Without metrics (`counters` None, or no record counted at all) `counts_add_up` is
    false and `metrics_available` says why: zeros that cannot be checked are not a
    complete run.
    """
    metrics_available = bool(counters) and RECORDS_IN in counters
    counters = counters or {}
    dead = _with_prefix(counters, DEAD_LETTER_PREFIX)
    records_in = counters.get(RECORDS_IN, 0)
    records_out = counters.get(RECORDS_OUT, 0)
    dead_total = sum(dead.values())
    return {
        "records_in": records_in,
        "records_out": records_out,
        "dead_lettered": dead_total,
        "dead_lettered_by_reason": dead,
        "counts_add_up": metrics_available and records_in == records_out + dead_total,
        "metrics_available": metrics_available,
        "blank_lines_skipped": counters.get(BLANK_LINES, 0),
        "empty_documents": counters.get(EMPTY_DOCUMENTS, 0),
        "entities_by_label": _with_prefix(counters, ENTITY_PREFIX, skip=(PROPAGATED,)),
        "entities_propagated": counters.get(PROPAGATED, 0),
        "documents_by_language": _with_prefix(counters, LANGUAGE_PREFIX),
        "audit": {
            "documents_flagged": counters.get(AUDIT_FLAGGED, 0),
            "findings_by_kind": _with_prefix(counters, AUDIT_PREFIX, skip=(AUDIT_FLAGGED,)),
        },
        "words": counters.get("words", 0),
        "wordpieces": counters.get("wordpieces", 0),
        "windows": counters.get("windows", 0),
        "window_tokens": counters.get("window_tokens", 0),
        "stage_seconds": {k: round(v / 1e6, 3)
                          for k, v in _with_prefix(counters, TIME_PREFIX).items()},
        "wall_seconds": round(wall_seconds, 3),
        "model": model,
        "options": options,
        "beam_counters": dict(sorted(counters.items())),
    }


def dead_letter_failure(summary: dict, max_ratio: float) -> Optional[str]:
    """Why a finished job counts as failed for its dead letters, or None.

    More than `max_ratio` of the records dead-lettered, or every record (when
    there was at least one), fails the job; the message lists the reasons.
    """
    records_in = summary.get("records_in", 0)
    dead = summary.get("dead_lettered", 0)
    if not records_in or not dead:
        return None
    ratio = dead / records_in
    if ratio <= max_ratio and dead < records_in:
        return None
    reasons = ", ".join(f"{reason} {count:,}" for reason, count in sorted(
        (summary.get("dead_lettered_by_reason") or {}).items(), key=lambda kv: (-kv[1], kv[0])))
    why = ("every record was dead-lettered" if dead == records_in
           else f"more than --max-dead-letter-ratio {max_ratio:g}")
    return (f"{dead:,} of {records_in:,} records ({ratio:.0%}) were dead-lettered ({why}); "
            f"reasons: {reasons}")


def checks(summary: dict, max_dead_letter_ratio: float) -> dict:
    """The summary's verdict (`checks` in _SUMMARY.json): whether the job passed, and why not.

    It fails when the runner gave no metrics (nothing can be checked), when the counts
    do not add up, or when too many records were dead-lettered (`dead_letter_failure`).
    """
    failures = []
    if not summary["metrics_available"]:
        failures.append("metrics were unavailable (the runner returned no Larvatus counters), "
                        "so the record counts could not be checked")
    elif not summary["counts_add_up"]:
        failures.append(f"counts do not add up: {summary['records_in']:,} in, "
                        f"{summary['records_out']:,} out, {summary['dead_lettered']:,} "
                        f"dead-lettered")
    dead = dead_letter_failure(summary, max_dead_letter_ratio)
    if dead:
        failures.append(dead)
    return {"passed": not failures, "failures": failures,
            "max_dead_letter_ratio": max_dead_letter_ratio}


def check_published(summary: dict, rows: dict[str, int]) -> None:
    """Records the rows the published files hold (`published_rows`) and fails the summary's
    checks when they differ from the counts: another run wrote into the same output, or
    files went missing on the way."""
    summary["published_rows"] = dict(rows)
    if not summary.get("metrics_available"):
        return
    expected = {"annotations": summary["records_out"], "dead_letters": summary["dead_lettered"]}
    if rows == expected:
        return
    failure = (f"the output holds {rows['annotations']:,} annotation and "
               f"{rows['dead_letters']:,} dead-letter rows, but this run wrote "
               f"{expected['annotations']:,} and {expected['dead_letters']:,}: another run "
               f"may have written into the same --output at the same time")
    summary["checks"]["failures"].append(failure)
    summary["checks"]["passed"] = False


def check_files_read(summary: dict, listed: int) -> None:
    """Records how many files the launcher listed and the job read, and fails the summary's
    checks when fewer were read: files that vanished after listing lost their records
    without a dead letter."""
    read = summary.get("beam_counters", {}).get("files_read")
    summary["files"] = {"listed": listed, "read": read}
    if not summary.get("metrics_available") or read is None or read >= listed:
        return
    summary["checks"]["failures"].append(
        f"files listed at start: {listed:,}, files read: {read:,}; {listed - read:,} "
        f"vanished (moved or deleted) while the job ran, and their records are in neither "
        f"the output nor the dead letters")
    summary["checks"]["passed"] = False
