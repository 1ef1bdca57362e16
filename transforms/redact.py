"""Resolve overlapping spans, propagate redacted surface forms, and rewrite text with placeholders."""
from __future__ import annotations

import bisect
import hashlib
import hmac
import os
import re
from collections import defaultdict
from itertools import compress, count
from operator import attrgetter
from dataclasses import dataclass, field, replace
from typing import Callable, Iterable, Optional, Sequence

from larvatus.transforms.chars import normalize_surface
from larvatus.transforms.edges import settle_edges
from larvatus.transforms.labels import DECLARED_ROLES, EntityRole, NameRoles
from larvatus.transforms.names import apply_name_rules
from larvatus.transforms.ordinary import OWN_EVIDENCE, looks_like_name, refine_spans
from larvatus.transforms.recognizers.base import keep_disjoint
from larvatus.transforms.records import (
    EntitySource, EntitySpan, Replacement, SegmentedDocument, Vocabulary)

PSEUDONYM_HEX_DIGITS = 12


class PlaceholderStyle(Vocabulary):
    """How a redacted span is written (one operator each, as Presidio's anonymizer operators)."""

    LABEL = "label"
    INDEXED = "indexed"
    PSEUDONYM = "pseudonym"


PLACEHOLDER_STYLES = PlaceholderStyle.names()


MIN_KEY_CHARS = 16


class SecretKeyError(ValueError):
    """The pseudonym key cannot be read where it should be; the message says where and why."""


def _read_local_file(path: str) -> bytes:
    with open(path, "rb") as handle:
        return handle.read()


@dataclass(frozen=True)
class KeySource:
    """Where the pseudonym key is read, by each process that needs it; it holds no secret.

    Exactly one of `env` (an environment variable's name) or `file` (a path the
    reader can open: a mounted secret, or any Beam filesystem with a reader that
    supports it). Surrounding whitespace (a file's trailing newline) is ignored in
    both alike, so `openssl rand -hex 32 > key`, `export KEY=$(cat key)` and
    `export KEY="$(cat key)
"` give the same key; a blank key is refused.
    """

    env: Optional[str] = None
    file: Optional[str] = None

    def __post_init__(self):
        if (self.env is None) == (self.file is None):
            raise ValueError("a key source is either an environment variable or a file")

    def describe(self) -> str:
        return f"environment variable {self.env}" if self.env else f"file {self.file}"

    def load(self, read_file: Callable[[str], bytes] = _read_local_file) -> bytes:
        """The key's bytes, or a SecretKeyError that never quotes the key."""
        if self.env:
            value = os.environ.get(self.env)
            if value is None:
                raise SecretKeyError(f"the pseudonym key's {self.describe()} is not set")
            key = value.encode("utf-8").strip()
        else:
            try:
                key = read_file(self.file).strip()
            except Exception as error:
                raise SecretKeyError(
                    f"cannot read the pseudonym key's {self.describe()}: "
                    f"{type(error).__name__}") from error
        if not key:
            raise SecretKeyError(f"the pseudonym key in the {self.describe()} is blank")
        if len(key) < MIN_KEY_CHARS:
            raise SecretKeyError(
                f"the pseudonym key in the {self.describe()} is shorter than "
                f"{MIN_KEY_CHARS} characters")
        return key


