"""Unit tests for transforms/realign.py: window predictions to word labels to entity spans."""
from __future__ import annotations

import numpy as np
import pytest

from larvatus.transforms.labels import read_scheme
from larvatus.transforms.encode import EncodeSettings, encode
from larvatus.transforms.realign import decode_entities, realign, word_predictions
from larvatus.transforms.records import Document, EncodedDocument, EntitySpan, SegmentedDocument, Window
from larvatus.transforms.segment import segment

LABELS = ["O", "B-PER", "I-PER", "B-LOC", "I-LOC"]
O, B_PER, I_PER, B_LOC, I_LOC = range(5)
SCHEME = read_scheme(LABELS)


def hand_window(word_ids, first_piece, piece_offset):
    """A window over content pieces with the given word ids (specials added)."""
    n = len(word_ids) + 2
    return Window(
        input_ids=np.arange(n, dtype=np.int64),
        type_ids=np.zeros(n, dtype=np.int64),
        word_ids=np.array([-1] + list(word_ids) + [-1], dtype=np.int64),
        first_piece=np.array([False] + list(first_piece) + [False], dtype=bool),
        piece_offset=piece_offset,
    )


def hand_document(text, starts, ends, windows, num_pieces):
    segmented = SegmentedDocument(Document("d", text, "src"), tuple(starts), tuple(ends))
    return EncodedDocument(segmented, tuple(windows), num_pieces)


def one_hot(labels, confidence=0.9, num_labels=len(LABELS)):
    probs = np.full((len(labels), num_labels), (1 - confidence) / (num_labels - 1), dtype=np.float32)
    probs[np.arange(len(labels)), labels] = confidence
    return probs


# --- aggregation ----------------------------------------------------------------

def crafted_aggregation_document():
    # "Xanthippe Moreau": word 0 has three pieces, word 1 has two.
    text = "Xanthippe Moreau"
    window = hand_window([0, 0, 0, 1, 1], [True, False, False, True, False], 0)
    encoded = hand_document(text, [0, 10], [9, 16], [window], 5)
    probs = np.array([
        # O     B-PER  I-PER  B-LOC  I-LOC
        [0.50, 0.40, 0.10, 0.00, 0.00],   # word 0, piece 0
        [0.10, 0.00, 0.90, 0.00, 0.00],   # word 0, piece 1
        [0.10, 0.80, 0.10, 0.00, 0.00],   # word 0, piece 2
        [0.20, 0.00, 0.00, 0.00, 0.80],   # word 1, piece 0
        [0.00, 0.00, 0.00, 0.60, 0.40],   # word 1, piece 1
    ], dtype=np.float64)
    return encoded, probs


def test_aggregation_first():
    encoded, probs = crafted_aggregation_document()
    labels, scores = word_predictions(encoded, [probs], "first")
    assert labels.tolist() == [O, I_LOC]
    assert scores.tolist() == pytest.approx([0.5, 0.8])


def test_aggregation_average():
    encoded, probs = crafted_aggregation_document()
    labels, scores = word_predictions(encoded, [probs], "average")
    # word 0: mean = [0.2333, 0.4, 0.3667, 0, 0]; word 1: [0.1, 0, 0, 0.3, 0.6]
    assert labels.tolist() == [B_PER, I_LOC]
    assert scores.tolist() == pytest.approx([0.4, 0.6])


def test_aggregation_max():
    encoded, probs = crafted_aggregation_document()
    labels, scores = word_predictions(encoded, [probs], "max")
    # word 0: the most confident piece is piece 1 (0.9, I-PER); word 1: piece 0 (0.8, I-LOC)
    assert labels.tolist() == [I_PER, I_LOC]
    assert scores.tolist() == pytest.approx([0.9, 0.8])


def test_aggregation_unknown():
    encoded, probs = crafted_aggregation_document()
    with pytest.raises(ValueError):
        word_predictions(encoded, [probs], "median")


def test_aggregations_decode_differently():
    encoded, probs = crafted_aggregation_document()
    results = {agg: realign(encoded, [probs], SCHEME, agg) for agg in ("first", "average", "max")}
    # first: O, I-LOC -> LOC on "Moreau"
    assert results["first"] == (EntitySpan(10, 16, "LOC", pytest.approx(0.8), recognizer="LOC"),)
    # average: B-PER, I-LOC -> PER "Xanthippe", LOC "Moreau"
    assert [(e.start, e.end, e.label) for e in results["average"]] == [(0, 9, "PER"), (10, 16, "LOC")]
    # max: I-PER, I-LOC -> PER "Xanthippe" (I after nothing opens it), LOC "Moreau"
    assert [(e.start, e.end, e.label) for e in results["max"]] == [(0, 9, "PER"), (10, 16, "LOC")]
    assert results["max"][0].score == pytest.approx(0.9)
    assert results["average"][0].score == pytest.approx(0.4)


# --- overlapping windows --------------------------------------------------------

def overlapping_document():
    # Six one-piece words; window A covers pieces [0, 4), window B covers [2, 6).
    text = "a b c d e f"
    starts, ends = [0, 2, 4, 6, 8, 10], [1, 3, 5, 7, 9, 11]
    a = hand_window([0, 1, 2, 3], [True] * 4, 0)
    b = hand_window([2, 3, 4, 5], [True] * 4, 2)
    return hand_document(text, starts, ends, [a, b], 6)


