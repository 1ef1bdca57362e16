"""Per-document language detection with py3langid (its model ships inside the package: no download)."""
from __future__ import annotations

import zlib
from collections import Counter
from functools import lru_cache
from typing import Optional

import numpy as np
from py3langid.langid import LanguageIdentifier

# Fewer letters than this say too little: the document is reported as undetermined.
MIN_LETTERS = 20
# The languages told apart (ISO 639-1). py3langid knows 97, among them creoles and regional
# languages that a short English sentence full of names can score highest ("Angela Merkel met
# Barack Obama in Berlin" reads as Nigerian Pidgin to the full model); the corpora Larvatus
# meets are in these.
LANGUAGES = (
    "af", "ar", "bg", "bn", "ca", "cs", "cy", "da", "de", "el", "en", "es", "et", "eu", "fa",
    "fi", "fr", "ga", "gl", "he", "hi", "hr", "hu", "hy", "id", "is", "it", "ja", "ka", "ko",
    "lt", "lv", "mk", "ms", "mt", "nb", "nl", "nn", "pl", "pt", "ro", "ru", "sk", "sl", "sq",
    "sr", "sv", "sw", "ta", "th", "tl", "tr", "uk", "ur", "vi", "zh")
UNDETERMINED = "und"


@lru_cache(maxsize=1)
def _identifier():
    from py3langid.langid import MODEL_FILE

    identifier = _FastIdentifier.from_model_file(MODEL_FILE)
    identifier.set_languages([code for code in LANGUAGES if code in identifier.nb_classes])
    # The same weights laid out by feature (rows), so a document's rows are read in one piece.
    # In float32: py3langid's product casts its float16 rows to float32 for every document.
    identifier.nb_ptc = np.ascontiguousarray(identifier.nb_ptc, dtype=np.float32)
    identifier.tables = _dfa_tables(identifier)
    return identifier


def load_model() -> None:
    """Loads py3langid's model now (about 1 s: a worker's set-up), not on the first document."""
    _identifier()


def detect_language(text: str) -> str:
    """The ISO 639-1 code of the document's language, or "und" for text with too few letters.

    Capitalised words are left out when enough other letters remain: names say little about
    the language they are written in, and the words around them say much.
    """
    sample = text[:10_000]
    if not _has_letters(sample, MIN_LETTERS):
        return UNDETERMINED
    uncapitalised = " ".join([w for w in sample.split() if not w[:1].isupper()])
    code, _ = _identifier().classify(uncapitalised if _has_letters(uncapitalised, MIN_LETTERS)
                                     else sample)
    return code


def _has_letters(text: str, least: int) -> bool:
    """Whether `text` holds at least `least` letters (it stops counting there)."""
    found = 0
    for found, _ in enumerate(filter(str.isalpha, text), start=1):
        if found >= least:
            return True
    return found >= least


# py3langid's byte automaton (Aho-Corasick over its byte n-grams) forgets everything but the
# last SYNC_BYTES bytes: from any state, those bytes lead where they lead from the start
# state (checked on the model whose tables have these CRC-32s: tests/transforms/test_language.py).
SYNC_BYTES = 6
MODEL_CRC32 = (655525188, 806020877, 2259536855)


def _tables_crc32(nextmove: np.ndarray, rowbase: np.ndarray, output: np.ndarray) -> tuple:
    return tuple(zlib.crc32(np.ascontiguousarray(a)) for a in (nextmove, rowbase >> 8, output))


def _dfa_tables(identifier) -> Optional[tuple[np.ndarray, np.ndarray, np.ndarray]]:
    """(next move, row base, output) as arrays, or None for a model not checked (see SYNC_BYTES)
    or a py3langid whose internals differ from those this walk stands in for."""
    if not all(hasattr(identifier, name) for name in
               ("tk_nextmove", "_rowbase", "tk_output", "_sparse_score", "_raw_score")):
        return None
    nextmove = np.asarray(identifier.tk_nextmove, dtype=np.uint32)
    rowbase = np.asarray(identifier._rowbase, dtype=np.int64)
    output = np.asarray(identifier.tk_output, dtype=np.int64)
    if _tables_crc32(nextmove, rowbase, output) != MODEL_CRC32:
        return None
    return nextmove, rowbase, output


def visit_counts(tables: tuple[np.ndarray, np.ndarray, np.ndarray], data: bytes) -> Counter:
    """py3langid's `visit_counts` over `data` with numpy: {feature: count} in the order of
    first occurrence, as its Counter holds them (an empty Counter where it returns None)."""
    return Counter(_features(tables, data).tolist())


def feature_counts(tables: tuple[np.ndarray, np.ndarray, np.ndarray],
                   data: bytes) -> tuple[np.ndarray, np.ndarray]:
    """`visit_counts` as two arrays, features (intp) and their counts (float32), in the
    order of first occurrence: what py3langid's `_sparse_score` reads from the Counter."""
    features = _features(tables, data)
    n = len(features)
    if not n:
        return np.empty(0, dtype=np.intp), np.empty(0, dtype=np.float32)
    # Sorted by feature, then position: each feature, position packed in one integer (a plain
    # sort is several times faster than a stable argsort).
    position_bits = n.bit_length()
    if int(features.max()).bit_length() + position_bits <= 62:
        keyed = np.sort((features << position_bits) | np.arange(n, dtype=np.int64))
        ordered, positions = keyed >> position_bits, keyed & ((1 << position_bits) - 1)
    else:
        positions = np.argsort(features, kind="stable")
        ordered = features[positions]
    head = np.empty(n, dtype=bool)
    head[0] = True
    np.not_equal(ordered[1:], ordered[:-1], out=head[1:])
    starts = np.flatnonzero(head)
    counts = np.empty(len(starts), dtype=np.int64)   # np.diff(starts, append=n), cheaper
    np.subtract(starts[1:], starts[:-1], out=counts[:-1])
    counts[-1] = n - starts[-1]
    order = np.argsort(positions[starts])   # first positions differ: one order only
    return ordered[starts][order].astype(np.intp), counts[order].astype(np.float32)


def _features(tables: tuple[np.ndarray, np.ndarray, np.ndarray], data: bytes) -> np.ndarray:
    """The feature met after each byte of `data` that ends one, in byte order.

    The state after each byte is the start state's walk over the SYNC_BYTES bytes ending
    there (fewer at the text's start), done for every position at once."""
    nextmove, rowbase, output = tables
    codes = np.frombuffer(data, dtype=np.uint8).astype(np.int64)
    head = min(len(codes), SYNC_BYTES - 1)
    states = np.empty(len(codes), dtype=np.int64)
    state = 0
    for i in range(head):   # the first bytes, walked from the start
        state = int(nextmove[rowbase[state] + codes[i]])
        states[i] = state
    if len(codes) > head:
        walk = np.zeros(len(codes) - head, dtype=np.int64)
        for k in range(SYNC_BYTES):
            walk = nextmove[rowbase[walk] + codes[k:k + len(walk)]].astype(np.int64)
        states[head:] = walk
    features = output[states]
    return features[features >= 0]


class _FastIdentifier(LanguageIdentifier):
    """py3langid's identifier with its byte walk in numpy (`feature_counts`); the same scores."""

    tables = None

    def _raw_score(self, text):
        if self.tables is not None:
            features, counts = feature_counts(self.tables, text)
            if len(features):   # py3langid's `_sparse_score` on the same arrays
                return np.log1p(counts) @ self.nb_ptc[features] + self.nb_pc
        return super()._raw_score(text)
