"""Postal addresses: a house number with a street name and type, in English and compound forms."""
from __future__ import annotations

import bisect
import re
from typing import Iterable, Optional

from larvatus.transforms.recognizers.base import (
    DIGIT_RE, H, LINE_BREAK_RE, SCORE_FORMAT, lines_with, with_digit)
from larvatus.transforms.recognizers.line_hints import (
    digit_run_starts, finditer_at, skip_back, word_starts_ending_at)
from larvatus.transforms.recognizers.postal import recognize_postcodes
from larvatus.transforms.recognizers.registry import Kind, PatternSettings
from larvatus.transforms.records import EntitySpan

# ----------------------------------------------------------------------------- ADDRESS

# Street types, as words of their own after the street's name ("431 Zachary Falls"): the
# USPS Publication 28 suffixes (full forms and the common abbreviations) plus British ones.
_STREET_TYPES = (
    "alley|aly|annex|arcade|avenue|ave|av|bayou|beach|bend|bluffs?|bottom|boulevard|blvd|"
    "branch|bridge|brooks?|burgs?|bypass|camp|canyon|cape|causeway|cent(?:er|re)s?|ctr|"
    "circles?|cir|cliffs?|close|club|commons?|corners?|course|courts?|ct|coves?|creek|"
    "crescent|cres|crest|crossing|crossroads?|curve|dale|dam|divide|drives?|dr|drove|"
    "estates?|expressway|expy|extensions?|falls?|ferry|fields?|flats?|fords?|forest|"
    "forges?|forks?|fort|freeway|fwy|gardens?|gateway|glens?|greens?|groves?|harbou?rs?|"
    "haven|heights|hts|highway|hwy|hills?|hollow|inlet|islands?|isle|junctions?|keys?|"
    "knolls?|lakes?|land|landing|lane|ln|lights?|loaf|locks?|lodge|loop|mall|manors?|"
    "meadows?|mews|mills?|mission|motorway|mount|mountains?|neck|orchard|oval|overpass|"
    "parade|parks?|parkways?|pkwy|pass|passage|path|pike|pines?|place|pl|plains?|plaza|"
    "points?|ports?|prairie|radial|ramp|ranch|rapids?|rest|ridges?|rise|rivers?|roads?|rd|"
    "route|row|rue|run|shoals?|shores?|skyway|springs?|spurs?|squares?|sq|stations?|stravenue|"
    "stream|streets?|st|summit|terrace|ter|throughway|trace|track|trafficway|trail|trl|"
    "trailer|tunnel|turnpike|underpass|unions?|valleys?|via|viaduct|views?|villages?|ville|"
    "vista|walks?|wall|ways?|wells?|wharf|wynd|yard")
# Street types written as the end of one word ("Mellestraat", "Fedor-Putz-Straße"): Dutch
# and German (with Austrian and Swiss forms).
_STREET_ENDINGS = (
    "straat|singel|baan|hof|dreef|boulevard|laan|plein|weg|gracht|kade|park|steeg|pad|dijk|"
    "markt|wal|haven|veld|erf|hoven|plantsoen|zijde|burgwal|"
    "straße|strasse|str\\.|gasse|ring|allee|platz|damm|ufer|chaussee|steig|pfad|gärten|berg|"
    "feld|graben|zeile|kamp|stieg")
# English words that end like a street ("during 3", "spring 2020", "bring 2").
_NOT_STREET_COMPOUNDS_RE = re.compile(
    r"(?:.*[aeiouy]ring|string|spring|offspring|bring|wring|earring|keyring|hamstring|"
    r"ballpark|carpark|theme-?park|iceberg|weg|i?pad|notepad|keypad|touchpad|trackpad|launchpad|"
    r"scratchpad|lily-?pad|helipad|numpad)\Z", re.IGNORECASE)
# Street types that are also common English words: after a number they need a capitalised
# street name ("12 Place Vendôme", but not "4 square metres", "2 via email").
_AMBIGUOUS_PREFIXES = frozenset(
    "place square passage route via cours voie plaza largo corso paseo av. bd c/".split())
# Abbreviated street types need a capitalised name too ("12 High St", not "5 new cases dr").
_ABBREVIATED_TYPES = frozenset(
    "aly ave av blvd ctr cir ct cres dr expy fwy hts hwy ln pkwy pl rd sq st ter trl".split()
    # and "via" and "rue" (faker's and USPS's "6686 Cooke Via", "1968 Lutz Rue"; not "2
    # copies via post").
    + ["via", "rue"])
# French, Spanish, Italian and Portuguese street types, written before the name.
_STREET_PREFIXES = (
    "rue|avenue|av\\.|boulevard|bd|chemin|allée|allee|impasse|place|quai|route|cours|passage|"
    "square|voie|sentier|faubourg|parvis|esplanade|calle|c/|avenida|avda\\.|paseo|plaza|"
    "carrer|via|viale|piazza|corso|largo|rua|travessa")