def test_overlap_word_takes_window_where_farthest_from_edge():
    encoded = overlapping_document()
    probs_a = one_hot([B_PER] * 4, 0.7)   # window A says PER everywhere
    probs_b = one_hot([B_LOC] * 4, 0.6)   # window B says LOC everywhere
    labels, scores = word_predictions(encoded, [probs_a, probs_b])
    # word 2: 1 piece from A's right edge, 0 from B's left edge -> A
    # word 3: 0 from A's right edge, 1 from B's left edge -> B
    assert labels.tolist() == [B_PER, B_PER, B_PER, B_LOC, B_LOC, B_LOC]
    assert scores.tolist() == pytest.approx([0.7, 0.7, 0.7, 0.6, 0.6, 0.6])


def test_overlap_choice_is_by_position_not_confidence():
    # The choice is by position, not by confidence: a more confident window loses
    # where its word stands at its edge.
    encoded = overlapping_document()
    probs_a = one_hot([B_PER] * 4, 0.3)
    probs_b = one_hot([B_LOC] * 4, 0.99)
    labels, _ = word_predictions(encoded, [probs_a, probs_b])
    assert labels.tolist()[2] == B_PER
    assert labels.tolist()[3] == B_LOC


# --- words with no pieces ---------------------------------------------------------

def test_word_without_pieces_is_minus_one_and_o():
    text = "Angela \u200b Merkel"
    window = hand_window([0, 2], [True, True], 0)
    encoded = hand_document(text, [0, 7, 9], [6, 8, 15], [window], 2)
    labels, scores = word_predictions(encoded, [one_hot([B_PER, I_PER])])
    assert labels.tolist() == [B_PER, -1, I_PER]
    assert scores[1] == 0.0
    entities = decode_entities(encoded, labels, scores, SCHEME)
    # The zero-width word tags as O, which closes the first entity.
    assert [(e.start, e.end, e.label) for e in entities] == [(0, 6, "PER"), (9, 15, "PER")]


def test_document_without_windows():
    encoded = hand_document("\u200b", [0], [1], [], 0)
    labels, scores = word_predictions(encoded, [])
    assert labels.tolist() == [-1]
    assert realign(encoded, [], SCHEME) == ()


# --- with the real encoder ---------------------------------------------------------

def fabricate(encoded, word_label):
    """Per window, probabilities that give each piece its word's label."""
    out = []
    for window in encoded.windows:
        labels = [word_label.get(int(w), O) for w in window.word_ids[1:-1]]
        out.append(one_hot(labels, 0.8))
    return out


def test_entity_offsets_with_emoji_before(tokenizer):
    text = "\U0001F44D\U0001F3FD\U0001F600 Zoe\u0308 met Angela Merkel in 東京 \U0001d49c."
    segmented = segment(Document("d", text, "src"))
    words = [segmented.word_text(i) for i in range(segmented.num_words)]
    settings = EncodeSettings(max_length=8, overlap=2, cls_id=101, sep_id=102)
    encoded = encode(segmented, tokenizer, settings)
    assert len(encoded.windows) > 1
    label_of = {words.index("Zoe\u0308"): B_PER, words.index("Angela"): B_PER,
                words.index("Merkel"): I_PER, words.index("東京"): B_LOC}
    entities = realign(encoded, fabricate(encoded, label_of), SCHEME, "first")
    assert [(e.start, e.end, e.label) for e in entities] == [
        (4, 8, "PER"), (13, 26, "PER"), (30, 32, "LOC")]
    assert [text[e.start:e.end] for e in entities] == ["Zoe\u0308", "Angela Merkel", "東京"]
    assert all(e.score == pytest.approx(0.8) for e in entities)


def test_all_aggregations_agree_on_uniform_predictions(tokenizer):
    text = "Xanthippe Moreau visited Pneumonoultramicroscopicsilicovolcanoconiosis Lake."
    segmented = segment(Document("d", text, "src"))
    settings = EncodeSettings(max_length=6, overlap=1, cls_id=101, sep_id=102)
    encoded = encode(segmented, tokenizer, settings)
    label_of = {0: B_PER, 1: I_PER, 3: B_LOC, 4: I_LOC}
    probs = fabricate(encoded, label_of)
    for aggregation in ("first", "average", "max"):
        entities = realign(encoded, probs, SCHEME, aggregation)
        assert [text[e.start:e.end] for e in entities] == [
            "Xanthippe Moreau", "Pneumonoultramicroscopicsilicovolcanoconiosis Lake"], aggregation


# --- shape errors -------------------------------------------------------------------

def test_wrong_number_of_window_predictions():
    encoded = overlapping_document()
    with pytest.raises(ValueError):
        word_predictions(encoded, [one_hot([O] * 4)])
    with pytest.raises(ValueError):
        word_predictions(encoded, [one_hot([O] * 4)] * 3)


def test_wrong_number_of_pieces_in_a_window():
    encoded = overlapping_document()
    with pytest.raises(ValueError):
        word_predictions(encoded, [one_hot([O] * 4), one_hot([O] * 5)])
    with pytest.raises(ValueError):
        word_predictions(encoded, [one_hot([O] * 3), one_hot([O] * 4)])


def test_wrong_shape_in_window_without_word_start_raises():
    # Word 0 has 6 pieces, cut into windows [0, 3) and [3, 6); the second has no first piece.
    w1 = hand_window([0, 0, 0], [True, False, False], 0)
    w2 = hand_window([0, 0, 0], [False, False, False], 3)
    encoded = hand_document("Xanthippe", [0], [9], [w1, w2], 6)
    with pytest.raises(ValueError):
        word_predictions(encoded, [one_hot([O] * 3), one_hot([O] * 7)])
