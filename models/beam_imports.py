"""Keeps Beam's RunInference from importing PyTorch: import this before any `apache_beam.ml` module."""
from __future__ import annotations

import sys

# apache_beam.ml.inference.base imports its ModelManager inside `try/except ImportError`, and
# model_manager imports torch whenever torch is installed (seconds at every start, in the
# launcher and in each worker process). Larvatus never uses the ModelManager, so the module is
# marked absent: Beam then takes its own "not installed" path. Set only if nobody imported it.
MODEL_MANAGER = "apache_beam.ml.inference.model_manager"
if MODEL_MANAGER not in sys.modules:
    sys.modules[MODEL_MANAGER] = None  # type: ignore[assignment]
