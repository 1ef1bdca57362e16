"""Benchmark figures: medians and ranges, rates, ratios against targets, Larvatus's stages."""
# Pure functions over the result dicts `bench.runners` returns (a measurement's runs are a
# list of such dicts, one per repeat), and printers that compose them; `report` is what
# bench/throughput.py prints.
#
#     python -m bench.report --json FIGURES.json [--ceiling 44e6] [--smi nvidia-smi.csv]
#
# prints, from a `throughput.py --json` file, every measurement's tokens/s against a
# physical ceiling (an H100 runs MiniLM-L6 at fp16 at about 44M tokens/s: ~990 dense fp16
# TFLOP/s over ~22 MFLOP a token) and, with `--smi`, the GPU's utilization and memory
# recorded by `nvidia-smi --query-gpu=utilization.gpu,memory.used --format=csv -l 1`.
from __future__ import annotations

import argparse
import csv
import json
import math
import statistics
import sys
from typing import Iterable, Optional, Sequence

# Speed targets: Larvatus's whole process against the HF pipeline as users run it
# (240 documents), and against the raw ONNX Runtime loop (240 documents; a million words,
# start-up amortised). The HF pipeline tuned like Larvatus is printed for reference.
TARGET_VS_HF_USERS = 5.0
TARGET_VS_ORT = 0.8
TARGET_VS_ORT_MILLION = 0.9
TARGET_MEMORY_RATIO = 1.2
H100_MINILM_FP16_TOKENS_PER_S = 44e6


# --------------------------------------------------------------------------- figures

def median_of(runs: Sequence[dict], key: str) -> float:
    return statistics.median(r[key] for r in runs)


def spread(runs: Sequence[dict], key: str = "seconds") -> tuple[float, float, float]:
    """(median, min, max) of one figure over the repeats."""
    values = [r[key] for r in runs]
    return statistics.median(values), min(values), max(values)


