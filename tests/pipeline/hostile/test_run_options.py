"""Random option values for `larvatus run`: each is refused at start with one line and exit 2, or accepted; never a traceback."""
from __future__ import annotations

import json

import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

from larvatus import run as run_module
from larvatus.run import main

# Options whose values `larvatus run` checks before any worker starts.
VALUED_OPTIONS = (
    "--input-format", "--id-field", "--text-field", "--keep-fields", "--device",
    "--redact-labels", "--redact-threshold", "--label-thresholds", "--phone-regions",
    "--placeholder", "--aggregation", "--window-length", "--window-overlap", "--batch-tokens",
    "--intra-op-threads", "--model-copies", "--share-model", "--max-chars", "--record-timeout",
    "--max-dead-letter-ratio", "--text-ids", "--embedding-layer", "--embedding-pooling",
    "--progress-interval",
)
VALUES = (st.text(st.characters(blacklist_categories=("Cs",)), max_size=12)
          | st.integers(-10 ** 6, 10 ** 6).map(str)
          | st.floats(allow_nan=True, allow_infinity=True).map(str)
          | st.sampled_from(["", "-1", "0", "1e309", "nan", "-inf", "1,2", "default,-PER",
                             "ORG=2", "PER=nan", "auto", "csv", "none", "all", ",", "=", "+"]))


class _Started(Exception):
    """Raised where the job would start: every check at start was passed."""


@pytest.fixture(scope="module")
def corpus(tmp_path_factory):
    folder = tmp_path_factory.mktemp("hostile-options")
    (folder / "in.jsonl").write_text(json.dumps({"id": "1", "text": "Jane Doe met ACME."}) + "\n")
    return folder


@settings(max_examples=40, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])
@given(st.sampled_from(VALUED_OPTIONS), VALUES)
def test_a_random_option_value_is_refused_in_one_line_or_accepted(corpus, monkeypatch, capsys,
                                                                  option, value):
    def started(*_, **__):
        raise _Started()

    monkeypatch.setattr(run_module, "_probe_model", started)
    argv = ["--input", str(corpus / "in.jsonl"), "--output", str(corpus / "out"),
            "--device", "cpu", "-q", f"{option}={value}"]
    try:
        code = main(argv)
    except _Started:
        return
    except SystemExit as leave:   # argparse's own usage errors
        code = leave.code
    err = capsys.readouterr().err.strip()
    assert code == 2, (argv, code, err[-2000:])
    # Warnings about other, valid values (`--redact-labels none`) may precede the refusal.
    refusal = [line for line in err.splitlines() if ": warning: " not in line]
    assert "Traceback" not in err and len(refusal) <= 2, err[-2000:]
    assert refusal and ": error: " in refusal[0], err[-2000:]
    assert err, "refused without a word"
