"""WordPiece encoding of segmented words into overlapping windows that cover every piece."""
from __future__ import annotations

import unicodedata
from dataclasses import dataclass
from itertools import chain
from typing import Sequence

import numpy as np

from larvatus.transforms.chars import IGNORABLE, visible
from larvatus.transforms.records import EncodedDocument, SegmentedDocument, Vocabulary, Window


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
    first = word[:1]
    if first.isascii() and first not in _LEADING_NOISE:   # no mark, no noise to skip
        if not first.isupper():
            return 0
        return 2 if len(word) > 1 and word.isupper() else 1
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


class WordPieces:
    """A tokenizer's pieces of single words, remembered across documents.

    Words reach the tokenizer pre-tokenized, so a word's pieces never depend on its
    neighbours: each distinct word is tokenized once, and a document's pieces are its
    words' pieces joined (the same ids as tokenizing the document's word list, tested).
    Most words of a corpus repeat, which makes encoding several times faster. The
    memory is bounded: past `max_words` distinct words it starts afresh.
    """

    def __init__(self, tokenizer, max_words: int = 100_000):
        self.tokenizer = tokenizer
        self._max_words = max_words
        self._known: dict[str, tuple[int, ...]] = {}

    def pieces(self, words: Sequence[str]) -> tuple[np.ndarray, np.ndarray]:
        """(piece ids, the word of each piece) for one document's words."""
        per_word = list(map(self._known.get, words))
        if None in per_word:
            new = list(dict.fromkeys(w for w, ids in zip(words, per_word) if ids is None))
            encoding = self.tokenizer.encode(new, is_pretokenized=True, add_special_tokens=False)
            owner = np.asarray(encoding.word_ids, dtype=np.int64)
            ids = encoding.ids
            bounds = np.searchsorted(owner, np.arange(len(new) + 1)).tolist()
            if len(self._known) + len(new) > self._max_words:
                self._known = {}
            learnt = {word: tuple(ids[bounds[i]:bounds[i + 1]]) for i, word in enumerate(new)}
            if len(self._known) + len(learnt) <= self._max_words:
                self._known.update(learnt)
            per_word = [learnt[w] if ids is None else ids for w, ids in zip(words, per_word)]
        lengths = np.fromiter(map(len, per_word), np.int64, len(per_word))
        ids = np.fromiter(chain.from_iterable(per_word), np.int64, int(lengths.sum()))
        return ids, np.repeat(np.arange(len(per_word), dtype=np.int64), lengths)


class _Casings(dict):
    """`casing_type` of each word string met, remembered (at most `MAX_CASINGS` of them)."""

    def __missing__(self, word: str) -> int:
        value = casing_type(word)
        if len(self) >= MAX_CASINGS:
            self.clear()
        self[word] = value
        return value


MAX_CASINGS = 100_000
_CASINGS = _Casings()


def encode_many(
    segmented: Sequence[SegmentedDocument], tokenizer, settings: EncodeSettings
) -> list[EncodedDocument]:
    """Encodes documents.

    Args:
      segmented: documents split into words.
      tokenizer: a `tokenizers.Tokenizer` with truncation and padding off, or a
        `WordPieces` around one (which keeps what it learnt for the next call).
      settings: window length, overlap, specials and type-id mode.

    Returns:
      One EncodedDocument per input, in order. Words reach the tokenizer and
      the casing feature without their invisible characters ("Pe\u200dter" is
      "Peter"). A word that yields no piece (a lone zero-width space, say)
      simply has no prediction and tags as O.
    """
    word_pieces = tokenizer if isinstance(tokenizer, WordPieces) else WordPieces(tokenizer)
    results = []
    for doc in segmented:
        text = doc.document.text
        words = [text[s:e] for s, e in zip(doc.word_starts, doc.word_ends)]
        if IGNORABLE.search(text):
            words = [visible(word) for word in words]
        ids, word_of_piece = word_pieces.pieces(words)
        if settings.type_ids == TYPE_IDS_CASING:
            word_types = np.fromiter(map(_CASINGS.__getitem__, words), np.int64, len(words))
        else:
            word_types = np.zeros(len(words), dtype=np.int64)
        windows = _build_windows(ids, word_of_piece, word_types, settings)
        results.append(EncodedDocument(doc, windows, int(ids.shape[0])))
    return results


def encode(segmented: SegmentedDocument, tokenizer, settings: EncodeSettings) -> EncodedDocument:
    """Encodes one document; see `encode_many`."""
    return encode_many([segmented], tokenizer, settings)[0]
