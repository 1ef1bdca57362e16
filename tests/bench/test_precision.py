"""The side-by-side bench: CoNLL counts typed and untyped, and its table from saved figures."""
from __future__ import annotations

from types import SimpleNamespace

import pytest

from bench.precision import conll_counts, table


def _gold(doc_id, *spans):
    return SimpleNamespace(doc_id=doc_id, spans=[SimpleNamespace(start=s, end=e, label=l)
                                                  for s, e, l in spans])


GOLDS = [_gold("a", (0, 5, "PER"), (10, 15, "LOC")), _gold("b", (0, 4, "ORG"), (6, 9, "MISC"))]
PREDICTIONS = {
    # a: PER right, LOC found as ORG (a label error: wrong typed, right untyped)
    "a": [[0, 5, "PER", False], [10, 15, "ORG", False], [20, 25, "PER", True]],
    # b: ORG right, MISC right, one spurious LOC
    "b": [[0, 4, "ORG", False], [6, 9, "MISC", False], [11, 14, "LOC", False]],
}


def test_conll_counts_score_labels_typed_and_spans_untyped_without_propagated_mentions():
    counts = conll_counts(GOLDS, PREDICTIONS)
    assert counts["typed"]["precision"] == pytest.approx(2 / 4)
    assert counts["typed"]["recall"] == pytest.approx(2 / 3)
    assert counts["untyped"]["precision"] == pytest.approx(3 / 4)
    assert counts["untyped"]["recall"] == pytest.approx(3 / 3)
    assert counts["micro"]["precision"] == pytest.approx(3 / 5)   # MISC counts, the PER mention not


def test_conll_counts_can_take_a_subset_of_documents():
    counts = conll_counts(GOLDS, PREDICTIONS, docs={1})
    assert counts["typed"]["precision"] == pytest.approx(1 / 2)
    assert counts["typed"]["recall"] == pytest.approx(1.0)


def test_the_table_shows_both_benches_side_by_side():
    privacy = {"recall": 0.998, "names_recall": 0.995, "precision": 0.964, "words_kept": 0.977,
               "spans_on_no_gold": 0.152, "name_spans": 1332, "items": 2839, "split": "dev"}
    halves = {h: conll_counts(GOLDS, PREDICTIONS) for h in ("all", "even", "odd")}
    text = "\n".join(table(privacy, halves))
    assert "99.8% / 99.5%" in text and "97.7%" in text and "15.2% of 1,332" in text
    assert "0.5000 / 0.5000 / 0.5000" in text and "0.7500 / 0.7500 / 0.7500" in text
