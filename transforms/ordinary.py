"""Ordinary words around names: stop words per language, greetings, roles, headings and months kept out of model spans."""
from __future__ import annotations

import bisect
import re
import unicodedata
from dataclasses import replace
from functools import lru_cache
from typing import Sequence

from larvatus.transforms.audit import common_words
from larvatus.transforms.labels import DECLARED_ROLES, EntityRole, NameRoles
from larvatus.transforms.records import EntitySource, EntitySpan

# Only the spans of the model's name types (`NameRoles.covers`: read from its label scheme)
# are trimmed or dropped here; the others (patterns) only lose surrounding spaces.
# Below this, the model's own label holds less than half the word's probability: the span
# exists because the recall-first threshold lent it a type (weak evidence).
OWN_EVIDENCE = 0.5
# Languages whose spaCy stop-word lists are read (English always).
STOP_WORD_LANGUAGES = ("en", "de", "fr", "es", "it", "nl", "pt")

_GREETINGS = (
    "hi hello hey hiya dear greetings regards sincerely yours faithfully truly cheers thanks "
    "thank morning afternoon evening bye goodbye "
    "hallo liebe lieber sehr geehrte geehrter geehrten freundlichen freundliche gruß grüße "
    "grüßen viele beste herzliche bonjour bonsoir cher chère madame monsieur cordialement "
    "salutations merci hola estimado estimada saludos atentamente gracias buenos buenas "
    "ciao gentile cordiali saluti grazie beste geachte groeten vriendelijke hartelijke")
# Chat words, ordinary only in lowercase ("Nice" and "Great Britain" are places).
_CHAT = frozenset(
    "cool lol yeah yep nope sure great nice awesome ok okay thx ty np btw best kind warm "
    "welcome".split())
_ROLES = (
    "mr mrs ms miss mx dr prof sir madam lord lady dame rev mister inspector detective "
    "sergeant officer constable judge justice president minister chairman chair ceo cfo cto "
    "director manager engineer technician doctor nurse patient client customer landlord "
    "tenant witness claimant defendant applicant respondent plaintiff appellant petitioner "
    "counsel solicitor barrister attorney lawyer agent team staff colleague colleagues "
    "accountant associate specialist controller executive paralegal registrar consultant "
    "analyst assistant secretary clerk senior junior chartered honour honor "
    "herr frau dott sig sra sr mme mlle dhr mevr")
# Titles before a name, left out of a PER span's start ("Prince [PER]") but names of their own
# when they stand alone ("said King").
_TITLES = frozenset(
    "prince princess king queen duke duchess earl baron baroness emperor empress sheikh".split())
# Degrees: a span that opens with one is a qualification and its subject ("BSc Economics").
_DEGREES = frozenset("bsc msc mba phd dphil mphil llb llm beng meng bcom mcom".split())
# Letters after a name ("James Hodge, FRCS"): roles too.
_POST_NOMINALS = "frcs frcp frcsed mrcp mrcs mrcgp frcpath md dds rn cpa acca cfa esq"
_HEADINGS = (
    "experience education skills summary profile objective references curriculum vitae resume "
    "employment history contact details address phone email invoice receipt payment amount "
    "total balance due subject re fw fwd attachment attached regarding circumstances facts "
    "case law procedure judgment judgement decision reasons background introduction "
    "conclusion complaint alleged violation article articles convention protocol court state "
    "government printer docket notes note report assessment plan diagnosis medication "
    "allergies history account order reference ticket request issue update "
    "meeting agenda minutes project data engineer property flat apartment office "
    "rechnung betrag zahlung anhang bitte termin vertrag kunde kundennummer auftrag "
    "lieferung angebot bestellung überweisung überweisen konto mahnung frist unterlagen "
    "anfrage rückfrage gespräch besprechung woche tag jahr monat datum betreff facture "
    "montant paiement objet factura importe pago asunto fattura importo pagamento oggetto "
    "factuur bedrag betaling onderwerp anbei beiliegend erhalten gerne gern "
    "postal finance audit payroll customer service confidential rules")
