"""Word segmentation with spaCy's rule-based English tokenizer, keeping character offsets."""
from __future__ import annotations

from functools import lru_cache

from transforms.records import Document, SegmentedDocument


@lru_cache(maxsize=1)
def english_tokenizer():
    """spaCy's blank English tokenizer: rules only, nothing to download."""
    import spacy

    return spacy.blank("en").tokenizer


def segment_words(text: str) -> tuple[tuple[int, ...], tuple[int, ...]]:
    """Returns the start and end offsets (code points, end-exclusive) of each word.

    Whitespace tokens are dropped; every other character belongs to exactly one word.
    """
    starts: list[int] = []
    ends: list[int] = []
    for token in english_tokenizer()(text):
        if token.is_space:
            continue
        starts.append(token.idx)
        ends.append(token.idx + len(token.text))
    return tuple(starts), tuple(ends)


def segment(document: Document) -> SegmentedDocument:
    """Splits a document into words."""
    starts, ends = segment_words(document.text)
    return SegmentedDocument(document=document, word_starts=starts, word_ends=ends)