@dataclass(frozen=True)
class RedactionPolicy:
    """What to redact and how.

    Args:
      labels: entity types to replace (others are reported, not rewritten).
      style: "label" ([PER]), "indexed" ([PER_1], numbered per document, the
        same surface form getting the same number) or "pseudonym" ([PER_3f9a...],
        an HMAC-SHA256 of the surface form under a secret key, stable across
        documents and runs that share the key).
      key: the secret for "pseudonym"; never a plain hash. A policy holding it
        refuses to be pickled, so it cannot ride inside a job graph: jobs give
        `key_source` instead and each worker loads the key (`with_key`).
      propagate: redact every other occurrence of a redacted surface form.
      key_source: where workers read the key (an environment variable or a file).
      keep_terms: words or phrases never redacted (matched whole, in any case).
      always_redact: (term, label) pairs redacted wherever they stand as whole words
        (term-list entities: never taken for the model's names, whatever their label).
      name_roles: the model's name types and their roles (`labels.name_roles` of its label
        scheme): which spans the name rules, span refinement and list joining read as names.
    """

    labels: frozenset[str]
    style: str = "label"
    key: Optional[bytes] = field(default=None, repr=False)
    propagate: bool = True
    key_source: Optional[KeySource] = None
    keep_terms: tuple[str, ...] = field(default=(), repr=False)
    always_redact: tuple[tuple[str, str], ...] = field(default=(), repr=False)
    name_roles: NameRoles = DECLARED_ROLES

    def __post_init__(self):
        if self.style not in PLACEHOLDER_STYLES:
            raise ValueError(f"placeholder style must be one of {PLACEHOLDER_STYLES}")
        if self.style == PlaceholderStyle.PSEUDONYM and not self.key and self.key_source is None:
            raise ValueError("the pseudonym style needs a secret key")

    def with_key(self, read_file: Callable[[str], bytes] = _read_local_file) -> "RedactionPolicy":
        """This policy with its key loaded from `key_source`, where a style needs one."""
        if self.style != PlaceholderStyle.PSEUDONYM or self.key:
            return self
        return replace(self, key=self.key_source.load(read_file))

    def __getstate__(self):
        if self.key:
            raise TypeError(
                "a RedactionPolicy holding the pseudonym key must not be pickled: it would "
                "travel inside the job graph. Give it a key_source (an environment variable "
                "or a file) and load the key on the worker with with_key().")
        return self.__dict__.copy()


def is_redacted(span: EntitySpan, labels: frozenset[str]) -> bool:
    """Whether a span is rewritten: its label is redacted, or a decision marked it (recall-first, patterns)."""
    return span.redacted or span.label in labels


def resolve_overlaps(
    spans: Iterable[EntitySpan], redacted: frozenset[str] = frozenset()
) -> tuple[EntitySpan, ...]:
    """Keeps a non-overlapping subset: redacted spans first, then longer spans, higher scores, earlier ones.

    A span that is rewritten (`is_redacted`: its label is in `redacted`, or a
    decision marked it) beats any overlapping span that would not be, however
    long: "The Merkel era" (MISC) gives way to a redacted "Merkel" inside it, so
    recall never loses to an annotation. Kept spans stay sorted by start, so each
    candidate is checked against its two neighbours only (n log n, not n squared,
    for documents full of names).
    """
    ordered = sorted(spans, key=_START)
    if all(a.end <= b.start and a.start < b.start for a, b in zip(ordered, ordered[1:])):
        return tuple(ordered)   # already disjoint: every span is kept, in start order
    return tuple(keep_disjoint(ordered, key=lambda s: (not (s.redacted or s.label in redacted),
                                                       s.start - s.end, -s.score, s.start)))


_START = attrgetter("start")


def may_seed(text: str, span: EntitySpan, labels: frozenset[str], language: str = "en") -> bool:
    """Whether a redacted span's other mentions are redacted too: it was redacted on its own
    evidence (not propagated; a pattern, a rule, or a model label holding at least half the
    probability, with at least half on the redacted types: its decision score) and looks like
    a name (`looks_like_name`: never "the", "of" or "Hi"). A MISC "German" that the
    recall-first threshold redacted for 5% on LOC does not spread."""
    return is_redacted(span, labels) and _seeds_if_redacted(text, span, language)


def _seeds_if_redacted(text: str, span: EntitySpan, language: str) -> bool:
    """`may_seed` for a span known to be redacted."""
    if span.propagated:
        return False
    if span.decision_score is not None and min(span.score, span.decision_score) < OWN_EVIDENCE:
        return False
    return looks_like_name(text[span.start:span.end], language)


