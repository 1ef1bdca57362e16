"""Parallelism check: the same corpus on one process and on several DirectRunner worker processes."""
# Runs `python -m larvatus.run` (a subprocess each time, the whole process timed) on the
# sample corpus repeated `--copies` times (ids made unique), in these configurations,
# interleaved `--repeats` times:
#
# - `1 process x N threads`: the DirectRunner's default in-memory mode, one ONNX Runtime
#   session with N intra-op threads (`--intra-op-threads N`; N = `--cores`, by default the
#   cores this process may use);
# - `N processes x 1 thread`: `--direct_num_workers N --direct_running_mode multi_processing`
#   (the handler gives each process cores/N intra-op threads, spinning off);
# - `N processes x 1 thread, --large-model`: the same with one model copy shared by all;
# - with `--portable`, also `PortableRunner LOOPBACK` and `PortableRunner EXTERNAL`: Beam's
#   Python local job service and an external SDK worker pool started here as subprocesses
#   (the topology of tests/pipeline/test_runners.py), the SDK workers in the pool's processes.
#
# For each it prints the median wall time of the whole process, words/s (the summary's
# word count over it), the summary's `worker_processes` counter (how many processes
# annotated at least one document: the Reshuffle after parsing is what spreads them) and
# how many documents' rows (`redacted_text`, or entity spans: start, end, label; scores
# aside) differ from the one-process run's. A model whose predictions depend on batch composition (dynamic int8
# quantization) makes rows differ between configurations, because documents are batched
# differently; a batch-independent model gives 0.
#
#     python bench/parallel.py                     # embedded model, 4 copies, 2 repeats
#     python bench/parallel.py --model DIR --copies 2 --repeats 1
#     python bench/parallel.py --copies 1 --repeats 3 --portable   # the sample corpus, 5 ways
from __future__ import annotations

import argparse
import glob
import json
import os
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from contextlib import contextmanager
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
SAMPLE = REPO / "pipeline" / "sample" / "news.jsonl"


def configs_for(cores: int) -> dict[str, list[str]]:
    """The DirectRunner configurations compared on `cores` cores; the first is the reference."""
    multi = ["--direct_num_workers", str(cores), "--direct_running_mode", "multi_processing"]
    return {
        f"1 process x {cores} threads": ["--intra-op-threads", str(cores)],
        f"{cores} processes x 1 thread": multi,
        f"{cores} processes x 1 thread, --large-model": multi + ["--large-model"],
    }


@contextmanager
def service(command: list[str], cwd: Path, ready, env: dict):
    """A subprocess in its own process group, killed with its children on the way out."""
    log = open(cwd / "service.log", "w")
    process = subprocess.Popen(command, cwd=cwd, env=env, stdout=log, stderr=subprocess.STDOUT,
                               start_new_session=True)
    try:
        deadline = time.monotonic() + 120
        while not ready():
            if process.poll() is not None or time.monotonic() > deadline:
                raise SystemExit(f"{command} did not start: {(cwd / 'service.log').read_text()}")
            time.sleep(0.2)
        yield
    finally:
        for sig in (signal.SIGTERM, signal.SIGKILL):
            try:
                os.killpg(process.pid, sig)
                process.wait(timeout=10)
            except (ProcessLookupError, subprocess.TimeoutExpired):
                pass
        log.close()


@contextmanager
def portable_endpoints(tmp: Path):
    """Beam's local job service and an external worker pool, as in tests/pipeline/test_runners.py."""
    env = dict(os.environ, PYTHONPATH=str(REPO),
               PATH=f"{Path(sys.executable).parent}{os.pathsep}{os.environ.get('PATH', '')}")
    (tmp / "job").mkdir()
    (tmp / "pool").mkdir()
    port_file = tmp / "job" / "port"
    with socket.socket() as sock:
        sock.bind(("localhost", 0))
        pool_port = sock.getsockname()[1]

    def pool_ready():
        try:
            socket.create_connection(("localhost", pool_port), timeout=1).close()
            return True
        except OSError:
            return False

    with service([sys.executable, "-m", "apache_beam.runners.portability.local_job_service_main",
                  "--port", "0", "--port_file", str(port_file)], tmp / "job",
                 port_file.exists, env), \
            service([sys.executable, "-m", "apache_beam.runners.worker.worker_pool_main",
                     "--service_port", str(pool_port)], tmp / "pool", pool_ready, env):
        yield f"localhost:{port_file.read_text().strip()}", f"localhost:{pool_port}"


