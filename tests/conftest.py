"""Shared fixtures: tiny BERT token classifiers exported to ONNX once per test session."""
from __future__ import annotations

import pytest

from tests.tiny_model import build_model_dir


@pytest.fixture(scope="session")
def rigged_model_dir(tmp_path_factory):
    """Tiny model whose tags follow casing: Titlecase words -> PER, ALL CAPS -> ORG."""
    return build_model_dir(tmp_path_factory.mktemp("models") / "rigged", rigged=True,
                           precisions=("fp32", "int8"))


@pytest.fixture(scope="session")
def rigged_fp32_model_dir(rigged_model_dir, tmp_path_factory):
    """The rigged model with its fp32 graph on CPU too: no quantization, so rows cannot depend on batching."""
    import json
    import shutil

    target = tmp_path_factory.mktemp("models") / "rigged-fp32"
    shutil.copytree(rigged_model_dir, target)
    config = json.loads((target / "larvatus_model.json").read_text())
    config["onnx"] = {"cpu": "model.fp32.onnx", "cuda": "model.fp32.onnx"}
    config["name"] = "tiny-rigged-bert-fp32"
    (target / "larvatus_model.json").write_text(json.dumps(config, indent=2))
    (target / "model.int8.onnx").unlink()
    return target


@pytest.fixture
def remote(tmp_path, monkeypatch):
    """A fake remote store (fakefs://) with nothing of the launcher's working directory in it."""
    from tests.fake_fs import FakeRemoteFileSystem

    store = tmp_path / "store"
    store.mkdir()
    monkeypatch.setattr(FakeRemoteFileSystem, "root", str(store))
    monkeypatch.setattr(FakeRemoteFileSystem, "opened", [])
    return store
