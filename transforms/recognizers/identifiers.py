"""Identifiers: national identity, tax and social security numbers, and cue-anchored reference codes."""
from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Callable, Iterable, Optional

from stdnum.be import nn as be_nn
from stdnum.de import idnr as de_idnr
from stdnum.es import dni as es_dni
from stdnum.es import nie as es_nie
from stdnum.fr import nir as fr_nir
from stdnum.gb import nhs as gb_nhs
from stdnum.ie import pps as ie_pps
from stdnum.it import codicefiscale as it_codicefiscale
from stdnum.nl import bsn as nl_bsn
from stdnum.pl import pesel as pl_pesel
from stdnum.us import ssn as us_ssn

from larvatus.transforms.recognizers.base import (
    DIGIT_RE, H, NUM_END, NUM_START, SCORE_CHECKSUM, SCORE_FORMAT, SCORE_VALIDATED, count_digits,
    cue_pattern, finditer_on_lines, line_window, lines_with)
from larvatus.transforms.recognizers.references import recognize_references
from larvatus.transforms.recognizers.registry import Kind, PatternSettings
from larvatus.transforms.records import EntitySpan

# ----------------------------------------------------------------------------- ID

_CUE_BEFORE = 40   # characters before a candidate searched for its cue word (same line)
_CUE_AFTER = 24


@dataclass(frozen=True)
class IdScheme:
    """One identifier scheme of the `ID` label: its name, candidate shape and validator (None:
    the shape is the check). A new scheme is one more row of `ID_SCHEMES`.

    With a `cue`, a candidate also needs that cue word nearby unless it fully matches
    `formatted`, the identifier's usual way of being written.
    """

    name: str
    shape: re.Pattern
    is_valid: Optional[Callable[[str], bool]]
    score: float = SCORE_CHECKSUM
    cue: Optional[re.Pattern] = None
    formatted: Optional[re.Pattern] = None
    # Searched only on the lines holding `_ID_HINT_RE` (`finditer_on_lines`); False: everywhere.
    hinted: bool = True

    def candidates(self, text: str,
                   hint_lines: Optional[list[tuple[int, int]]] = None) -> Iterable[re.Match]:
        """The shape's matches; `hint_lines`: `_ID_HINT_RE`'s lines, when already found."""
        if not self.hinted:
            return self.shape.finditer(text)
        return finditer_on_lines(self.shape, _ID_HINT_RE, text, hint_lines)


# Every identifier below but the codice fiscale (whose digits may all be written as
# letters) holds two digits, at most one space, dot or dash, and two digits.
_ID_HINT_RE = re.compile(r"[0-9][0-9][ .-]?[0-9]{2}")   # opens with a class: `re` scans for it


def _digits_shape(body: str) -> re.Pattern:
    return re.compile(NUM_START + body + NUM_END)


def _valid_ssn(candidate: str) -> bool:
    return us_ssn.is_valid(candidate.replace(" ", ""))


def _valid_codice_fiscale(candidate: str) -> bool:
    return any(ch.isdigit() for ch in candidate) and it_codicefiscale.is_valid(candidate)


# UK National Insurance numbers have no check digit (python-stdnum has no module for them):
# HMRC's allocation rules on the two prefix letters and the A-D suffix are the check.
_NINO_PREFIX = r"(?!BG|GB|KN|NK|NT|TN|ZZ)[A-CEGHJ-PR-TW-Z][A-CEGHJ-NPR-TW-Z]"
_NIR_GROUPS = ("[1-478]", "[0-9]{2}", "[0-9]{2}", "(?:[0-9]{2}|2[AB])", "[0-9]{3}", "[0-9]{3}",
               "[0-9]{2}")

