"""transforms/chunk_words.py: spaCy's words chunk by chunk give spaCy's words of the whole text."""
from __future__ import annotations

import random
import sys

import numpy as np

from larvatus.transforms import segment as segment_lib
from larvatus.transforms.chunk_words import ChunkWords, chunk_bounds

# Pieces that spaCy's special cases and affix rules act on, alone and across spaces.
PIECES = ["it", "'s", "'", "s", ":", ")", "(", ";", "-", "Mr", ".", "Mr.", "a.m.", "p", "m",
          ":)", ";)", ":-)", "(:", "<3", "=", "D", "o", "O", "_", "^_^", "Smith", "x", "’",
          "em", "and/or", "w/o", "8", "Ph", "D.", "St", "Co", "10a.m", "°", "C.", "\\", '"',
          ">", "<", "[", "]", "|", "*", "e.g", "i.e", "U.S.", "n't", "do", "ca", "said.",
          "https://x.org/a", "👍🏽", "Zoë", "cannot", "a" * 70, "!" * 40]
GAPS = [" ", " ", " ", "", "", "\n", "  ", "\t", " \n", "\xa0", "\u3000"]


def random_texts(seed: int, count: int) -> list[str]:
    rng = random.Random(seed)
    return ["".join(rng.choice(PIECES) + rng.choice(GAPS) for _ in range(rng.randint(0, 12)))
            for _ in range(count)]


def fresh_words(max_chunks: int = 200_000) -> ChunkWords:
    return ChunkWords(segment_lib.english_tokenizer(), segment_lib.LONG_CHUNK, max_chunks)


def spacy_words(text: str) -> tuple[list[int], list[int]]:
    return segment_lib._shadow_words(text)


def test_chunk_words_are_spacys_words_on_random_texts():
    words = fresh_words()
    fast = 0
    for text in random_texts(0, 3000):
        found = words.words(text)
        if found is not None:
            fast += 1
            assert found == spacy_words(text), repr(text)
    assert fast > 2000   # the fallback stays the exception


def test_segment_words_are_spacys_words_on_random_texts():
    for text in random_texts(1, 1000):
        shadow = segment_lib.Shadow(text)
        assert segment_lib.segment_words(text) == shadow.map_words(*spacy_words(shadow.text))


def test_match_across_chunks_hiding_a_special_case_falls_back_to_spacy():
    # spaCy matches ") :" across the space, which keeps ":)" of the next chunk apart.
    text = ") :)e.g"
    assert fresh_words().words(text) is None
    alone = [w for chunk in text.split() for w in spacy_words(chunk)[0]]
    assert len(alone) != len(spacy_words(text)[0])   # tokenized alone, the chunk differs
    assert segment_lib.segment_words(text) == tuple(map(tuple, spacy_words(text)))


def test_special_string_without_match_across_chunks_takes_the_fast_path():
    for text in ["he said. It's Mr. Smith :) at 10a.m. today", "Mr .", "it's"]:
        found = fresh_words().words(text)
        assert found is not None and found == spacy_words(text), text


def test_chunks_learnt_in_one_text_serve_the_next():
    words = fresh_words()
    words.words("Mr. Smith said hello.")
    known = len(words._ids)
    assert words.words("hello. Mr. Smith said hi") == spacy_words("hello. Mr. Smith said hi")
    assert len(words._ids) == known + 1   # only "hi" is new


def test_memory_of_chunks_is_bounded():
    words = fresh_words(max_chunks=20)
    rng = random.Random(2)
    for _ in range(50):
        text = " ".join(f"w{rng.randrange(10_000)}" for _ in range(8))
        assert words.words(text) == spacy_words(text)
        assert len(words._ids) <= 20


def test_chunk_bounds_are_str_split_chunks():
    rng = random.Random(3)
    alphabet = ["a", "é", "😀", " ", "\n", "\t", "\xa0", "\u2009", "\u3000", "\x1c", "\x85", "\u200b"]
    for _ in range(2000):
        text = "".join(rng.choice(alphabet) for _ in range(rng.randint(0, 15)))
        starts, ends = chunk_bounds(text)
        assert [text[a:b] for a, b in zip(starts.tolist(), ends.tolist())] == text.split()
        assert isinstance(starts, np.ndarray)


def test_no_whitespace_above_the_table():
    from larvatus.transforms import chunk_words

    assert chr(chunk_words._LAST_SPACE).isspace()
    assert not any(chr(c).isspace() for c in range(chunk_words._LAST_SPACE + 1, sys.maxunicode + 1))


def test_texts_with_a_chunk_longer_than_long_chunk_are_segmented_whole():
    words = fresh_words()
    text = "see https://example.org/" + "a" * 80 + " now"
    assert words.words(text) is None
    assert "https://example.org/" + "a" * 80 not in words._ids
    shadow = segment_lib.Shadow(text)
    assert segment_lib.segment_words(text) == shadow.map_words(*spacy_words(shadow.text))


def test_threads_sharing_the_memory_get_spacys_words():
    from concurrent.futures import ThreadPoolExecutor

    words = fresh_words(max_chunks=50)   # small: the memory starts afresh under the threads
    texts = random_texts(4, 400)
    with ThreadPoolExecutor(max_workers=4) as pool:
        found = list(pool.map(words.words, texts))
    for text, got in zip(texts, found):
        assert got is None or got == spacy_words(text), repr(text)
