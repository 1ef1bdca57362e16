"""Input, model and output on S3 (a real S3 server on the loopback: moto), on every topology.

The commands run as users run them, in subprocesses: `larvatus run`, `show`, `report`,
a bare Beam worker pool (`apache_beam.runners.worker.worker_pool_main`, which gives the
file layer no options of its own) behind Beam's local job service. Credentials reach
each process through its environment only.
"""
from __future__ import annotations

import argparse
import json
import shlex
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest

from larvatus import remote, storage
from tests.paths import ROOT
from tests.rows import differing, read_rows
from tests.s3server import BUCKET, S3Server, no_credentials_env
from tests.pipeline.test_runners import (  # noqa: F401  (job_service is a fixture used here)
    SAMPLE, Service, clean_env, direct_rows, install_copy, job_service, port_open, wait_for,
)

COMMAND_TIMEOUT = 300
# A worker or launcher without credentials must fail within this many seconds.
FAIL_FAST_SECONDS = 60
# Imports of the named modules fail in the process: a machine without that library.
HIDE_MODULES = """
import importlib.abc, os, sys
HIDDEN = set(os.environ["LARVATUS_TEST_HIDDEN_MODULES"].split(","))
class Hide(importlib.abc.MetaPathFinder):
    def find_spec(self, name, path=None, target=None):
        if name in HIDDEN or any(name.startswith(h + ".") for h in HIDDEN):
            raise ModuleNotFoundError(f"No module named {name!r}", name=name)
        return None
sys.meta_path.insert(0, Hide())
"""


@pytest.fixture(scope="module")
def s3(tmp_path_factory):
    server = S3Server(tmp_path_factory.mktemp("s3") / "moto.log")
    try:
        server.client().create_bucket(Bucket=BUCKET)
        yield server
    finally:
        server.stop()


def larvatus(args, env: dict, timeout: float = COMMAND_TIMEOUT) -> subprocess.CompletedProcess:
    """`larvatus ARGS` in a subprocess, from the repository root."""
    return subprocess.run([sys.executable, "-m", "larvatus.cli", *map(str, args)], cwd=ROOT,
                          env=env, capture_output=True, text=True, timeout=timeout)


def without(tmp_path: Path, *modules: str) -> dict:
    """An environment whose Python cannot import `modules` (a sitecustomize hides them)."""
    site = tmp_path / "hide-modules"
    site.mkdir(exist_ok=True)
    (site / "sitecustomize.py").write_text(HIDE_MODULES)
    return no_credentials_env(PYTHONPATH=str(site),
                              LARVATUS_TEST_HIDDEN_MODULES=",".join(modules))


# --- the options and the missing pieces, without a server


def test_store_flags_are_beams_filesystem_options():
    from apache_beam.options.pipeline_options import (
        AzureOptions, HadoopFileSystemOptions, S3Options,
    )

    parser = argparse.ArgumentParser()
    for view in (S3Options, HadoopFileSystemOptions, AzureOptions):
        view._add_argparse_args(parser)
    beams = {a.dest: a.nargs == 0 for a in parser._actions if a.dest != "help"}
    assert beams == remote.STORE_FLAGS


def test_store_options_install_themselves_where_unpickled_and_hide_their_values():
    import pickle

    from apache_beam.io.filesystems import FileSystems
    from apache_beam.options.pipeline_options import PipelineOptions, S3Options

    options = remote.StoreOptions.of(PipelineOptions(
        ["--s3_endpoint_url", "http://127.0.0.1:9", "--s3_secret_access_key", "s3cr3t",
         "--direct_num_workers", "2"]))
    assert dict(options.items) == {"s3_endpoint_url": "http://127.0.0.1:9",
                                   "s3_secret_access_key": "s3cr3t"}
    assert "s3cr3t" not in repr(options)
    from apache_beam.options.value_provider import RuntimeValueProvider

    before = FileSystems._pipeline_options
    runtime_before = RuntimeValueProvider.runtime_options
    FileSystems._pipeline_options = None    # a bare SDK harness: nobody set them
    RuntimeValueProvider.runtime_options = None   # (an earlier job in this process would have)
    try:
        pickle.loads(pickle.dumps(options))
        installed = FileSystems._pipeline_options
        assert installed is not None
        assert installed.view_as(S3Options).s3_endpoint_url == "http://127.0.0.1:9"
        remote.StoreOptions(()).install()     # options already there are kept
        assert FileSystems._pipeline_options is installed
    finally:
        FileSystems._pipeline_options = before
        RuntimeValueProvider.runtime_options = runtime_before


