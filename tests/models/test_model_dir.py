"""Where the model lives: the embedded sentinel, local paths, remote filesystems, and the worker's own copy."""
from __future__ import annotations

import glob
import os
import pickle
import shutil
from pathlib import Path

import pyarrow.parquet as pq
import pytest

from larvatus.models import model_dir
from larvatus.models.handler import OnnxTokenClassifierHandler
from larvatus.models.model_dir import EMBEDDED_DEFAULT, ModelError, load_model_spec
from larvatus.run import run
from tests.fake_fs import FakeRemoteFileSystem
from tests.paths import ROOT


def as_worker_sees_it(spec):
    """The spec as a fresh worker process unpickles it from the job graph (nothing resolved yet)."""
    model_dir._RESOLVED.clear()
    return pickle.loads(pickle.dumps(spec))


def test_the_embedded_default_travels_as_a_sentinel_not_a_launcher_path():
    spec = load_model_spec()
    assert spec.location == EMBEDDED_DEFAULT
    assert str(ROOT).encode() not in pickle.dumps(spec)
    assert Path(spec.local_dir()) == ROOT / "models" / "default"
    assert spec.name.startswith("larvatus-minilm")


def test_a_worker_finds_the_embedded_model_in_its_own_installed_package(worker, tmp_path, monkeypatch):
    spec = load_model_spec()
    installed = tmp_path / "site-packages" / "models" / "default"
    shutil.copytree(ROOT / "models" / "default", installed)
    monkeypatch.setattr(model_dir, "embedded_model_dir", lambda: installed)
    on_worker = as_worker_sees_it(spec)
    assert on_worker.local_dir() == str(installed)
    assert on_worker.load_tokenizer().token_to_id("[CLS]") is not None


def test_a_worker_whose_embedded_model_differs_says_so(worker, tmp_path, monkeypatch):
    spec = load_model_spec()
    installed = tmp_path / "other-larvatus" / "default"
    shutil.copytree(ROOT / "models" / "default", installed)
    (installed / "tokenizer.json").write_text("{}")
    monkeypatch.setattr(model_dir, "embedded_model_dir", lambda: installed)
    with pytest.raises(ModelError) as caught:
        as_worker_sees_it(spec).local_dir()
    message = str(caught.value)
    assert message.startswith("on worker ") and f"pid {os.getpid()}" in message
    assert "different embedded model than the launcher's" in message
    assert "re-export" not in message


def test_a_relative_local_model_is_made_absolute(rigged_model_dir, monkeypatch):
    monkeypatch.chdir(rigged_model_dir.parent)
    spec = load_model_spec(rigged_model_dir.name)
    assert spec.location == str(rigged_model_dir.resolve())


def test_a_worker_that_cannot_see_the_launchers_disk_says_so(rigged_model_dir, worker, tmp_path):
    model = tmp_path / "launcher-only" / "model"
    shutil.copytree(rigged_model_dir, model)
    spec = load_model_spec(model)
    shutil.rmtree(model)   # the worker's machine has no such folder
    handler = OnnxTokenClassifierHandler(as_worker_sees_it(spec), device="cpu")
    with pytest.raises(ModelError) as caught:
        handler.load_model()
    message = str(caught.value)
    assert message.startswith("on worker ") and "does not exist on this worker" in message
    assert "gs://" in message and "re-export" not in message


def test_a_model_changed_after_launch_fails_on_the_worker_with_both_hashes(
        rigged_model_dir, worker, tmp_path):
    model = tmp_path / "model"
    shutil.copytree(rigged_model_dir, model)
    spec = load_model_spec(model)
    (model / "tokenizer.json").write_text((model / "tokenizer.json").read_text() + " ")
    with pytest.raises(ModelError, match=r"on worker .*launcher checked " + spec.sha256[:16]):
        as_worker_sees_it(spec).load_tokenizer()


def test_a_remote_model_is_read_through_filesystems_and_cached_once(
        rigged_model_dir, remote, worker):
    shutil.copytree(rigged_model_dir, remote / "models" / "rigged")
    location = "fakefs://models/rigged"
    spec = load_model_spec(location)
    assert spec.location == location          # not a path in the launcher's cache
    assert spec.sha256 == load_model_spec(rigged_model_dir).sha256
    assert set(spec.files) == {"larvatus_model.json", "tokenizer.json", "model.int8.onnx",
                               "model.fp32.onnx"}
    launcher_reads = len(FakeRemoteFileSystem.opened)

    on_worker = as_worker_sees_it(spec)
    local = on_worker.local_dir()
    assert Path(local) == worker / "models" / spec.sha256
    assert len(FakeRemoteFileSystem.opened) == launcher_reads   # the launcher's copy is reused
    OnnxTokenClassifierHandler(on_worker, device="cpu").load_model()
    on_worker.load_tokenizer()
    assert len(FakeRemoteFileSystem.opened) == launcher_reads

    shutil.rmtree(local)          # another machine, empty cache: it copies
    assert as_worker_sees_it(spec).local_dir() == local
    assert len(FakeRemoteFileSystem.opened) == launcher_reads + len(spec.files)
    assert not [p for p in os.listdir(worker / "models") if p.startswith(".partial")]


def test_a_remote_model_changed_after_launch_is_refused_by_the_worker(
        rigged_model_dir, remote, worker):
    shutil.copytree(rigged_model_dir, remote / "m")
    spec = load_model_spec("fakefs://m")
    shutil.rmtree(worker / "models")
    (remote / "m" / "model.int8.onnx").write_bytes(b"retrained")
    with pytest.raises(ModelError, match=r"^on worker .*changed after the job started"):
        as_worker_sees_it(spec).local_dir()


def test_a_worker_that_cannot_read_the_remote_model_says_which_side_and_why(
        rigged_model_dir, remote, worker, monkeypatch):
    shutil.copytree(rigged_model_dir, remote / "m")
    spec = load_model_spec("fakefs://m")
    shutil.rmtree(worker / "models")
    monkeypatch.setattr(FakeRemoteFileSystem, "root", "")   # no credentials on this worker
    with pytest.raises(ModelError, match=r"^on worker .*cannot copy .*lacks access"):
        as_worker_sees_it(spec).local_dir()


def test_launcher_errors_for_remote_models(remote):
    with pytest.raises(ModelError, match=r"^on the launcher: .*does not exist"):
        load_model_spec("fakefs://nothing/here")
    with pytest.raises(ModelError, match=r"^on the launcher: .*apache-beam\[gcp\]"):
        load_model_spec("nosuchfs://bucket/model")


@pytest.mark.slow
def test_a_job_runs_on_a_remote_model(rigged_model_dir, remote, worker, tmp_path):
    shutil.copytree(rigged_model_dir, remote / "models" / "rigged")
    source = tmp_path / "in.jsonl"
    source.write_text('{"id": "a", "text": "Ada met Bob in PARIS."}\n')
    summary = run(["--input", str(source), "--output", str(tmp_path / "out"),
                   "--model", "fakefs://models/rigged", "--device", "cpu"])
    assert summary["records_out"] == 1
    assert summary["model"]["path"] == "fakefs://models/rigged"
    [row] = [r for f in glob.glob(str(tmp_path / "out" / "annotations" / "annotations-*.parquet"))
             for r in pq.read_table(f).to_pylist()]
    assert row["redacted_text"] == "[PER] met [PER] in [ORG]."
    assert row["model"]["sha256"] == load_model_spec(rigged_model_dir).sha256
