"""Fixtures of the model tests: a random tiny model, and a process that sees a model as a fresh worker does."""
from __future__ import annotations

import pytest

from larvatus.models import model_dir
from tests.tiny_model import build_model_dir


@pytest.fixture(scope="session")
def random_model_dir(tmp_path_factory):
    """Tiny randomly initialised model: mechanics only."""
    return build_model_dir(tmp_path_factory.mktemp("models") / "random", rigged=False)


@pytest.fixture
def worker(tmp_path, monkeypatch):
    """A fresh worker process: nothing resolved yet, its own model cache (returned)."""
    monkeypatch.setattr(model_dir, "_RESOLVED", {})
    monkeypatch.setenv(model_dir.CACHE_ENV, str(tmp_path / "cache"))
    return tmp_path / "cache"
