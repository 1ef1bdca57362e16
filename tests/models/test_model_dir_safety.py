"""A model folder names only files inside itself: no config reads or writes a file elsewhere."""
from __future__ import annotations

import dataclasses
import json
import pickle
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from larvatus.models import model_dir
from larvatus.models.model_dir import ModelError, is_plain_name, load_model_spec
from tests.fake_fs import FakeRemoteFileSystem  # noqa: F401  (registers fakefs://)
from tests.paths import ROOT

ESCAPING = ["../../../payload.pth", "/tmp/larvatus-escape/x.onnx", "sub/model.onnx", "..",
            "..\\evil.onnx", "c:evil.onnx"]


def _with_onnx_name(source: Path, target: Path, name: str) -> Path:
    shutil.copytree(source, target)
    config = json.loads((target / "larvatus_model.json").read_text())
    config["onnx"] = {"cpu": name, "cuda": name}
    (target / "larvatus_model.json").write_text(json.dumps(config))
    return target


@pytest.mark.parametrize("name", ESCAPING)
def test_only_plain_names_are_plain(name):
    assert not is_plain_name(name)
    assert is_plain_name("model.int8.onnx")


@pytest.mark.parametrize("name", ["../outside.onnx", "/tmp/larvatus-escape/x.onnx"])
def test_a_local_model_folder_naming_a_file_outside_itself_is_refused(
        rigged_model_dir, tmp_path, name):
    outside = tmp_path / "outside.onnx"
    shutil.copy(rigged_model_dir / "model.int8.onnx", outside)   # a real model, elsewhere
    model = _with_onnx_name(rigged_model_dir, tmp_path / "model", name)
    with pytest.raises(ModelError, match=r"outside the model folder"):
        load_model_spec(model)


@pytest.mark.parametrize("name", ["../../../payload.pth", "/tmp/larvatus-escape/payload.pth"])
def test_a_remote_model_cannot_write_outside_the_launchers_cache(
        rigged_model_dir, remote, worker, name):
    model = _with_onnx_name(rigged_model_dir, remote / "m", "model.int8.onnx")
    payload = model / "payload.pth"
    payload.write_text("import os  # would run at the next Python start\n")
    (remote / "payload.pth").write_text("import os\n")
    config = json.loads((model / "larvatus_model.json").read_text())
    config["onnx"] = {"cpu": "model.int8.onnx", "cuda": name}
    (model / "larvatus_model.json").write_text(json.dumps(config))
    with pytest.raises(ModelError, match=r"^on the launcher: .*outside the model folder"):
        load_model_spec("fakefs://m")
    written = [p for p in worker.parent.rglob("payload.pth")
               if not p.is_relative_to(remote)]
    assert written == []


def test_a_worker_refuses_a_spec_naming_files_outside_the_model_folder(
        rigged_model_dir, remote, worker):
    shutil.copytree(rigged_model_dir, remote / "m")
    spec = load_model_spec("fakefs://m")
    shutil.rmtree(worker / "models")
    (remote / "payload.pth").write_text("import os\n")
    forged = dataclasses.replace(spec, files=(*spec.files, "../payload.pth"))
    model_dir._RESOLVED.clear()
    with pytest.raises(ModelError, match=r"^on worker .*outside the model folder"):
        pickle.loads(pickle.dumps(forged)).local_dir()
    assert not list(worker.rglob("payload.pth"))
    local = dataclasses.replace(load_model_spec(rigged_model_dir),
                                files=("../outside.onnx", "tokenizer.json"))
    model_dir._RESOLVED.clear()
    with pytest.raises(ModelError, match=r"^on worker .*outside the model folder"):
        local.local_dir()


def test_the_command_refuses_an_escaping_model_config_with_exit_2(rigged_model_dir, tmp_path):
    shutil.copy(rigged_model_dir / "model.int8.onnx", tmp_path / "outside.onnx")
    model = _with_onnx_name(rigged_model_dir, tmp_path / "model", "../outside.onnx")
    source = tmp_path / "in.jsonl"
    source.write_text('{"id": "a", "text": "Ada met Bob."}\n')
    done = subprocess.run(
        [sys.executable, "-m", "larvatus.cli", "run", "--input", str(source), "--output",
         str(tmp_path / "out"), "--model", str(model), "--device", "cpu"],
        cwd=ROOT, capture_output=True, text=True, timeout=600)
    assert done.returncode == 2, done.stderr[-2000:]
    assert "outside the model folder" in done.stderr and "Traceback" not in done.stderr
    assert not (tmp_path / "out").exists()
