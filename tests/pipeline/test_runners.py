"""The sample job on Beam's portable topology and on several processes, rows compared with the DirectRunner's.

Beam's Python local job service and an external SDK worker pool run here as
subprocesses (the Job API and Fn API that Dataflow, Flink and Spark speak, without
Docker). The worker pool runs from another working directory with Larvatus installed
elsewhere (a copy on its PYTHONPATH), so it cannot lean on the launcher's checkout.
Every subprocess has a timeout and is killed, with its process group, in teardown.
"""
from __future__ import annotations

import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest

from larvatus.run import run
from tests.paths import ROOT
from tests.rows import differing, read_rows

SAMPLE = ROOT / "pipeline" / "sample" / "news.jsonl"
# Repository folder -> installed package path (setup.py's package_dir), parents first.
PACKAGES = {"pipeline": "larvatus", "transforms": "larvatus/transforms", "models": "larvatus/models"}
START_TIMEOUT = 120
JOB_TIMEOUT = 600
KEY_ENV = "LARVATUS_TEST_PSEUDONYM_KEY"
KEY = "portable-test-key-3vX8qL2mN7"

pytestmark = pytest.mark.slow


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("localhost", 0))
        return sock.getsockname()[1]


def wait_for(condition, what: str, process: subprocess.Popen, log: Path) -> None:
    deadline = time.monotonic() + START_TIMEOUT
    while time.monotonic() < deadline:
        if condition():
            return
        if process.poll() is not None:
            break
        time.sleep(0.2)
    raise RuntimeError(f"{what} did not start (exit {process.poll()}):\n"
                       f"{log.read_text(errors='replace')[-3000:]}")


def port_open(port: int) -> bool:
    try:
        with socket.create_connection(("localhost", port), timeout=1):
            return True
    except OSError:
        return False


class Service:
    """A long-running subprocess in its own process group, stopped with everything it started."""

    def __init__(self, command, cwd: Path, env: dict, log: Path):
        self.log = log
        self._handle = open(log, "w")
        self.process = subprocess.Popen(
            command, cwd=cwd, env=env, stdout=self._handle, stderr=subprocess.STDOUT,
            stdin=subprocess.DEVNULL, start_new_session=True)

    def stop(self) -> None:
        for sig, wait in ((signal.SIGTERM, 10), (signal.SIGKILL, 10)):
            try:
                os.killpg(self.process.pid, sig)
            except ProcessLookupError:
                break
            try:
                self.process.wait(timeout=wait)
                break
            except subprocess.TimeoutExpired:
                continue
        try:   # the group may outlive its leader (SDK workers the pool started)
            os.killpg(self.process.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
        self._handle.close()


def install_copy(target: Path) -> Path:
    """Larvatus's packages as an install would lay them out, away from the checkout."""
    for folder, package in PACKAGES.items():
        shutil.copytree(ROOT / folder, target / package,
                        ignore=shutil.ignore_patterns("__pycache__", "*.pyc"))
    return target


def clean_env(**extra) -> dict:
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "LARVATUS_CACHE")}
    env["PATH"] = f"{Path(sys.executable).parent}{os.pathsep}{env.get('PATH', '')}"
    env.update(extra)
    return env


@pytest.fixture(scope="module")
def job_service(tmp_path_factory):
    home = tmp_path_factory.mktemp("job-service")
    port_file = home / "port"
    service = Service(
        [sys.executable, "-m", "apache_beam.runners.portability.local_job_service_main",
         "--port", "0", "--port_file", str(port_file)],
        cwd=home, env=clean_env(), log=home / "log")
    try:
        wait_for(port_file.exists, "the job service", service.process, service.log)
        yield f"localhost:{port_file.read_text().strip()}"
    finally:
        service.stop()


@pytest.fixture(scope="module")
def worker_pool(tmp_path_factory):
    """An external worker pool that sees Larvatus only as an installed copy, from another directory."""
    base = tmp_path_factory.mktemp("worker")
    site = install_copy(base / "site-packages")
    home = base / "home"
    home.mkdir()
    env = clean_env(PYTHONPATH=str(site), LARVATUS_CACHE=str(home / "cache"), **{KEY_ENV: KEY})
    # What the pool's workers import: the installed copy, never the launcher's checkout.
    seen = subprocess.run(
        ["python", "-c", "import larvatus.models, larvatus.transforms; "
         "print(larvatus.models.__file__, larvatus.transforms.__file__)"],
        cwd=home, env=env, capture_output=True, text=True, timeout=120)
    assert seen.returncode == 0, seen.stderr
    assert all(path.startswith(str(site)) for path in seen.stdout.split()), seen.stdout
    for attempt in range(3):
        port = free_port()
        service = Service(
            [sys.executable, "-m", "apache_beam.runners.worker.worker_pool_main",
             "--service_port", str(port)], cwd=home, env=env, log=base / f"log-{attempt}")
        try:
            wait_for(lambda: port_open(port), "the worker pool", service.process, service.log)
        except RuntimeError:
            service.stop()
            if attempt == 2:
                raise
            continue
        try:
            yield f"localhost:{port}"
        finally:
            service.stop()
        return


def launch(args, cwd: Path, env: dict, wrapper: str = "") -> subprocess.CompletedProcess:
    """`python -m larvatus.run ARGS` as a user runs it, with a timeout so nothing hangs CI."""
    if wrapper:
        command = [sys.executable, "-c", wrapper, *map(str, args)]
    else:
        command = [sys.executable, "-m", "larvatus.run", *map(str, args)]
    done = subprocess.run(command, cwd=cwd, env=env, capture_output=True, text=True,
                          timeout=JOB_TIMEOUT)
    assert done.returncode == 0, done.stderr[-4000:]
    return done


