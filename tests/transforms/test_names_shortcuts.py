"""The name rules' shortcuts (redacted spans looked at first, no second sort without a new firm) give what the plain rules give."""
from __future__ import annotations

import random
from dataclasses import replace

from larvatus.transforms import names
from larvatus.transforms.audit import common_words
from larvatus.transforms.labels import roles_of_types
from larvatus.transforms.recognizers import finditer_on_lines
from larvatus.transforms.records import EntitySpan

LABELS = frozenset({"PER", "LOC", "ORG"})
ROLES = roles_of_types(("PER", "LOC", "ORG", "MISC"))
LEGAL_FORM = {"source": "rule", "recognizer": "legal_form"}
PIECES = ["Müller", "GmbH", "&", "Co.", "KG", "and", "Sons", "sons", "smith", "Ruiz", ",",
          "Inc.", "County", "Court", "COURT", "at", "of", "Glasgow", "Leeds", "University",
          "Nordic", "Freight", "A/S", "the", "limited", "Ltd", "\n", "BV", "van", "Bergen"]


def _legal_forms_reference(text, spans, labels):
    """`extend_legal_forms` as first written: every span's forms tried, one final sort."""
    out = sorted(spans, key=lambda s: s.start)
    i = 0
    while i < len(out):
        span = out[i]
        after = names._FORMS_AFTER_LOWER_RE if text[span.start:span.end].islower() \
            else names._FORMS_AFTER_RE
        m = after.match(text, span.end) if names._redacted_model_span(span, labels) else None
        parts = names._absorbed(span.end, m.end(), out, span, labels, ROLES) if m else None
        if parts is not None:
            out = names._extend(out, i, m.end(), parts, label="ORG", redacted=True, **LEGAL_FORM)
        i += 1
    common = common_words()
    for m in finditer_on_lines(names._FIRM_RE, names._FORM_HINT_RE, text):
        words = list(names._NAME_WORD_RE.finditer(m.group("name")))
        kept = 0
        while kept < len(words) and words[-1 - kept].group()[0].isupper() \
                and words[-1 - kept].group().lower() not in common:
            kept += 1
        form = m.group("forms").lstrip(", \t")
        if not kept or form.islower() and not form.startswith(("plc", "p.l.c.")):
            continue
        start, end = m.start("name") + words[-kept].start(), m.end()
        parts = [s for s in out if s.start < end and start < s.end]
        if any(not ROLES.covers(s) for s in parts):
            continue
        start = min([start] + [s.start for s in parts])
        end = max([end] + [s.end for s in parts])
        if "\n" in text[start:end]:
            continue
        out = [s for s in out if not any(s is p for p in parts)]
        out.append(EntitySpan(start, end, "ORG", min([names.SCORE_LEGAL_FORM]
                                                     + [p.score for p in parts]), redacted=True,
                              **LEGAL_FORM))
    return tuple(sorted(out, key=lambda s: s.start))


def _institutions_reference(text, spans, labels):
    out = []
    for span in sorted(spans, key=lambda s: s.start):
        if out:
            last = out[-1]
            words = text[last.start:last.end].split()
            if last.label == "ORG" and names._redacted_model_span(last, labels) \
                    and names._redacted_model_span(span, labels) and words \
                    and words[-1].lower() in names._INSTITUTIONS \
                    and names._INSTITUTION_LINK_RE.search(text[last.end:span.start]):
                out[-1] = replace(last, end=span.end, score=min(last.score, span.score),
                                  redacted=True, source="rule", recognizer="institution_place")
                continue
        out.append(span)
    return tuple(out)


def _random_case(rng: random.Random):
    text, words = "", []
    for _ in range(rng.randrange(1, 25)):
        word = rng.choice(PIECES)
        words.append((len(text), len(text) + len(word)))
        text += word + rng.choice([" ", " ", ", ", "  "])
    spans, free = [], 0
    for start, end in words:
        if start >= free and rng.random() < 0.4:
            last = min(len(words) - 1, words.index((start, end)) + rng.randrange(2))
            end = words[last][1]
            spans.append(EntitySpan(start, end, rng.choice(["PER", "LOC", "ORG", "MISC", "EMAIL"]),
                                    rng.choice([0.3, 0.9]), redacted=rng.random() < 0.3))
            free = end
    rng.shuffle(spans)
    return text, spans


def test_legal_forms_and_institutions_equal_the_plain_rules():
    rng = random.Random(53)
    changed = 0
    for _ in range(3000):
        text, spans = _random_case(rng)
        labels = rng.choice([LABELS, frozenset({"PER"})])
        expected = _legal_forms_reference(text, spans, labels)
        assert names.extend_legal_forms(text, spans, labels) == expected, (text, spans)
        assert names.join_institution_places(text, spans, labels) \
            == _institutions_reference(text, spans, labels), (text, spans)
        changed += expected != tuple(sorted(spans, key=lambda s: s.start))
    assert changed > 300, changed   # forms and firms are found
