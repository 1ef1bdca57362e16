"""The ML outputs' pure layer: redacted WordPiece ids, window merge of hidden states, pooling."""
from __future__ import annotations

import numpy as np
import pytest
from tokenizers import Tokenizer

from tests.tiny_model import base_tokenizer_dir
from larvatus.transforms import mlout
from larvatus.transforms.encode import EncodeSettings, encode
from larvatus.transforms.records import Document, EntitySpan
from larvatus.transforms.segment import segment

LABELS = ["PER", "LOC", "ORG", "MISC", "EMAIL", "PHONE"]


@pytest.fixture(scope="module")
def tokenizer():
    tok = Tokenizer.from_file(str(base_tokenizer_dir() / "tokenizer.json"))
    tok.no_truncation()
    tok.no_padding()
    return tok


@pytest.fixture(scope="module")
def extended(tokenizer):
    return mlout.tokenizer_with_placeholders(tokenizer, LABELS)


def encoded_doc(tokenizer, text, max_length=512, overlap=0):
    settings = EncodeSettings(max_length, overlap, tokenizer.token_to_id("[CLS]"),
                              tokenizer.token_to_id("[SEP]"))
    return encode(segment(Document("d", text, "d")), tokenizer, settings)


def span(text, surface, label, occurrence=0, redacted=True, propagated=False):
    start = -1
    for _ in range(occurrence + 1):
        start = text.index(surface, start + 1)
    return EntitySpan(start, start + len(surface), label, 0.9, propagated=propagated,
                      redacted=redacted)


def rewrite(tokenizer, placeholders, text, entities):
    encoded = encoded_doc(tokenizer, text)
    ids, words = mlout.document_pieces(encoded)
    return ids, mlout.redact_piece_ids(ids, words, encoded.segmented, entities, placeholders)


def test_placeholders_are_single_special_tokens_after_the_vocabulary(tokenizer, extended):
    new, ids = extended
    assert sorted(ids) == sorted(LABELS)
    assert all(i >= tokenizer.get_vocab_size() for i in ids.values())
    assert len(set(ids.values())) == len(LABELS)
    # "[PER]" in text is one token, not "[", "per", "]"; the original tokenizer splits it
    assert new.encode("[PER]", add_special_tokens=False).ids == [ids["PER"]]
    assert len(tokenizer.encode("[PER]", add_special_tokens=False).ids) == 3
    # the same labels in another order get the same ids
    assert mlout.tokenizer_with_placeholders(tokenizer, LABELS[::-1])[1] == ids


def test_a_many_piece_name_leaves_no_piece_behind(tokenizer, extended):
    new, ids = extended
    text = "Yesterday Zbigniew Brzęczyszczykiewicz, of Szczebrzeszyn, wrote (again)."
    entities = [span(text, "Zbigniew Brzęczyszczykiewicz", "PER"),
                span(text, "Szczebrzeszyn", "LOC")]
    original, out = rewrite(tokenizer, ids, text, entities)
    name_pieces = tokenizer.encode("Zbigniew Brzęczyszczykiewicz", add_special_tokens=False).ids
    assert len(name_pieces) >= 5   # the case this test is about
    assert out.dtype == np.int32
    assert list(out).count(ids["PER"]) == 1 and list(out).count(ids["LOC"]) == 1
    decoded = new.decode(out.tolist(), skip_special_tokens=False)
    assert decoded == "yesterday [PER], of [LOC], wrote ( again )."
    assert not set(out.tolist()) & set(name_pieces)


def test_a_span_covering_part_of_a_word_hides_the_whole_word(tokenizer, extended):
    new, ids = extended
    text = "Write to mail:jo.smith@example.org now."
    entities = [span(text, "jo.smith@example.org", "EMAIL")]
    _, out = rewrite(tokenizer, ids, text, entities)
    decoded = new.decode(out.tolist(), skip_special_tokens=False)
    assert "smith" not in decoded and "example" not in decoded and "mail" not in decoded
    assert list(out).count(ids["EMAIL"]) == 1
    assert decoded.startswith("write to [EMAIL]") and decoded.endswith("now.")


def test_each_entity_gets_its_own_placeholder_and_propagated_mentions_are_hidden(
        tokenizer, extended):
    new, ids = extended
    text = "Anna Kowalczyk met Bob Smithers. Later anna kowalczyk left; Paris stayed."
    entities = [
        span(text, "Anna Kowalczyk", "PER"), span(text, "Bob Smithers", "PER"),
        span(text, "anna kowalczyk", "PER", propagated=True),
        span(text, "Paris", "LOC", redacted=False),   # found, not redacted: stays
    ]
    _, out = rewrite(tokenizer, ids, text, entities)
    decoded = new.decode(out.tolist(), skip_special_tokens=False)
    assert decoded == "[PER] met [PER]. later [PER] left ; paris stayed."
    assert list(out).count(ids["PER"]) == 3


def test_adjacent_entities_stay_two_placeholders_and_nothing_redacted_changes_nothing(
        tokenizer, extended):
    _, ids = extended
    text = "Alice Bob"
    entities = [span(text, "Alice", "PER"), span(text, "Bob", "PER")]
    original, out = rewrite(tokenizer, ids, text, entities)
    assert out.tolist() == [ids["PER"], ids["PER"]]
    original, out = rewrite(tokenizer, ids, text, [span(text, "Alice", "PER", redacted=False)])
    assert out.tolist() == original.tolist()
    _, out = rewrite(tokenizer, ids, "", [])
    assert out.tolist() == []