def direct_rows(tmp_path: Path, *args) -> dict:
    output = tmp_path / "direct"
    run(["--input", str(SAMPLE), "--output", str(output), *map(str, args)])
    return read_rows(output)


def summary(output: Path) -> dict:
    return json.loads((output / "_SUMMARY.json").read_text())


def test_external_worker_pool_gives_the_direct_runners_rows(
        job_service, worker_pool, rigged_fp32_model_dir, tmp_path, monkeypatch):
    """fp32 model (batch-independent): rows must be identical; the key is read on the worker."""
    monkeypatch.setenv(KEY_ENV, KEY)
    options = ["--model", rigged_fp32_model_dir, "--placeholder", "pseudonym",
               "--pseudonym-key-env", KEY_ENV, "--device", "cpu"]
    expected = direct_rows(tmp_path, *options)
    output = tmp_path / "portable"
    launch(["--input", SAMPLE, "--output", output, *options, "--runner", "PortableRunner",
            "--job_endpoint", job_service, "--environment_type", "EXTERNAL",
            "--environment_config", worker_pool],
           cwd=ROOT, env=clean_env(**{KEY_ENV: KEY}))
    rows = read_rows(output)
    assert len(rows) == 36 and differing(rows, expected) == []
    assert any("[PER_" in text for text, _ in rows.values())
    assert summary(output)["records_out"] == 36


# Runs inside the launcher's process: its own copy of the embedded model is deleted right
# after its checks (spec, tokenizer, model probe) and before the graph is built, so a worker
# that tried the launcher's path would find nothing.
VANISHING_CHECKOUT = """
import shutil, sys
import larvatus.run as job
from larvatus.models import model_dir
checked = job.build
def build(pipeline, config):
    shutil.rmtree(model_dir.embedded_model_dir())
    return checked(pipeline, config)
job.build = build
sys.exit(job.main(sys.argv[1:]))
"""


def test_embedded_model_on_a_worker_that_cannot_see_the_launchers_checkout(
        job_service, worker_pool, tmp_path):
    """The embedded sentinel resolves on the worker from its installed package.

    Rows must equal the DirectRunner's: the dynamically quantized int8 model runs one
    window per call, so a document's tags do not depend on how a runner batches it.
    """
    expected = direct_rows(tmp_path)
    checkout = install_copy(tmp_path / "launcher-checkout")
    output = tmp_path / "portable"
    launch(["--input", SAMPLE, "--output", output, "--runner", "PortableRunner",
            "--job_endpoint", job_service, "--environment_type", "EXTERNAL",
            "--environment_config", worker_pool],
           cwd=checkout, env=clean_env(PYTHONPATH=str(checkout)), wrapper=VANISHING_CHECKOUT)
    assert not (checkout / "larvatus" / "models" / "default").exists()
    rows = read_rows(output)
    assert set(rows) == set(expected) and len(rows) == 36
    assert summary(output)["model"]["path"] == "embedded:default"
    assert differing(rows, expected) == []


def test_a_model_path_only_the_launcher_can_see_fails_on_the_worker_with_a_clear_error(
        job_service, worker_pool, tmp_path):
    checkout = install_copy(tmp_path / "launcher-checkout")
    command = [sys.executable, "-c", VANISHING_CHECKOUT, "--input", SAMPLE, "--output",
               tmp_path / "out", "--model", checkout / "larvatus" / "models" / "default",
               "--runner", "PortableRunner", "--job_endpoint", job_service,
               "--environment_type", "EXTERNAL", "--environment_config", worker_pool]
    done = subprocess.run(list(map(str, command)), cwd=checkout,
                          env=clean_env(PYTHONPATH=str(checkout)), capture_output=True,
                          text=True, timeout=JOB_TIMEOUT)
    assert done.returncode != 0
    assert "ModelError: on worker " in done.stderr
    assert "(a path on the launcher's disk) does not exist on this worker" in done.stderr
    assert "re-export" not in done.stderr


def test_loopback_gives_the_direct_runners_rows(job_service, rigged_fp32_model_dir, tmp_path):
    options = ["--model", rigged_fp32_model_dir, "--device", "cpu"]
    expected = direct_rows(tmp_path, *options)
    output = tmp_path / "loopback"
    launch(["--input", SAMPLE, "--output", output, *options, "--runner", "PortableRunner",
            "--job_endpoint", job_service, "--environment_type", "LOOPBACK"],
           cwd=ROOT, env=clean_env())
    assert differing(read_rows(output), expected) == []
    assert summary(output)["records_out"] == 36


def test_two_worker_processes_share_the_corpus_and_give_the_same_rows(
        rigged_fp32_model_dir, tmp_path):
    options = ["--model", rigged_fp32_model_dir, "--device", "cpu"]
    expected = direct_rows(tmp_path, *options)
    output = tmp_path / "multi"
    launch(["--input", SAMPLE, "--output", output, *options, "--direct_num_workers", "2",
            "--direct_running_mode", "multi_processing"], cwd=ROOT, env=clean_env())
    assert differing(read_rows(output), expected) == []
    counters = summary(output)["beam_counters"]
    assert counters["worker_processes"] == 2   # both processes annotated documents