# Common-noun endings of languages the English model reads poorly: their capitalised nouns
# ("Verfügung", "Rückfragen") look like names to it. Only words of seven letters or more.
_NOUN_SUFFIXES = {
    "de": ("ung", "ungen", "heit", "keit", "schaft", "schaften", "tät", "tion", "tionen",
           "nis", "nisse", "service", "frage", "fragen", "ment", "mente"),
    "fr": ("tion", "tions", "ment", "ments", "ence", "ance", "ité", "ités"),
    "es": ("ción", "ciones", "miento", "mientos", "dad", "dades"),
    "it": ("zione", "zioni", "mento", "menti", "ità"),
    "nl": ("ing", "ingen", "heid", "schap", "tie", "ties"),
}
_MONTHS_DAYS = (
    "january february march april may june july august september october november december "
    "jan feb mar apr jun jul aug sep sept oct nov dec monday tuesday wednesday thursday "
    "friday saturday sunday mon tue tues wed thu thur thurs fri sat sun "
    "januar februar märz mai juni juli oktober dezember montag dienstag mittwoch donnerstag "
    "freitag samstag sonntag janvier février mars avril juin juillet août septembre octobre "
    "novembre décembre lundi mardi mercredi jeudi vendredi samedi dimanche enero febrero "
    "marzo abril mayo junio julio agosto septiembre octubre noviembre diciembre lunes martes "
    "miércoles jueves viernes sábado domingo")
_ABBREVIATIONS = (
    "iban bic swift dob mrn hr it eur usd gbp chf id ref no nr tel fax vat ust mwst pdf cv "
    "faq etc ps nb cc bcc ssn bsn nino "
    # clinical measures and tests
    "bp ecg ekg fbc cbc crp u&e lft lfts bmi "
    # log levels and HTTP methods
    "info debug warn warning error trace fatal get post put patch delete")
# Short capitals that name places or firms however common the word: never ordinary in capitals.
_ACRONYM_STOPS = frozenset({"us", "it", "am", "un", "eu"})
# Function words that are also given names: never ordinary when capitalised ("Will", "May").
_NAME_STOPS = frozenset({"will", "may", "bill", "mark"})

# Lowercase words inside names: particles ("van den Berg", "Frankfurt am Main"), joiners
# ("Clark and Sons") and street words before a name ("rue Augustin Collet").
PARTICLES = frozenset(
    "van von de den der di da du la le del della des dos das ter ten bin al el af zu am im "
    "and & y e et und en of upon sur rue via calle".split())

# Particles that stand between two parts of one name (joiners such as "and" do not: "Smith
# and Jones" are two people).
NAME_PARTICLES = frozenset(
    "van von de den der di da du la le del della des dos das ter ten bin af zu am im upon "
    "sur".split())
_PARTICLE_GAP_RE = re.compile(
    r"[ \t]+(?:(?:" + "|".join(sorted(map(re.escape, NAME_PARTICLES), key=len, reverse=True))
    + r")[ \t]+|[dl]['’][ \t]*)")

# The recognizer of a span `_join_at_particles` made of two.
PARTICLE_JOIN_RULE = "particle_join"

# Per-word predicates below are cached on (word, language): words repeat across documents.
_CACHE_WORDS = 1 << 16

_TOKEN_RE = re.compile(r"\w+(?:['’.&-]\w+)*\.?|[^\w\s]")
_DIGIT_NEAR_RE = re.compile(r"\d")


@lru_cache(maxsize=None)
def stop_words(language: str = "en") -> frozenset[str]:
    """spaCy's stop words of English and of `language` (when spaCy has them), lowercased."""
    from larvatus.transforms.lexicon import stop_words_of

    words: set[str] = set()
    for code in {"en", language}:
        if code in STOP_WORD_LANGUAGES:
            words |= stop_words_of(code)
    return frozenset(words)


@lru_cache(maxsize=1)
def _listed() -> tuple[frozenset[str], frozenset[str], frozenset[str], frozenset[str]]:
    """(greetings, roles, headings and abbreviations, months and days)."""
    return (frozenset(_GREETINGS.split()), frozenset((_ROLES + " " + _POST_NOMINALS).split()),
            frozenset(_HEADINGS.split()) | frozenset(_ABBREVIATIONS.split()),
            frozenset(_MONTHS_DAYS.split()))


