"""Word segmentation with spaCy's rule-based English tokenizer, keeping character offsets."""
from __future__ import annotations

import bisect
import re
import sys
import unicodedata
from contextlib import contextmanager
from functools import lru_cache

from larvatus.transforms.chars import (
    CONTROL, CONTROL_CHAR, DEFAULT_IGNORABLE, HIDDEN, is_separator)
from larvatus.transforms.chunk_words import ChunkWords
from larvatus.transforms.records import Document, SegmentedDocument


# Emoji and pictographs (with skin tones, joiners and variation selectors) split
# from the letters they touch, so "👍🏽Zoë" is two words and a name's span stays tight.
SYMBOL_RUN = (
    "[\U0001F000-\U0001FAFF\u2600-\u27BF\u2B00-\u2BFF\u2190-\u21FF"
    "\uFE0F\u200D\U000E0020-\U000E007F]+")

# spaCy strips prefixes and suffixes one at a time, each time searching the rest of
# the chunk again: a run of n punctuation marks costs n squared (20,000 "!" took 26 s).
# Chunks between whitespace longer than this go to a linear rule instead (below), so
# spaCy never sees more than LONG_CHUNK characters at once. Natural text rarely has
# such chunks (long URLs do).
LONG_CHUNK = 64
LONG_CHUNK_RE = re.compile(r"\S{%d,}" % (LONG_CHUNK + 1))
SAME_CHAR_RUN = 32   # in a long chunk, a run of one punctuation mark is cut every 32


@contextmanager
def _torch_hidden():
    """`import torch` fails inside (unless PyTorch is already loaded), and works again after.

    spaCy imports thinc, and thinc imports PyTorch whenever it is installed (the `train`
    extra installs it): about 3 CPU-s and 290 MiB per worker process for nothing, since
    the rule-based tokenizer uses no model. thinc records that PyTorch is absent and
    goes on without it.
    """
    if "torch" in sys.modules:
        yield
        return
    sys.modules["torch"] = None  # type: ignore[assignment]
    try:
        yield
    finally:
        if "torch" in sys.modules and sys.modules["torch"] is None:
            del sys.modules["torch"]


@lru_cache(maxsize=1)
def english_tokenizer():
    """spaCy's blank English tokenizer (rules only, nothing to download), emoji split off.

    Built as spaCy's own `create_tokenizer` builds it for `spacy.blank("en")`, from
    the English defaults, but without a `Language` object: creating one imports every
    package registering spaCy factories (Presidio's brings in transformers).
    """
    with _torch_hidden():
        from spacy.lang.en import English
        from spacy.tokenizer import Tokenizer
        from spacy.util import compile_infix_regex, compile_prefix_regex, compile_suffix_regex
        from spacy.vocab import create_vocab

    defaults = English.Defaults
    return Tokenizer(
        create_vocab(English.lang, defaults),
        rules=defaults.tokenizer_exceptions,
        prefix_search=compile_prefix_regex([SYMBOL_RUN] + list(defaults.prefixes)).search,
        suffix_search=compile_suffix_regex(list(defaults.suffixes) + [SYMBOL_RUN]).search,
        infix_finditer=compile_infix_regex(list(defaults.infixes) + [SYMBOL_RUN]).finditer,
        token_match=defaults.token_match,
        url_match=defaults.url_match,
    )


@lru_cache(maxsize=1)
def _long_chunk_words() -> re.Pattern:
    """Words of a long chunk, found in one linear pass: letter/digit/mark runs,
    emoji runs, and runs of one repeated mark (at most SAME_CHAR_RUN), else single characters."""
    ranges, start = [], None
    for code in range(0x20000 + 1):   # combining marks beyond U+1FFFF are all ignorable
        is_mark = code < 0x20000 and unicodedata.category(chr(code)).startswith("M")
        if is_mark and start is None:
            start = code
        elif not is_mark and start is not None:
            ranges.append(f"{re.escape(chr(start))}-{re.escape(chr(code - 1))}")
            start = None
    marks = "".join(ranges)
    return re.compile(
        rf"[\w{marks}]+|{SYMBOL_RUN}|(.)\1{{0,{SAME_CHAR_RUN - 1}}}", re.DOTALL)


_HIDDEN_CHAR = re.compile(f"[{CONTROL}{DEFAULT_IGNORABLE}]")   # HIDDEN, found faster