_UNIT = r"(?:apt\.?|apartment|suite|ste\.?|unit|flat|studio|floor|fl\.?|room|rm\.?|#)"
_H_CHAR_RE = re.compile(H)
_HOUSE_NUMBER = r"[0-9]{1,6}[A-Za-z]?(?:[/-][0-9]{1,4}[A-Za-z]?)?"
_NAME_WORD = r"[^\W\d_][\w'’.-]*"
# Words that, between a number and a street type, mean a quantity rather than an address
# ("10 minute walk", "3 main branches of the bank", "2 of the parks").
_NOT_STREET_NAMES = frozenset(
    "a an the of and or to in on at for with by from per about over under this that these "
    "those my your our their his her its minute minutes min mins hour hours day days week "
    "weeks month months year years mile miles km kilometres kilometers metre metres meter "
    "meters foot feet yard yards percent people person persons times time more less other "
    "new-found".split())
_ADDRESS_EN_RE = re.compile(
    rf"(?=[0-9A-Za-z])(?<![\w./-])"
    rf"(?:(?P<unit_first>{_UNIT}{H}*[0-9]{{1,5}}[A-Za-z]?,?{H}+)(?P<no_number>)"
    rf"|(?P<number>{_HOUSE_NUMBER}),?{H}+)"
    rf"(?P<name>{_NAME_WORD}(?:{H}+{_NAME_WORD}){{0,2}}?){H}+"
    rf"(?P<type>(?:{_STREET_TYPES}))\.?(?!\w)"
    rf"(?P<unit>,?{H}+{_UNIT}{H}*[0-9]{{1,5}}[A-Za-z]?(?!\w))?",
    re.IGNORECASE)
# Where an English address can start: at a house number, or at a unit word ending right
# before the horizontal space (if any) and the number after it ("Flat 34, ...").
_UNIT_AT_END_RE = re.compile(rf"(?=[0-9A-Za-z])(?<![\w./-]){_UNIT}\Z", re.IGNORECASE)
_LONGEST_UNIT = len("apartment")


def _english_address_starts(text: str) -> list[int]:
    """Every position where `_ADDRESS_EN_RE` can match, ascending: the start of each digit
    run, and of each unit word ending where the horizontal space before a run begins
    ("Flat 34")."""
    starts = []
    for run in digit_run_starts(text):
        space = skip_back(text, run, _H_CHAR_RE)
        starts += word_starts_ending_at(text, space, _UNIT_AT_END_RE, _LONGEST_UNIT)
        starts.append(run)
    return sorted(set(starts))


_PARTICLES = r"(?:van|von|de|der|den|ten|ter|zu|zum|zur|am|an|auf|im|la|le|di|da|del)"
_ADDRESS_COMPOUND_RE = re.compile(
    rf"(?=[^\W\d_])(?<![\w'’.-])"
    rf"(?:[\w'’.-]+(?:{H}+{_PARTICLES})+{H}+)?"
    rf"(?P<street>[\w'’-]+(?:{_STREET_ENDINGS}))(?!\w){H}*"
    rf"(?P<number>{_HOUSE_NUMBER})(?:{H}*[-/]{H}*[0-9]{{1,4}}[A-Za-z]?)?(?!\w)",
    re.IGNORECASE)
# The compound pattern starts at every letter and backtracks through each word against the
# street endings: it cost 40% of the pattern stage. A match needs a street ending, then
# horizontal space, then a digit (the ending's `(?!\w)` rules out a digit right after it),
# and cannot cross a line break; so it runs only on the lines where such a spot exists.
_COMPOUND_HINT_RE = with_digit(re.compile(rf"(?:[^\W\d_]|\.){H}+[0-9]"))
_STREET_ENDING_AT_END_RE = re.compile(rf"(?:{_STREET_ENDINGS})\Z", re.IGNORECASE)
_LONGEST_STREET_ENDING = max(len(e.replace("\\", "")) for e in _STREET_ENDINGS.split("|"))
# The street endings spelt backwards, tried once at the reversed end of a word: what
# `_STREET_ENDING_AT_END_RE` finds at that end (`re` matches character by character, in
# any case, either way), without trying every start before it.
_STREET_ENDING_REVERSED_RE = re.compile(
    "|".join(re.escape(e.replace("\\", "")[::-1]) for e in _STREET_ENDINGS.split("|")),
    re.IGNORECASE)


def _ends_in_street_ending(text: str, end: int) -> bool:
    """Whether `text[:end]` ends with a street ending, in any case."""
    tail = text[max(0, end - _LONGEST_STREET_ENDING):end]
    return _STREET_ENDING_REVERSED_RE.match(tail[::-1]) is not None


