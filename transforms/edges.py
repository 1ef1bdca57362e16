"""Model spans read in their context: openers, labels, hashtags, defined terms, doses and other languages' common words kept out."""
from __future__ import annotations

import re
from dataclasses import replace
from typing import Sequence

from larvatus.transforms import lexicon
from larvatus.transforms.labels import DECLARED_ROLES, EntityRole, NameRoles
from larvatus.transforms.ordinary import OWN_EVIDENCE, _listed, is_stop
from larvatus.transforms.records import EntitySpan

# A model span at least this sure of a person stays hidden in another language's document
# even when its words are common words there ("Lange", "Schwarz" as surnames).
STRONG_PERSON = 0.85

_WORD_RE = re.compile(r"[^\W\d_][\w'’]*(?:-[\w'’]+)*")
_SENTENCE_BEFORE_RE = re.compile(r"(?:^|\n|[.!?:;][ \t]+)[ \t]*(?:[-•*>][ \t]+)?\Z")
# Object pronouns after a one-word span make it a verb: "DM me", "Ping us", "Call them"
# ("her" is left out: "gave Anna her book").
_OBJECT_AFTER_RE = re.compile(r"[ \t]+(?:me|us|him|them)\b")
# What stands between a field's label and its value: "Mobile: ", "Badge #", "Aadhaar No. ".
_LABEL_GAP_RE = re.compile(r"[ \t]*(?:(?i:no|nr|n°|number|num)\.?)?[ \t]*[:#]?[ \t]*\Z")
_HASHTAG_BEFORE = "#"
# A contract's defined term: ("Supplier"), (the "Buyer"), (hereinafter "Licensee").
_DEFINED_BEFORE_RE = re.compile(r"\((?:[ \t]*(?i:the|hereinafter|hereafter|each|a|an)[ \t]+)?"
                                r"[ \t]*[\"“'‘]\Z")
_DEFINED_AFTER_RE = re.compile(r"[\"”'’][ \t]*\)")
# A dose after a lowercase word makes it a drug: "metoprolol 25 mg", "insulin 10 units".
_DOSE_AFTER_RE = re.compile(
    r"[ \t]+\d+(?:[.,]\d+)?[ \t]*(?i:mg|mcg|µg|μg|g|ml|mL|l|iu|units?|tablets?|puffs?|%)\b")


def settle_edges(text: str, spans: Sequence[EntitySpan], language: str = "en",
                 roles: NameRoles = DECLARED_ROLES) -> tuple[EntitySpan, ...]:
    """Model spans with their context read: hyphenated given names joined into one person
    ("Marie-Claire Dubois"); a verb opening a sentence cut from the name after it ("Contact
    Maria Garcia", "Ask Maria Garcia."); a one-word verb before an object pronoun ("DM me"), a
    recognizer's cue word before its value ("Mobile: +44...", "Badge EMP-4211", "Aadhaar
    3123..."), a hashtag that names no person ("#SXSW"), a contract's defined term
    ("("Supplier")") and a lowercase drug before its dose ("metoprolol 25 mg") dropped; in
    German, French, Spanish, Italian and Dutch documents, words common in the language
    ("Schreiben", "gekündigt", "Meine") cut from model spans or the spans dropped
    (`lexicon.is_common_in`). Other spans pass unchanged. Which spans are the model's names,
    and which of them are people, is read from `roles` (the model's label scheme)."""
    if not any(roles.covers(s) for s in spans):
        return tuple(spans)
    ordered = _join_hyphenated(text, sorted(spans, key=lambda s: (s.start, s.end)), roles)
    patterns = [s for s in ordered if not roles.covers(s)]
    out: list[EntitySpan] = []
    for index, span in enumerate(ordered):
        if not roles.covers(span):
            out.append(span)
            continue
        following = ordered[index + 1] if index + 1 < len(ordered) else None
        settled = _settle(text, span, following, patterns, language, roles)
        if settled is not None:
            out.append(settled)
    return tuple(out)