class Shadow:
    """The text as spaCy and the model see it, and the way back to the original's offsets.

    Control characters (NUL, ESC, DEL, C1) become spaces, so they separate words
    ("Quartermaine\\x00visited" is two words). Default-ignorable characters (ZWJ,
    VS16, soft hyphen, ...) touching a word are dropped, so they do not split it
    ("Pe\\u200dter" is one word), and are given back to the word they touch when
    offsets are mapped; an invisible run between separators stays a word of its own.
    """

    def __init__(self, text: str):
        self.original = text
        self._drop_at: list[int] = []   # shadow index before which a dropped run stood
        self._dropped: list[int] = []   # characters dropped up to and including that run
        if _HIDDEN_CHAR.search(text) is None:
            self.text = text
            return
        pieces: list[str] = []
        cursor = dropped = 0
        n = len(text)
        for match in HIDDEN.finditer(text):
            a, b = match.span()
            pieces.append(text[cursor:a])
            cursor = b
            if CONTROL_CHAR.match(text, a):
                pieces.append(" ")
            elif (a == 0 or is_separator(text[a - 1])) and (b == n or is_separator(text[b])):
                pieces.append(text[a:b])
            else:
                self._drop_at.append(a - dropped)
                dropped += b - a
                self._dropped.append(dropped)
        pieces.append(text[cursor:])
        self.text = "".join(pieces)

    def to_original(self, index: int) -> int:
        """The original offset of the shadow character at `index` (len(shadow) -> len(original))."""
        if index >= len(self.text):
            return len(self.original)
        k = bisect.bisect_right(self._drop_at, index)
        return index + (self._dropped[k - 1] if k else 0)

    def map_words(self, starts: list[int], ends: list[int]) -> tuple[tuple[int, ...], tuple[int, ...]]:
        """Shadow word offsets to original ones; each dropped character joins the word it touches
        (the one before it when it touches two)."""
        if not self._drop_at:
            return tuple(starts), tuple(ends)
        out_starts, out_ends = [], []
        previous_end = -1
        for s, e in zip(starts, ends):
            if s == previous_end or s == 0:
                start = self.to_original(s) if s else 0
            else:
                start = self.to_original(s - 1) + 1
            out_starts.append(start)
            out_ends.append(self.to_original(e))
            previous_end = e
        return tuple(out_starts), tuple(out_ends)


def _spacy_words(text: str, begin: int, end: int, starts: list[int], ends: list[int]) -> None:
    """spaCy's words of text[begin:end], read from the Doc's arrays rather than Token by Token."""
    if begin >= end:
        return
    tokenizer = english_tokenizer()   # spaCy imported first, PyTorch hidden
    from spacy.attrs import IDX, IS_SPACE, LENGTH

    table = tokenizer(text[begin:end]).to_array([IDX, LENGTH, IS_SPACE])
    table = table[table[:, 2] == 0]
    word_starts = table[:, 0] + begin
    starts += word_starts.tolist()
    ends += (word_starts + table[:, 1]).tolist()


def _shadow_words(text: str) -> tuple[list[int], list[int]]:
    """Words of an already shadowed text: spaCy, except for chunks longer than LONG_CHUNK."""
    starts: list[int] = []
    ends: list[int] = []
    cursor = 0
    for chunk in LONG_CHUNK_RE.finditer(text):
        _spacy_words(text, cursor, chunk.start(), starts, ends)
        for word in _long_chunk_words().finditer(text, chunk.start(), chunk.end()):
            starts.append(word.start())
            ends.append(word.end())
        cursor = chunk.end()
    _spacy_words(text, cursor, len(text), starts, ends)
    return starts, ends


@lru_cache(maxsize=1)
def chunk_words() -> ChunkWords:
    """The shared, bounded memory of spaCy's words of each chunk (texts with long ones aside)."""
    return ChunkWords(english_tokenizer(), LONG_CHUNK)


def _fast_shadow_words(text: str) -> tuple[list[int], list[int]]:
    """`_shadow_words`, each chunk between whitespace tokenized once per corpus where spaCy
    would give the same words (`ChunkWords`), the whole text by spaCy elsewhere."""
    found = chunk_words().words(text)
    return found if found is not None else _shadow_words(text)


def segment_words(text: str) -> tuple[tuple[int, ...], tuple[int, ...]]:
    """Returns the start and end offsets (code points, end-exclusive) of each word.

    Offsets index the original text. Whitespace and control characters are in
    no word; every other character belongs to exactly one word, invisible ones
    (ZWJ, VS16, soft hyphen, ...) to the word they touch. Linear in the text's
    length.
    """
    shadow = Shadow(text)
    starts, ends = _fast_shadow_words(shadow.text)
    return shadow.map_words(starts, ends)


def segment(document: Document) -> SegmentedDocument:
    """Splits a document into words."""
    starts, ends = segment_words(document.text)
    return SegmentedDocument(document=document, word_starts=starts, word_ends=ends)