@pytest.mark.slow
@pytest.mark.parametrize("command", [
    ["run", "--input", "s3://b-in/corpus/*.jsonl", "--output", "{tmp}/out"],
    ["run", "--input", str(SAMPLE), "--output", "s3://b-out/out"],
    ["show", "s3://b-out/out"],
    ["report", "s3://b-out/out"],
], ids=["run-s3-input", "run-s3-output", "show", "report"])
def test_s3_without_boto3_exits_2_naming_the_extra(command, tmp_path):
    args = [a.replace("{tmp}", str(tmp_path)) for a in command]
    done = larvatus(args, without(tmp_path, "boto3"), timeout=120)
    assert done.returncode == 2, done.stderr[-3000:]
    assert "needs boto3, which is not installed: pip install 'larvatus[aws]'" in done.stderr
    assert "Traceback" not in done.stderr


@pytest.mark.slow
def test_gs_without_beams_gcp_filesystem_exits_2_naming_the_extra(tmp_path):
    done = larvatus(["run", "--input", "gs://b-in/corpus/*.jsonl", "--output", tmp_path / "o"],
                    without(tmp_path, "google.cloud.storage", "apache_beam.io.gcp.gcsfilesystem"),
                    timeout=120)
    assert done.returncode == 2, done.stderr[-3000:]
    assert "pip install 'larvatus[gcp]'" in done.stderr
    assert "Traceback" not in done.stderr


# --- against the S3 server


@pytest.mark.slow
def test_a_job_on_s3_is_read_back_by_show_and_report(s3, tmp_path):
    source = s3.put("show/in/news.jsonl", SAMPLE.read_bytes())
    output = f"s3://{BUCKET}/show/out"
    endpoint = ["--s3_endpoint_url", s3.endpoint]
    done = larvatus(["run", "--input", source, "--output", output, "--progress", "off",
                     *endpoint], s3.env())
    assert done.returncode == 0, done.stderr[-3000:]
    assert "show/out/_SUMMARY.json" in s3.keys("show/out/")
    # the printed next step works as printed: it keeps the endpoint
    [next_step] = [line for line in done.stdout.splitlines() if line.startswith("next: ")]
    printed = shlex.split(next_step.split(" show ", 1)[1].split("   or   ", 1)[0])
    assert printed == [output, *endpoint]
    shown = larvatus(["show", *printed], s3.env())
    assert shown.returncode == 0, shown.stderr[-3000:]
    assert "records in 36, out 36" in shown.stdout
    assert "Parquet file(s)" in shown.stdout and "annotations: 0 " not in shown.stdout
    page = tmp_path / "report.html"
    reported = larvatus(["report", output, "--html", page, *endpoint], s3.env())
    assert reported.returncode == 0, reported.stderr[-3000:]
    assert "36 annotated" in page.read_text()
    on_s3 = larvatus(["report", output, *endpoint], s3.env())   # the default: OUTPUT/report.html
    assert on_s3.returncode == 0, on_s3.stderr[-3000:]
    assert "show/out/report.html" in s3.keys("show/out/")


@pytest.mark.slow
@pytest.mark.parametrize("command", ["run", "show"])
def test_no_credentials_exit_2_at_start_naming_the_store_and_the_machine(command, s3, tmp_path):
    s3.put("nocred/in/news.jsonl", SAMPLE.read_bytes())
    args = ["run", "--input", f"s3://{BUCKET}/nocred/in/*.jsonl", "--output", tmp_path / "o"] \
        if command == "run" else ["show", f"s3://{BUCKET}/nocred/out"]
    started = time.monotonic()
    done = larvatus([*args, "--s3_endpoint_url", s3.endpoint], no_credentials_env(),
                    timeout=FAIL_FAST_SECONDS + 60)
    assert time.monotonic() - started < FAIL_FAST_SECONDS
    assert done.returncode == 2, done.stderr[-3000:]
    assert f"no AWS credentials for s3://{BUCKET} at {s3.endpoint}" in done.stderr
    assert socket.gethostname() in done.stderr
    assert "AWS_ACCESS_KEY_ID" in done.stderr


