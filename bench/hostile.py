"""Hostile sweep: the pipeline on each adversarial input case, one subprocess each; prints case, outcome, time and peak memory."""
# Every case writes its own input (and, for model faults, a broken copy of the model
# directory) into a scratch folder, runs `python -m larvatus.run` on it as a subprocess
# with the embedded default model on CPU, and checks what came out: the exit code, the
# error message, `_SUMMARY.json`, the annotations and the dead letters. Peak memory is
# the subprocess's own `ru_maxrss` (from `os.wait4`), so cases compare with each other:
# a case that reads a 300 MB file should peak where a small one does. Each run starts from a
# small launcher process, so the driver's own size never shows in a child's peak.
#
#     python bench/hostile.py                   # every case (a few minutes on 2 cores)
#     python bench/hostile.py --quick           # the subset CI runs (test_adversarial_input.py)
#     python bench/hostile.py --cases bang-20000,big-text-file
#     python bench/hostile.py --root ../main    # the same cases against another checkout
#     python bench/hostile.py --json out.json   # keep every figure
#
# Exit status 1 when a case's outcome is not the expected one. The driver imports only
# the standard library and pyarrow (to read the output), never Beam or the model.
from __future__ import annotations

import argparse
import bz2
import glob
import gzip
import json
import lzma
import os
import shutil
import subprocess
import sys
import tempfile
import time
import unicodedata
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable, Optional, Sequence

ROOT = Path(__file__).resolve().parent.parent
KEY_ENV = "LARVATUS_PSEUDONYM_KEY"
MiB = 1024 * 1024


@dataclass
class Outcome:
    """What one run of the pipeline left behind."""

    code: int
    stderr: str
    seconds: float
    peak_mib: float
    summary: Optional[dict] = None
    rows: list = field(default_factory=list)
    dead: list = field(default_factory=list)

    @property
    def redacted(self) -> str:
        return "\n".join(row["redacted_text"] for row in self.rows)

    def reasons(self) -> dict:
        return (self.summary or {}).get("dead_lettered_by_reason", {})


# A check returns None when the outcome is the expected one, else what is wrong.
Check = Callable[[Outcome], Optional[str]]


@dataclass
class Case:
    name: str
    build: Callable[[Path, Path], list]   # (scratch dir, model dir) -> arguments after --output
    check: Check
    quick: bool = False
    env: dict = field(default_factory=dict)


def _jsonl(path: Path, records: Sequence[dict]) -> Path:
    path.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in records),
                    encoding="utf-8")
    return path


def _input(path: Path) -> list:
    return ["--input", str(path)]


def _all(*checks: Check) -> Check:
    def check(outcome: Outcome) -> Optional[str]:
        for one in checks:
            problem = one(outcome)
            if problem:
                return problem
        return None
    return check


def _ran(records_out: int, **reasons: int) -> Check:
    def check(outcome: Outcome) -> Optional[str]:
        from larvatus.options import DEFAULT_MAX_DEAD_LETTER_RATIO
        from larvatus.summary import dead_letter_failure

        # a job whose records are (nearly) all dead-lettered ran, and exits 1 to say so
        expected = 1 if outcome.summary is not None and dead_letter_failure(
            outcome.summary, DEFAULT_MAX_DEAD_LETTER_RATIO) else 0
        if outcome.code != expected or outcome.summary is None:
            return f"exit {outcome.code}: {outcome.stderr.strip().splitlines()[-1:] or ''}"
        if not outcome.summary["counts_add_up"]:
            return "counts do not add up"
        if outcome.summary["records_out"] != records_out:
            return f"records_out {outcome.summary['records_out']}, expected {records_out}"
        if outcome.reasons() != reasons:
            return f"dead letters {outcome.reasons()}, expected {reasons}"
        return None
    return check


def _absent(*secrets: str) -> Check:
    def check(outcome: Outcome) -> Optional[str]:
        leaked = [s for s in secrets if s in outcome.redacted]
        return f"leaked {leaked}" if leaked else None
    return check


def _segment_under(seconds: float) -> Check:
    def check(outcome: Outcome) -> Optional[str]:
        spent = (outcome.summary or {}).get("stage_seconds", {}).get("segment", 0.0)
        return f"segment took {spent:.1f} s" if spent > seconds else None
    return check