def make_corpus(path: Path, copies: int) -> int:
    lines = [json.loads(line) for line in SAMPLE.read_text(encoding="utf-8").splitlines()
             if line.strip()]
    with open(path, "w", encoding="utf-8") as handle:
        for copy in range(copies):
            for doc in lines:
                handle.write(json.dumps({"id": f"{doc['id']}#{copy}", "text": doc["text"]},
                                        ensure_ascii=False) + "\n")
    return copies * len(lines)


def rows(output: Path) -> dict:
    import pyarrow.parquet as pq

    from larvatus.layout import annotation_files_pattern

    out = {}
    for name in glob.glob(annotation_files_pattern(str(output))):
        for row in pq.read_table(name).to_pylist():
            # scores are left out: a row differs only if its text or its spans do
            entities = tuple((e["start"], e["end"], e["label"]) for e in row["entities"])
            out[row["id"]] = (row["redacted_text"], entities)
    return out


def run_once(corpus: Path, output: Path, model: str, extra: list[str]) -> dict:
    command = [sys.executable, "-m", "larvatus.run", "--input", str(corpus), "--output",
               str(output), "--model", model, "--overwrite", *extra]
    started = time.perf_counter()
    done = subprocess.run(command, cwd=REPO, capture_output=True, text=True)
    wall = time.perf_counter() - started
    if done.returncode != 0:
        raise SystemExit(f"{' '.join(command)} failed:\n{done.stderr[-3000:]}")
    from larvatus.layout import SUMMARY_NAME

    summary = json.loads((output / SUMMARY_NAME).read_text())
    return {"wall": wall, "workers": summary["beam_counters"].get("worker_processes", 0),
            "records_out": summary["records_out"], "words": summary.get("words", 0)}


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--model", default="embedded:default")
    parser.add_argument("--copies", type=int, default=4)
    parser.add_argument("--repeats", type=int, default=2)
    parser.add_argument("--cores", type=int, default=len(os.sched_getaffinity(0)),
                        help="N: compare 1 process x N threads with N processes x 1 thread "
                             "(default: the cores this process may use).")
    parser.add_argument("--portable", action="store_true",
                        help="also run on PortableRunner (LOOPBACK, EXTERNAL worker pool)")
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory(prefix="larvatus-parallel-") as tmp:
        tmp = Path(tmp)
        with (portable_endpoints(tmp) if args.portable else _nothing()) as endpoints:
            return measure(tmp, args, endpoints)


@contextmanager
def _nothing():
    yield None


def measure(tmp: Path, args, endpoints) -> int:
    configs = configs_for(args.cores)
    reference_name = next(iter(configs))
    if endpoints:
        job, pool = endpoints
        portable = ["--runner", "PortableRunner", "--job_endpoint", job]
        configs["PortableRunner LOOPBACK"] = portable + ["--environment_type", "LOOPBACK"]
        configs["PortableRunner EXTERNAL"] = portable + [
            "--environment_type", "EXTERNAL", "--environment_config", pool]
    documents = make_corpus(tmp / "corpus.jsonl", args.copies)
    print(f"{documents} documents, {os.cpu_count()} cores, load average "
          f"{os.getloadavg()[0]:.1f} at start")
    results = {name: [] for name in configs}
    outputs = {}
    for repeat in range(args.repeats):
        for name, extra in configs.items():
            output = tmp / name.replace(" ", "_").replace(",", "").replace("-", "")
            result = run_once(tmp / "corpus.jsonl", output, args.model, extra)
            results[name].append(result)
            outputs[name] = output
            print(f"  run {repeat + 1} {name}: {result['wall']:.1f} s, "
                  f"{result['workers']} worker processes", flush=True)
    reference = rows(outputs[reference_name])
    print(f"\n| configuration | median wall s (whole process) | words/s | worker processes | "
          f"rows differing from {reference_name} | of which redacted_text differs | "
          f"entity spans differ |")
    print("|---|---|---|---|---|---|---|")
    for name in configs:
        walls = [r["wall"] for r in results[name]]
        these = rows(outputs[name])
        assert set(these) == set(reference), "documents missing"
        differ = [k for k in reference if these[k] != reference[k]]
        texts = sum(these[k][0] != reference[k][0] for k in differ)
        spans = sum(these[k][1] != reference[k][1] for k in differ)
        words = results[name][-1]["words"]
        print(f"| {name} | {statistics.median(walls):.1f} | "
              f"{words / statistics.median(walls):,.0f} | "
              f"{results[name][-1]['workers']} | {len(differ)} of {len(reference)} | "
              f"{texts} | {spans} |")
    print(f"\nload average at end {os.getloadavg()[0]:.1f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