@pytest.mark.slow
def test_an_unreachable_endpoint_exits_2_at_start(s3, tmp_path):
    closed = f"http://127.0.0.1:{_closed_port()}"
    started = time.monotonic()
    done = larvatus(["run", "--input", f"s3://{BUCKET}/x/*.jsonl", "--output", tmp_path / "o",
                     "--s3_endpoint_url", closed], s3.env(), timeout=FAIL_FAST_SECONDS + 60)
    assert time.monotonic() - started < FAIL_FAST_SECONDS
    assert done.returncode == 2, done.stderr[-3000:]
    assert f"cannot reach s3://{BUCKET} at {closed}" in done.stderr


@pytest.mark.slow
def test_credentials_the_store_refuses_exit_2_at_start(tmp_path):
    strict = S3Server(tmp_path / "moto.log", check_keys=True)
    try:
        done = larvatus(["run", "--input", f"s3://{BUCKET}/x/*.jsonl", "--output", tmp_path / "o",
                         "--s3_endpoint_url", strict.endpoint], strict.env(),
                        timeout=FAIL_FAST_SECONDS + 60)
    finally:
        strict.stop()
    assert done.returncode == 2, done.stderr[-3000:]
    assert f"s3://{BUCKET} at {strict.endpoint} refused listing s3://{BUCKET}/x/*.jsonl " \
           f"(InvalidAccessKeyId" in done.stderr


# After the endpoint dies, the command must have ended within this many seconds: Beam's
# own retries inside the job, then one bounded call per store operation on the launcher.
KILLED_ENDPOINT_BOUND = 3 * storage.STORE_CALL_TIMEOUT_S


@pytest.mark.slow
def test_an_endpoint_killed_mid_run_ends_the_command_in_one_line_within_a_bound(
        tmp_path, rigged_model_dir):
    server = S3Server(tmp_path / "moto.log")
    try:
        server.client().create_bucket(Bucket=BUCKET)
        source = tmp_path / "in.jsonl"
        source.write_text("".join(json.dumps({"id": f"d{i}", "text": f"Jane Doe met ACME {i}."})
                                  + "\n" for i in range(200)))
        command = [sys.executable, "-m", "larvatus.cli", "run", "--input", source,
                   "--output", f"s3://{BUCKET}/killed/out", "--model", rigged_model_dir,
                   "--device", "cpu", "-q", "--s3_endpoint_url", server.endpoint]
        job = subprocess.Popen(list(map(str, command)), cwd=ROOT, env=server.env(),
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        deadline = time.monotonic() + COMMAND_TIMEOUT
        while not any(remote_key.endswith(".larvatus-owner.json")   # the run has begun
                      for remote_key in server.keys("killed/out/")):
            assert job.poll() is None, job.communicate()
            assert time.monotonic() < deadline, "the run never started writing its output"
            time.sleep(0.2)
    finally:
        server.stop()
    killed = time.monotonic()
    try:
        _, stderr = job.communicate(timeout=KILLED_ENDPOINT_BOUND + 60)
    except subprocess.TimeoutExpired:
        job.kill()
        pytest.fail("the command hung after its S3 endpoint died")
    elapsed = time.monotonic() - killed
    assert elapsed < KILLED_ENDPOINT_BOUND, elapsed
    assert job.returncode == 1, stderr[-3000:]
    lines = [line for line in stderr.splitlines() if line.strip()]
    assert len(lines) == 1 and "Traceback" not in stderr, stderr[-3000:]
    assert lines[0].startswith("larvatus run: error: the job failed")
    assert server.endpoint in lines[0] or "did not answer within" in lines[0], lines[0]


def _closed_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


# --- a bare Beam worker pool


def _worker_pool(base: Path, env: dict):
    """A bare worker pool (no container boot: nothing gives its file layer the job's options)."""
    site = install_copy(base / "site-packages")
    home = base / "home"
    home.mkdir()
    env = {**env, "PYTHONPATH": str(site), "LARVATUS_CACHE": str(home / "cache")}
    port = remote_free_port()
    service = Service([sys.executable, "-m", "apache_beam.runners.worker.worker_pool_main",
                       "--service_port", str(port)], cwd=home, env=env, log=base / "log")
    try:
        wait_for(lambda: port_open(port), "the worker pool", service.process, service.log)
    except RuntimeError:
        service.stop()
        raise
    return service, f"localhost:{port}"


def remote_free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("localhost", 0))
        return sock.getsockname()[1]


