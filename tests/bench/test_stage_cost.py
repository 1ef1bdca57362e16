"""bench/stage_cost.py: the cost of the work around the model per million words, from run summaries."""
from __future__ import annotations

import pytest

from bench import stage_cost


def _run(infer: float, other: float, words: int, process: float) -> dict:
    return {"stage_seconds": {"infer": infer, "segment": other / 2, "redact": other / 2},
            "words": words, "process_seconds": process}


def test_figures_leave_inference_out_and_scale_to_a_million_words():
    found = stage_cost.figures(_run(infer=30.0, other=5.0, words=250_000, process=40.0))
    assert found["around"] == pytest.approx(5.0)
    assert found["around_per_mw"] == pytest.approx(20.0)
    assert found["process_minus_infer_per_mw"] == pytest.approx(40.0)
    assert found["stage_redact"] == pytest.approx(2.5)


def test_medians_over_repeats():
    runs = [_run(30.0, other, 1_000_000, 50.0) for other in (4.0, 9.0, 5.0)]
    assert stage_cost.medians(runs)["around_per_mw"] == pytest.approx(5.0)


def test_ratios_are_baseline_over_now(capsys):
    now = {"corpus": "c", "words": 10, "repeats": 3, "medians": {"around_per_mw": 50.0}}
    stage_cost.show(now, {"medians": {"around_per_mw": 150.0}})
    assert "3.00x cheaper" in capsys.readouterr().out


def test_arguments_split_larvatus_options_after_a_double_dash():
    args, extra = stage_cost.parse_args(["--repeats", "2", "--", "--placeholder", "indexed"])
    assert args.repeats == 2 and args.corpus == "news" and args.words == 1_000_000 and extra == ["--placeholder", "indexed"]
