"""Hand-made documents for the stage tests: an EncodedDocument of given words in one window."""
from __future__ import annotations

import numpy as np

from larvatus.transforms.records import Document, EncodedDocument, SegmentedDocument, Window


def encoded_document(text: str, words: list[tuple[int, int]]) -> EncodedDocument:
    """`text` with the given (start, end) words, one piece a word, in one window."""
    n = len(words)
    window = Window(np.arange(n + 2), np.zeros(n + 2, dtype=np.int64),
                    np.array([-1] + list(range(n)) + [-1]),
                    np.array([False] + [True] * n + [False]), 0)
    segmented = SegmentedDocument(Document("d", text, "s"), tuple(s for s, _ in words),
                                  tuple(e for _, e in words))
    return EncodedDocument(segmented, (window,), n)
