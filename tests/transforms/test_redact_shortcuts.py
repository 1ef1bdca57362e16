"""The redact stage's shortcuts give what the plain steps give: mention propagation, name lists, span copies."""
from __future__ import annotations

import bisect
import dataclasses
import pickle
import random
from collections import defaultdict

from larvatus.transforms.labels import DECLARED_ROLES
from larvatus.transforms import redact
from larvatus.transforms.records import Document, EntitySpan, Replacement
from larvatus.transforms.segment import segment

LABELS = frozenset({"PER", "LOC", "ORG"})
WORDS = ["Anna", "Berg", "anna", "ANNA", "Will", "will", "the", "Hi", "Merkel", "van", "den",
         "Zoë", "Zoe\u0308", "ZO\u00adË", "Smith", "Jones", "and", "&", ",", ".", "Paris", "of"]


def _random_document(rng: random.Random):
    text = "".join(rng.choice(WORDS) + rng.choice([" ", " ", ", ", ". ", "\n"])
                   for _ in range(rng.randrange(1, 30)))
    segmented = segment(Document("d", text, "src"))
    spans = []
    starts, ends = segmented.word_starts, segmented.word_ends
    for _ in range(rng.randrange(0, 8)):
        if not starts:
            break
        first = rng.randrange(len(starts))
        last = min(len(starts) - 1, first + rng.randrange(3))
        start = starts[first] + rng.choice([0, 0, 0, 1])
        end = max(start + 1, ends[last] - rng.choice([0, 0, 0, 1]))
        spans.append(EntitySpan(start, end, rng.choice(["PER", "LOC", "ORG", "MISC", "EMAIL"]),
                                rng.choice([0.3, 0.6, 0.9]), propagated=rng.random() < 0.1,
                                redacted=rng.random() < 0.2,
                                decision_score=rng.choice([None, 0.2, 0.7])))
    return segmented, tuple(redact.keep_disjoint(spans, key=lambda s: s.start)) \
        if rng.random() < 0.5 else tuple(spans)


def _propagate_reference(segmented, spans, labels, language="en"):
    """Mention propagation as first written: a word walk for every span."""
    doc_text = segmented.document.text
    starts, ends = segmented.word_starts, segmented.word_ends
    words = [doc_text[s:e] for s, e in zip(starts, ends)]
    covered = [False] * len(words)
    forms = {}
    seeds, named, surnames = [], {}, set()
    for span in spans:
        first = bisect.bisect_left(starts, span.start)
        first = first if first < len(starts) and starts[first] == span.start else None
        last = first
        while last is not None and last < len(words) and starts[last] < span.end:
            covered[last] = covered[last] or redact.is_redacted(span, labels)
            last += 1
        if first is not None and redact.may_seed(doc_text, span, labels, language):
            seeds.append((span, first, last))
    for span, first, last in seeds:
        key = tuple(redact.normalize_surface(w) for w in words[first:last])
        if key and (key not in forms or forms[key].score < span.score):
            forms[key] = span
        surname, after = redact.surname_of(doc_text, span, starts, ends, first, last, covered)
        if surname is not None:
            person = dataclasses.replace(span, label="PER")
            if after and surname not in named:
                named[surname] = dataclasses.replace(person, start=starts[surname],
                                                     end=ends[surname], propagated=True)
            key = (redact.normalize_surface(words[surname]),)
            surnames.add(key)
            if key not in forms or forms[key].score < span.score:
                forms[key] = person
    for surname in named:
        covered[surname] = True
    by_first_word = defaultdict(list)
    for key in forms:
        by_first_word[key[0]].append(key)
    folded = [redact.normalize_surface(w) for w in words]
    found = list(named.values())
    reach = 0
    for i, word in enumerate(folded):
        for key in by_first_word.get(word, ()):
            j = i + len(key)
            if j > len(words) or tuple(folded[i:j]) != key or any(covered[i:j]):
                continue
            source = forms[key]
            if len(key) == 1 and not doc_text[source.start:source.end].islower() \
                    and words[i].islower():
                continue
            if key in surnames and (not words[i][0].isupper() or i < reach):
                continue
            found.append(dataclasses.replace(source, start=starts[i], end=ends[j - 1],
                                             propagated=True))
            reach = max(reach, j)
    return tuple(found)


def _join_reference(text, spans, labels):
    """Name lists joined as first written: every span looked at, with or without a comma."""
    ordered = sorted(spans, key=lambda s: s.start)

    def joinable(span):
        word = text[span.start:span.end]
        return DECLARED_ROLES.covers(span) and redact.is_redacted(span, labels) \
            and redact._NAME_WORD_RE.match(word) is not None and word[0].isupper()

    out, i = [], 0
    while i < len(ordered):
        j = i
        while j + 1 < len(ordered) and joinable(ordered[j]) and joinable(ordered[j + 1]) \
                and redact._LIST_COMMA_RE.match(text, ordered[j].end, ordered[j + 1].start):
            j += 1
        if j > i and j + 1 < len(ordered) and joinable(ordered[j + 1]) \
                and redact._LIST_LAST_RE.match(text, ordered[j].end, ordered[j + 1].start):
            parts = ordered[i:j + 2]
            label = "ORG" if any(p.label == "ORG" for p in parts) else parts[0].label
            out.append(dataclasses.replace(parts[0], end=parts[-1].end, label=label,
                                           score=min(p.score for p in parts), redacted=True,
                                           source="rule", recognizer="name_list"))
            i = j + 2
            continue
        out.append(ordered[i])
        i += 1
    return tuple(out)


