"""Word segmentation with spaCy's rule-based English tokenizer, keeping character offsets."""
from __future__ import annotations

from functools import lru_cache

from transforms.records import Document, SegmentedDocument


# Emoji and pictographs (with skin tones, joiners and variation selectors) split
# from the letters they touch, so "👍🏽Zoë" is two words and a name's span stays tight.
SYMBOL_RUN = (
    "[\U0001F000-\U0001FAFF\u2600-\u27BF\u2B00-\u2BFF\u2190-\u21FF"
    "\uFE0F\u200D\U000E0020-\U000E007F]+")


@lru_cache(maxsize=1)
def english_tokenizer():
    """spaCy's blank English tokenizer (rules only, nothing to download), emoji split off."""
    import spacy
    from spacy.util import compile_infix_regex, compile_prefix_regex, compile_suffix_regex

    nlp = spacy.blank("en")
    tokenizer = nlp.tokenizer
    tokenizer.prefix_search = compile_prefix_regex(
        [SYMBOL_RUN] + list(nlp.Defaults.prefixes)).search
    tokenizer.suffix_search = compile_suffix_regex(
        list(nlp.Defaults.suffixes) + [SYMBOL_RUN]).search
    tokenizer.infix_finditer = compile_infix_regex(
        list(nlp.Defaults.infixes) + [SYMBOL_RUN]).finditer
    return tokenizer


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
