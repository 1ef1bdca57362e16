"""Name span rules after the model: firm legal forms, institutions at a place, place particles."""
from __future__ import annotations

import re
from dataclasses import replace
from typing import Optional, Sequence

from larvatus.transforms.audit import common_words
from larvatus.transforms.labels import DECLARED_ROLES, EntityRole, NameRoles
from larvatus.transforms.recognizers import finditer_on_lines
from larvatus.transforms.records import EntitySource, EntitySpan

# Only redacted spans of the model's name types (`NameRoles.covers`) are extended or joined.
# The recognizers of the spans each rule makes or reshapes (their source is "rule").
LEGAL_FORM_RULE = "legal_form"
INSTITUTION_PLACE_RULE = "institution_place"
PLACE_PARTICLE_RULE = "place_particle"
_RULE = EntitySource.RULE.value
# Score of an ORG span found by its legal form alone (no model span under it).
SCORE_LEGAL_FORM = 0.9

_H = r"[ \t]"
# Legal forms matched in any casing: three or more letters, or dotted (a space inside
# one, "B. V.", is horizontal: no form, and so no firm, crosses a line break).
_LEGAL_ANY_CASE = (
    r"ltd\.?|limited|llc|l\.l\.c\.|llp|l\.l\.p\.|inc\.?|incorporated|corp\.?|corporation|"
    r"co\.|plc|p\.l\.c\.|gmbh|ggmbh|mbh|kgaa|ohg|gbr|b\.[ \t]?v\.|n\.[ \t]?v\.|"
    r"vof|a/s|aps|asa|oyj|s\.a\.s\.|sas|sarl|s\.a\.r\.l\.|s\.à[ \t]?r\.l\.|s\.a\.|s\.l\.l\.|s\.l\.|"
    r"s\.p\.a\.|spa|s\.r\.l\.|srl|s\.c\.|s\.coop\.|sp\.[ \t]?z[ \t]?o\.o\.|lda\.")
# Two-letter forms only as firms write them (canonical or capitals), so "Berlin se" is not a
# firm, nor "London e.g." one; "AS" and "CO" are left out (English words in capitals).
_LEGAL_EXACT = (r"AG|KG|SE|UG|BV|NV|CV|SA|SL|AB|Oy|OY|eG|EG|eV|EV|LP|"
                r"[eE]\.[ ]?G\.|[eE]\.[ ]?V\.")
# Firm endings that are not legal forms: taken after a model span, never alone.
# Written with a capital ("the SPC group" is a group of SPC's, "SPC Group" a firm).
_ENDING_WORDS = ("sons söhne sohne zonen fils hijos figli partners partner associates asociados "
                 "holdings holding group gruppe stiftung").split()
_ENDINGS = "|".join(f"{w.capitalize()}|{w.upper()}" for w in _ENDING_WORDS)
_LEGAL = rf"(?:(?i:{_LEGAL_ANY_CASE})(?!\w)|(?:{_LEGAL_EXACT})(?![\w/]))"
_FORM = rf"(?:{_LEGAL}|(?:{_ENDINGS})(?!\w))"
_JOINER = r"(?:&|(?i:and|und|en|et|y|e)(?!\w))"
# One or more forms after a name: "GmbH & Co. KG", "and Sons", ", Inc.", "S.A.".
_FORMS_AFTER_RE = re.compile(rf"(?:,?{_H}+(?:{_JOINER}{_H}+)?{_FORM})+")
# After a name written in lowercase (a chat's "smith and sons"), endings in any case.
_FORMS_AFTER_LOWER_RE = re.compile(
    rf"(?:,?{_H}+(?:{_JOINER}{_H}+)?(?:{_LEGAL}|(?i:{_ENDINGS})(?!\w)))+")
# A firm that the model did not see: one to four capitalised words and a legal form
# ("LÖWER PRUSCHKE E.G.", "Nordic Freight A/S").
_CAP_WORD = r"[^\W\d_][\w'’-]*"
_FIRM_RE = re.compile(
    rf"(?<![\w'’.-])(?P<name>{_CAP_WORD}(?:{_H}+{_CAP_WORD}){{0,3}})"
    rf"(?P<forms>,?{_H}+{_LEGAL}(?:,?{_H}+(?:{_JOINER}{_H}+)?{_FORM})*)")
_NAME_WORD_RE = re.compile(r"\S+")
# The firm pattern tries up to four capitalised words and then every legal form at each
# word start: it was 60% of the redact stage. A match holds horizontal space right before a
# legal form and never a line break, so it runs only on the lines where such a spot exists.
#
# The hint is `_H` then `_LEGAL`, with the case-insensitive forms grouped by their first letter
# (the same matches at the same places): `re` then tries about a dozen letters at each space,
# not some fifty forms, and a lookahead on those letters (in any case, as the forms match them)
# rejects most spaces at once.
def _by_first_letter(forms: str) -> str:
    """`forms` ("a|b|..." of literals opening with a letter) as one group per first letter."""
    groups: dict[str, list[str]] = {}
    for form in forms.split("|"):
        groups.setdefault(form[0].lower(), []).append(form[1:])
    return "|".join(f"{letter}(?:{'|'.join(rests)})" for letter, rests in groups.items())