def median_run(runs: Sequence[dict]) -> dict:
    """The run whose time is the median (lower middle when even): breakdowns that add up."""
    ordered = sorted(runs, key=lambda r: r["seconds"])
    return ordered[(len(ordered) - 1) // 2]


def rate(count: float, seconds: float) -> float:
    return count / seconds if seconds > 0 else float("nan")


def figures_of(runs: Sequence[dict], words: int, pieces: int) -> dict:
    """A measurement's medians and ranges; rates use the corpus's (Larvatus's) counts."""
    seconds, fastest, slowest = spread(runs)
    figures = {"seconds": seconds, "min_seconds": fastest, "max_seconds": slowest,
               "words_per_s": rate(words, seconds), "wordpieces_per_s": rate(pieces, seconds),
               "peak_rss_mib": median_of(runs, "peak_rss_mib"),
               "all_seconds": [r["seconds"] for r in runs]}
    if all("pipeline_wall_seconds" in r for r in runs):
        figures["pipeline_wall_seconds"] = median_of(runs, "pipeline_wall_seconds")
    return figures


def all_figures(runs: dict[str, list[dict]], words: int, pieces: int) -> dict[str, dict]:
    return {name: figures_of(results, words, pieces) for name, results in runs.items()}


def ratio(figures: dict[str, dict], numerator: str, denominator: str) -> Optional[dict]:
    """words/s of `numerator` over `denominator`, whole process and (where it has one) its
    pipeline wall time (start-up excluded); None when either is missing."""
    if numerator not in figures or denominator not in figures:
        return None
    top, bottom = figures[numerator], figures[denominator]
    inner = bottom["seconds"] / top.get("pipeline_wall_seconds", top["seconds"])
    return {"value": top["words_per_s"] / bottom["words_per_s"], "pipeline_wall": inner}


def verdict(value: float, target: Optional[float], at_least: bool = True) -> str:
    if target is None:
        return ""
    met = value >= target if at_least else value <= target
    return f"  target {'>=' if at_least else '<='} {target:g}: {'MET' if met else 'MISSED'}"


def ratio_pairs(names: Iterable[str], labels: Sequence[str],
                ort_target: Optional[float] = TARGET_VS_ORT,
                ) -> list[tuple[str, str, Optional[float], str]]:
    """(numerator, denominator, target, note) for Larvatus against each HF row and raw ORT.

    The first model label carries the target against HF as users run it; the other
    rows are for reference (e.g. fp32 against HF's fp32: same weights, same precision).
    """
    names = list(names)
    hf_rows = [n for n in names if n.startswith("hf-")]
    pairs = []
    for index, label in enumerate(labels):
        for hf in hf_rows:
            target = TARGET_VS_HF_USERS if index == 0 and hf == "hf-users" else None
            pairs.append((f"larvatus-{label}", hf, target, ""))
        pairs.append((f"larvatus-{label}", f"ort-{label}", ort_target,
                      "(same model file, same windows and windows per call)"))
    return pairs


def ratios_of(figures: dict[str, dict], labels: Sequence[str]) -> dict[str, float]:
    out = {}
    for numerator, denominator, _, _ in ratio_pairs(figures, labels):
        found = ratio(figures, numerator, denominator)
        if found:
            out[f"{numerator}/{denominator}"] = found["value"]
            out[f"{numerator}/{denominator} (pipeline wall)"] = found["pipeline_wall"]
    return out


def stage_breakdown(run: dict) -> dict[str, float]:
    """Where one Larvatus run's seconds went: summed DoFn time per stage (the summary's
    stage_seconds, inference as "infer"), the rest of the pipeline's wall time (Beam
    overhead and Parquet writing), and start-up before the pipeline (imports, checks)."""
    stages = dict(run.get("stage_seconds", {}))
    rest_name = "Beam overhead + write" if "infer" in stages else "infer + overhead"
    return {**stages,
            rest_name: run["pipeline_wall_seconds"] - sum(stages.values()),
            "startup": run["seconds"] - run["pipeline_wall_seconds"]}


def memory_ratio(small: dict, large: dict) -> float:
    return large["peak_rss_mib"] / small["peak_rss_mib"]


def tokens_per_second(result: dict) -> dict[str, float]:
    """Wordpieces/s, window tokens/s and (raw loop) padded tokens/s on the model calls alone."""
    seconds = result["seconds"]
    out = {}
    for key in ("wordpieces", "window_tokens"):
        if result.get(key):
            out[f"{key}_per_s"] = rate(result[key], seconds)
    if result.get("padded_tokens") and result.get("session_run_seconds"):
        out["padded_tokens_per_s_in_session_run"] = rate(result["padded_tokens"],
                                                         result["session_run_seconds"])
    return out


# --------------------------------------------------------------------------- text

def disturbance(result: dict) -> str:
    """'  others N CPU-s (P% of a core)' for a measurement, flagged when large."""
    others = result.get("others_cpu_seconds")
    if others is None:
        return ""
    share = others / max(result.get("child_wall_seconds", 0.0), 1e-9)
    flag = "  DISTURBED" if share > 0.10 else ""
    return f"  others {others:6.1f} CPU-s ({share:4.0%} of a core){flag}"


def corpus_lines(corpus: dict, window: int, overlap: int) -> list[str]:
    return [
        f"Documents: {corpus['documents']:,} ({corpus.get('name', '?')}) from {corpus['origin']}, "
        f"sha256 {corpus['sha256']}: {corpus['words']:,} words, {corpus['wordpieces']:,} "
        f"wordpieces, median {corpus['median_words_per_doc']:.0f} words/doc, "
        f"{corpus['docs_over_512_pieces']:,} docs over 512 pieces, "
        f"{corpus['docs_over_one_window']:,} over one window",
        f"Window {window} pieces, overlap {overlap}; Larvatus windows {corpus['windows']:,} "
        f"({corpus['window_tokens']:,} tokens)",
    ]


def table_lines(figures: dict[str, dict], titles: dict[str, str]) -> list[str]:
    head = (f"{'measurement':<60} {'median s':>8} {'min':>7} {'max':>7} {'words/s':>9} "
            f"{'pieces/s':>9} {'peak MiB':>8}")
    lines = [head]
    for name, f in figures.items():
        lines.append(f"{titles.get(name, name):<60} {f['seconds']:8.2f} {f['min_seconds']:7.2f} "
                     f"{f['max_seconds']:7.2f} {f['words_per_s']:9.0f} "
                     f"{f['wordpieces_per_s']:9.0f} {f['peak_rss_mib']:8.0f}")
    return lines


def titles_for(runs: dict[str, list[dict]]) -> dict[str, str]:
    """Row titles from what each measurement reports about itself."""
    titles = {}
    for name, results in runs.items():
        r = results[0]
        if name.startswith("hf-"):
            titles[name] = (f"HF {r['title']}: {r['device']} {r['dtype']}, window {r['window']}, "
                            f"stride {r['stride']}, batch {r['batch_size']}")
        elif name.startswith("ort-"):
            titles[name] = f"raw ORT {name[4:]} on {r['device']} (batched loop only)"
        elif name.startswith("larvatus-"):
            titles[name] = f"Larvatus {name[9:]} on {r['device']} (CLI, end to end)"
    return titles


def detail_lines(name: str, run: dict, words: int, pieces: int) -> list[str]:
    """One measurement's median run, in words."""
    if name.startswith("hf-"):
        fallback = (f"; asked for {run['asked_device']}, torch has no CUDA: ran on CPU"
                    if run.get("asked_device", run["device"]) != run["device"] else "")
        return [f"  {name}: load + imports + warm-up {run['load_seconds']:.1f} s not timed; "
                f"{run['windows']:,} chunks ({run['window_tokens']:,} tokens), "
                f"{run['entities']:,} entity groups; torch threads {run['torch_threads']}"
                f"{fallback}"]
    if name.startswith("ort-"):
        return [f"  {name}: model calls {run['session_run_seconds']:.2f} s of the loop; "
                f"{run['batches']:,} batches, {run['padded_tokens']:,} padded tokens (budget "
                f"{run['batch_tokens']:,}, windows per call "
                f"{run.get('windows_per_call') or 'unbounded'}); segment+encode {run['segment_encode_seconds']:.2f} s "
                f"not timed; {run['onnx_file']}{' (IO binding)' if run.get('io_binding') else ''}"]
    counters = run.get("beam_counters", {})
    entities = sum(v for k, v in counters.items()
                   if k.startswith("entities_") and k != "entities_propagated")
    lines = [f"  {name}: {entities:,} entities ({entities / max(words, 1):.1%} of words; "
             f"{counters.get('entities_propagated', 0):,} propagated), {run['windows']:,} "
             f"windows, {run['annotation_files']} Parquet file(s)"]
    if run["words"] != words or run["wordpieces"] != pieces or not run["counts_add_up"]:
        lines.append(f"  WARNING {name} counted {run['words']} words, {run['wordpieces']} "
                     f"pieces, counts_add_up {run['counts_add_up']}")
    return lines


def ratio_lines(figures: dict[str, dict], labels: Sequence[str],
                ort_target: Optional[float] = TARGET_VS_ORT) -> list[str]:
    lines = []
    for numerator, denominator, target, note in ratio_pairs(figures, labels, ort_target):
        found = ratio(figures, numerator, denominator)
        if found:
            lines.append(f"  {numerator} / {denominator}: {found['value']:5.2f}x  "
                         f"[{found['pipeline_wall']:5.2f}x]{verdict(found['value'], target)}  {note}")
    return lines


def stage_lines(name: str, run: dict) -> list[str]:
    parts = stage_breakdown(run)
    staged = ", ".join(f"{k} {v:.2f}" for k, v in sorted(parts.items(), key=lambda kv: -kv[1]))
    lines = [f"  {name}: {run['seconds']:.2f} s = {staged}"]
    if "infer" in run.get("stage_seconds", {}):
        batches = run.get("beam_counters", {}).get("inference_batches", "?")
        lines.append(f"     inference {parts['infer']:.2f} s in {batches} RunInference batches; "
                     f"everything but inference {run['seconds'] - parts['infer']:.2f} s")
    return lines


def ceiling_lines(runs: dict[str, list[dict]], ceiling: float) -> list[str]:
    lines = [f"Tokens/s of each median run against a ceiling of {ceiling / 1e6:.1f}M tokens/s:"]
    for name, results in runs.items():
        run = median_run(results)
        for key, value in tokens_per_second(run).items():
            lines.append(f"  {name:<18} {key:<36} {value:14,.0f}  {value / ceiling:7.2%} of it")
    return lines


def smi_lines(path: str) -> list[str]:
    """Mean and max GPU utilization and the most memory used, from nvidia-smi's CSV."""
    utilization, memory = [], []
    with open(path, encoding="utf-8") as handle:
        for row in csv.reader(handle):
            try:
                sample = float(row[0].strip().rstrip(" %")), float(row[1].strip().split()[0])
            except (ValueError, IndexError):
                continue  # the header, a partial last line
            utilization.append(sample[0])
            memory.append(sample[1])
    if not utilization:
        return [f"{path}: no samples"]
    busy = [u for u in utilization if u > 0]
    return [f"GPU ({len(utilization)} one-second samples): utilization mean "
            f"{statistics.mean(utilization):.0f}%, mean while busy "
            f"{statistics.mean(busy) if busy else 0:.0f}%, max {max(utilization):.0f}%; "
            f"memory used at most {max(memory):,.0f} MiB"]


# --------------------------------------------------------------------------- composed

def target_checks(documents: dict, million: dict, label: str,
                  names: Sequence[str] = ("240 documents", "a million words")) -> list[dict]:
    """The three speed-target ratios from the figures of the two corpora of `--targets`.

    `names` describe the two corpora as measured (the targets are set for 240 news
    documents and a million words).
    """
    checks = []
    for corpus, figures, denominator, target in (
            (names[0], documents, "hf-users", TARGET_VS_HF_USERS),
            (names[0], documents, f"ort-{label}", TARGET_VS_ORT),
            (names[1], million, f"ort-{label}", TARGET_VS_ORT_MILLION)):
        found = ratio(figures, f"larvatus-{label}", denominator)
        checks.append({"corpus": corpus, "ratio": f"larvatus-{label}/{denominator}",
                       "target": target, "value": found["value"] if found else None,
                       "pipeline_wall": found["pipeline_wall"] if found else None})
    return checks


def target_lines(checks: Sequence[dict]) -> list[str]:
    lines = []
    for check in checks:
        if check["value"] is None:
            lines.append(f"  {check['ratio']} on {check['corpus']}: not measured")
            continue
        lines.append(f"  {check['ratio']} on {check['corpus']}: {check['value']:5.2f}x whole "
                     f"process [{check['pipeline_wall']:5.2f}x pipeline wall]"
                     f"{verdict(check['value'], check['target'])}")
    return lines


def report(prepared: dict, measured: dict, repeats: int,
           ort_target: Optional[float] = TARGET_VS_ORT) -> dict:
    """Prints medians, ranges, ratios against the targets, peaks and Larvatus's stages."""
    corpus = prepared["corpus"]
    words, pieces = corpus["words"], corpus["wordpieces"]
    runs = measured["runs"]
    labels = list(prepared["models"])
    figures = all_figures(runs, words, pieces)
    print()
    for line in corpus_lines(corpus, prepared["window"], prepared["overlap"]):
        print(line)
    for label, path in prepared["models"].items():
        print(f"Model {label}: {path}")
    print(f"Medians of {repeats} interleaved repeat(s), with min and max; words/s and "
          f"pieces/s use Larvatus's counts for every row.")
    print()
    for line in table_lines(figures, titles_for(runs)):
        print(line)
    print("  every run's seconds [CPU-s other processes used meanwhile]: " + "; ".join(
        f"{name} " + ", ".join(f"{r['seconds']:.1f}[{r.get('others_cpu_seconds', math.nan):.0f}]"
                               for r in results) for name, results in runs.items()))
    for name, results in runs.items():
        for line in detail_lines(name, median_run(results), words, pieces):
            print(line)
    print()
    print("Ratios of words/s (Larvatus's whole process; in brackets: its pipeline "
          "wall_seconds, start-up excluded):")
    for line in ratio_lines(figures, labels, ort_target):
        print(line)
    print()
    print("Larvatus time by stage (the median run's _SUMMARY.json; stages are summed DoFn "
          "time, startup is the process before the pipeline):")
    breakdowns = {}
    for label in labels:
        name = f"larvatus-{label}"
        if name in runs:
            run = median_run(runs[name])
            breakdowns[label] = stage_breakdown(run)
            for line in stage_lines(name, run):
                print(line)
    return {"figures": figures, "ratios": ratios_of(figures, labels),
            "larvatus_breakdown": breakdowns}


def main(argv: Optional[Sequence[str]] = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.report",
                                     description=__doc__.split("\n\n")[0])
    parser.add_argument("--json", required=True, help="A `bench/throughput.py --json` file.")
    parser.add_argument("--ceiling", type=float, default=H100_MINILM_FP16_TOKENS_PER_S,
                        help="Physical tokens/s limit (default 44e6: MiniLM-L6 fp16 on an H100).")
    parser.add_argument("--smi", default=None, help="nvidia-smi CSV recorded meanwhile.")
    args = parser.parse_args(argv)
    with open(args.json, encoding="utf-8") as handle:
        data = json.load(handle)
    runs = data.get("measured", {}).get("runs", {})
    for line in ceiling_lines(runs, args.ceiling) if runs else ["no measured runs in the file"]:
        print(line)
    if args.smi:
        for line in smi_lines(args.smi):
            print(line)
    return 0


if __name__ == "__main__":
    sys.exit(main())
