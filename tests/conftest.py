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
def random_model_dir(tmp_path_factory):
    """Tiny randomly initialised model: mechanics only."""
    return build_model_dir(tmp_path_factory.mktemp("models") / "random", rigged=False)
