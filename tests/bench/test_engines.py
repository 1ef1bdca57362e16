"""The engines bench's arithmetic: a line through two timings, and where Spark's fixed cost is repaid."""
from __future__ import annotations

import json

import pytest

from bench.engines import break_even, line_through, write_corpus


def test_line_through_two_timings():
    fixed, each = line_through((100, 30.0), (1100, 80.0))
    assert each == pytest.approx(0.05) and fixed == pytest.approx(25.0)


def test_spark_is_repaid_where_the_lines_cross():
    beam, spark = (5.0, 0.10), (40.0, 0.03)
    documents = break_even(beam, spark)
    assert documents == pytest.approx(500.0)
    assert beam[0] + beam[1] * documents == pytest.approx(spark[0] + spark[1] * documents)


def test_spark_never_repaid_when_it_is_not_faster_per_document():
    assert break_even((5.0, 0.10), (40.0, 0.10)) is None
    assert break_even((5.0, 0.10), (40.0, 0.20)) is None
    assert break_even((50.0, 0.10), (40.0, 0.20)) is None
    assert break_even((50.0, 0.10), (40.0, 0.05)) == 0.0


def test_corpus_has_the_size_asked_and_unique_ids(tmp_path):
    path = write_corpus(tmp_path / "c.jsonl", 80)
    records = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]
    assert len(records) == 80 and len({r["id"] for r in records}) == 80
    assert all(r["text"] for r in records)
