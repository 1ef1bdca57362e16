"""Unit tests for transforms/encode.py: WordPiece windows over segmented documents."""
from __future__ import annotations

import random

import numpy as np
import pytest
from hypothesis import given, strategies as st

from larvatus.transforms.encode import EncodeSettings, casing_type, encode, encode_many, window_bounds
from larvatus.transforms.records import Document
from larvatus.transforms.segment import segment
from tests.paths import ROOT as REPO


@pytest.fixture(scope="module")
def specials(tokenizer):
    return tokenizer.token_to_id("[CLS]"), tokenizer.token_to_id("[SEP]")


def make_settings(specials, max_length=16, overlap=4, type_ids="zeros"):
    cls_id, sep_id = specials
    return EncodeSettings(max_length=max_length, overlap=overlap, cls_id=cls_id,
                          sep_id=sep_id, type_ids=type_ids)


def seg(text: str):
    return segment(Document("d", text, "src"))


def word_pieces(tokenizer, word: str) -> list[int]:
    return tokenizer.encode([word], is_pretokenized=True, add_special_tokens=False).ids


# --- window_bounds ------------------------------------------------------------

def pieces_from_lengths(lengths) -> np.ndarray:
    return np.repeat(np.arange(len(lengths)), lengths).astype(np.int64)


def check_bounds(word_of_piece: np.ndarray, content_length: int, overlap: int):
    bounds = window_bounds(word_of_piece, content_length, overlap)
    n = word_of_piece.shape[0]
    word_starts = {0} | {i for i in range(1, n) if word_of_piece[i] != word_of_piece[i - 1]}
    word_length = {}
    for w in word_of_piece.tolist():
        word_length[w] = word_length.get(w, 0) + 1
    assert bounds[0][0] == 0
    assert bounds[-1][1] == n
    covered = np.zeros(n, dtype=int)
    for index, (start, end) in enumerate(bounds):
        assert 0 <= start < end <= n
        assert end - start <= content_length
        covered[start:end] += 1
        if index:
            previous_start, previous_end = bounds[index - 1]
            assert previous_start < start <= previous_end   # progress, no gap
            assert previous_end - start <= overlap          # at most `overlap` shared
        if start not in word_starts:
            # Only a word longer than a whole window may be cut.
            assert word_length[int(word_of_piece[start])] > content_length
        if end < n and end not in word_starts:
            assert word_length[int(word_of_piece[end])] > content_length
    assert covered.min() >= 1
    return bounds


def test_window_bounds_empty():
    assert window_bounds(np.zeros(0, dtype=np.int64), 10, 2) == []


def test_window_bounds_fits_in_one_window():
    assert window_bounds(pieces_from_lengths([1, 2, 3]), 6, 2) == [(0, 6)]
    assert window_bounds(pieces_from_lengths([1, 2, 3]), 100, 2) == [(0, 6)]


def test_window_bounds_single_piece_words_overlap_exactly():
    wop = np.arange(20, dtype=np.int64)
    bounds = check_bounds(wop, 8, 3)
    assert bounds == [(0, 8), (5, 13), (10, 18), (15, 20)]


def test_window_bounds_overlap_zero():
    wop = np.arange(20, dtype=np.int64)
    assert check_bounds(wop, 8, 0) == [(0, 8), (8, 16), (16, 20)]
    # With multi-piece words, windows still only meet at word starts.
    bounds = check_bounds(pieces_from_lengths([3, 3, 3, 3, 3]), 7, 0)
    assert bounds == [(0, 6), (6, 12), (12, 15)]


def test_window_bounds_snaps_to_word_starts():
    # Words of 3 pieces: starts at 0, 3, 6, 9, 12; a 7-piece window ends at 6.
    bounds = check_bounds(pieces_from_lengths([3, 3, 3, 3, 3]), 7, 2)
    assert bounds == [(0, 6), (6, 12), (12, 15)]   # no word start in [end-2, end)
    bounds = check_bounds(pieces_from_lengths([3, 3, 3, 3, 3]), 7, 3)
    assert bounds == [(0, 6), (3, 9), (6, 12), (9, 15)]