ID_SCHEMES = (
    IdScheme("UK NHS number",   # 943 476 5919
             _digits_shape(r"[0-9]{3}([ -]?)[0-9]{3}\1[0-9]{4}"), gb_nhs.is_valid,
             cue=cue_pattern(r"NHS"), formatted=re.compile(r"[0-9]{3} [0-9]{3} [0-9]{4}")),
    IdScheme("US SSN",   # 536-90-4399
             _digits_shape(r"[0-9]{3}([ -]?)[0-9]{2}\1[0-9]{4}"), _valid_ssn, score=SCORE_VALIDATED,
             cue=cue_pattern(r"SSN|SS#|social[ -]security"),
             formatted=re.compile(r"[0-9]{3}-[0-9]{2}-[0-9]{4}")),
    IdScheme("UK NINO",   # AB 12 34 56 C
             re.compile(rf"(?=[A-Z])(?<!\w){_NINO_PREFIX}(?: ?[0-9]{{2}}){{3}} ?[A-D](?!\w)"), None,
             score=SCORE_FORMAT),
    IdScheme("ES DNI",   # 12345678Z
             re.compile(r"(?=[0-9])(?<!\w)[0-9]{8}-?[A-Z](?!\w)"), es_dni.is_valid),
    IdScheme("ES NIE",   # X1234567L
             re.compile(r"(?=[XYZ])(?<!\w)[XYZ]-?[0-9]{7}-?[A-Z](?!\w)"), es_nie.is_valid),
    IdScheme("NL BSN",   # 123456782
             _digits_shape(r"(?:[0-9]{9}|[0-9]{4}\.[0-9]{2}\.[0-9]{3})"), nl_bsn.is_valid,
             cue=cue_pattern(r"BSN|burgerservicenummer|sofi-?nummer")),
    IdScheme("FR NIR",   # social security number, 2 95 10 99 126 111 93
             _digits_shape(" ?".join(_NIR_GROUPS)), fr_nir.is_valid,
             cue=cue_pattern(r"NIR|INSEE|s[ée]curit[ée] sociale|num[ée]ro de s[ée]cu|"
                             r"social security"),
             formatted=re.compile(" ".join(_NIR_GROUPS))),
    IdScheme("IT codice fiscale",   # RCCMNL83S18D969H
             re.compile(r"(?=[A-Z])(?<!\w)[A-Z]{6}[0-9LMNP-V]{2}[ABCDEHLMPRST][0-9LMNP-V]{2}[A-Z]"
                        r"[0-9LMNP-V]{3}[A-Z](?!\w)"), _valid_codice_fiscale, hinted=False),
    IdScheme("PL PESEL",   # 44051401359
             _digits_shape(r"[0-9]{11}"), pl_pesel.is_valid, cue=cue_pattern(r"PESEL")),
    IdScheme("DE tax id",   # Steuer-IdNr, 36 574 261 809
             _digits_shape(r"[0-9]{2}( ?)[0-9]{3}\1[0-9]{3}\1[0-9]{3}"), de_idnr.is_valid,
             cue=cue_pattern(r"steuer-?id|steuer-?identifikationsnummer|identifikationsnummer|"
                             r"IdNr|tax[ -]id(?:entification)?|TIN")),
    IdScheme("IE PPS number",   # 6433435F
             re.compile(r"(?=[0-9])(?<!\w)[0-9]{7}[A-W][A-IW]?(?!\w)"), ie_pps.is_valid,
             cue=cue_pattern(r"PPSN?|personal public service")),
    IdScheme("BE national number",   # 85.07.30-033.28
             _digits_shape(r"[0-9]{2}\.[0-9]{2}\.[0-9]{2}-[0-9]{3}\.[0-9]{2}"), be_nn.is_valid),
    IdScheme("passport number",   # US/UK 123456789, ES AAA123456, IT YA1234567, IN A1234567
             re.compile(r"(?=[A-Z0-9])(?<![\w-])[A-Z]{0,3}[0-9]{6,9}(?![\w-])"), None,
             score=SCORE_FORMAT,
             cue=cue_pattern(r"passports?|passeport|reisepass|pasaporte|passaporto|paspoort|"
                             r"paszport|pass-?nr\.?|passnummer")),
)


# "+1 503 837 8935" is a phone number, not an NHS number in its usual groups
_PHONE_PREFIX_RE = re.compile(r"(?:\+|\b00)[0-9]{1,3}[ .-]?(?:\(0\)[ ]?)?\Z")


def _has_cue(text: str, start: int, end: int, cue: re.Pattern) -> bool:
    """Whether the cue occurs shortly before or after [start, end) on the same line."""
    ws, we = line_window(text, start, end, _CUE_BEFORE, _CUE_AFTER)
    return bool(cue.search(text, ws, start) or cue.search(text, end, we))