def propagate_mentions(
    segmented: SegmentedDocument, spans: Sequence[EntitySpan], labels: frozenset[str],
    language: str = "en",
) -> tuple[EntitySpan, ...]:
    """Finds other occurrences of redacted surface forms that no redacted span covers.

    Only spans that `may_seed` are sources.

    Matching is by whole words in `normalize_surface` form (case-folded, NFKC,
    invisible characters dropped), except that a one-word name not written in
    lowercase never matches a lowercase word ("will" is not "Will"; "angela
    merkel" is "Angela Merkel"). A mention inside a span that is not redacted
    (a MISC "The Merkel era") is found too; `resolve_overlaps` then lets it win.
    The surname of a person named in two words or more (its last word, capitalised) is a
    form too, matched where it is written with a capital whatever the word lists say:
    "Frau Annegret Lange ... Lange sagt", "Margaret Court ... Court stayed".
    Returns the new spans, marked `propagated`, with the score of their source.
    """
    doc_text = segmented.document.text
    starts, ends = segmented.word_starts, segmented.word_ends
    folded = _folded_words(doc_text, starts, ends)
    covered = [False] * len(starts)
    forms: dict[tuple[str, ...], EntitySpan] = {}
    surnames: set[tuple[str, ...]] = set()   # matched only where written with a capital
    named: dict[int, EntitySpan] = {}        # surnames right after a seed, found as such
    seeds = []
    for span in spans:
        if not (span.redacted or span.label in labels):   # `is_redacted`
            continue   # it covers no word and seeds nothing
        first = bisect.bisect_left(starts, span.start)
        if first == len(starts) or starts[first] != span.start:
            continue   # a span that opens inside a word covers no word and seeds nothing
        last = bisect.bisect_left(starts, span.end, first)   # the words starting before its end
        covered[first:last] = [True] * (last - first)
        if _seeds_if_redacted(doc_text, span, language):   # `may_seed`
            seeds.append((span, first, last))
    for span, first, last in seeds:
        key = tuple(folded[first:last])
        if key and (key not in forms or forms[key].score < span.score):
            forms[key] = span
        surname, after = surname_of(doc_text, span, starts, ends, first, last, covered)
        if surname is None:
            continue
        person = span if span.label == "PER" else evolve(span, label="PER")
        if after and surname not in named:
            named[surname] = evolve(person, start=starts[surname], end=ends[surname],
                                    propagated=True)
        key = (folded[surname],)
        surnames.add(key)
        if key not in forms or forms[key].score < span.score:
            forms[key] = person
    for surname in named:
        covered[surname] = True
    if not forms:
        return tuple(named.values())
    by_first_word: dict[str, list[tuple[str, ...]]] = defaultdict(list)
    for key in forms:
        by_first_word[key[0]].append(key)
    found: list[EntitySpan] = list(named.values())
    reach = 0    # the word after the furthest mention found so far
    # A word a redacted span covers starts no mention (most words of a first form are seeds).
    for i in [i for i in compress(count(), map(by_first_word.__contains__, folded))
              if not covered[i]]:
        for key in by_first_word[folded[i]]:
            j = i + len(key)
            if j > len(folded) or tuple(folded[i:j]) != key or True in covered[i:j]:
                continue
            source = forms[key]
            source_is_lower = doc_text[source.start:source.end].islower()
            if len(key) == 1 and not source_is_lower and doc_text[starts[i]:ends[i]].islower():
                continue
            if key in surnames and (not doc_text[starts[i]].isupper() or i < reach):
                continue    # a surname in lowercase, or inside a full mention found already
            found.append(evolve(source, start=starts[i], end=ends[j - 1], propagated=True))
            reach = max(reach, j)
    return tuple(found)


# Honorifics that make the name after them a person's, whatever label the model gave it
# ("Frau Annegret Lange" read as ORG).
_HONORIFIC_RE = re.compile(
    r"(?:Frau|Herr|Herrn|Mr|Mrs|Ms|Miss|Mx|Dr|Prof|Madame|Mme|Monsieur|Mlle|Signora|Signor|"
    r"Sig|Sra|Sr|Señora|Señor|Mevrouw|Meneer|Dhr|Mevr)\.?\Z")


def _names_a_person(text: str, span: EntitySpan, first_start: int, first_end: int) -> bool:
    """Whether a seed names a person: labelled PER, or opening with an honorific or right
    after one ("Frau Annegret Lange", "Dr. Emily Nurse")."""
    if span.label == "PER":
        return True
    if span.label not in ("ORG", "MISC", "LOC"):
        return False
    before = text[max(0, span.start - 12):span.start].split()
    return bool(_HONORIFIC_RE.match(text[first_start:first_end])
                or before and _HONORIFIC_RE.match(before[-1]))