def _refused(message: str) -> Check:
    def check(outcome: Outcome) -> Optional[str]:
        if outcome.code != 2:
            return f"exit {outcome.code}, expected 2 (refused at start)"
        if "Traceback" in outcome.stderr:
            return "a traceback instead of a message"
        if message not in outcome.stderr:
            return f"message lacks {message!r}"
        return None
    return check


def _detail(reason: str, starts: str) -> Check:
    def check(outcome: Outcome) -> Optional[str]:
        details = [d["detail"] for d in outcome.dead if d["reason"] == reason]
        if not any(d.startswith(starts) for d in details):
            return f"no {reason} dead letter starting {starts!r} (got {details[:3]})"
        return None
    return check


# --- the cases ------------------------------------------------------------------------

MERKEL = "Angela Merkel met reporters. The Merkel era is over. Merkel smiled."
SMITH = "John Smith won the final. The Smith Cup went to Smith at last."
JOINERS = ("Pe\u200dter Mwa\u200dngi met Zbig\u200dniew Kowalski in Nairobi. "
           "Mrs Quartermaine\x00visited Oslo.")
ZOE = "Zoë Kowalczyk spoke to the press."


def _merkel(scratch: Path, model: Path) -> list:
    # One document, so that a check on names does not rest on how documents are batched.
    return _input(_jsonl(scratch / "in.jsonl", [{"id": "merkel", "text": f"{MERKEL} {SMITH}"}]))


def _joiners(scratch: Path, model: Path) -> list:
    return _input(_jsonl(scratch / "in.jsonl", [{"id": "joiners", "text": JOINERS}]))


def _pseudonyms(scratch: Path, model: Path) -> list:
    forms = [ZOE, unicodedata.normalize("NFD", ZOE), ZOE.replace("Zoë", "Zo\u00adë")]
    return _input(_jsonl(scratch / "in.jsonl", [{"id": str(i), "text": t}
                                                for i, t in enumerate(forms)])) + [
        "--placeholder", "pseudonym"]


def _one_pseudonym(outcome: Outcome) -> Optional[str]:
    texts = {row["redacted_text"] for row in outcome.rows}
    return None if len(texts) == 1 and "[PER_" in next(iter(texts)) else f"{len(texts)} forms"


def _compressed(suffix: str, compress: Callable[[bytes], bytes]):
    def build(scratch: Path, model: Path) -> list:
        raw = b"".join(json.dumps({"id": str(i), "text": f"Angela Merkel visited Paris {i}."}
                                  ).encode() + b"\n" for i in range(2))
        (scratch / f"in.jsonl{suffix}").write_bytes(compress(raw))
        (scratch / f"doc.txt{suffix}").write_bytes(compress(b"Olaf Scholz spoke in Berlin."))
        return _input(scratch / f"*{suffix}")
    return build


def _zstd(data: bytes) -> bytes:
    import zstandard

    return zstandard.ZstdCompressor().compress(data)