def _settle(text: str, span: EntitySpan, following: EntitySpan | None,
            patterns: Sequence[EntitySpan], language: str, roles: NameRoles) -> EntitySpan | None:
    surface = text[span.start:span.end]
    person = roles.is_role(span.label, EntityRole.PERSON)
    one_word = _WORD_RE.fullmatch(surface) is not None
    if one_word and _OBJECT_AFTER_RE.match(text, span.end) and not person \
            and not _after_title(text, span.start, language):
        return None
    if one_word and _labels_value(text, span, patterns):
        return None
    if span.start and text[span.start - 1] == _HASHTAG_BEFORE and not person \
            and not text[span.end:span.end + 1].isalnum():
        return None
    if span.score < OWN_EVIDENCE and _DEFINED_BEFORE_RE.search(text, max(0, span.start - 20),
                                                               span.start) \
            and _DEFINED_AFTER_RE.match(text, span.end):
        return None
    if surface.islower() and _DOSE_AFTER_RE.match(text, span.end):
        return None
    span = _without_opening_verb(text, span, following, roles)
    if span is None:
        return None
    if language in lexicon.DECISION_LANGUAGES:
        return _without_common_words(text, span, language, person)
    return span


def _labels_value(text: str, span: EntitySpan, patterns: Sequence[EntitySpan]) -> bool:
    """A one-word span that is a recognizer's cue word ("Mobile", "Badge", "Aadhaar",
    "Kennzeichen") standing right before a pattern span on its line: the value's label."""
    value = next((p for p in patterns if p.start >= span.end), None)
    if value is None or value.start - span.end > 12 or "\n" in text[span.end:value.start]:
        return False
    if _LABEL_GAP_RE.match(text[span.end:value.start]) is None:
        return False
    from larvatus.transforms.recognizers.base import is_cue_word

    return is_cue_word(text[span.start:span.end])


def _without_opening_verb(text: str, span: EntitySpan, following: EntitySpan | None,
                          roles: NameRoles) -> EntitySpan | None:
    """A verb's base form opening a sentence ("Contact", "Ask", "Call") is cut from a
    person's span whose other words make a name of two or more capitalised words, or dropped
    when it is a span of its own right before a person's ("Ask" "Maria Garcia"); an
    organisation's first word stays ("Bay Co Building Authority")."""
    words = list(_WORD_RE.finditer(text, span.start, span.end))
    if not words or not lexicon.is_base_verb(words[0].group()) \
            or not words[0].group()[:1].isupper() \
            or _SENTENCE_BEFORE_RE.search(text, max(0, span.start - 40), span.start) is None:
        return span
    if len(words) == 1:
        alone = following is not None and roles.is_role(following.label, EntityRole.PERSON) \
            and not text[span.end:following.start].strip(" \t") \
            and (span.score < OWN_EVIDENCE or not roles.is_role(span.label, EntityRole.PERSON))
        return None if alone else span
    rest = words[1:]
    if roles.is_role(span.label, EntityRole.PERSON) and len(rest) >= 2 and all(w.group()[:1].isupper() for w in rest):
        return replace(span, start=rest[0].start())
    return span


def _after_title(text: str, start: int, language: str) -> bool:
    """Whether a role or title stands right before `start` ("Frau", "Herr", "Mme", "Dr.")."""
    before = text[max(0, start - 20):start].rstrip(" \t")
    m = re.search(r"([^\W\d_]+)\.?\Z", before)
    return m is not None and m.group(1).lower() in _listed()[1]


# Prepositions of place that take a town's name without an article: "in Chemnitz" (a common
# noun takes one: "in der Praxis"), "à Lyon", "en Huesca", "a Vasto", "in Winkel".
_LOCATIVES = {"de": ("in", "nach", "aus"), "fr": ("à", "en", "depuis"),
              "es": ("en", "desde"), "it": ("a", "in", "da"), "nl": ("in", "uit", "naar", "te")}
_WORD_BEFORE_RE = re.compile(r"([^\W\d_]+)[ \t]+\Z")


def _after_locative(text: str, span: EntitySpan, language: str) -> bool:
    """A capitalised span right after a preposition of place with no article: a town's name
    however common its words ("in Chemnitz", "en Huesca", "in Winkel")."""
    m = _WORD_BEFORE_RE.search(text, max(0, span.start - 12), span.start)
    return m is not None and m.group(1) in _LOCATIVES.get(language, ()) \
        and text[span.start:span.start + 1].isupper()


# Particles before a place's or a family's name: "consulta de Huesca", "studio di Milano".
_OF = frozenset("de di da du des del della van von".split())


def _in_common_position(text: str, span: EntitySpan, language: str) -> bool:
    """Where a common word stands and a name seldom does: in lowercase, opening a sentence or
    a line, or after a determiner or pronoun ("Ihr Schreiben", "der Vertrag", "Meine
    Steuer-ID"; a stop word of the language, not "de" or "di" before a place)."""
    if text[span.start:span.end].islower() \
            or _SENTENCE_BEFORE_RE.search(text, max(0, span.start - 40), span.start):
        return True
    m = _WORD_BEFORE_RE.search(text, max(0, span.start - 20), span.start)
    return m is not None and m.group(1).lower() not in _OF and is_stop(m.group(1), language)