def surname_of(text: str, span: EntitySpan, starts: Sequence[int], ends: Sequence[int],
               first: int, last: int, covered: Sequence[bool]) -> tuple[Optional[int], bool]:
    """The word index of the surname of a seed covering words [first, last), and whether it
    is the word right after the seed (a name after an honorific that the model cut short:
    "Frau Annegret" without "Lange"); (None, False) for a seed that names no person."""
    if not _names_a_person(text, span, starts[first], ends[first]):
        return None, False
    if span.label != "PER" and last < len(starts) and text[ends[last - 1]:starts[last]] == " " \
            and _is_surname(text, starts[last], ends[last]) and not covered[last]:
        return last, True
    if last - 1 > first and _is_surname(text, starts[last - 1], ends[last - 1]):
        return last - 1, False
    return None, False


def _is_surname(text: str, start: int, end: int) -> bool:
    """Whether the word text[start:end] can stand for a person on its own: capitalised,
    letters (an inner hyphen or apostrophe too), at least three of them ("Jr", "II" are not)."""
    word = text[start:end]
    return len(word) >= 3 and word[0].isupper() and not word.isupper() \
        and word.replace("-", "").replace("'", "").replace("’", "").isalpha()


def evolve(span: EntitySpan, **changes) -> EntitySpan:
    """`dataclasses.replace(span, **changes)` for an EntitySpan, several times cheaper: a copy
    of its fields with `changes` (EntitySpan has no `__post_init__` nor slots: tested)."""
    changed = object.__new__(EntitySpan)
    fields = changed.__dict__
    fields.update(span.__dict__)
    fields.update(changes)
    return changed


class _FoldedWords(dict):
    """`normalize_surface` of each word string met, computed once (words repeat)."""

    def __missing__(self, word: str) -> str:
        folded = self[word] = normalize_surface(word)
        return folded


_FOLDED = _FoldedWords()
_FOLDED_MAX = 200_000   # then the cache starts again: bounded memory


def _folded_words(text: str, starts: Sequence[int], ends: Sequence[int]) -> list[str]:
    """`normalize_surface` of each word of a text, from a bounded cache."""
    if len(_FOLDED) > _FOLDED_MAX:
        _FOLDED.clear()
    return list(map(_FOLDED.__getitem__, map(text.__getitem__, map(slice, starts, ends))))


def pseudonym(label: str, surface: str, key: bytes) -> str:
    """A keyed, stable pseudonym for a surface form: HMAC-SHA256, truncated."""
    message = f"{label}\x00{normalize_surface(surface)}".encode("utf-8")
    return hmac.new(key, message, hashlib.sha256).hexdigest()[:PSEUDONYM_HEX_DIGITS]


class _Numbering:
    """Per-document numbers for the indexed style: the same surface form, the same number."""

    def __init__(self):
        self._numbers: dict[tuple[str, str], int] = {}
        self._per_label: dict[str, int] = defaultdict(int)

    def number(self, label: str, surface: str) -> int:
        key = (label, normalize_surface(surface))
        if key not in self._numbers:
            self._per_label[label] += 1
            self._numbers[key] = self._per_label[label]
        return self._numbers[key]


# An operator: (label, surface, policy, numbering) -> placeholder text.
Operator = Callable[[str, str, "RedactionPolicy", _Numbering], str]


def label_placeholder(label: str, surface: str, policy: RedactionPolicy, numbering: _Numbering) -> str:
    return f"[{label}]"


def indexed_placeholder(label: str, surface: str, policy: RedactionPolicy, numbering: _Numbering) -> str:
    return f"[{label}_{numbering.number(label, surface)}]"


def pseudonym_placeholder(label: str, surface: str, policy: RedactionPolicy, numbering: _Numbering) -> str:
    return f"[{label}_{pseudonym(label, surface, policy.key)}]"


OPERATORS: dict[str, Operator] = {
    PlaceholderStyle.LABEL.value: label_placeholder,
    PlaceholderStyle.INDEXED.value: indexed_placeholder,
    PlaceholderStyle.PSEUDONYM.value: pseudonym_placeholder,
}


_LIST_COMMA_RE = re.compile(r",[ \t]+\Z")
_LIST_LAST_RE = re.compile(r"(?:,?[ \t]+(?:and|AND|And)|[ \t]*&)[ \t]+\Z")
_NAME_WORD_RE = re.compile(r"[^\W\d_][\w'’.-]*\Z")
NAME_LIST_RULE = "name_list"   # the recognizer of a span `join_name_lists` made