def recognize_ids(text: str, settings: PatternSettings) -> list[EntitySpan]:
    """National identifiers with a check digit or a strict format, validated by python-stdnum.

    UK NHS, US SSN, UK NINO, Spanish DNI and NIE, Dutch BSN, French NIR, Italian codice
    fiscale, Polish PESEL, German tax id, Irish PPS and Belgian national number. Digit
    strings that other numbers often resemble (BSN, PESEL, German tax id, PPS; NHS, SSN
    and NIR unless written in their usual groups) also need a cue word such as "NHS",
    "SSN" or "BSN" on the same line.
    """
    spans = set()
    hint_lines = lines_with(_ID_HINT_RE, text)   # once for every hinted kind
    for kind in ID_SCHEMES:
        for m in kind.candidates(text, hint_lines):
            candidate = m.group()
            if kind.is_valid is not None and not kind.is_valid(candidate):
                continue
            has_cue = kind.cue is not None and _has_cue(text, m.start(), m.end(), kind.cue)
            formatted = kind.formatted is not None and kind.formatted.fullmatch(candidate) \
                and not _PHONE_PREFIX_RE.search(text, max(0, m.start() - 10), m.start())
            if kind.cue is not None and not (has_cue or formatted):
                continue
            spans.add(EntitySpan(m.start(), m.end(), "ID", kind.score))
    return list(spans)


# ----------------------------------------------------------------------------- CODE

_CODE_CUES = (
    r"application|applic\.|case|file|claim|account|acct\.?|a/c|patient|mrn|ref\.?|reference|"
    r"docket|invoice|order|ticket|policy|member(?:ship)?|customer|client|record|registration|"
    r"reg\.?|booking|reservation|contract|matter|complaint|appeal|petition|passport|"
    r"licen[cs]e|employee|staff|student|badge|action|id")
_CODE_CONNECTORS = r"no\.?|nr\.?|n[°º]\.?|num(?:ber)?\.?|id\.?|ref(?:erence)?\.?|code"
_CODE_RE = re.compile(
    rf"(?=[A-FILMOPRSTa-filmoprst])(?<![\w-])(?:{_CODE_CUES})(?!\w)"
    rf"(?:{H}*\(?{H}*(?:{_CODE_CONNECTORS})(?!\w))?{H}*[:#]?{H}*#?"
    r"(?P<code>(?=[A-Za-z0-9/.:-]*[0-9])[A-Za-z0-9]+(?:[/.:-][A-Za-z0-9]+)*)(?!\w)",
    re.IGNORECASE)
_CODE_TAIL_RE = re.compile(rf"{H}([A-Za-z0-9]{{1,6}})(?![\w/.:-]\w|\w)")
_YEAR_RE = re.compile(r"(?:19|20)[0-9]{2}")


def recognize_codes(text: str, settings: PatternSettings) -> list[EntitySpan]:
    """Case, file, application, patient, account and similar references after a cue word.

    The span is the code alone: at least three digits (four when it is only digits),
    not a bare year, with up to three short groups that bear a digit after it
    ("202201873 B4", "943 476 5919"). "case 3", "order 66", "student 384", "licence 2.0"
    and "file 2019" are not codes.
    """
    spans = []
    for m in finditer_on_lines(_CODE_RE, DIGIT_RE, text):   # a code holds a digit
        code = m.group("code")
        if count_digits(code) < (4 if code.isdigit() else 3) or _YEAR_RE.fullmatch(code):
            continue
        end = m.end("code")
        for _ in range(3):
            tail = _CODE_TAIL_RE.match(text, end)
            if not tail:
                break
            group = tail.group(1)
            if not any(ch.isdigit() for ch in group) or (group.isdigit() and len(group) < 3):
                break
            end = tail.end()
        spans.append(EntitySpan(m.start("code"), end, "CODE", SCORE_FORMAT))
    return spans + recognize_references(text)   # sort codes, case and plot numbers



KINDS = (
    Kind("ID", recognize_ids, 0,
         "national identity, tax and social security numbers (one row per scheme in ID_SCHEMES)",
         validation="each scheme's check digit (python-stdnum) or allocation rules",
         context="per scheme: weak digit strings need a cue word (NHS, SSN, BSN, PESEL, ...)"),
    Kind("CODE", recognize_codes, 2,
         "case, file, account, patient, booking and similar references after a cue word",
         context="a cue word before the code (case no., file, patient, invoice, ...)"),
)