_LEGAL_FIRST_LETTERS = "".join(sorted({form[0].lower() for form in _LEGAL_ANY_CASE.split("|")}))
_FORM_HINT_RE = re.compile(
    rf"{_H}(?:(?=(?i:[{_LEGAL_FIRST_LETTERS}]))(?i:{_by_first_letter(_LEGAL_ANY_CASE)})(?!\w)"
    rf"|(?:{_LEGAL_EXACT})(?![\w/]))")
# Institutions named after their place: "County Court at Glasgow", "University of Leeds".
_INSTITUTIONS = frozenset(
    "court courts tribunal university college school academy institute hospital clinic "
    "infirmary council bank museum library church cathedral centre center office prison "
    "police station".split())
_INSTITUTION_LINK_RE = re.compile(rf"{_H}+(?i:at|of|in|for|de|du|des|der|di|van|von){_H}+\Z")
# Place names with a particle and a second name: "Frankfurt am Main", "Newcastle upon Tyne",
# "Halle an der Saale", "Châlons-en-Champagne" is one word already.
_PLACE_PARTICLE_RE = re.compile(
    rf"{_H}+(?i:am|an{_H}+der|ob{_H}+der|im|upon|sur|sous|bei|on{_H}+the)"
    rf"{_H}+(?P<word>[^\W\d_][\w'’-]*)")


def _redacted_model_span(span: EntitySpan, labels: frozenset[str],
                         roles: NameRoles = DECLARED_ROLES) -> bool:
    return roles.covers(span) and (span.redacted or span.label in labels)


def _free(start: int, end: int, spans: Sequence[EntitySpan], skip: EntitySpan) -> bool:
    return not any(s is not skip and s.start < end and start < s.end for s in spans)


def _absorbed(start: int, end: int, spans: Sequence[EntitySpan], skip: EntitySpan,
              labels: frozenset[str], roles: NameRoles) -> Optional[list[EntitySpan]]:
    """The spans on [start, end) besides `skip` when each is a redacted model span lying
    wholly inside it ("Sons" in "Freeman" + " and Sons", "Main" in "Frankfurt" + " am Main"),
    to be taken into the extended span; None when another span stands in the way."""
    parts = [s for s in spans if s is not skip and s.start < end and start < s.end]
    if all(_redacted_model_span(s, labels, roles) and start <= s.start and s.end <= end
           for s in parts):
        return parts
    return None


def _extend(spans: list[EntitySpan], i: int, end: int, parts: Sequence[EntitySpan],
            **changes) -> list[EntitySpan]:
    """`spans` with span i extended to `end` (and `changes`) and the absorbed `parts` gone."""
    extended = replace(spans[i], end=end, **changes)
    return [extended if k == i else s for k, s in enumerate(spans)
            if not any(s is p for p in parts)]


def extend_legal_forms(text: str, spans: Sequence[EntitySpan], labels: frozenset[str],
                       roles: NameRoles = DECLARED_ROLES) -> tuple[EntitySpan, ...]:
    """A redacted model span followed by a legal form ("Ruiz" + " Inc", "van Bergen" + " BV",
    "Müller" + " GmbH & Co. KG") takes the form in and becomes an organisation; one to four
    capitalised words followed by a legal form with no span on them become a redacted
    organisation span. Nothing crosses a line break; words already in another span are left
    to it. The organisation label is the model's (`roles.organisation_label`); the spans made
    or extended are the rule's ("legal_form").
    """
    organisation = roles.organisation_label
    out = sorted(spans, key=lambda s: s.start)
    i = 0
    while i < len(out):
        span = out[i]
        i += 1
        if not (span.redacted or span.label in labels) or not roles.covers(span):
            continue   # not `_redacted_model_span`
        after = _FORMS_AFTER_LOWER_RE if text[span.start:span.end].islower() else _FORMS_AFTER_RE
        m = after.match(text, span.end)
        parts = _absorbed(span.end, m.end(), out, span, labels, roles) if m else None
        if parts is not None:   # parts follow the span: out stays in start order
            out = _extend(out, i - 1, m.end(), parts, label=organisation, redacted=True,
                          source=_RULE, recognizer=LEGAL_FORM_RULE)
    found = len(out)
    common = common_words()
    for m in finditer_on_lines(_FIRM_RE, _FORM_HINT_RE, text):
        # The capitalised, uncommon words right before the form ("Paid by Nordic Freight").
        words = list(_NAME_WORD_RE.finditer(m.group("name")))
        kept = 0
        while kept < len(words) and words[-1 - kept].group()[0].isupper() \
                and words[-1 - kept].group().lower() not in common:
            kept += 1
        if not kept:
            continue
        words = words[-kept:]
        form = m.group("forms").lstrip(", \t")
        if form.islower() and not form.startswith(("plc", "p.l.c.")):
            continue  # "Sri Lanka in the third day-night limited overs"
        start, end = m.start("name") + words[0].start(), m.end()
        # Model spans on part of the firm ("Dippel Bruder e." tagged ORG) are taken in.
        parts = [s for s in out if s.start < end and start < s.end]
        if not all(map(roles.covers, parts)):
            continue
        start = min([start] + [s.start for s in parts])
        end = max([end] + [s.end for s in parts])
        if "\n" in text[start:end]:
            continue
        out = [s for s in out if not any(s is p for p in parts)]
        out.append(EntitySpan(start, end, organisation,
                              min([SCORE_LEGAL_FORM] + [p.score for p in parts]), redacted=True,
                              source=_RULE, recognizer=LEGAL_FORM_RULE))
        found = -1   # a firm found: out is sorted again
    return tuple(out) if found == len(out) else tuple(sorted(out, key=lambda s: s.start))