def _bare(token: str) -> str:
    return token.rstrip(".").lower()


@lru_cache(maxsize=_CACHE_WORDS)
def is_stop(token: str, language: str = "en") -> bool:
    """A function word of English or `language`; short capitals such as "US" are not."""
    bare = _bare(token)
    if token.isupper() and bare in _ACRONYM_STOPS or token[:1].isupper() and bare in _NAME_STOPS:
        return False
    return bare in stop_words(language)


@lru_cache(maxsize=_CACHE_WORDS)
def is_ordinary(token: str, language: str = "en") -> bool:
    """A word that names nobody: a function word, greeting, role, heading or abbreviation."""
    greetings, roles, headings, _ = _listed()
    bare = _bare(token)
    return is_stop(token, language) or bare in greetings or bare in roles or bare in headings \
        or token.islower() and bare in _CHAT \
        or len(bare) >= 7 and bare.endswith(_NOUN_SUFFIXES.get(language, ()))


@lru_cache(maxsize=_CACHE_WORDS)
def is_function_word(token: str, language: str = "en") -> bool:
    """A function word, greeting or role: never part of a name."""
    greetings, roles, _, _ = _listed()
    return is_stop(token, language) or _bare(token) in greetings or _bare(token) in roles


@lru_cache(maxsize=_CACHE_WORDS)
def is_month_or_day(token: str) -> bool:
    return _bare(token) in _listed()[3]


@lru_cache(maxsize=_CACHE_WORDS)
def is_punctuation(token: str) -> bool:
    """Punctuation or symbols only (a combining mark belongs to the word it sits on)."""
    return all(unicodedata.category(c)[0] in "PSZ" for c in token)


@lru_cache(maxsize=_CACHE_WORDS)
def looks_like_name(surface: str, language: str = "en") -> bool:
    """Whether a surface form may name someone: it holds a word of two or more characters
    with a letter that is no ordinary word (so "the", "of", "Hi" never spread)."""
    return any(len(t) >= 2 and any(c.isalpha() for c in t) and not is_ordinary(t, language)
               and not is_month_or_day(t) for t in _TOKEN_RE.findall(surface))


@lru_cache(maxsize=_CACHE_WORDS)
def _edge_trimmable(token: str, weak: bool, leading: bool, language: str, person: bool) -> bool:
    """Whether a token at a model span's edge is left out of it (roles only before a person's
    name)."""
    if is_punctuation(token):
        return True
    if is_stop(token, language) and (weak or token.islower() or language != "en") \
            and (leading or not person or not token[:1].isupper()):
        return True     # a capitalised last word of a person's name stays ("Michael Ende")
    greetings, roles, _, _ = _listed()
    bare = _bare(token)
    return leading and (bare in greetings or person and (bare in roles or bare in _TITLES))


def _all_ordinary(tokens: Sequence[str], weak: bool, text: str, span: EntitySpan,
                  language: str) -> bool:
    """Whether a span's remaining words are all ordinary (a span to drop)."""
    common = common_words()
    for token in tokens:
        if is_ordinary(token, language) or is_punctuation(token) or _DIGIT_NEAR_RE.search(token):
            continue   # a name's words hold letters only: "X11", "req=9bf5df1e92e6", "Article 6"
        if is_month_or_day(token) and (weak or _near_digit(text, span)):
            continue
        if weak and _bare(token) in common:
            continue
        return False
    return True


def _near_digit(text: str, span: EntitySpan) -> bool:
    """A digit within three characters before or after a span."""
    return bool(_DIGIT_NEAR_RE.search(
        text[max(0, span.start - 3):span.start] + " " + text[span.end:span.end + 3]))