_LETTER_OR_DOT_RE = re.compile(r"[^\W\d_]|\.")


def _compound_hint_ends(text: str) -> Iterable[int]:
    """One past the start of each `_COMPOUND_HINT_RE` match, in order: found from the digit
    runs with horizontal space before them (rarer than the letters the hint opens with),
    each walked back over its space to a letter or "."."""
    for run in digit_run_starts(text):
        space = skip_back(text, run, _H_CHAR_RE)
        if space < run and space > 0 and _LETTER_OR_DOT_RE.match(text, space - 1):
            yield space


def _compound_address_matches(text: str) -> Iterable[re.Match]:
    """`_ADDRESS_COMPOUND_RE.finditer(text)`, searched only on the lines that hold a street
    ending followed by horizontal space and a digit (the same matches, in the same order)."""
    line_starts: Optional[list[int]] = None
    searched_to = -1
    for ending_end in _compound_hint_ends(text):
        if ending_end <= searched_to or not _ends_in_street_ending(text, ending_end):
            continue
        if line_starts is None:
            line_starts = [0] + [m.end() for m in LINE_BREAK_RE.finditer(text)]
        line = bisect.bisect_right(line_starts, ending_end - 1) - 1
        start = line_starts[line]
        end = line_starts[line + 1] - 1 if line + 1 < len(line_starts) else len(text)
        yield from _ADDRESS_COMPOUND_RE.finditer(text, start, end)
        searched_to = end


_ADDRESS_PREFIXED_RE = re.compile(
    rf"(?=[0-9])(?<![\w./-])(?P<number>{_HOUSE_NUMBER}(?:{H}?(?:bis|ter))?),?{H}+"
    rf"(?P<type>{_STREET_PREFIXES})(?!\w)"
    rf"(?P<name>(?:{H}+(?:de{H}+la|de{H}+l['’]|d['’]|du|des|de|del|della|do|da|la|le|les)"
    rf"(?!\w))?(?:{H}*{_NAME_WORD}){{1,3}})",
    re.IGNORECASE)
_NAME_STOP_RE = re.compile(
    r"(?i:\s+(?:et|and|is|est|à|a|in|on|the|le matin|près|near|but|mais|ou|or|where|qui|"
    r"which|who|to|for|pour|avec|with|from|de{H}+[0-9]))(?!\w)".replace("{H}", H))


def recognize_addresses(text: str, settings: PatternSettings) -> list[EntitySpan]:
    """Street addresses: a house number with a street name and a street type, on one line.

    English ("431 Zachary Falls Suite 621", "Flat 34, Deborah Island": USPS and British
    street types after the name), Dutch and German compounds ("Mellestraat 87",
    "Fedor-Putz-Straße 60/14", "Reinhild-van der Dussen-Allee 51"), and French, Spanish and
    Italian streets whose type comes first ("75, chemin de Joseph", "12 rue Bouvet").
    Any casing. A street type after a quantity ("10 minute walk") is not an address.
    Postcodes and P.O. boxes are ADDRESS spans too (`postal.recognize_postcodes`).
    """
    spans = []
    digit_lines = lines_with(DIGIT_RE, text)   # every address has a number
    for m in finditer_at(_ADDRESS_EN_RE, text, digit_lines, _english_address_starts(text)):
        words = m.group("name").split()
        if any(word.lower() in _NOT_STREET_NAMES for word in words):
            continue
        if m.group("type").lower() in _ABBREVIATED_TYPES and not words[0][0].isupper():
            continue
        spans.append(EntitySpan(m.start(), m.end(), "ADDRESS", SCORE_FORMAT))
    for m in _compound_address_matches(text):
        if _NOT_STREET_COMPOUNDS_RE.match(m.group("street")):
            continue
        spans.append(EntitySpan(m.start(), m.end(), "ADDRESS", SCORE_FORMAT))
    for m in finditer_at(_ADDRESS_PREFIXED_RE, text, digit_lines, digit_run_starts(text)):
        if m.group("type").lower() in _AMBIGUOUS_PREFIXES \
                and not m.group("name").lstrip()[:1].isupper():
            continue
        end = m.end()
        stop = _NAME_STOP_RE.search(text, m.start("name") + 1, end)
        if stop:
            end = stop.start()
        spans.append(EntitySpan(m.start(), end, "ADDRESS", SCORE_FORMAT))
    return spans + recognize_postcodes(text, spans)



KINDS = (
    Kind("ADDRESS", recognize_addresses, 2,
         "street addresses: 221B Baker Street, Hauptstraße 5, rue de la Paix 12, on one line; "
         "postcodes (M20 6RT, IL 62704, 80331 München, 1012 AB) and P.O. boxes",
         context="US ZIP: a state before it; continental postcodes: a town after them and an "
                 "address line (line start, after a comma, an address word or street)"),
)