_WORD_AFTER_RE = re.compile(r"[ \t]([^\W\d_][\w'’-]*)")


def _beside_name_word(text: str, span: EntitySpan, language: str) -> bool:
    """A capitalised word that is no common word of the language stands right before or
    after the span: both are one name ("Maartje Blokland", a Dutch given name common in
    Dutch and rare in English)."""
    neighbours = []
    m = _WORD_BEFORE_RE.search(text, max(0, span.start - 30), span.start)
    if m is not None and m.end(1) + 1 == span.start:
        neighbours.append(m.group(1))
    m = _WORD_AFTER_RE.match(text, span.end)
    if m is not None:
        neighbours.append(m.group(1))
    return any(w[:1].isupper() and not w.isupper() and not is_stop(w, language)
               and not lexicon.is_common_in(w, language) for w in neighbours)


def _without_common_words(text: str, span: EntitySpan, language: str,
                          person: bool) -> EntitySpan | None:
    """In a document of `language`, a model span whose words are all common words there is
    dropped where a common word stands (`_in_common_position`), unless a title or a
    preposition of place stands before it (`_after_locative`) or the model is sure of a
    person (`STRONG_PERSON`); lowercase common words and stop words are cut from its edges."""
    words = list(_WORD_RE.finditer(text, span.start, span.end))
    if not words:
        return span
    common = [lexicon.is_common_in(w.group(), language) for w in words]
    if all(common):
        titled = len(words) > 1 and _after_title(text, words[1].start(), language)
        if titled or _after_title(text, span.start, language) \
                or _after_locative(text, span, language) \
                or person and span.score >= STRONG_PERSON \
                or not _in_common_position(text, span, language) \
                or _beside_name_word(text, span, language):
            return span
        return None

    def cuttable(i: int, leading: bool) -> bool:
        word = words[i].group()
        # A capitalised last word of a person's name stays ("Michael Ende", "Annegret Lange").
        return common[i] and (word.islower() or is_stop(word, language)
                              and (leading or not person or not word[:1].isupper()))

    first, last = 0, len(words)
    while first < last and cuttable(first, True):
        first += 1
    while last > first and cuttable(last - 1, False):
        last -= 1
    start, end = words[first].start(), words[last - 1].end()
    if (start, end) == (span.start, span.end):
        return span
    return replace(span, start=start, end=end)


def _join_hyphenated(text: str, spans: list[EntitySpan], roles: NameRoles) -> list[EntitySpan]:
    """A hyphenated capitalised given name before a person's span with a space between
    ("Marie-Claire" "Dubois"), or two capitalised words with a space or a hyphen between, one
    of them a person's ("Thomas" "Becker" as ORG and PER, "Marie" "-" "Claire"), are one
    person ("pro-Moscow" and "URUS-MARTAN" are not joined)."""
    out: list[EntitySpan] = []
    person_label = roles.label_for(EntityRole.PERSON)
    for span in spans:
        if out and roles.covers(out[-1]) and roles.covers(span):
            last = out[-1]
            between = text[last.end:span.start]
            if between == " " and span.label == person_label \
                    and _hyphenated_name(text[last.start:last.end]) \
                    or between in (" ", "-") and person_label in (last.label, span.label) \
                    and _name_word(text[last.start:last.end]) \
                    and _name_word(text[span.start:span.end]):
                label = person_label if person_label in (last.label, span.label) else \
                    max(last, span, key=len).label
                out[-1] = replace(last, end=span.end, label=label,
                                  score=max(last.score, span.score),
                                  redacted=last.redacted or span.redacted,
                                  decision_score=_max_or_none(last.decision_score,
                                                              span.decision_score))
                continue
        out.append(span)
    return out


_HYPHENATED_RE = re.compile(r"[^\W\d_][^\W\d_]+(?:-[^\W\d_][^\W\d_]+)+")


def _hyphenated_name(surface: str) -> bool:
    return _HYPHENATED_RE.fullmatch(surface) is not None \
        and all(part[:1].isupper() and not part.isupper() for part in surface.split("-"))


def _name_word(surface: str) -> bool:
    """One capitalised word, not written in capitals: "Thomas", "Becker"."""
    return surface.isalpha() and surface[:1].isupper() and not surface.isupper()


def _max_or_none(a, b):
    values = [v for v in (a, b) if v is not None]
    return max(values) if values else None