def refine_span(text: str, span: EntitySpan, language: str = "en",
                roles: NameRoles = DECLARED_ROLES) -> EntitySpan | None:
    """A model span without the ordinary words and punctuation at its edges, or None when
    nothing personal is left ("Hi team", "THE", "[LOC] sincerely", "1 March").

    Leading greetings and roles go ("Inspector Morse" -> "Morse"); function words at an edge
    go when written in lowercase ("jason from") or when the model's own label holds under
    half the probability (`OWN_EVIDENCE`); punctuation always (". greene", "Nguyen Hue,").
    Other spans (patterns, term lists, types without a role in `roles`) only lose surrounding
    spaces and trailing punctuation.
    """
    if not roles.covers(span):
        return _trim_pattern(text, span)
    weak = span.score < OWN_EVIDENCE
    person = roles.is_role(span.label, EntityRole.PERSON)
    matches = list(_TOKEN_RE.finditer(text, span.start, span.end))
    first, last = 0, len(matches)
    if first < last and _bare(matches[0].group()) in _DEGREES:
        # "BSc Economics": a qualification, up to a comma ("BSc Economics, University of Leeds")
        first = next((i + 1 for i in range(last) if matches[i].group() == ","), last)
    # A sure span written in capitals is a dateline's or heading's name ("BUENOS AIRES"), whose
    # words are never greetings.
    capitals = not weak and last - first > 1 and text[span.start:span.end].isupper()

    def trimmable(index: int, leading: bool) -> bool:
        word = matches[index].group()
        if capitals and _bare(word) in _listed()[0]:
            return False
        return _edge_trimmable(word, weak, leading, language, person)

    if first < last and _is_unit(text, matches[0]):
        first += 1   # "37.6 C." (then "Chest X-ray")
    while first < last and trimmable(first, True) \
            and not (first + 1 == last and _bare(matches[first].group()) in _TITLES):
        first += 1
    while last > first and (trimmable(last - 1, False) or last - first > 1
                            and _labels_a_field(text, matches[last - 1], language)):
        last -= 1
    if first == last:
        return None
    start, end = matches[first].start(), matches[last - 1].end()
    word = matches[last - 1].group()
    if word.endswith(".") and end == span.end and len(word) > 5 and word[:-1].isalpha():
        end -= 1   # a sentence's full stop, not an abbreviation's ("U.S.", "Corp.", "Fla.")
    trimmed = span if (start, end) == (span.start, span.end) else replace(span, start=start, end=end)
    if _all_ordinary([m.group() for m in matches[first:last]], weak, text, trimmed, language):
        return None
    return trimmed


# `refine_span` reads the text around a span only within three characters of its edges, and
# only to ask whether a character is a space, a colon, a digit (`str.isdigit`) or a decimal
# digit (`\d`): its result, as offsets from the span's start, is the same wherever the same
# label, weakness, language and surface stand between characters alike in those respects
# (the same number of them: a span near the text's start sees fewer).
_AROUND = 3
_REFINED_MAX = 1 << 16   # then the memo starts again: bounded memory
_REFINED: dict[tuple, tuple[int, int] | None] = {}


class _Outer(dict):
    """A few characters as their classes in `refine_span`'s eyes, computed once per string."""

    def __missing__(self, chars: str) -> str:
        classes = self[chars] = "".join(
            c if c in " :" else "0" if c.isdecimal() else "2" if c.isdigit() else "x"
            for c in chars)
        return classes


_OUTER = _Outer()


def _refined(text: str, span: EntitySpan, language: str, roles: NameRoles) -> EntitySpan | None:
    """`refine_span`, remembered for spans alike in all it reads (see `_AROUND`; its role
    under `roles` too)."""
    if not roles.covers(span):
        return _trim_pattern(text, span)
    start, end = span.start, span.end
    if len(_OUTER) > _REFINED_MAX:
        _OUTER.clear()
    key = (span.label, roles.is_role(span.label, EntityRole.PERSON), span.score < OWN_EVIDENCE,
           language, text[start:end],
           _OUTER[text[max(0, start - _AROUND):start]], _OUTER[text[end:end + _AROUND]])
    if key in _REFINED:
        edges = _REFINED[key]
    else:
        refined = refine_span(text, span, language, roles)
        edges = None if refined is None else (refined.start - start, refined.end - start)
        if len(_REFINED) > _REFINED_MAX:
            _REFINED.clear()
        _REFINED[key] = edges
    if edges is None:
        return None
    if edges == (0, end - start):
        return span
    return replace(span, start=start + edges[0], end=start + edges[1])