def test_window_bounds_overlap_is_about_overlap_pieces():
    # Two-piece words: the shared part is overlap or overlap - 1 pieces.
    wop = pieces_from_lengths([2] * 50)
    bounds = check_bounds(wop, 20, 6)
    for (_, previous_end), (start, _) in zip(bounds, bounds[1:]):
        assert previous_end - start in (5, 6)


def test_window_bounds_one_giant_word():
    wop = np.zeros(25, dtype=np.int64)
    bounds = check_bounds(wop, 10, 3)
    assert bounds == [(0, 10), (10, 20), (20, 25)]


def test_window_bounds_giant_word_between_short_words():
    wop = pieces_from_lengths([2, 23, 1, 2])
    bounds = check_bounds(wop, 10, 3)
    # the first window stops before the giant word; the giant word is cut in 10s
    assert bounds[0] == (0, 2)
    assert bounds[-1][1] == 28


def test_window_bounds_random_configurations():
    rng = random.Random(1234)
    for _ in range(300):
        content_length = rng.randint(2, 40)
        overlap = rng.randint(0, content_length // 2)
        lengths = [rng.choice([1, 1, 1, 2, 3, 5, rng.randint(1, 90)]) for _ in range(rng.randint(1, 60))]
        check_bounds(pieces_from_lengths(lengths), content_length, overlap)


def test_window_bounds_allows_gaps_in_word_ids():
    # Words that yield no piece leave holes in word ids; bounds only see changes.
    wop = np.array([0, 0, 2, 3, 3, 5, 7, 7, 7], dtype=np.int64)
    check_bounds(wop, 4, 1)


# --- casing_type ----------------------------------------------------------------

@pytest.mark.parametrize("word, expected", [
    ("bush", 0), ("Bush", 1), ("BUSH", 2), ("I", 1), ("A", 1), ("McDonald", 1),
    ("iPhone", 0), ("U.S.", 2), ("NATO's", 1), ("Éric", 1), ("ÉRIC", 2), ("éric", 0),
    ("123", 0), ("", 0), ("'Tis", 0), ("Zoe\u0308", 1), ("\U0001F44D", 0), ("東京", 0),
    ("ΑΘΗΝΑ", 2), ("Αθήνα", 1),
])
def test_casing_type(word, expected):
    assert casing_type(word) == expected


# --- EncodeSettings -------------------------------------------------------------

@pytest.mark.parametrize("kwargs", [
    dict(max_length=3, overlap=0),
    dict(max_length=0, overlap=0),
    dict(max_length=16, overlap=-1),
    dict(max_length=16, overlap=8),    # content 14, half is 7
    dict(max_length=4, overlap=2),
    dict(max_length=16, overlap=2, type_ids="ones"),
    dict(max_length=16, overlap=2, type_ids="Casing"),
])
def test_encode_settings_rejects(kwargs):
    with pytest.raises(ValueError):
        EncodeSettings(cls_id=101, sep_id=102, **kwargs)


@pytest.mark.parametrize("kwargs", [
    dict(max_length=4, overlap=0), dict(max_length=4, overlap=1),
    dict(max_length=16, overlap=7), dict(max_length=512, overlap=128, type_ids="casing"),
])
def test_encode_settings_accepts(kwargs):
    settings = EncodeSettings(cls_id=101, sep_id=102, **kwargs)
    assert settings.max_length == kwargs["max_length"]


# --- encode ---------------------------------------------------------------------

TEXT = ("Angela Merkel visited Paris with Xanthippe Moreau. The unbelievably "
        "long-winded NATO summit in 東京 ended \U0001F44D\U0001F3FD; Zoe\u0308 said \"Ok\" again.")


def check_encoded(encoded, tokenizer, settings):
    segmented = encoded.segmented
    words = [segmented.word_text(i) for i in range(segmented.num_words)]
    # Expected pieces, word by word, computed independently of encode().
    expected_ids, expected_words = [], []
    for w, word in enumerate(words):
        ids = word_pieces(tokenizer, word)
        expected_ids += ids
        expected_words += [w] * len(ids)
    assert encoded.num_pieces == len(expected_ids)
    covered = np.zeros(len(expected_ids), dtype=int)
    for window in encoded.windows:
        n = len(window)
        assert 3 <= n <= settings.max_length
        for array in (window.input_ids, window.type_ids, window.word_ids, window.first_piece):
            assert array.shape == (n,)
        assert window.input_ids[0] == settings.cls_id
        assert window.input_ids[-1] == settings.sep_id
        assert window.word_ids[0] == -1 and window.word_ids[-1] == -1
        assert not window.first_piece[0] and not window.first_piece[-1]
        assert window.type_ids[0] == 0 and window.type_ids[-1] == 0
        lo, hi = window.piece_offset, window.piece_offset + n - 2
        assert window.input_ids[1:-1].tolist() == expected_ids[lo:hi]
        assert window.word_ids[1:-1].tolist() == expected_words[lo:hi]
        covered[lo:hi] += 1
        # one first piece per word in the window, except a word cut at the window's start
        content_words = window.word_ids[1:-1]
        firsts = window.first_piece[1:-1]
        starts_mid_word = lo > 0 and expected_words[lo - 1] == expected_words[lo]
        for w in set(content_words.tolist()):
            count = int(firsts[content_words == w].sum())
            if starts_mid_word and w == expected_words[lo]:
                assert count == 0
            else:
                assert count == 1
                position = int(np.flatnonzero(content_words == w)[0])
                assert firsts[position]
    if encoded.num_pieces:
        assert covered.min() >= 1
    else:
        assert encoded.windows == ()
    return words


def test_encode_small_document(tokenizer, specials):
    settings = make_settings(specials, max_length=16, overlap=4)
    encoded = encode(seg(TEXT), tokenizer, settings)
    words = check_encoded(encoded, tokenizer, settings)
    assert len(encoded.windows) > 1
    assert encoded.num_tokens == sum(len(w) for w in encoded.windows)
    # word ids point back at the right words
    first = encoded.windows[0]
    assert words[:3] == ["Angela", "Merkel", "visited"]
    n_angela = len(word_pieces(tokenizer, "Angela"))
    assert [words[w] for w in first.word_ids[1:1 + n_angela + 1].tolist()] == ["Angela"] * n_angela + ["Merkel"]
    # every piece of every window maps to the word whose own pieces it is
    for window in encoded.windows:
        for piece, w in zip(window.input_ids[1:-1].tolist(), window.word_ids[1:-1].tolist()):
            assert piece in word_pieces(tokenizer, words[w])


def test_encode_pieces_and_words_exactly(tokenizer, specials):
    settings = make_settings(specials, max_length=32, overlap=0)
    encoded = encode(seg("Xanthippe Moreau"), tokenizer, settings)
    assert len(encoded.windows) == 1
    window = encoded.windows[0]
    expected = word_pieces(tokenizer, "Xanthippe") + word_pieces(tokenizer, "Moreau")
    assert window.input_ids.tolist() == [specials[0]] + expected + [specials[1]]
    n_first = len(word_pieces(tokenizer, "Xanthippe"))
    n_second = len(word_pieces(tokenizer, "Moreau"))
    assert n_first > 1 and n_second > 1
    assert window.word_ids.tolist() == [-1] + [0] * n_first + [1] * n_second + [-1]
    assert window.first_piece.tolist() == (
        [False, True] + [False] * (n_first - 1) + [True] + [False] * (n_second - 1) + [False])
    assert window.piece_offset == 0
    assert encoded.num_pieces == n_first + n_second


def test_encode_window_starting_mid_word(tokenizer, specials):
    # A word of many pieces in a tiny window must be cut; the cut window has no first piece for it.
    word = "Pneumonoultramicroscopicsilicovolcanoconiosis"
    pieces = word_pieces(tokenizer, word)
    assert len(pieces) > 6
    settings = make_settings(specials, max_length=6, overlap=1)
    encoded = encode(seg(f"a {word} b"), tokenizer, settings)
    check_encoded(encoded, tokenizer, settings)
    cut = [w for w in encoded.windows if w.piece_offset > 0 and not w.first_piece[1]]
    assert cut, "expected at least one window starting mid-word"


def test_encode_huge_document(tokenizer, specials):
    rng = random.Random(7)
    vocab = ["Angela", "Merkel", "visited", "Paris", "and", "the", "Xanthippe", "Moreau",
             "unbelievably", "NATO", "\U0001F44D", "東京", ",", ".", "Zoe\u0308", "42"]
    parts, size = [], 0
    while size < 200_000:
        word = rng.choice(vocab)
        parts.append(word)
        size += len(word) + 1
    text = " ".join(parts)[:200_000]
    assert len(text) == 200_000
    settings = make_settings(specials, max_length=128, overlap=32)
    encoded = encode(seg(text), tokenizer, settings)
    assert len(encoded.windows) > 300
    assert max(len(w) for w in encoded.windows) <= 128
    # windows cover every piece, in order, with no gap
    previous_end = 0
    for window in encoded.windows:
        assert window.piece_offset <= previous_end
        previous_end = max(previous_end, window.piece_offset + len(window) - 2)
    assert previous_end == encoded.num_pieces


def test_type_ids_follow_casing(tokenizer, specials):
    settings = make_settings(specials, max_length=64, overlap=0, type_ids="casing")
    encoded = encode(seg("NATO met Angela in paris"), tokenizer, settings)
    window = encoded.windows[0]
    segmented = encoded.segmented
    expected = [0] + [casing_type(segmented.word_text(w)) for w in window.word_ids[1:-1].tolist()] + [0]
    assert window.type_ids.tolist() == expected
    assert set(window.type_ids.tolist()) == {0, 1, 2}
    by_word = {segmented.word_text(int(w)): int(t)
               for w, t in zip(window.word_ids[1:-1], window.type_ids[1:-1])}
    assert by_word == {"NATO": 2, "met": 0, "Angela": 1, "in": 0, "paris": 0}


def test_type_ids_zero_by_default(tokenizer, specials):
    settings = make_settings(specials, max_length=8, overlap=2)
    encoded = encode(seg("NATO met Angela Merkel in PARIS"), tokenizer, settings)
    assert len(encoded.windows) > 1
    for window in encoded.windows:
        assert window.type_ids.tolist() == [0] * len(window)


def test_zero_piece_words(tokenizer, specials):
    settings = make_settings(specials, max_length=16, overlap=2)
    segmented = seg("Angela \u200b Merkel \u200b")
    assert segmented.num_words == 4
    encoded = encode(segmented, tokenizer, settings)
    check_encoded(encoded, tokenizer, settings)
    window = encoded.windows[0]
    n_angela = len(word_pieces(tokenizer, "Angela"))
    n_merkel = len(word_pieces(tokenizer, "Merkel"))
    assert word_pieces(tokenizer, "\u200b") == []
    assert encoded.num_pieces == n_angela + n_merkel
    assert len(encoded.windows) == 1
    assert window.word_ids.tolist() == [-1] + [0] * n_angela + [2] * n_merkel + [-1]
    assert window.first_piece.tolist() == (
        [False, True] + [False] * (n_angela - 1) + [True] + [False] * (n_merkel - 1) + [False])


def test_document_with_only_zero_piece_words(tokenizer, specials):
    settings = make_settings(specials)
    encoded = encode(seg("\u200b"), tokenizer, settings)
    assert encoded.segmented.num_words == 1
    assert encoded.num_pieces == 0
    assert encoded.windows == ()
    assert encoded.num_tokens == 0


def test_encode_many_keeps_order(tokenizer, specials):
    settings = make_settings(specials, max_length=16, overlap=4)
    texts = ["Xanthippe Moreau", "\u200b", TEXT, "Paris"]
    many = encode_many([seg(t) for t in texts], tokenizer, settings)
    assert [e.segmented.document.text for e in many] == texts
    for text, encoded in zip(texts, many):
        single = encode(seg(text), tokenizer, settings)
        assert encoded.num_pieces == single.num_pieces
        assert [w.input_ids.tolist() for w in encoded.windows] == [w.input_ids.tolist() for w in single.windows]


# --- WordPieces: each distinct word tokenized once -----------------------------------

def _hostile_texts() -> list[str]:
    sample = (REPO / "pipeline" / "sample" / "news.jsonl").read_text(encoding="utf-8")
    import json

    texts = [json.loads(line)["text"] for line in sample.splitlines() if line.strip()]
    return texts + [
        "Pe\u200dter and Pe\u200dter met 👩‍👩‍👧 in Zürich; ZOË, Zoe\u0308 and zoë.",
        "\u200b \u200b lone zero-width words, " + "x" * 150 + " a word past 100 characters",
        "北京 and 東京, Ελλάδα, Москва — naïve café; AT&T's CEO; e-mail: a.b@c.de",
        "", "   ", "don't can't O'Brien-Smith's 3.5% $1,000,000.00",
    ]


def test_word_pieces_give_the_ids_of_tokenizing_each_document_whole(tokenizer, specials):
    """The cache changes nothing: every document's piece ids and word of each piece are
    those of one tokenizer call over its (visible) word list, however the cache was filled."""
    from larvatus.transforms.chars import visible
    from larvatus.transforms.encode import WordPieces

    settings = make_settings(specials, max_length=32, overlap=8, type_ids="casing")
    for max_words in (100_000, 7):   # 7: the memory starts afresh again and again
        cached = WordPieces(tokenizer, max_words=max_words)
        for text in _hostile_texts():
            document = seg(text)
            words = [visible(document.word_text(i)) for i in range(document.num_words)]
            whole = tokenizer.encode(words, is_pretokenized=True, add_special_tokens=False) \
                if words else None
            ids, word_of_piece = cached.pieces(words)
            assert ids.tolist() == (whole.ids if whole else [])
            assert word_of_piece.tolist() == (whole.word_ids if whole else [])
            fresh, reused = encode(document, tokenizer, settings), encode(document, cached, settings)
            assert len(fresh.windows) == len(reused.windows)
            for a, b in zip(fresh.windows, reused.windows):
                for field in ("input_ids", "type_ids", "word_ids", "first_piece"):
                    assert np.array_equal(getattr(a, field), getattr(b, field)), field
        assert len(cached._known) <= max_words


def _casing_type_by_definition(word: str) -> int:
    import unicodedata

    start = 0
    while start < len(word) and (
            word[start] in "@#¿¡_" or unicodedata.category(word[start]).startswith("M")):
        start += 1
    word = word[start:]
    if not word[:1].isupper():
        return 0
    return 2 if len(word) > 1 and word.isupper() else 1


@given(st.text(alphabet=st.sampled_from("aZ@#_¿¡\u0301É9 .-xY"), max_size=6))
def test_casing_type_shortcut_for_ascii_agrees_with_the_definition(word):
    assert casing_type(word) == _casing_type_by_definition(word)


def test_invisible_characters_reach_neither_the_tokenizer_nor_the_casing_feature(tokenizer, specials):
    settings = make_settings(specials, max_length=32, type_ids="casing")
    hidden = encode(seg("met \u200bAngela and \ufeffMERKEL"), tokenizer, settings).windows[0]
    plain = encode(seg("met Angela and MERKEL"), tokenizer, settings).windows[0]
    assert hidden.type_ids.tolist() == plain.type_ids.tolist() == [0, 0, 1, 0, 2, 2, 0]
    assert hidden.input_ids.tolist() == plain.input_ids.tolist()


def test_word_pieces_shared_by_threads_give_every_document_its_own_pieces(tokenizer):
    """Threads sharing one memory that keeps starting afresh each get their documents' pieces."""
    import random
    import sys
    import threading

    from larvatus.transforms.encode import WordPieces

    rng = random.Random(1)
    vocabulary = [f"w{i}" for i in range(3000)] + ["Zürich", "naïve", "AT&T"]
    documents = [[rng.choice(vocabulary) for _ in range(rng.randint(0, 60))] for _ in range(400)]
    expected = [tokenizer.encode(d, is_pretokenized=True, add_special_tokens=False).ids
                if d else [] for d in documents]
    memory, wrong = WordPieces(tokenizer, max_words=150), []

    def work(offset: int) -> None:
        for i in range(offset, len(documents), 4):
            try:
                if memory.pieces(documents[i])[0].tolist() != expected[i]:
                    wrong.append(i)
            except Exception as error:   # a torn memory fails with KeyError or ValueError
                wrong.append(repr(error))

    interval = sys.getswitchinterval()
    sys.setswitchinterval(1e-6)   # switch threads as often as possible
    try:
        threads = [threading.Thread(target=work, args=(k,)) for k in range(4)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
    finally:
        sys.setswitchinterval(interval)
    assert wrong == []
