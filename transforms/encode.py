"""WordPiece encoding of segmented words into overlapping windows that cover every piece."""
from __future__ import annotations

import unicodedata
from dataclasses import dataclass
from typing import Sequence

import numpy as np

from transforms.chars import visible
from transforms.records import EncodedDocument, SegmentedDocument, Vocabulary, Window


class TypeIds(Vocabulary):
    """What token type ids carry: zeros, or each word's casing for models trained with it
    (the embedded default): the uncased WordPiece vocabulary cannot tell "Bush" from "bush"."""

    ZEROS = "zeros"
    CASING = "casing"


TYPE_IDS_ZEROS = TypeIds.ZEROS.value
TYPE_IDS_CASING = TypeIds.CASING.value
TYPE_ID_MODES = TypeIds.names()


@dataclass(frozen=True)
class EncodeSettings:
    """How documents become model inputs.

    Args:
      max_length: the most pieces in one window, [CLS] and [SEP] included.
      overlap: pieces shared by consecutive windows (snapped to word starts).
      cls_id, sep_id: the tokenizer's special token ids.
      type_ids: "zeros", or "casing" for models trained with the casing feature.
    """

    max_length: int
    overlap: int
    cls_id: int
    sep_id: int
    type_ids: str = TYPE_IDS_ZEROS

    def __post_init__(self):
        if self.max_length < 4:
            raise ValueError(f"max_length must be at least 4, got {self.max_length}")
        if not 0 <= self.overlap <= (self.max_length - 2) // 2:
            raise ValueError(
                f"overlap must be between 0 and half the window's content "
                f"({(self.max_length - 2) // 2}), got {self.overlap}")
        if self.type_ids not in TYPE_ID_MODES:
            raise ValueError(f"type_ids must be one of {TYPE_ID_MODES}, got {self.type_ids!r}")


MAX_DEFAULT_OVERLAP = 128


def default_overlap(window_length: int) -> int:
    """The overlap used when none is asked for: a quarter of the window, at most 128 pieces."""
    return min(window_length // 4, MAX_DEFAULT_OVERLAP)


_LEADING_NOISE = "@#¿¡_"


def casing_type(word: str) -> int:
    """0: no leading capital; 1: leading capital (Title, McDonald, I); 2: ALL CAPS (two or more characters).

    Leading combining marks and @ # ¿ ¡ _ are skipped, so "@Google" and a stray
    accent before "Angela" still read as capitalised.
    """
    start = 0
    while start < len(word) and (
            word[start] in _LEADING_NOISE or unicodedata.category(word[start]).startswith("M")):
        start += 1
    word = word[start:]
    if not word[:1].isupper():
        return 0
    if len(word) > 1 and word.isupper():
        return 2
    return 1


def window_bounds(
    word_of_piece: np.ndarray, content_length: int, overlap: int
) -> list[tuple[int, int]]:
    """Splits pieces [0, n) into windows of at most `content_length` pieces.

    Window edges fall on word starts where a word fits, so no word is cut;
    consecutive windows share about `overlap` pieces. Only a single word longer
    than a whole window is cut, and its pieces are still all covered.
    """
    n = int(word_of_piece.shape[0])
    if n == 0:
        return []
    is_word_start = np.ones(n, dtype=bool)
    is_word_start[1:] = word_of_piece[1:] != word_of_piece[:-1]
    word_start_positions = np.flatnonzero(is_word_start)
    bounds: list[tuple[int, int]] = []
    start = 0
    while True:
        end = min(start + content_length, n)
        if end < n and not is_word_start[end]:
            # Largest word start in (start, end]; keep `end` if the word is too long.
            k = np.searchsorted(word_start_positions, end, side="right") - 1
            if word_start_positions[k] > start:
                end = int(word_start_positions[k])
        bounds.append((start, end))
        if end >= n:
            return bounds
        # Next start: the first word start at or after end - overlap, before end.
        k = np.searchsorted(word_start_positions, max(end - overlap, start + 1), side="left")
        next_start = int(word_start_positions[k]) if k < len(word_start_positions) else end
        start = min(next_start, end) if next_start > start else end


def _build_windows(
    ids: np.ndarray, word_of_piece: np.ndarray, word_types: np.ndarray,
    settings: EncodeSettings,
) -> tuple[Window, ...]:
    n = int(ids.shape[0])
    first = np.ones(n, dtype=bool)
    first[1:] = word_of_piece[1:] != word_of_piece[:-1]
    piece_types = word_types[word_of_piece] if n else np.zeros(0, dtype=np.int64)
    windows = []
    for start, end in window_bounds(word_of_piece, settings.max_length - 2, settings.overlap):
        length = end - start + 2
        input_ids = np.empty(length, dtype=np.int64)
        input_ids[0] = settings.cls_id
        input_ids[-1] = settings.sep_id
        input_ids[1:-1] = ids[start:end]
        type_ids = np.zeros(length, dtype=np.int64)
        type_ids[1:-1] = piece_types[start:end]
        word_ids = np.full(length, -1, dtype=np.int64)
        word_ids[1:-1] = word_of_piece[start:end]
        first_piece = np.zeros(length, dtype=bool)
        first_piece[1:-1] = first[start:end]
        windows.append(Window(input_ids, type_ids, word_ids, first_piece, start))
    return tuple(windows)


def encode_many(
    segmented: Sequence[SegmentedDocument], tokenizer, settings: EncodeSettings
) -> list[EncodedDocument]:
    """Encodes documents in one batched tokenizer call.

    Args:
      segmented: documents split into words.
      tokenizer: a `tokenizers.Tokenizer` with truncation and padding off.
      settings: window length, overlap, specials and type-id mode.

    Returns:
      One EncodedDocument per input, in order. Words reach the tokenizer and
      the casing feature without their invisible characters ("Pe\u200dter" is
      "Peter"). A word that yields no piece (a lone zero-width space, say)
      simply has no prediction and tags as O.
    """
    word_lists = [
        [visible(doc.document.text[s:e]) for s, e in zip(doc.word_starts, doc.word_ends)]
        for doc in segmented
    ]
    encodings = tokenizer.encode_batch(
        word_lists, is_pretokenized=True, add_special_tokens=False)
    results = []
    for doc, words, encoding in zip(segmented, word_lists, encodings):
        ids = np.asarray(encoding.ids, dtype=np.int64)
        word_of_piece = np.asarray(
            [w if w is not None else -1 for w in encoding.word_ids], dtype=np.int64)
        if settings.type_ids == TYPE_IDS_CASING:
            word_types = np.fromiter((casing_type(w) for w in words), np.int64, len(words))
        else:
            word_types = np.zeros(len(words), dtype=np.int64)
        windows = _build_windows(ids, word_of_piece, word_types, settings)
        results.append(EncodedDocument(doc, windows, int(ids.shape[0])))
    return results


def encode(segmented: SegmentedDocument, tokenizer, settings: EncodeSettings) -> EncodedDocument:
    """Encodes one document; see `encode_many`."""
    return encode_many([segmented], tokenizer, settings)[0]
