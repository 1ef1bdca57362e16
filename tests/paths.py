"""Paths the tests share: the repository root, whatever folder of tests/ a test file lives in."""
from __future__ import annotations

from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