def join_name_lists(text: str, spans: Sequence[EntitySpan], labels: frozenset[str],
                    roles: NameRoles = DECLARED_ROLES) -> tuple[EntitySpan, ...]:
    """Joins "Taylor, Wiggins and Mcneil" (three or more redacted one-word names separated by
    commas, the last by "and" or "&") into one span, so the firm is one placeholder and no
    word of its name stays visible.

    Only the model's name spans (`roles.covers`) that are redacted and written with a capital
    join; the joined span (the rule's, "name_list") takes the model's organisation type when
    any part has it, else the first part's label, and the lowest score of its parts. Other
    spans pass through unchanged.
    """
    ordered = sorted(spans, key=lambda s: s.start)
    if not any(text.startswith(",", span.end) for span in ordered):
        return tuple(ordered)   # a list needs a comma right after one of its names

    def joinable(span: EntitySpan) -> bool:
        word = text[span.start:span.end]
        return roles.covers(span) and is_redacted(span, labels) \
            and _NAME_WORD_RE.match(word) is not None and word[0].isupper()

    out: list[EntitySpan] = []
    i = 0
    while i < len(ordered):
        j = i
        while j + 1 < len(ordered) and text.startswith(",", ordered[j].end) \
                and joinable(ordered[j]) and joinable(ordered[j + 1]) \
                and _LIST_COMMA_RE.match(text, ordered[j].end, ordered[j + 1].start):
            j += 1
        if j > i and j + 1 < len(ordered) and joinable(ordered[j + 1]) \
                and _LIST_LAST_RE.match(text, ordered[j].end, ordered[j + 1].start):
            parts = ordered[i:j + 2]
            organisation = next((p.label for p in parts
                                 if roles.is_role(p.label, EntityRole.ORGANISATION)), None)
            out.append(replace(parts[0], end=parts[-1].end, label=organisation or parts[0].label,
                               score=min(p.score for p in parts), redacted=True,
                               source=EntitySource.RULE.value, recognizer=NAME_LIST_RULE))
            i = j + 2
            continue
        out.append(ordered[i])
        i += 1
    return tuple(out)


def redact_text(
    text: str, spans: Sequence[EntitySpan], policy: RedactionPolicy
) -> tuple[str, tuple[Replacement, ...]]:
    """Rewrites the spans whose label the policy names; spans must not overlap.

    Returns the redacted text and each replacement with its offsets in it.
    """
    if policy.style == PlaceholderStyle.PSEUDONYM and not policy.key:
        raise ValueError("the pseudonym key is not loaded: use policy.with_key() first")
    operator = OPERATORS[policy.style]
    by_label = operator is label_placeholder   # "[PER]": nothing else read
    labels = policy.labels
    numbering = _Numbering()
    pieces: list[str] = []
    replacements: list[Replacement] = []
    cursor = 0
    length = 0
    for span in sorted(spans, key=_START):
        if not (span.redacted or span.label in labels):   # `is_redacted`
            continue
        start = span.start
        if start < cursor:
            raise ValueError("spans overlap: resolve overlaps before redacting")
        placeholder = f"[{span.label}]" if by_label else \
            operator(span.label, text[start:span.end], policy, numbering)
        pieces.append(text[cursor:start])
        pieces.append(placeholder)
        length += start - cursor
        replacements.append(_replacement(length, length + len(placeholder), span.label,
                                         placeholder))
        length += len(placeholder)
        cursor = span.end
    pieces.append(text[cursor:])
    return "".join(pieces), tuple(replacements)


def _replacement(start: int, end: int, label: str, placeholder: str) -> Replacement:
    """`Replacement(start, end, label, placeholder)`, without the frozen dataclass's slower
    `__init__` (Replacement has no `__post_init__` nor slots: tested)."""
    made = object.__new__(Replacement)
    made.__dict__.update(start=start, end=end, label=label, placeholder=placeholder)
    return made


TERM_LIST_RECOGNIZER = "always_redact"   # the recognizer of every term-list span