_PATTERN_TRAILING = ".,;:!?"
# An elided particle before a name: "d' Heripon", "d'Artagnan", "l'Estrange".
_ELISION_RE = re.compile(r"[dDlL]['’][ \t]*(?=[^\W\d_])")
_UNIT_RE = re.compile(r"[^\W\d_]\.?\Z")


def _elided_name(text: str, start: int, end: int) -> bool:
    """Whether an elided particle and a capitalised word stand at `start`: "d' Heripon"."""
    m = _ELISION_RE.match(text, start, end)
    return m is not None and text[m.end()].isupper()


def _labels_a_field(text: str, token: re.Match, language: str) -> bool:
    """An ordinary word right before a colon: the next field's label ("SARAH    MRN: 98...")."""
    return is_ordinary(token.group(), language) and text[token.end():token.end() + 1] == ":"


def _is_unit(text: str, token: re.Match) -> bool:
    """A single letter right after a number and a space: a unit ("37.6 C."), not an initial."""
    start = token.start()
    return _UNIT_RE.match(token.group()) is not None and start >= 2 \
        and text[start - 1] == " " and text[start - 2].isdigit()


def _trim_pattern(text: str, span: EntitySpan) -> EntitySpan | None:
    start, end = span.start, span.end
    while start < end and text[start].isspace():
        start += 1
    while end > start and (text[end - 1].isspace() or text[end - 1] in _PATTERN_TRAILING):
        end -= 1
    if start == end:
        return None
    return span if (start, end) == (span.start, span.end) else replace(span, start=start, end=end)


def _beside(text: str, a: EntitySpan, b: EntitySpan) -> bool:
    """Whether only spaces stand between two spans."""
    lo, hi = (a, b) if a.start < b.start else (b, a)
    return lo.end <= hi.start and not text[lo.end:hi.start].strip(" \t")


def _context_word(text: str, span: EntitySpan, strong: Sequence[EntitySpan]) -> bool:
    """A weak model span in lowercase right beside a capitalised model span of its own
    evidence ("misidentified" after "Brian Scott"): a word around a name, not a name (in
    lowercase chat, "linde verboom", it may be one)."""
    return span.score < OWN_EVIDENCE and text[span.start:span.end].islower() \
        and any(_beside(text, span, other) and not text[other.start:other.end].islower()
                for other in strong)


def refine_spans(text: str, spans: Sequence[EntitySpan], language: str = "en",
                 roles: NameRoles = DECLARED_ROLES) -> tuple[EntitySpan, ...]:
    """`refine_span` on every span, the dropped ones left out; weak lowercase spans beside a
    name (`_context_word`), and any in a text that capitalises its sentences, dropped too.
    `roles`: the model's name types (`name_roles` of its label scheme); only their spans
    are joined, trimmed or dropped."""
    out = []
    for span in _join_at_particles(text, spans, roles):
        refined = _refined(text, span, language, roles)
        if refined is not None:
            out.append(refined)
    strong = sorted((s for s in out if roles.covers(s) and s.score >= OWN_EVIDENCE),
                    key=lambda s: s.start)
    starts = [s.start for s in strong]
    cased = is_cased(text)
    products = [m.span() for m in _PRODUCT_RE.finditer(text)] if _PRODUCT_HINT_RE.search(text) else []
    fields = may_label_fields(text)
    # Each test below drops model spans only, and the first three weak ones only.
    return tuple(s for s in out if not roles.covers(s) or not (
        s.score < OWN_EVIDENCE and (
            _context_word(text, s, _near(strong, starts, s))
            or cased and (_weak_lowercase(text, s) or _weak_opener(text, s)))
        or fields and _field_label(text, s, roles) or products and _in_product(s, products)))


_SENTENCE_START_RE = re.compile(r"(?:^|[.!?]\s+|\n)\s*([^\W\d_])")
# The same search in two parts: the text's start, then the other alternatives, which open with
# a character class that `re` scans for (several times faster than trying "^" everywhere).
_TEXT_START_RE = re.compile(r"\s*([^\W\d_])")
_AFTER_START_RE = re.compile(r"(?:[.!?]\s+|\n)\s*([^\W\d_])")
# A text whose sentences start with a capital this often writes names with one too.
CASED_SHARE = 0.8