def test_propagated_mentions_equal_the_word_walk_of_every_span():
    rng = random.Random(31)
    found = 0
    for _ in range(3000):
        segmented, spans = _random_document(rng)
        expected = _propagate_reference(segmented, spans, LABELS)
        assert redact.propagate_mentions(segmented, spans, LABELS) == expected, \
            (segmented.document.text, spans)
        found += len(expected)
    assert found > 200, found   # the documents do propagate


def test_name_lists_equal_the_plain_join_with_or_without_commas():
    rng = random.Random(37)
    joined = 0
    names = ["Taylor", "Wiggins", "Mcneil", "anna", "O'Neil", "3M", "Smith"]
    gaps = [", ", ",  ", " and ", ", and ", " & ", " ", ",\t", "; ", " AND "]
    for _ in range(3000):
        text, spans = "", []
        for _ in range(rng.randrange(1, 7)):
            name = rng.choice(names)
            spans.append(EntitySpan(len(text), len(text) + len(name),
                                    rng.choice(["PER", "ORG", "LOC", "EMAIL"]), 0.9,
                                    redacted=rng.random() < 0.3))
            text += name + rng.choice(gaps)
        rng.shuffle(spans)
        expected = _join_reference(text, spans, LABELS)
        assert redact.join_name_lists(text, spans, LABELS) == expected, (text, spans)
        joined += len(expected) < len(spans)
    assert joined > 20, joined   # some lists are joined


def test_evolve_equals_dataclasses_replace():
    assert not hasattr(EntitySpan, "__post_init__") and not hasattr(EntitySpan, "__slots__")
    span = EntitySpan(3, 9, "PER", 0.7, propagated=False, redacted=False, decision_score=0.6)
    for changes in ({}, {"redacted": True}, {"start": 4, "end": 8, "propagated": True},
                    {"label": "ORG", "score": 0.1, "decision_score": None}):
        expected = dataclasses.replace(span, **changes)
        got = redact.evolve(span, **changes)
        assert got == expected and hash(got) == hash(expected) and repr(got) == repr(expected)
        assert pickle.dumps(got) == pickle.dumps(expected)
    assert span == EntitySpan(3, 9, "PER", 0.7, decision_score=0.6)   # the source is unchanged


def _random_spans(rng: random.Random, shortest: int = 0):
    spans = []
    for _ in range(rng.randrange(0, 12)):
        start = rng.randrange(60)
        spans.append(EntitySpan(start, start + rng.randrange(shortest, 6), rng.choice(["PER", "LOC", "MISC"]),
                                rng.choice([0.3, 0.6, 0.9]), redacted=rng.random() < 0.3))
    return spans


def test_resolved_overlaps_equal_keep_disjoint_on_disjoint_and_overlapping_spans():
    rng = random.Random(41)
    disjoint = 0
    for _ in range(5000):
        spans = _random_spans(rng)
        if rng.random() < 0.5:   # the spans of a document that has no overlap left
            spans = redact.keep_disjoint(spans, key=lambda s: s.start)
            rng.shuffle(spans)
        expected = tuple(redact.keep_disjoint(spans, key=lambda s: (
            not (s.redacted or s.label in LABELS), s.start - s.end, -s.score, s.start)))
        assert redact.resolve_overlaps(spans, LABELS) == expected, spans
        disjoint += len(expected) == len(spans)
    assert disjoint > 2000, disjoint


def _redact_text_reference(text, spans, policy):
    operator = redact.OPERATORS[policy.style]
    numbering = redact._Numbering()
    out, replacements, cursor = "", [], 0
    for span in sorted(spans, key=lambda s: s.start):
        if not redact.is_redacted(span, policy.labels):
            continue
        if span.start < cursor:
            raise ValueError("spans overlap")
        placeholder = operator(span.label, text[span.start:span.end], policy, numbering)
        out += text[cursor:span.start]
        replacements.append(Replacement(len(out), len(out) + len(placeholder), span.label,
                                        placeholder))
        out += placeholder
        cursor = span.end
    return out + text[cursor:], tuple(replacements)


def test_redacted_text_equals_the_plain_rewrite_in_every_style():
    rng = random.Random(43)
    policies = [redact.RedactionPolicy(LABELS, style=style, key=b"k" * 16)
                for style in redact.PLACEHOLDER_STYLES]
    for _ in range(2000):
        text = "".join(rng.choice(WORDS) + rng.choice([" ", ", ", "\n"]) for _ in range(30))
        spans = redact.keep_disjoint(_random_spans(rng, 1), key=lambda s: s.start)
        for policy in policies:
            expected = _redact_text_reference(text, spans, policy)
            got = redact.redact_text(text, spans, policy)
            assert got == expected and repr(got) == repr(expected)
            assert pickle.dumps(got) == pickle.dumps(expected)


def test_replacement_copies_equal_the_dataclass_constructor():
    assert not hasattr(Replacement, "__post_init__") and not hasattr(Replacement, "__slots__")
    got, expected = redact._replacement(3, 8, "PER", "[PER]"), Replacement(3, 8, "PER", "[PER]")
    assert got == expected and hash(got) == hash(expected) and repr(got) == repr(expected)
    assert pickle.dumps(got) == pickle.dumps(expected)