def term_spans(text: str, terms: Sequence[tuple[str, str]]) -> tuple[EntitySpan, ...]:
    """Every whole-word occurrence of the always-redact terms (any case), longest first; their
    source is the term list, whatever their label."""
    pattern = _terms_pattern(tuple(t for t, _ in terms))
    if pattern is None:
        return ()
    label_of = {normalize_surface(t): label for t, label in terms}
    return tuple(EntitySpan(m.start(), m.end(), label_of.get(normalize_surface(m.group()), "TERM"),
                            1.0, redacted=True, source=EntitySource.TERM_LIST.value,
                            recognizer=TERM_LIST_RECOGNIZER)
                 for m in pattern.finditer(text))


_TERM_PATTERNS: dict[tuple[str, ...], Optional[re.Pattern]] = {}


def _terms_pattern(terms: tuple[str, ...]) -> Optional[re.Pattern]:
    if terms not in _TERM_PATTERNS:
        words = sorted({t.strip() for t in terms if t.strip()}, key=len, reverse=True)
        _TERM_PATTERNS[terms] = re.compile(
            r"(?<!\w)(?:" + "|".join(re.escape(w) for w in words) + r")(?!\w)",
            re.IGNORECASE) if words else None
    return _TERM_PATTERNS[terms]


def without_kept_terms(text: str, spans: Sequence[EntitySpan],
                       keep: Sequence[str]) -> tuple[EntitySpan, ...]:
    """The spans with every occurrence of a keep term cut out of them (a span left with no
    letter or digit is dropped): what a user keeps is never redacted."""
    pattern = _terms_pattern(tuple(keep))
    if pattern is None:
        return tuple(spans)
    kept = [(m.start(), m.end()) for m in pattern.finditer(text)]
    if not kept:
        return tuple(spans)
    out: list[EntitySpan] = []
    for span in spans:
        pieces = [(span.start, span.end)]
        for a, b in kept:
            pieces = [p for s, e in pieces
                      for p in ((s, min(e, a)), (max(s, b), e)) if p[0] < p[1]] \
                if a < span.end and span.start < b else pieces
        for s, e in pieces:
            s, e = _strip_space(text, s, e)
            if any(c.isalnum() for c in text[s:e]):
                out.append(span if (s, e) == (span.start, span.end) else replace(span, start=s, end=e))
    return tuple(out)


def _strip_space(text: str, start: int, end: int) -> tuple[int, int]:
    while start < end and not text[start].isalnum():
        start += 1
    while end > start and not text[end - 1].isalnum():
        end -= 1
    return start, end


def redact(
    segmented: SegmentedDocument, spans: Sequence[EntitySpan], policy: RedactionPolicy,
    language: str = "en",
) -> tuple[tuple[EntitySpan, ...], str, tuple[Replacement, ...]]:
    """Detected spans to final entities and redacted text.

    Model spans lose the ordinary words at their edges first (`refine_spans`, with the
    stop words of `language`, then `settle_edges`: openers, labels, other languages' common
    words); always-redact terms join them, keep terms are cut out last.
    What counts as a model name is read from `policy.name_roles` (the model's label scheme).
    Returns the resolved entities (propagated mentions included; `redacted`
    set on exactly those that were replaced), the redacted text and the
    replacements.
    """
    text = segmented.document.text
    roles = policy.name_roles
    terms = term_spans(text, policy.always_redact)
    spans = settle_edges(text, refine_spans(text, spans, language, roles), language, roles)
    if terms:
        spans = tuple(s for s in spans if not any(t.contains(s) for t in terms)) + terms
    spans = resolve_overlaps(spans, policy.labels)
    propagated = propagate_mentions(segmented, spans, policy.labels, language) \
        if policy.propagate else ()
    if propagated:
        spans = resolve_overlaps(spans + propagated, policy.labels)
    spans = join_name_lists(text, spans, policy.labels, roles)
    spans = apply_name_rules(text, spans, policy.labels, roles)
    spans = without_kept_terms(text, spans, policy.keep_terms)
    redacted_text, replacements = redact_text(text, spans, policy)
    # `redacted` set where `is_redacted` holds: only an unmarked span of a redacted label changes.
    final = tuple(span if span.redacted or span.label not in policy.labels
                  else evolve(span, redacted=True) for span in spans)
    return final, redacted_text, replacements