def is_cased(text: str) -> bool:
    """Whether the text capitalises its sentences (prose, letters, news), unlike a lowercase
    chat, where names are written in lowercase too."""
    starts = sentence_starts(text[:20_000])
    return bool(starts) and sum(c.isupper() for c in starts) >= CASED_SHARE * len(starts)


def sentence_starts(text: str) -> list[str]:
    """`_SENTENCE_START_RE.findall(text)`: the first letter of each sentence."""
    first = _TEXT_START_RE.match(text)
    if first is None:
        return _AFTER_START_RE.findall(text)
    return [first.group(1)] + _AFTER_START_RE.findall(text, first.end())


def _weak_lowercase(text: str, span: EntitySpan) -> bool:
    """A lowercase model span only the recall-first threshold made ("university", "radio"):
    in cased text, not a name (particles such as "van den" are left to their neighbours)."""
    surface = text[span.start:span.end]
    return span.score < OWN_EVIDENCE and surface.islower() \
        and not all(t in PARTICLES for t in _TOKEN_RE.findall(surface))


# A field's label: "Postal address:", "NHS number:", "the Claimant's National Insurance
# number," (at a line's start or after a possessive) and "SSN: 123..." before a number.
_FIELD_NOUN_RE = re.compile(
    r"(?:[ \t]+[^\W\d_]+)?[ \t]+(?i:(?:address|number|no\.?|nr\.?|date|code|id)[ \t]*[:,]"
    r"|(?:number|no\.|nr\.)[ \t]+\d)")
_BEFORE_NUMBER_RE = re.compile(r"[ \t]*:[ \t]*\d")
_LABEL_START_RE = re.compile(r"(?:^|\n)[ \t]*\Z|['’]s[ \t]+(?:[^\W\d_]+[ \t]+)?\Z")
# A statute in a citation: "15 U.S.C. § 1681".
_CITATION_RE = re.compile(r"[ \t]*§")


# What `_field_label` needs after some span: a field noun after a space or tab and before a
# colon, a comma or a number (as in `_FIELD_NOUN_RE`), a colon before a number, or a "§".
_FIELD_HINT_RE = re.compile(
    r"[ \t](?=(?i:[acdin]))(?i:address|number|no\.?|nr\.?|date|code|id)(?:[ \t]*[:,]|[ \t]+\d)"
    r"|:[ \t]*\d|§")


def may_label_fields(text: str) -> bool:
    """Whether `_field_label` may hold for some span of `text` (false: for none)."""
    return _FIELD_HINT_RE.search(text) is not None


def _field_label(text: str, span: EntitySpan, roles: NameRoles = DECLARED_ROLES) -> bool:
    """A model span that names a field of a form, not its value ("Postal address: ...")."""
    if not roles.covers(span) or "\n" in text[span.start:span.end]:
        return False
    if _CITATION_RE.match(text, span.end) and text[max(0, span.start - 2):span.start].strip():
        return True   # "15 U.S.C. §"
    surface = text[span.start:span.end]
    if _FIELD_NOUN_RE.match(text, span.end) is None and not (
            surface.isupper() and len(surface) <= 5
            and _BEFORE_NUMBER_RE.match(text, span.end) is not None):
        return False   # no field noun or number after it (looked at first: cheaper)
    before = max(0, span.start - 80)
    window = text[before:span.start]
    if before and "\n" not in window and "'s" not in window and "’s" not in window:
        return False   # no line start nor possessive "'s" in reach: no label start
    return _LABEL_START_RE.search(text, before, span.start) is not None


# Software product tokens (a User-Agent or Server header): "Mozilla/5.0 (X11; Linux x86_64)".
_PRODUCT_RE = re.compile(r"(?<![\w/])[A-Za-z][\w.-]*/\d[\w.]*(?:[ \t]+\([^()\n]{1,200}\))?")

# A product token holds "/" and a digit: texts without that pair hold none.
_PRODUCT_HINT_RE = re.compile(r"/\d")