def _truncated(scratch: Path, model: Path) -> list:
    raw = b"".join(json.dumps({"id": str(i), "text": f"Angela Merkel visited Paris {i}. " * 30}
                              ).encode() + b"\n" for i in range(300))
    data = gzip.compress(raw)
    (scratch / "in.jsonl.gz").write_bytes(data[:len(data) // 2])
    text = gzip.compress(("Xanthippe Moreau wrote this. " * 2000).encode())
    (scratch / "doc.txt.gz").write_bytes(text[:len(text) // 2])
    return _input(scratch / "*.gz")


def _truncated_check(outcome: Outcome) -> Optional[str]:
    letters = [d for d in outcome.dead if d["reason"] == "unreadable_file"]
    if outcome.code != 0 or outcome.summary is None or not outcome.summary["counts_add_up"]:
        return f"exit {outcome.code} or counts do not add up"
    if len(letters) != 2 or not all(d["detail"].startswith("truncated") for d in letters):
        return f"expected 2 'truncated' unreadable_file letters, got {letters}"
    if not 0 < outcome.summary["records_out"] < 300:
        return f"records_out {outcome.summary['records_out']}: the readable part is lost"
    return None


def _punctuation(scratch: Path, model: Path) -> list:
    return _input(_jsonl(scratch / "in.jsonl", [{"id": "bang", "text": "!" * 20_000}]))


def _equals(scratch: Path, model: Path) -> list:
    return _input(_jsonl(scratch / "in.jsonl", [{"id": str(i), "text": "=" * 10_000}
                                                for i in range(2)]))


def _apostrophes(scratch: Path, model: Path) -> list:
    return _input(_jsonl(scratch / "in.jsonl", [{"id": "s", "text": "'s" * 10_000 + " Ada"},
                                                {"id": "e", "text": "😀!" * 10_000}]))


def _timeout(scratch: Path, model: Path) -> list:
    return _input(_jsonl(scratch / "in.jsonl", [
        {"id": "small", "text": "Ada met Bob."}, {"id": "huge", "text": "Ada met Bob. " * 150_000}
    ])) + ["--record-timeout", "0.5"]


def _big_text(megabytes: int):
    def build(scratch: Path, model: Path) -> list:
        path = scratch / "big.txt"
        block = ("Xanthippe Moreau wrote this line. " * 30 + "\n").encode()
        with open(path, "wb") as handle:
            for _ in range(megabytes * MiB // len(block)):
                handle.write(block)
        return _input(path)
    return build


def _bomb(scratch: Path, model: Path) -> list:
    with gzip.open(scratch / "bomb.txt.gz", "wb", compresslevel=9) as handle:
        for _ in range(1024):
            handle.write(b"a" * MiB)            # 1 GiB of text in about 1 MB
    return _input(scratch / "bomb.txt.gz")


def _huge_line(scratch: Path, model: Path) -> list:
    with open(scratch / "in.jsonl", "wb") as handle:
        handle.write(b'{"id": "huge", "text": "')
        for _ in range(300):
            handle.write(b"x" * MiB)
        handle.write(b'"}\n{"id": "next", "text": "Ada met Bob."}\n')
    return _input(scratch / "in.jsonl") + ["--max-chars", "1000"]


def _empty(scratch: Path, model: Path) -> list:
    return _input(_jsonl(scratch / "in.jsonl", [{"id": "e", "text": ""}, {"id": "w", "text": " \n"},
                                                {"id": "a", "text": "Ada met Bob."}]))


def _empty_check(outcome: Outcome) -> Optional[str]:
    if outcome.summary and outcome.summary.get("empty_documents") != 2:
        return f"empty_documents {outcome.summary.get('empty_documents')}"
    return None


def _wording(scratch: Path, model: Path) -> list:
    path = scratch / "in.jsonl"
    path.write_bytes(b'null\n{"id": "a", "text": "Angela Mer\n')
    return _input(path)


def _wording_check(outcome: Outcome) -> Optional[str]:
    details = " | ".join(sorted(d["detail"] for d in outcome.dead))
    if "at at" in details or "NoneType" in details:
        return details
    return None


def _broken_model(change: Callable[[Path], None]):
    def build(scratch: Path, model: Path) -> list:
        broken = scratch / "model"
        shutil.copytree(model, broken)
        change(broken)
        return _input(_jsonl(scratch / "in.jsonl", [{"id": "a", "text": "Ada met Bob."}])) + [
            "--model", str(broken)]
    return build


def _config_change(**changes):
    def change(model: Path) -> None:
        config = json.loads((model / "larvatus_model.json").read_text())
        config.update(changes)
        (model / "larvatus_model.json").write_text(json.dumps(config))
    return change


def _truncate_tokenizer(model: Path) -> None:
    content = (model / "tokenizer.json").read_bytes()
    (model / "tokenizer.json").write_bytes(content[:len(content) // 2])


def _tiny(*extra: str):
    def build(scratch: Path, model: Path) -> list:
        return _input(_jsonl(scratch / "in.jsonl", [{"id": "a", "text": "Ada met Bob."}])) + list(extra)
    return build


CASES = [
    Case("merkel-in-misc", _merkel, _all(_ran(1), _absent("Merkel", "Smith")), quick=True),
    Case("joiners-and-nul", _joiners, _all(
        _ran(1), _absent("Pe\u200dter", "ter Mwa", "ngi", "niew", "Quartermaine"))),
    Case("pseudonym-forms", _pseudonyms, _all(_ran(3), _one_pseudonym),
         env={KEY_ENV: "hostile-sweep-key-0123456789"}),
    *[Case(f"compressed{suffix}", _compressed(suffix, compress), _ran(3),
           quick=suffix == ".bz2")
      for suffix, compress in ((".gz", gzip.compress), (".bz2", bz2.compress),
                               (".xz", lzma.compress), (".zst", _zstd))],
    Case("truncated-gz", _truncated, _truncated_check, quick=True),
    Case("bang-20000", _punctuation, _all(_ran(1), _segment_under(5)), quick=True),
    Case("equals-10000x2", _equals, _all(_ran(2), _segment_under(5))),
    Case("apostrophe-s-and-emoji", _apostrophes, _all(
        _ran(2), _absent("Ada"), _segment_under(5))),
    Case("record-timeout", _timeout, _ran(1, timeout=1)),
    Case("big-text-file", _big_text(300), _ran(0, too_large=1)),
    Case("big-text-file-60MB", _big_text(60), _ran(0, too_large=1), quick=True),
    Case("gzip-bomb-1GiB", _bomb, _ran(0, too_large=1)),
    Case("jsonl-line-300MB", _huge_line, _ran(1, too_large=1)),
    Case("model-tokenizer-truncated", _broken_model(_truncate_tokenizer),
         _refused("tokenizer.json cannot be read")),
    Case("model-labels-null", _broken_model(_config_change(labels=None)),
         _refused("labels must be a list")),
    Case("model-labels-string", _broken_model(_config_change(labels="B-PER")),
         _refused("labels must be a list")),
    Case("model-max-length-abc", _broken_model(_config_change(max_length="abc")),
         _refused("max_length must be a whole number")),
    Case("model-special-tokens", _broken_model(
        _config_change(special_tokens={"cls": "<s>", "sep": "</s>"})),
         _refused("tokenizer has no '<s>' token")),
    Case("model-max-length-4096", _broken_model(_config_change(max_length=4096)),
         _refused("positions"), quick=True),
    Case("window-length-0", _tiny("--window-length", "0"), _refused("--window-length")),
    Case("intra-op-threads-minus-3", _tiny("--intra-op-threads", "-3"),
         _refused("intra_op_threads")),
    Case("empty-documents", _empty, _all(_ran(3), _empty_check)),
    Case("wording", _wording, _all(_ran(0, invalid_json=1, not_an_object=1),
                                          _wording_check, _detail("not_an_object", "line holds null"))),
]


# --- running ----------------------------------------------------------------------------

def _read_rows(output: Path, prefix: str) -> list:
    import pyarrow.parquet as pq

    from larvatus.layout import annotation_files_pattern, dead_letter_files_pattern

    pattern = {"annotations": annotation_files_pattern,
               "dead_letter": dead_letter_files_pattern}[prefix](str(output))
    return [row for path in sorted(glob.glob(pattern)) for row in pq.read_table(path).to_pylist()]


# Runs the pipeline as its own child and reports that child's exit code and peak RSS.
# A process's ru_maxrss starts from the RSS of the process it was forked from (Linux
# carries the parent's high-water mark over fork and exec), so the pipeline is started
# from this small interpreter rather than from the driver, which may be a test process
# of a gigabyte. os.wait4, not Popen.wait: it reaps the child and hands back its rusage.
_LAUNCHER = """
import json, os, subprocess, sys, time
command, timeout = json.loads(sys.argv[1]), float(sys.argv[2])
child = subprocess.Popen(command, stdout=subprocess.DEVNULL)
deadline = time.monotonic() + timeout
while True:
    pid, status, usage = os.wait4(child.pid, os.WNOHANG)
    if pid:
        break
    if time.monotonic() > deadline:
        child.kill()
        _, status, usage = os.wait4(child.pid, 0)
        break
    time.sleep(0.05)
print(json.dumps({"code": os.waitstatus_to_exitcode(status), "maxrss_kib": usage.ru_maxrss}))
"""


def run_case(case: Case, root: Path, model: Path, scratch: Path, timeout: float) -> Outcome:
    """Builds the case's input under `scratch`, runs the pipeline of checkout `root` on it."""
    scratch.mkdir(parents=True, exist_ok=True)
    output = scratch / "out"
    argv = case.build(scratch, model)
    if "--model" not in argv:
        argv += ["--model", str(model)]
    command = [sys.executable, "-m", "larvatus.run", *argv, "--output", str(output),
               "--device", "cpu"]
    env = {**os.environ, "PYTHONPATH": str(root), **case.env}
    started = time.perf_counter()
    with tempfile.TemporaryFile() as err:
        launcher = subprocess.run(
            [sys.executable, "-c", _LAUNCHER, json.dumps(command), str(timeout)], cwd=root,
            env=env, stdout=subprocess.PIPE, stderr=err, timeout=timeout + 60)
        seconds = time.perf_counter() - started
        err.seek(0)
        stderr = err.read().decode("utf-8", "replace")
    child = json.loads(launcher.stdout)
    outcome = Outcome(child["code"], stderr, seconds, child["maxrss_kib"] / 1024)
    summary = output / "_SUMMARY.json"
    if summary.exists():
        outcome.summary = json.loads(summary.read_text())
        outcome.rows = _read_rows(output, "annotations")
        outcome.dead = _read_rows(output, "dead_letter")
    return outcome


def sweep(cases: Sequence[Case], root: Path = ROOT, model: Optional[Path] = None,
          timeout: float = 600, keep: Optional[Path] = None, echo=print) -> list[dict]:
    """Runs each case in turn; returns one row per case (and prints it as it goes)."""
    model = model or root / "models" / "default"
    base = Path(keep) if keep else Path(tempfile.mkdtemp(prefix="larvatus-hostile-"))
    rows = []
    echo(f"{'case':<28} {'outcome':<8} {'seconds':>8} {'peak MiB':>9}  detail")
    try:
        for case in cases:
            outcome = run_case(case, root, model, base / case.name, timeout)
            problem = case.check(outcome)
            row = {"case": case.name, "ok": problem is None,
                   "detail": (problem or _describe(outcome)).replace(
                       str(base / case.name), "…")[:120],
                   "seconds": round(outcome.seconds, 1),
                   "peak_mib": round(outcome.peak_mib), "exit": outcome.code,
                   "stage_seconds": (outcome.summary or {}).get("stage_seconds", {})}
            rows.append(row)
            echo(f"{case.name:<28} {'ok' if row['ok'] else 'FAILED':<8} "
                 f"{row['seconds']:>8.1f} {row['peak_mib']:>9}  {row['detail']}")
            if not keep:
                shutil.rmtree(base / case.name, ignore_errors=True)
    finally:
        if not keep:
            shutil.rmtree(base, ignore_errors=True)
    return rows


def _describe(outcome: Outcome) -> str:
    if outcome.summary is None:
        lines = outcome.stderr.strip().splitlines()
        return lines[-1] if lines else f"exit {outcome.code}"
    s = outcome.summary
    stages = s.get("stage_seconds", {})
    slowest = max(stages, key=stages.get) if stages else "-"
    return (f"{s['records_out']} out, {s['dead_lettered']} dead {s['dead_lettered_by_reason']}"
            f"; slowest stage {slowest} {stages.get(slowest, 0):.1f} s")


def parse_args(argv: Optional[Sequence[str]] = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--quick", action="store_true", help="only the cases CI runs")
    parser.add_argument("--cases", help="comma-separated case names (see --list)")
    parser.add_argument("--list", action="store_true", help="list the cases and exit")
    parser.add_argument("--root", type=Path, default=ROOT,
                        help="the checkout whose pipeline runs (default: this one)")
    parser.add_argument("--model", type=Path, help="model directory (default: ROOT/models/default)")
    parser.add_argument("--timeout", type=float, default=600, help="seconds per case")
    parser.add_argument("--keep", type=Path, help="keep inputs and outputs under this folder")
    parser.add_argument("--json", type=Path, help="write the rows to this file")
    return parser.parse_args(argv)


def main(argv: Optional[Sequence[str]] = None) -> int:
    args = parse_args(argv)
    cases = [c for c in CASES if c.quick] if args.quick else CASES
    if args.cases:
        wanted = set(args.cases.split(","))
        unknown = wanted - {c.name for c in CASES}
        if unknown:
            print(f"unknown cases: {sorted(unknown)}", file=sys.stderr)
            return 2
        cases = [c for c in CASES if c.name in wanted]
    if args.list:
        for case in cases:
            print(f"{case.name:<28}{'  (quick)' if case.quick else ''}")
        return 0
    rows = sweep(cases, args.root.resolve(), args.model, args.timeout, args.keep)
    if args.json:
        args.json.write_text(json.dumps(rows, indent=2))
    failed = [r["case"] for r in rows if not r["ok"]]
    print(f"{len(rows) - len(failed)}/{len(rows)} cases as expected"
          + (f"; unexpected: {', '.join(failed)}" if failed else ""))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
