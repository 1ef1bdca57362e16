"""Decoding word labels run by run gives exactly what decoding every word's tag gives."""
from __future__ import annotations

import random

import numpy as np
import pytest

from larvatus.transforms.labels import decode_spans, read_scheme
from larvatus.transforms.realign import _Words, decode_label_runs

SCHEMES = {
    "BIO": ["O", "B-PER", "I-PER", "B-LOC", "I-LOC", "B-MISC", "I-MISC"],
    "BIOES": ["O", "B-PER", "I-PER", "E-PER", "S-PER", "B-ORG", "I-ORG", "E-ORG", "S-ORG"],
    "IO": ["PER", "O", "LOC"],
}


@pytest.mark.parametrize("name", sorted(SCHEMES))
def test_decode_label_runs_matches_decode_spans_word_by_word(name):
    scheme = read_scheme(SCHEMES[name])
    rng = random.Random(3)
    for _ in range(300):
        size = rng.randint(0, 40)
        outside_weight = rng.choice([0, 1, 5])
        choices = list(range(-1, len(scheme.labels)))
        weights = [outside_weight if c < 0 or scheme.tags[c].entity is None else 1 for c in choices]
        labels = np.array(rng.choices(choices, weights, k=size) if size else [], dtype=np.int64)
        expected = decode_spans([scheme.tags[i] if i >= 0 else None for i in labels.tolist()])
        assert decode_label_runs(labels, scheme) == expected, labels.tolist()


def test_words_are_cut_out_on_demand():
    words = _Words("Ada met Bob", (0, 4, 8), (3, 7, 11))
    assert words[1:3] == ["met", "Bob"] and words[0:1] == ["Ada"] and words[3:5] == []


@pytest.mark.parametrize("name", sorted(SCHEMES))
def test_own_and_lent_runs_are_each_part_decoded_apart(name):
    from larvatus.transforms.realign import _own_and_lent
    scheme = read_scheme(SCHEMES[name])
    rng = np.random.default_rng(5)
    for _ in range(500):
        size = int(rng.integers(1, 40))
        labels = rng.integers(-1, len(scheme.labels), size)
        relabelled = rng.random(size) < rng.choice([0.1, 0.5, 0.9])
        own, lent = _own_and_lent(labels, relabelled, scheme)
        assert own == decode_label_runs(np.where(relabelled, -1, labels), scheme)
        assert lent == decode_label_runs(np.where(relabelled, labels, -1), scheme)