def _in_product(span: EntitySpan, products: Sequence[tuple[int, int]]) -> bool:
    """A (model) span inside a software product token."""
    return any(a <= span.start and span.end <= b for a, b in products)


_OPENER_BEFORE_RE = re.compile(r"(?:^|\n|[.!?][ \t]+)[ \t]*(?:[-•*][ \t]+)?\Z")
_NEXT_LETTER_RE = re.compile(r"[ \t]+([^\W\d_])")


def _next_is_lowercase(text: str, end: int) -> bool:
    m = _NEXT_LETTER_RE.match(text, end)
    return m is not None and m.group(1).islower()


def _weak_opener(text: str, span: EntitySpan) -> bool:
    """A weak model span of one capitalised word opening a sentence, a lowercase word after it
    ("Tin was unchanged", "Net profit rose", "- Led a team"): capitalised by its place, and a
    name to the model by under half its probability; in cased text, a word."""
    surface = text[span.start:span.end]
    return span.score < OWN_EVIDENCE and surface.istitle() \
        and surface.isalpha() and _next_is_lowercase(text, span.end) \
        and _OPENER_BEFORE_RE.search(text, max(0, span.start - 40), span.start) is not None


def _join_at_particles(text: str, spans: Sequence[EntitySpan], roles: NameRoles) -> list[EntitySpan]:
    """Two model spans with only a space between them, the second opening with a lowercase
    particle ("Frankfurt" + "am Main Institute"), or with only a particle between them
    ("Frankfurt" am "Main", "Julie" d' "Heripon"), are one name: joined, with the label of
    the longer of those the model took on its own evidence, before the particle could be
    trimmed from an edge. A joined span is the rule's ("particle_join")."""
    out: list[EntitySpan] = []
    for span in sorted(spans, key=lambda s: (s.start, s.end)):
        if out and _particle_joins(text, out[-1], span, roles):
            out[-1] = _joined(out[-1], span)
            if len(out) > 1 and _particle_joins(text, out[-2], out[-1], roles):   # "Julie" "d' Heripon"
                out[-2:] = [_joined(out[-2], out[-1])]
            continue
        out.append(span)
    return out


def _particle_joins(text: str, last: EntitySpan, span: EntitySpan,
                    roles: NameRoles = DECLARED_ROLES) -> bool:
    """Whether two model spans are one name at a particle (see `_join_at_particles`); an
    elided particle tagged alone ("d" + "' Heripon") joins the name after it."""
    if not roles.covers(last) or not roles.covers(span) or last.end > span.start:
        return False
    between = text[last.end:span.start].strip(" \t")
    if not between:
        first = _TOKEN_RE.match(text, span.start, span.end)
        if first is not None and first.group() in NAME_PARTICLES \
                or text[last.start:last.end].rsplit(None, 1)[-1] in NAME_PARTICLES \
                or _elided_name(text, span.start, span.end):
            return True
    # A particle gap holds one particle or elision (five characters at most) between spaces.
    return len(between) <= 5 and _PARTICLE_GAP_RE.fullmatch(text, last.end, span.start) is not None \
        or last.end - last.start <= 2 \
        and _LONE_ELISION_RE.fullmatch(text, last.start, last.end) is not None \
        and _elided_name(text, last.start, span.end)


_LONE_ELISION_RE = re.compile(r"[dDlL]['’]?")


def _joined(last: EntitySpan, span: EntitySpan) -> EntitySpan:
    longer = max(last, span, key=lambda s: (s.score >= OWN_EVIDENCE, len(s)))
    return replace(last, end=span.end, label=longer.label, score=max(last.score, span.score),
                   decision_score=_max_or_none(last.decision_score, span.decision_score),
                   source=EntitySource.RULE.value, recognizer=PARTICLE_JOIN_RULE)


def _max_or_none(a, b):
    values = [v for v in (a, b) if v is not None]
    return max(values) if values else None


def _near(strong: Sequence[EntitySpan], starts: list[int], span: EntitySpan) -> Sequence[EntitySpan]:
    """The strong spans just before and just after a span (by start)."""
    i = bisect.bisect_left(starts, span.start)
    return strong[max(0, i - 1):i + 1]
