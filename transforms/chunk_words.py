"""spaCy's words of a text from its whitespace-separated chunks, each distinct chunk tokenized once."""
from __future__ import annotations

import re
import threading
from dataclasses import dataclass
from itertools import chain, repeat
from typing import Optional

import numpy as np

# str.isspace() by code point, up to the last whitespace character (U+3000; none above it, tested).
_LAST_SPACE = 0x3000
_SPACE = np.array([chr(c).isspace() for c in range(_LAST_SPACE + 1)] + [False])


def chunk_bounds(text: str) -> tuple[np.ndarray, np.ndarray]:
    """Starts and ends of the runs of non-whitespace characters (str.isspace()), the chunks
    `text.split()` gives and spaCy tokenizes one by one."""
    codes = np.frombuffer(text.encode("utf-32-le"), dtype=np.uint32)
    padded = np.ones(len(codes) + 2, dtype=bool)
    padded[1:-1] = _SPACE[np.minimum(codes, _LAST_SPACE + 1)]
    edges = np.flatnonzero(padded[1:] != padded[:-1])
    return edges[0::2], edges[1::2]


class ChunkWords:
    """A spaCy tokenizer's words of whole texts, chunk by chunk, remembered across texts.

    spaCy splits a text at whitespace and tokenizes each chunk on its own (its affix rules
    see nothing else); only its special-case matcher looks across chunks. That matcher
    changes tokens only where its match's text is a special case's string, and no such
    string holds whitespace between two tokens, so a match across chunks never rewrites
    itself: it matters only when it hides a match inside a chunk it touches (one holding a
    special-case string). Such a match joins the last token of a chunk to the first of the
    next one, with one space between, as two consecutive tokens of a special case. `words`
    gives None (the caller tokenizes the text whole) where that may happen beside a chunk
    holding a special string; elsewhere each chunk's words are spaCy's on the chunk alone.
    The memory is bounded: past `max_chunks` distinct chunks (of at most `long_chunk`
    characters) it starts afresh; a lock keeps it whole under several threads.
    """

    def __init__(self, tokenizer, long_chunk: int, max_chunks: int = 200_000):
        self._tokenizer = tokenizer
        self._long_chunk = long_chunk
        self._max_chunks = max_chunks
        patterns = special_patterns(tokenizer)
        self._pairs = {(a, b) for tokens in patterns for a, b in zip(tokens, tokens[1:])}
        # A pattern with a whitespace token could match over a gap other than one space.
        self.usable = not any(t.isspace() for pair in self._pairs for t in pair)
        self._lefts = frozenset(a for a, _ in self._pairs)
        self._rights = frozenset(b for _, b in self._pairs)
        self._by_string: dict[str, list[tuple[str, ...]]] = {}
        for tokens in patterns:
            self._by_string.setdefault("".join(tokens), []).append(tokens)
        self._longest = max(map(len, self._by_string), default=0)
        strings = sorted(self._by_string, key=len, reverse=True)
        self._special = re.compile("|".join(map(re.escape, strings))) if strings else None
        self._lock = threading.Lock()
        self._forget()

    def _forget(self) -> None:
        """Starts afresh: chunk -> number; per number its words' count, first word and flags;
        per word its offsets in its chunk; `_Edges` of the chunks with flags."""
        self._ids: dict[str, int] = {}
        self._count = np.zeros(1024, dtype=np.int64)
        self._first = np.zeros(1024, dtype=np.int64)
        self._flag = np.zeros(1024, dtype=np.int64)
        self._word_starts = np.zeros(4096, dtype=np.int64)
        self._word_ends = np.zeros(4096, dtype=np.int64)
        self._words = 0
        self._edges: dict[int, _Edges] = {}

    def words(self, text: str) -> Optional[tuple[list[int], list[int]]]:
        """(word starts, word ends) of `text`, or None where the caller must segment the text
        whole: a match across chunks may hide one inside, or a chunk is longer than `long_chunk`
        (not remembered, so that the memory stays bounded in characters too)."""
        if not self.usable:
            return None
        starts, ends = chunk_bounds(text)
        if len(starts) and int((ends - starts).max()) > self._long_chunk:
            return None
        chunks = text.split()
        if len(chunks) != len(starts):   # cannot happen: both split at str.isspace()
            return None
        with self._lock:   # Beam may run several threads in one process
            return self._remembered_words(text, chunks, starts, ends)

    def _remembered_words(self, text: str, chunks: list[str], starts: np.ndarray,
                          ends: np.ndarray) -> Optional[tuple[list[int], list[int]]]:
        ids = np.fromiter(map(self._ids.get, chunks, repeat(-1)), np.int64, len(chunks))
        if (ids < 0).any():
            missing = list(dict.fromkeys(c for c, i in zip(chunks, ids.tolist()) if i < 0))
            if len(self._ids) + len(missing) > self._max_chunks:
                self._forget()
                missing = list(dict.fromkeys(chunks))
            self._learn(missing)
            ids = np.fromiter(map(self._ids.__getitem__, chunks), np.int64, len(chunks))
        flags = self._flag[ids]
        if len(chunks) > 1 and flags.any() and self._may_cross(text, ids, flags, starts, ends):
            return None
        counts = self._count[ids]
        total = int(counts.sum())
        first_word = np.repeat(np.cumsum(counts) - counts, counts)
        word = np.repeat(self._first[ids], counts) + (np.arange(total) - first_word)
        base = np.repeat(starts, counts)
        return (self._word_starts[word] + base).tolist(), (self._word_ends[word] + base).tolist()

    def _may_cross(self, text: str, ids: np.ndarray, flags: np.ndarray, starts: np.ndarray,
                   ends: np.ndarray) -> bool:
        """Whether a special-case match across chunks may touch a chunk holding a special string."""
        suspect = _SUSPECT[flags[:-1] * 8 + flags[1:]] & (starts[1:] - ends[:-1] == 1)
        for k in np.flatnonzero(suspect).tolist():
            tails, heads = self._edges[int(ids[k])].tails, self._edges[int(ids[k + 1])].heads
            if text[ends[k]] == " " and any((a, b) in self._pairs for a in tails for b in heads):
                return True
        return False

    def _learn(self, chunks: list[str]) -> None:
        """Tokenizes chunks not met before (in one spaCy call) and remembers them."""
        offsets = self._tokenize(chunks)
        first = len(self._ids)
        self._grow(first + len(chunks), self._words + sum(map(len, offsets.values())) // 2)
        for number, chunk in enumerate(chunks, first):
            flat = offsets[chunk]
            self._ids[chunk] = number
            self._count[number], self._first[number] = len(flat) // 2, self._words
            self._word_starts[self._words:self._words + len(flat) // 2] = flat[0::2]
            self._word_ends[self._words:self._words + len(flat) // 2] = flat[1::2]
            self._words += len(flat) // 2
            edges = self._chunk_edges(chunk, chunk[:flat[1]], chunk[flat[-2]:])
            if edges.flags:
                self._edges[number], self._flag[number] = edges, edges.flags

    def _grow(self, chunks: int, words: int) -> None:
        """Room for `chunks` chunk numbers and `words` words (capacities doubled as needed)."""
        for name, needed in (("_count", chunks), ("_first", chunks), ("_flag", chunks),
                             ("_word_starts", words), ("_word_ends", words)):
            array = getattr(self, name)
            if needed > len(array):
                grown = np.zeros(max(needed, 2 * len(array)), dtype=np.int64)
                grown[:len(array)] = array
                setattr(self, name, grown)

    def _tokenize(self, chunks: list[str]) -> dict[str, tuple[int, ...]]:
        """spaCy's words of each chunk, from one call over the chunks joined by newlines
        (a newline token between two chunks: no pattern holds one, none matches across)."""
        from spacy.attrs import IDX, IS_SPACE, LENGTH

        table = self._tokenizer("\n".join(chunks)).to_array([IDX, LENGTH, IS_SPACE])
        table = table[table[:, 2] == 0]
        lengths = np.fromiter(map(len, chunks), np.int64, len(chunks))
        chunk_starts = np.concatenate(([0], np.cumsum(lengths + 1)[:-1]))
        owner = np.searchsorted(chunk_starts, table[:, 0], side="right") - 1
        word_starts = table[:, 0] - chunk_starts[owner]
        flat = np.empty(2 * len(table), dtype=np.int64)
        flat[0::2], flat[1::2] = word_starts, word_starts + table[:, 1]
        bounds = 2 * np.searchsorted(owner, np.arange(len(chunks) + 1))
        flat_list, bounds = flat.tolist(), bounds.tolist()
        return {chunk: tuple(flat_list[bounds[i]:bounds[i + 1]]) for i, chunk in enumerate(chunks)}

    def _chunk_edges(self, chunk: str, head: str, tail: str) -> "_Edges":
        """The tokens a chunk may begin and end with beside others: its own first and last,
        and where a special string opens (closes) it, that special case's first (last) token
        as the affix rules cut it, which a match across chunks would leave in place."""
        if self._special is None or self._special.search(chunk) is None:
            flags = (_LEFT if tail in self._lefts else 0) | (_RIGHT if head in self._rights else 0)
            return _Edges(frozenset((tail,)), frozenset((head,)), flags)
        heads, tails = {head}, {tail}
        for size in range(1, min(len(chunk), self._longest) + 1):
            heads.update(tokens[0] for tokens in self._by_string.get(chunk[:size], ()))
            tails.update(tokens[-1] for tokens in self._by_string.get(chunk[-size:], ()))
        flags = _SPECIAL | (_LEFT if tails & self._lefts else 0) \
            | (_RIGHT if heads & self._rights else 0)
        return _Edges(frozenset(tails), frozenset(heads), flags)


_SPECIAL, _LEFT, _RIGHT = 1, 2, 4
# By the flags of two chunks side by side: whether a match across them may hide one inside.
_SUSPECT = np.array([bool(a & _LEFT and b & _RIGHT and (a | b) & _SPECIAL)
                     for a in range(8) for b in range(8)])


@dataclass(frozen=True)
class _Edges:
    """A chunk's possible last tokens (`tails`), first tokens (`heads`) and flags: whether it
    holds a special string, whether a tail opens a special case's pair, a head closes one."""

    tails: frozenset
    heads: frozenset
    flags: int


def special_patterns(tokenizer) -> list[tuple[str, ...]]:
    """The token texts of each special case spaCy's matcher looks for: those its
    `add_special_case` hands the matcher (faster heuristics on), split by the affix rules alone."""
    from spacy.tokenizer import Tokenizer

    bare = Tokenizer(tokenizer.vocab, rules=None, prefix_search=tokenizer.prefix_search,
                     suffix_search=tokenizer.suffix_search,
                     infix_finditer=tokenizer.infix_finditer,
                     token_match=tokenizer.token_match, url_match=tokenizer.url_match)
    patterns = []
    for string in tokenizer.rules or {}:
        if not tokenizer.faster_heuristics or tokenizer.find_prefix(string) \
                or tokenizer.find_infix(string) or tokenizer.find_suffix(string) or " " in string:
            patterns.append(tuple(token.text for token in bare(string)))
    return patterns