def test_an_unknown_label_is_an_error(tokenizer):
    with pytest.raises(ValueError, match="DATE"):
        rewrite(tokenizer, {"PER": 1}, "On Monday", [EntitySpan(3, 9, "DATE", 1.0, redacted=True)])


def test_document_pieces_undo_the_windows(tokenizer):
    text = " ".join(f"word{i} Kowalczyk" for i in range(40))
    encoded = encoded_doc(tokenizer, text, max_length=24, overlap=6)
    assert len(encoded.windows) > 3
    ids, words = mlout.document_pieces(encoded)
    whole = tokenizer.encode([text[s:e] for s, e in zip(encoded.segmented.word_starts,
                                                        encoded.segmented.word_ends)],
                             is_pretokenized=True, add_special_tokens=False)
    assert ids.tolist() == whole.ids
    assert words.tolist() == whole.word_ids


def fake_hidden(encoded):
    """Hidden states that say where they come from: (document piece index, window index)."""
    out = []
    for index, window in enumerate(encoded.windows):
        hidden = np.zeros((len(window), 2), dtype=np.float32)
        hidden[1:-1, 0] = np.arange(window.piece_offset, window.piece_offset + len(window) - 2)
        hidden[:, 1] = index
        hidden[0] = (-1, index)   # [CLS]
        out.append(hidden)
    return out


def test_merged_piece_vectors_line_up_and_come_from_the_most_central_window(tokenizer):
    text = " ".join(f"alpha{i} beta" for i in range(60))
    encoded = encoded_doc(tokenizer, text, max_length=32, overlap=8)
    windows = encoded.windows
    assert len(windows) > 4
    vectors = mlout.merge_piece_vectors(encoded, fake_hidden(encoded))
    assert vectors.shape == (encoded.num_pieces, 2)
    assert vectors[:, 0].tolist() == list(range(encoded.num_pieces))
    # brute force: the window where the piece stands farthest from an inner edge, first on ties
    for piece in range(encoded.num_pieces):
        best, chosen = -1.0, None
        for index, window in enumerate(windows):
            start, end = window.piece_offset, window.piece_offset + len(window) - 2
            if not start <= piece < end:
                continue
            left = piece - start if start > 0 else np.inf
            right = end - 1 - piece if end < encoded.num_pieces else np.inf
            if min(left, right) > best:
                best, chosen = min(left, right), index
        assert vectors[piece, 1] == chosen


def test_merge_rejects_hidden_states_that_do_not_fit(tokenizer):
    encoded = encoded_doc(tokenizer, "Anna met Bob")
    with pytest.raises(ValueError, match="hidden states of shape"):
        mlout.merge_piece_vectors(encoded, [np.zeros((2, 4), np.float32)])
    with pytest.raises(ValueError, match="windows"):
        mlout.merge_piece_vectors(encoded, [])


def test_pooling_mean_and_cls():
    pieces = np.array([[1.0, 0.0], [3.0, 2.0]], dtype=np.float32)
    windows = [np.array([[10.0, 0.0], [0, 0]], np.float32),
               np.array([[20.0, 4.0], [0, 0]], np.float32)]
    assert mlout.pool_document(pieces, windows, "mean").tolist() == [2.0, 1.0]
    assert mlout.pool_document(pieces, windows, "cls").tolist() == [15.0, 2.0]
    assert mlout.pool_document(np.zeros((0, 2), np.float32), [], "mean") is None
    assert mlout.pool_document(np.zeros((0, 2), np.float32), [], "cls") is None
    with pytest.raises(ValueError):
        mlout.pool_document(pieces, windows, "max")
    with pytest.raises(ValueError):
        mlout.EmbeddingSettings(layer="first")


def test_entity_vectors_average_the_pieces_of_the_words_they_touch(tokenizer):
    text = "Met Brzęczyszczykiewicz at mail:jo@x.org today"
    encoded = encoded_doc(tokenizer, text)
    ids, words = mlout.document_pieces(encoded)
    vectors = np.arange(len(ids) * 2, dtype=np.float32).reshape(len(ids), 2)
    entities = [span(text, "Brzęczyszczykiewicz", "PER"), span(text, "jo@x.org", "EMAIL"),
                EntitySpan(3, 4, "MISC", 0.5)]   # only the space between words: no piece
    got = mlout.entity_vectors(vectors, words, encoded.segmented, entities)
    name_word = encoded.segmented.word_starts.index(text.index("Brzę"))
    expected = vectors[words == name_word].mean(axis=0)
    assert (words == name_word).sum() > 2
    np.testing.assert_allclose(got[0], expected)
    mail_word = next(i for i, (s, e) in enumerate(zip(encoded.segmented.word_starts,
                                                      encoded.segmented.word_ends))
                     if s <= text.index("jo@") < e)
    np.testing.assert_allclose(got[1], vectors[words == mail_word].mean(axis=0))
    assert got[2] is None


def test_registering_a_pattern_label_keeps_the_placeholder_ids_of_the_others(tokenizer):
    from larvatus.transforms.recognizers import Kind, pattern_labels, register, unregister

    labels = ["PER", "LOC", "ORG", "MISC", *pattern_labels()]
    _, before = mlout.tokenizer_with_placeholders(tokenizer, labels)
    register(Kind("AAA_KIND", lambda text, settings: [], 2, "nothing"))
    try:
        _, after = mlout.tokenizer_with_placeholders(tokenizer, [*labels, "AAA_KIND"])
    finally:
        unregister("AAA_KIND")
    assert {label: after[label] for label in before} == before
    assert after["AAA_KIND"] == max(after.values())