def _portable(job_service, pool: str) -> list[str]:
    return ["--runner", "PortableRunner", "--job_endpoint", job_service,
            "--environment_type", "EXTERNAL", "--environment_config", pool]


@pytest.mark.slow
def test_a_bare_worker_pool_reads_input_and_model_and_writes_output_on_s3(
        s3, job_service, tmp_path):
    """Rows equal the DirectRunner's on the local file with the same (embedded) model."""
    from larvatus.models.model_dir import embedded_model_dir

    for path in sorted(embedded_model_dir().iterdir()):
        s3.put(f"pool/model/{path.name}", path.read_bytes())
    s3.put("pool/in/news.jsonl", SAMPLE.read_bytes())
    service, pool = _worker_pool(tmp_path / "pool", s3.env(clean_env()))
    try:
        done = larvatus(["run", "--input", f"s3://{BUCKET}/pool/in/*.jsonl",
                         "--model", f"s3://{BUCKET}/pool/model",
                         "--output", f"s3://{BUCKET}/pool/out", "-q",
                         "--s3_endpoint_url", s3.endpoint, *_portable(job_service, pool)],
                        s3.env(clean_env()))
        assert done.returncode == 0, done.stderr[-4000:]
    finally:
        service.stop()
    output = s3.download("pool/out/", tmp_path / "portable")
    rows = read_rows(output)
    assert len(rows) == 36
    assert differing(rows, direct_rows(tmp_path)) == []
    summary = json.loads((output / "_SUMMARY.json").read_text())
    assert summary["records_out"] == 36 and summary["model"]["path"] == f"s3://{BUCKET}/pool/model"


@pytest.mark.slow
def test_a_worker_without_credentials_fails_within_a_minute_naming_the_store_and_the_machine(
        s3, job_service, tmp_path):
    service, pool = _worker_pool(tmp_path / "pool", no_credentials_env(clean_env()))
    try:
        s3.put("bare/in/news.jsonl", SAMPLE.read_bytes())
        started = time.monotonic()
        done = larvatus(["run", "--input", f"s3://{BUCKET}/bare/in/*.jsonl",
                         "--output", tmp_path / "out", "-q", "--s3_endpoint_url", s3.endpoint,
                         *_portable(job_service, pool)],
                        s3.env(clean_env()), timeout=FAIL_FAST_SECONDS + 120)
        elapsed = time.monotonic() - started
    finally:
        service.stop()
    assert done.returncode != 0
    assert elapsed < FAIL_FAST_SECONDS, elapsed
    assert f"on worker {socket.gethostname()}" in done.stderr
    assert f"no AWS credentials for s3://{BUCKET} at {s3.endpoint}" in done.stderr
    assert not (tmp_path / "out" / "_SUMMARY.json").exists()


# --- packaging: the extras the messages name exist and install the libraries


def _setup_arguments(monkeypatch) -> dict:
    import runpy

    import setuptools

    captured: dict = {}
    monkeypatch.setattr(setuptools, "setup", lambda **kwargs: captured.update(kwargs))
    monkeypatch.chdir(ROOT)
    runpy.run_path(str(ROOT / "setup.py"))
    return captured


def test_the_extras_named_in_messages_install_the_store_libraries(monkeypatch):
    extras = _setup_arguments(monkeypatch)["extras_require"]
    assert {extra for _, extra in remote.LIBRARIES.values()} == {"larvatus[aws]", "larvatus[gcp]"}
    assert any(r.startswith("boto3") for r in extras["aws"])
    assert any(r.startswith("apache-beam[gcp]") for r in extras["gcp"])
    assert any(r.startswith("moto[server]") for r in extras["test"])
    assert set(extras["aws"]) <= set(extras["test"])


def test_the_worker_image_installs_the_chosen_extras(monkeypatch):
    extras = _setup_arguments(monkeypatch)["extras_require"]
    dockerfile = (ROOT / "Dockerfile").read_text()
    assert '"/tmp/larvatus[${LARVATUS_EXTRAS}]"' in dockerfile
    default = dockerfile.split('ARG LARVATUS_EXTRAS="', 1)[1].split('"', 1)[0]
    assert default and set(default.split(",")) <= set(extras)
