"""WordPiece encoding of segmented words into overlapping windows that cover every piece."""
from __future__ import annotations

import threading
import unicodedata
from dataclasses import dataclass
from itertools import repeat
from typing import Optional, Sequence

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
    cls, sep = np.array([settings.cls_id], np.int64), np.array([settings.sep_id], np.int64)
    zero, no_word, no_first = np.zeros(1, np.int64), np.full(1, -1, np.int64), np.zeros(1, bool)
    windows = []
    for start, end in window_bounds(word_of_piece, settings.max_length - 2, settings.overlap):
        windows.append(Window(
            np.concatenate((cls, ids[start:end], sep)),
            np.concatenate((zero, piece_types[start:end], zero)),
            np.concatenate((no_word, word_of_piece[start:end], no_word)),
            np.concatenate((no_first, first[start:end], no_first)), start))
    return tuple(windows)


class WordPieces:
    """A tokenizer's pieces of single words, remembered across documents.

    Words reach the tokenizer pre-tokenized, so a word's pieces never depend on its
    neighbours: each distinct word is tokenized once, and a document's pieces are its
    words' pieces joined (the same ids as tokenizing the document's word list, tested).
    Most words of a corpus repeat, which makes encoding several times faster. Each known
    word has a row: where its pieces start in one array of all known pieces, how many
    there are, and its `casing_type`; a document's pieces are gathered from those arrays
    at once. The memory is bounded: past `max_words` distinct words it starts afresh (a
    document whose new words alone exceed it is encoded without remembering them).
    """

    def __init__(self, tokenizer, max_words: int = 100_000):
        self.tokenizer = tokenizer
        self._max_words = max_words
        self._lock = threading.Lock()   # rows and arrays change together
        self._forget()

    def _forget(self) -> None:
        self._known: dict[str, int] = {}   # word -> row
        self._ids = np.zeros(0, dtype=np.int64)   # every known word's pieces, in row order
        self._used = 0                             # how much of `_ids` they fill
        self._first = np.zeros(0, dtype=np.int64)    # per row: its first piece in `_ids`,
        self._count = np.zeros(0, dtype=np.int64)    # its number of pieces
        self._casing = np.zeros(0, dtype=np.int64)   # and its word's casing_type

    def pieces(self, words: Sequence[str]) -> tuple[np.ndarray, np.ndarray]:
        """(piece ids, the word of each piece) for one document's words."""
        ids, word_of_piece, _ = self.lookup(words)
        return ids, word_of_piece

    def lookup(self, words: Sequence[str]) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """(piece ids, the word of each piece, each word's `casing_type`) for one document."""
        with self._lock:
            rows = self._rows(words)
            if rows is not None:
                counts, firsts = self._count[rows], self._first[rows]
                ids, casings = self._ids, self._casing[rows]
        if rows is None:   # too many new words to remember: a memory for this document only
            return WordPieces(self.tokenizer, max_words=len(set(words))).lookup(words)
        word_of_piece = np.repeat(np.arange(len(words), dtype=np.int64), counts)
        ends = np.cumsum(counts)
        total = int(ends[-1]) if len(words) else 0
        shift = np.repeat(firsts - (ends - counts), counts)   # row start - document start
        return ids[np.arange(total, dtype=np.int64) + shift], word_of_piece, casings

    def _rows(self, words: Sequence[str]) -> Optional[np.ndarray]:
        """Each word's row, words not known yet learnt first; None when they do not fit."""
        rows = np.fromiter(map(self._known.get, words, repeat(-1)), np.int64, len(words))
        if not len(words) or rows.min() >= 0:
            return rows
        new = list(dict.fromkeys(w for w, row in zip(words, rows.tolist()) if row < 0))
        if len(self._known) + len(new) > self._max_words:
            self._forget()
            new = list(dict.fromkeys(words))   # the words known before are new again
        if len(new) > self._max_words:
            return None
        self._learn(new)
        return np.fromiter(map(self._known.__getitem__, words), np.int64, len(words))

    def _learn(self, new: list[str]) -> None:
        """Tokenizes words not known yet in one call and gives each a row."""
        encoding = self.tokenizer.encode(new, is_pretokenized=True, add_special_tokens=False)
        owner = np.asarray(encoding.word_ids, dtype=np.int64)
        ids = np.asarray(encoding.ids, dtype=np.int64)
        bounds = np.searchsorted(owner, np.arange(len(new) + 1))
        rows, used = len(self._known), self._used
        self._first = _grown(self._first, rows, used + bounds[:-1])
        self._count = _grown(self._count, rows, np.diff(bounds))
        casings = np.fromiter(map(casing_type, new), np.int64, len(new))
        self._casing = _grown(self._casing, rows, casings)
        self._ids = _grown(self._ids, used, ids)
        self._used = used + len(ids)
        self._known.update(zip(new, range(rows, rows + len(new))))


def _grown(array: np.ndarray, used: int, values: np.ndarray) -> np.ndarray:
    """`array` with `values` written from `used` on, in a larger copy (twice the size it
    needs) when they do not fit."""
    end = used + len(values)
    if end > len(array):
        larger = np.zeros(2 * end, dtype=array.dtype)
        larger[:used] = array[:used]
        array = larger
    array[used:end] = values
    return array


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
        if not text.isascii() and IGNORABLE.search(text):   # every such character is beyond ASCII
            words = [visible(word) for word in words]
        ids, word_of_piece, casings = word_pieces.lookup(words)
        if settings.type_ids == TYPE_IDS_CASING:
            word_types = casings
        else:
            word_types = np.zeros(len(words), dtype=np.int64)
        windows = _build_windows(ids, word_of_piece, word_types, settings)
        results.append(EncodedDocument(doc, windows, int(ids.shape[0])))
    return results


def encode(segmented: SegmentedDocument, tokenizer, settings: EncodeSettings) -> EncodedDocument:
    """Encodes one document; see `encode_many`."""
    return encode_many([segmented], tokenizer, settings)[0]