def join_institution_places(text: str, spans: Sequence[EntitySpan], labels: frozenset[str],
                            roles: NameRoles = DECLARED_ROLES) -> tuple[EntitySpan, ...]:
    """A redacted organisation span ending in an institution word, then "at", "of", "in"...
    and another redacted model span on the same line ("COUNTY COURT" + " AT " + "GLASGOW")
    become one organisation span (the rule's, "institution_place"), so the linking word is
    not left between two placeholders.
    """
    ordered = sorted(spans, key=lambda s: s.start)
    out: list[EntitySpan] = []
    for span in ordered:
        if out and roles.is_role(out[-1].label, EntityRole.ORGANISATION):
            last = out[-1]
            words = text[last.start:last.end].split() if _redacted_model_span(last, labels, roles) \
                and _redacted_model_span(span, labels, roles) else ()
            if words and words[-1].lower() in _INSTITUTIONS \
                    and _INSTITUTION_LINK_RE.search(text[last.end:span.start]):
                out[-1] = replace(last, end=span.end, score=min(last.score, span.score),
                                  redacted=True, source=_RULE, recognizer=INSTITUTION_PLACE_RULE)
                continue
        out.append(span)
    return tuple(out)


def extend_place_particles(text: str, spans: Sequence[EntitySpan], labels: frozenset[str],
                           roles: NameRoles = DECLARED_ROLES) -> tuple[EntitySpan, ...]:
    """A redacted place span followed by a place-name particle and a capitalised word
    ("Frankfurt" + " am Main", "Newcastle" + " upon Tyne") takes both in (the rule's span,
    "place_particle"). The word must not be a common word, a month or a weekday ("Berlin am
    Montag" stays as it is).
    """
    out = list(spans)
    common = common_words()
    i = -1
    while i + 1 < len(out):
        i += 1
        span = out[i]
        if not roles.is_role(span.label, EntityRole.PLACE) \
                or not _redacted_model_span(span, labels, roles):
            continue
        # The particle may already be in the span ("Frankfurt am" tagged LOC).
        line_end = text.find("\n", span.end)
        m = _particle_at(text, span, len(text) if line_end < 0 else line_end)
        if not m or not m.group("word")[0].isupper() or m.group("word").lower() in common \
                or m.group("word").lower() in _GERMAN_DATES:
            continue
        parts = _absorbed(span.end, m.end(), out, span, labels, roles)
        if parts is not None:
            out = _extend(out, i, m.end(), parts, source=_RULE, recognizer=PLACE_PARTICLE_RULE)
    return tuple(out)


def _particle_at(text: str, span: EntitySpan, line_end: int) -> Optional[re.Match]:
    """The first match of `_PLACE_PARTICLE_RE.finditer(text, span.start, line_end)` that
    starts by the span's end and whose word ends after it.

    A match opens with a space or tab: it is tried at those in reach only (the first that
    matches is where a search would find it), never searched for along the rest of the line.
    """
    position, last = span.start, min(span.end, line_end - 1)
    while position <= last:
        for start in range(position, last + 1):
            if text[start] in " \t":
                m = _PLACE_PARTICLE_RE.match(text, start, line_end)
                if m is not None:
                    break
        else:
            return None
        if span.end < m.end("word"):
            return m
        position = m.end()
    return None


_GERMAN_DATES = frozenset(
    "montag dienstag mittwoch donnerstag freitag samstag sonntag morgen abend mittag "
    "wochenende januar februar märz april mai juni juli august september oktober november "
    "dezember anfang ende".split())


def apply_name_rules(text: str, spans: Sequence[EntitySpan], labels: frozenset[str],
                     roles: NameRoles = DECLARED_ROLES) -> tuple[EntitySpan, ...]:
    """The rules above in order: legal forms, institutions at a place, place particles;
    `roles`: the model's name types (`name_roles` of its label scheme)."""
    spans = extend_legal_forms(text, spans, labels, roles)
    spans = join_institution_places(text, spans, labels, roles)
    return extend_place_particles(text, spans, labels, roles)
