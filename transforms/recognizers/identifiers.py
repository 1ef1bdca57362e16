"""Identifiers: national identity, tax and social security numbers, and cue-anchored reference codes."""
from __future__ import annotations

import datetime
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
from stdnum import luhn
from stdnum.au import abn as au_abn
from stdnum.au import acn as au_acn
from stdnum.au import tfn as au_tfn
from stdnum.ca import sin as ca_sin
from stdnum.de import stnr as de_stnr
from stdnum.fi import hetu as fi_hetu
from stdnum.in_ import aadhaar as in_aadhaar
from stdnum.kr import rrn as kr_rrn
from stdnum.se import personnummer as se_personnummer
from stdnum.th import pin as th_pin
from stdnum.tr import tckimlik as tr_tckimlik
from stdnum.us import itin as us_itin
from stdnum.us import ssn as us_ssn
from stdnum.za import idnr as za_idnr

from larvatus.transforms.recognizers.base import (
    DIGIT_RE, H, NUM_END, NUM_START, SCORE_CHECKSUM, SCORE_FORMAT, SCORE_VALIDATED, count_digits,
    cue_pattern, finditer_on_lines, line_window, lines_with, longest_number, with_digit)
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
    # The fewest digits every match holds in one number (`longest_number`): a text whose
    # longest number holds fewer has no candidate.
    min_digits: int = 0
    # Searched only on the lines holding this hint instead (every match holds one).
    hint: Optional[re.Pattern] = None

    def candidates(self, text: str,
                   hint_lines: Optional[list[tuple[int, int]]] = None) -> Iterable[re.Match]:
        """The shape's matches; `hint_lines`: `_ID_HINT_RE`'s lines, when already found."""
        if self.hint is not None:
            return finditer_on_lines(self.shape, self.hint, text)
        if not self.hinted:
            return self.shape.finditer(text)
        return finditer_on_lines(self.shape, _ID_HINT_RE, text, hint_lines)


# Every identifier below but the codice fiscale (whose digits may all be written as
# letters) holds two digits, at most one space, dot or dash, and two digits.
_ID_HINT_RE = with_digit(re.compile(r"[0-9][0-9][ .-]?[0-9]{2}"))   # opens with a class: `re` scans for it


def _digits_shape(body: str) -> re.Pattern:
    return re.compile(NUM_START + body + NUM_END)


def _valid_ssn(candidate: str) -> bool:
    return us_ssn.is_valid(candidate.replace(" ", ""))


def _valid_pesel_context_free(candidate: str) -> bool:
    """A PESEL (checksum and birth date, python-stdnum) of someone born 1900 to today: the
    1800s, 2100s and 2200s encodings are left to numbers after a cue."""
    if not pl_pesel.is_valid(candidate):
        return False
    return 1900 <= pl_pesel.get_birth_date(candidate).year \
        and pl_pesel.get_birth_date(candidate) <= datetime.date.today()


def _icao_check_digit(serial: str) -> int:
    """ICAO 9303 check digit: digits as themselves, A-Z as 10-35, weights 7,3,1, mod 10."""
    values = (int(ch) if ch.isdigit() else ord(ch) - ord("A") + 10 for ch in serial)
    return sum(v * w for v, w in zip(values, (7, 3, 1) * 4)) % 10


def _valid_de_document(candidate: str) -> bool:
    """German passport or identity card number: a 9-character serial in the document
    alphabet, holding a digit, and where a tenth character follows, its ICAO check digit."""
    serial = candidate[:9]
    if not any(ch.isdigit() for ch in serial[1:]):
        return False
    return len(candidate) == 9 or _icao_check_digit(serial) == int(candidate[9])


def _valid_codice_fiscale(candidate: str) -> bool:
    return any(ch.isdigit() for ch in candidate) and it_codicefiscale.is_valid(candidate)


def _digit_sum(number: int) -> int:
    return sum(int(d) for d in str(number))


def _valid_rvnr(candidate: str) -> bool:
    """German pension insurance number (Rentenversicherungsnummer), by the published check:
    the letter as its two-digit alphabet position, weights 2,1,2,5,7,1,2,1,2,1,2,1, digit sums,
    mod 10; the birth date DDMMYY must be a day of a month."""
    compact = candidate.replace(" ", "")
    day, month = int(compact[2:4]), int(compact[4:6])
    if not (1 <= day <= 31 and 1 <= month <= 12):
        return False
    digits = compact[:8] + f"{ord(compact[8]) - ord('A') + 1:02d}" + compact[9:11]
    total = sum(_digit_sum(int(d) * w) for d, w in zip(digits, (2, 1, 2, 5, 7, 1, 2, 1, 2, 1, 2, 1)))
    return total % 10 == int(compact[11])


def _valid_npi(candidate: str) -> bool:
    """US National Provider Identifier: Luhn over the number prefixed with 80840."""
    return luhn.is_valid("80840" + candidate)


def _valid_medicare(candidate: str) -> bool:
    """Australian Medicare card number: weights 1,3,7,9,1,3,7,9 on the first eight digits,
    mod 10, give the ninth."""
    digits = [int(d) for d in candidate if d.isdigit()]
    return sum(d * w for d, w in zip(digits, (1, 3, 7, 9, 1, 3, 7, 9))) % 10 == digits[8]


_NRIC_LETTERS = {"S": "JZIHGFEDCBA", "T": "JZIHGFEDCBA", "F": "XWUTRQPNMLK", "G": "XWUTRQPNMLK"}


def _valid_nric(candidate: str) -> bool:
    """Singapore NRIC/FIN (S, T, F, G series): weights 2,7,6,5,4,3,2, +4 for T and G, mod 11
    picks the check letter."""
    total = sum(int(d) * w for d, w in zip(candidate[1:8], (2, 7, 6, 5, 4, 3, 2)))
    total += 4 if candidate[0] in "TG" else 0
    return _NRIC_LETTERS[candidate[0]][total % 11] == candidate[8]


def _valid_dea(candidate: str) -> bool:
    """US DEA registration number (medical licence): (d1+d3+d5) + 2(d2+d4+d6) ends in d7."""
    d = [int(c) for c in candidate[2:]]
    return (d[0] + d[2] + d[4] + 2 * (d[1] + d[3] + d[5])) % 10 == d[6]


def _valid_uk_driving_licence(candidate: str) -> bool:
    """UK driving licence: the month (51-62 for women) and day of birth in digits 7-10 exist."""
    month, day = int(candidate[6:8]), int(candidate[8:10])
    return (1 <= month <= 12 or 51 <= month <= 62) and 1 <= day <= 31


def _stdnum(module) -> Callable[[str], bool]:
    """python-stdnum's validator of `module`, on the candidate with spaces removed."""
    return lambda candidate: module.is_valid(candidate.replace(" ", ""))


# UK National Insurance numbers have no check digit (python-stdnum has no module for them):
# HMRC's allocation rules on the two prefix letters and the A-D suffix are the check.
_NINO_PREFIX = r"(?!BG|GB|KN|NK|NT|TN|ZZ)[A-CEGHJ-PR-TW-Z][A-CEGHJ-NPR-TW-Z]"
_NIR_GROUPS = ("[1-478]", "[0-9]{2}", "[0-9]{2}", "(?:[0-9]{2}|2[AB])", "[0-9]{3}", "[0-9]{3}",
               "[0-9]{2}")

# NHS numbers in their usual 3-3-4 groups are found without a cue. Written with dashes the
# groups are also a North American phone number's, so only where the second group cannot be
# a NANP exchange (it opens with 0 or 1): 401-023-2137.
_NHS_FORMATTED = re.compile(r"[0-9]{3} [0-9]{3} [0-9]{4}|[0-9]{3}-[01][0-9]{2}-[0-9]{4}")

ID_SCHEMES = (
    IdScheme("UK NHS number",   # 943 476 5919, 401-023-2137
             _digits_shape(r"[0-9]{3}([ -]?)[0-9]{3}\1[0-9]{4}"), _stdnum(gb_nhs),
             cue=cue_pattern(r"NHS"), formatted=_NHS_FORMATTED, min_digits=10),
    IdScheme("US SSN",   # 536-90-4399
             _digits_shape(r"[0-9]{3}([ -]?)[0-9]{2}\1[0-9]{4}"), _valid_ssn, score=SCORE_VALIDATED,
             cue=cue_pattern(r"SSN|SS#|social[ -]security"),
             formatted=re.compile(r"[0-9]{3}-[0-9]{2}-[0-9]{4}"), min_digits=9),
    IdScheme("UK NINO",   # AB 12 34 56 C
             re.compile(rf"(?=[A-Z])(?<!\w){_NINO_PREFIX}(?: ?[0-9]{{2}}){{3}} ?[A-D](?!\w)"), None,
             score=SCORE_FORMAT, min_digits=6),
    IdScheme("UK NINO, lower case",   # hh 01 02 03 d, after a cue
             re.compile(rf"(?=[a-z])(?<!\w)(?i:{_NINO_PREFIX})(?: ?[0-9]{{2}}){{3}} ?[a-d](?!\w)"),
             lambda candidate: candidate[:2].islower(), score=SCORE_FORMAT,
             cue=cue_pattern(r"NI|NINO|national insurance"), min_digits=6),
    IdScheme("ES DNI",   # 12345678Z
             re.compile(r"(?=[0-9])(?<!\w)[0-9]{8}-?[A-Za-z](?!\w)"), es_dni.is_valid,
             min_digits=8),
    IdScheme("ES NIE",   # X1234567L
             re.compile(r"(?=[XYZ])(?<!\w)[XYZ]-?[0-9]{7}-?[A-Z](?!\w)"), es_nie.is_valid,
             min_digits=7),
    IdScheme("NL BSN",   # 123456782
             _digits_shape(r"(?:[0-9]{9}|[0-9]{4}\.[0-9]{2}\.[0-9]{3})"), nl_bsn.is_valid,
             cue=cue_pattern(r"BSN|burgerservicenummer|sofi-?nummer"), min_digits=9),
    IdScheme("FR NIR",   # social security number, 2 95 10 99 126 111 93
             _digits_shape(" ?".join(_NIR_GROUPS)), fr_nir.is_valid,
             cue=cue_pattern(r"NIR|INSEE|s[ée]curit[ée] sociale|num[ée]ro de s[ée]cu|"
                             r"social security"),
             formatted=re.compile(" ".join(_NIR_GROUPS)), min_digits=8),
    IdScheme("IT codice fiscale",   # RCCMNL83S18D969H
             re.compile(r"(?=[A-Z])(?<!\w)[A-Z]{6}[0-9LMNP-V]{2}[ABCDEHLMPRST][0-9LMNP-V]{2}[A-Z]"
                        r"[0-9LMNP-V]{3}[A-Z](?!\w)"), _valid_codice_fiscale,
             hint=re.compile(r"[A-Z][A-Z]{5}[0-9LMNP-V]{2}[ABCDEHLMPRST][0-9LMNP-V]{2}[A-Z]")),
    IdScheme("PL PESEL",   # 44051401359: checksum and a birth date from 1900 to today
             _digits_shape(r"[0-9]{11}"), _valid_pesel_context_free, min_digits=11),
    IdScheme("PL PESEL, any century",   # 1800s, 2100s and 2200s encodings, after a cue
             _digits_shape(r"[0-9]{11}"), pl_pesel.is_valid, cue=cue_pattern(r"PESEL"),
             min_digits=11),
    IdScheme("DE passport or identity card number",   # C01X00T47, T220001293 (ICAO check digit)
             re.compile(r"(?=[CFGHJKLMNPRTVWXYZ])(?<![\w-])[CFGHJKLMNPRTVWXYZ]"
                        r"[0-9CFGHJKLMNPRTVWXYZ]{8}[0-9]?(?![\w-])"), _valid_de_document,
             cue=cue_pattern(r"reisepass|personalausweis|ausweis|ausweisnummer|"
                             r"personalausweisnummer|passnummer|pass-?nr\.?|passports?|"
                             r"ID card|identity card|Dokumentennummer|document (?:no|number)"),
             hint=re.compile(r"[CFGHJKLMNPRTVWXYZ][0-9CFGHJKLMNPRTVWXYZ]{8}")),
    IdScheme("DE tax id",   # Steuer-IdNr, 36 574 261 809
             _digits_shape(r"[0-9]{2}( ?)[0-9]{3}\1[0-9]{3}\1[0-9]{3}"), de_idnr.is_valid,
             cue=cue_pattern(r"steuer-?id|steuer-?identifikationsnummer|identifikationsnummer|"
                             r"IdNr|tax[ -]id(?:entification)?|TIN"), min_digits=11),
    IdScheme("IE PPS number",   # 6433435F
             re.compile(r"(?=[0-9])(?<!\w)[0-9]{7}[A-W][A-IW]?(?!\w)"), ie_pps.is_valid,
             cue=cue_pattern(r"PPSN?|personal public service"), min_digits=7),
    IdScheme("BE national number",   # 85.07.30-033.28
             _digits_shape(r"[0-9]{2}\.[0-9]{2}\.[0-9]{2}-[0-9]{3}\.[0-9]{2}"), be_nn.is_valid,
             min_digits=11),
    IdScheme("passport number",   # US/UK 123456789, ES AAA123456, IT YA1234567, IN A1234567
             re.compile(r"(?=[A-Z0-9])(?<![\w-])[A-Z]{0,3}[0-9]{6,9}(?![\w-])"), None,
             score=SCORE_FORMAT,
             cue=cue_pattern(r"passports?|passeport|reisepass|pasaporte|passaporto|paspoort|"
                             r"paszport|pass-?nr\.?|passnummer"), min_digits=6),
)


# National identity, tax, health and licence numbers. Context-free where a check digit, a date
# and a distinctive shape together make chance matches rare; with a `cue` otherwise.
_ID_CUE = r"ID|identity|identification|ID card"
_NATIONAL_SCHEMES = (
    IdScheme("KR resident registration number",   # 971013-9019902
             _digits_shape(r"[0-9]{6}(-?)[0-9]{7}"), _stdnum(kr_rrn),
             cue=cue_pattern(r"RRN|resident registration|주민등록번호|주민번호"),
             formatted=re.compile(r"[0-9]{6}-[0-9]{7}"), min_digits=13),
    IdScheme("TR T.C. Kimlik No",   # 10000000146, two check digits
             _digits_shape(r"[1-9][0-9]{10}"), tr_tckimlik.is_valid, min_digits=11),
    IdScheme("TH personal ID",   # 1-2345-45678-78-1
             _digits_shape(r"[1-8](-?)[0-9]{4}\1[0-9]{5}\1[0-9]{2}\1[0-9]"), th_pin.is_valid,
             cue=cue_pattern(_ID_CUE + r"|Thai|citizen|บัตรประชาชน|เลขประจำตัวประชาชน"),
             formatted=re.compile(r"[0-9]-[0-9]{4}-[0-9]{5}-[0-9]{2}-[0-9]"), min_digits=13),
    IdScheme("ZA identity number",   # 7503305044089: birth date, citizenship, Luhn
             _digits_shape(r"[0-9]{6}( ?)[0-9]{4}\1[0-9]{3}"), _stdnum(za_idnr), min_digits=13),
    IdScheme("SE personnummer",   # 880320-0016, 19880320-0016
             _digits_shape(r"(?:19|20)?[0-9]{6}[-+]?[0-9]{4}"), se_personnummer.is_valid,
             cue=cue_pattern(_ID_CUE + r"|personnummer|personnr|person(?:al)? (?:identity )?number|"
                             r"samordningsnummer"),
             formatted=re.compile(r"(?:19|20)[0-9]{6}-[0-9]{4}"), min_digits=10),
    IdScheme("FI HETU",   # 131052-308T: birth date, century sign, check character
             re.compile(r"(?=[0-9])(?<!\w)[0-9]{6}[-+A-FU-Y][0-9]{3}[0-9A-Y](?!\w)"),
             fi_hetu.is_valid, min_digits=6),
    IdScheme("IN Aadhaar",   # 2341 2341 2346 (Verhoeff)
             _digits_shape(r"[2-9][0-9]{3}( ?)[0-9]{4}\1[0-9]{4}"), _stdnum(in_aadhaar),
             cue=cue_pattern(r"aadhaa?r|UIDAI|UID|आधार"), min_digits=12),
    IdScheme("CA social insurance number",   # 046 454 286 (Luhn)
             _digits_shape(r"[0-9]{3}([ -]?)[0-9]{3}\1[0-9]{3}"), _stdnum(ca_sin),
             cue=cue_pattern(r"SIN|social insurance|NAS|assurance sociale"), min_digits=9),
    IdScheme("DE pension insurance number",   # 15 070649 C 103 (Rentenversicherungsnummer)
             re.compile(r"(?=[0-9])(?<!\w)[0-9]{2}( ?)[0-9]{6}\1[A-Z]\1[0-9]{3}(?!\w)"),
             _valid_rvnr, min_digits=8),
    IdScheme("DE tax number",   # Steuernummer 181/815/08155
             _digits_shape(r"(?:[0-9]{2,3}/[0-9]{3,4}/[0-9]{4,5}|[0-9]{10,13})"),
             de_stnr.is_valid,
             cue=cue_pattern(r"Steuernummer|St\.?-?Nr\.?|StNr|tax (?:number|no)"), min_digits=9),
    IdScheme("US ITIN",   # 912-71-1234
             _digits_shape(r"9[0-9]{2}([ -]?)[5-9][0-9]\1[0-9]{4}"), _stdnum(us_itin),
             cue=cue_pattern(r"ITIN|taxpayer identification|tax ID"),
             formatted=re.compile(r"[0-9]{3}-[0-9]{2}-[0-9]{4}"), min_digits=9),
    IdScheme("US NPI",   # 1234567893 (Luhn after 80840)
             _digits_shape(r"[12][0-9]{9}"), _valid_npi,
             cue=cue_pattern(r"NPI|national provider|provider (?:id|number)"), min_digits=10),
    IdScheme("US Medicare beneficiary identifier",   # 1EG4-TE5-MK73
             re.compile(r"(?=[1-9])(?<![\w-])[1-9](?:[AC-HJKMNP-RT-Y][AC-HJKMNP-RT-Y0-9][0-9]){2}"
                        r"[AC-HJKMNP-RT-Y]{2}[0-9]{2}(?![\w-])|"
                        r"(?=[1-9])(?<![\w-])[1-9][AC-HJKMNP-RT-Y][AC-HJKMNP-RT-Y0-9][0-9]-"
                        r"[AC-HJKMNP-RT-Y][AC-HJKMNP-RT-Y0-9][0-9]-[AC-HJKMNP-RT-Y]{2}[0-9]{2}(?![\w-])"),
             None, score=SCORE_FORMAT, hint=with_digit(re.compile(r"[1-9][AC-HJKMNP-RT-Y]"))),
    IdScheme("AU tax file number",   # 123 456 782
             _digits_shape(r"[0-9]{3}( ?)[0-9]{3}\1[0-9]{2,3}"), _stdnum(au_tfn),
             cue=cue_pattern(r"TFN|tax file"), min_digits=8),
    IdScheme("AU business number",   # 51 824 753 556 (mod 89)
             _digits_shape(r"[0-9]{2}( ?)[0-9]{3}\1[0-9]{3}\1[0-9]{3}"), _stdnum(au_abn),
             cue=cue_pattern(r"ABN|business number"),
             formatted=re.compile(r"[0-9]{2} [0-9]{3} [0-9]{3} [0-9]{3}"), min_digits=11),
    IdScheme("AU company number",   # 004 085 616
             _digits_shape(r"[0-9]{3}( ?)[0-9]{3}\1[0-9]{3}"), _stdnum(au_acn),
             cue=cue_pattern(r"ACN|company number"), min_digits=9),
    IdScheme("AU Medicare number",   # 2123 45670 1
             _digits_shape(r"[2-6][0-9]{3}( ?)[0-9]{5}\1[0-9]"), _valid_medicare,
             cue=cue_pattern(r"medicare"), min_digits=10),
    IdScheme("PH taxpayer identification number",   # 123-456-789-000, no check digit
             _digits_shape(r"[0-9]{3}-[0-9]{3}-[0-9]{3}(?:-[0-9]{3,5})?"), None,
             score=SCORE_FORMAT, cue=cue_pattern(r"TIN|taxpayer identification|BIR"), min_digits=9),
    IdScheme("SG NRIC/FIN",   # S1234567D
             re.compile(r"(?=[STFG])(?<!\w)[STFG][0-9]{7}[A-Z](?!\w)"), _valid_nric, min_digits=7),
    IdScheme("US DEA number (medical licence)",   # AB1234563
             re.compile(r"(?=[A-Z])(?<!\w)[ABCDEFGHJKLMPRSTUX][A-Z9][0-9]{7}(?!\w)"), _valid_dea,
             cue=cue_pattern(r"DEA|licen[cs]e|prescriber|registration"), min_digits=7),
    IdScheme("UK driving licence number",   # MORGA753116SM9IJ
             re.compile(r"(?=[A-Z9])(?<!\w)[A-Z9]{5}[0-9]{6}[A-Z9]{2}[0-9][A-Z]{2}(?!\w)"),
             _valid_uk_driving_licence, score=SCORE_FORMAT, min_digits=6),
    IdScheme("driving licence number",   # US D1234567, KR 11-12-345678-90, IN MH-1220110012345
             re.compile(r"(?=[A-Z]{0,3}[0-9][0-9A-Z-]*?[0-9]{2}-?[0-9]{2})(?<![\w-])[A-Z]{0,3}[0-9]"
                        r"(?:[0-9A-Z]|-(?=[0-9A-Z])){4,16}(?![\w-])"), None, score=SCORE_FORMAT,
             cue=cue_pattern(r"driver'?s? licen[cs]e|driving licen[cs]e|DL|licen[cs]e (?:no|number)|"
                             r"F[üu]hrerschein|permiso de conducir|carnet de conducir|"
                             r"patente(?: di guida)?|rijbewijs|운전면허"), min_digits=4),
)
ID_SCHEMES = ID_SCHEMES + _NATIONAL_SCHEMES


# "+1 503 837 8935" is a phone number, not an NHS number in its usual groups
_PHONE_PREFIX_RE = re.compile(r"(?:\+|\b00)[0-9]{1,3}[ .-]?(?:\(0\)[ ]?)?\Z")


def _joined(lines: list[tuple[int, int]]) -> list[tuple[int, int]]:
    """Consecutive lines as one range (fewer searches): the shapes neither hold nor look
    across a line break, so they match the same in a range of lines as line by line."""
    joined: list[tuple[int, int]] = []
    for start, end in lines:
        if joined and joined[-1][1] + 1 == start:
            joined[-1] = (joined[-1][0], end)
        else:
            joined.append((start, end))
    return joined


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
    spans: set[EntitySpan] = set()
    hint_lines: Optional[list[tuple[int, int]]] = None   # found once for every hinted kind
    longest = longest_number(text)
    for kind in ID_SCHEMES:
        if kind.min_digits > longest:
            continue
        if hint_lines is None and kind.hinted and kind.hint is None:
            hint_lines = _joined(lines_with(_ID_HINT_RE, text))
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
cue_pattern(_CODE_CUES)   # the CODE cue words, for `is_cue_word`
_CODE_CONNECTORS = r"no\.?|nr\.?|n[°º]\.?|num(?:ber)?\.?|id\.?|ref(?:erence)?\.?|code"
_CODE_RE = re.compile(
    rf"(?=[A-FILMOPRSTa-filmoprst])(?<![\w-])(?:{_CODE_CUES})(?!\w)"
    rf"(?:{H}*\(?{H}*(?:{_CODE_CONNECTORS})(?!\w))?{H}*[:#]?{H}*#?"
    r"(?P<code>(?=[A-Za-z0-9/.:-]*[0-9])[A-Za-z0-9]+(?:[/.:-][A-Za-z0-9]+)*)(?!\w)",
    re.IGNORECASE)
_CODE_TAIL_RE = re.compile(rf"{H}([A-Za-z0-9]{{1,6}})(?![\w/.:-]\w|\w)")
_YEAR_RE = re.compile(r"(?:19|20)[0-9]{2}")
# From the first digit of a run of code characters holding three digits to the run's end
# (the classes read as `_CODE_RE`'s do: case-insensitively).
_CODE_DIGITS_RE = re.compile(r"[0-9](?:[A-Za-z/.:-]*[0-9]){2}[A-Za-z0-9/.:-]*", re.IGNORECASE)
_CODE_CHAR_RE = re.compile(r"[A-Za-z0-9/.:-]", re.IGNORECASE)


def _code_lines(text: str) -> list[tuple[int, int]]:
    """[start, end) of each line ("\\n") that may hold a code `recognize_codes` keeps.

    A code lies in a run of code characters with at least three digits; a run of digits
    alone is the code itself, so three digits or a year there ("in 2026.") are none.
    """
    lines: list[tuple[int, int]] = []
    for m in _CODE_DIGITS_RE.finditer(text):
        digits = m.group().rstrip("/.:-")
        if digits.isdigit() and (len(digits) < 4 or _YEAR_RE.fullmatch(digits)) \
                and not (m.start() and _CODE_CHAR_RE.match(text, m.start() - 1)):
            continue
        if lines and lines[-1][1] >= m.start():
            continue
        end = text.find("\n", m.end())
        lines.append((text.rfind("\n", 0, m.start()) + 1, len(text) if end < 0 else end))
    return lines


def recognize_codes(text: str, settings: PatternSettings) -> list[EntitySpan]:
    """Case, file, application, patient, account and similar references after a cue word.

    The span is the code alone: at least three digits (four when it is only digits),
    not a bare year, with up to three short groups that bear a digit after it
    ("202201873 B4", "943 476 5919"). "case 3", "order 66", "student 384", "licence 2.0"
    and "file 2019" are not codes.
    """
    spans = []
    for m in finditer_on_lines(_CODE_RE, DIGIT_RE, text, _code_lines(text)):
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



# ----------------------------------------------------------------------------- VEHICLE

_PLATE_CUE = cue_pattern(r"plates?|registration|reg\.?|licen[cs]e plate|number ?plate|"
                         r"kennzeichen|nummernschild|amtliches|plaka|vehicle|car|truck|van|"
                         r"matr[ií]cula|immatriculation|targa")
_UK_PLATE_RE = re.compile(r"(?=[A-Z])(?<![\w-])[A-HJ-PR-Y][A-Z](?P<age>[0-9]{2})( ?)[A-Z]{3}(?![\w-])")
_DE_PLATE_RE = re.compile(
    r"(?=[A-ZÄÖÜ])(?<![\w-])[A-ZÄÖÜ]{1,3}[- ][A-Z]{1,2}[ -]?[1-9][0-9]{0,3}[EH]?(?![\w-])")
_TR_PLATE_RE = re.compile(
    r"(?=[0-8])(?<![\w-])(?:0[1-9]|[1-7][0-9]|8[01])( ?)[A-Z]{1,3}\1[0-9]{2,4}(?![\w-])")
_IN_PLATE_RE = re.compile(
    r"(?=[A-Z])(?<![\w-])(?:A[NPRS]|BR|C[GH]|D[DLN]|G[AJ]|H[PR]|J[HK]|K[AL]|L[AD]|M[HLNPZ]|NL|"
    r"O[DR]|P[BY]|RJ|SK|T[NRS]|U[KP]|WB)([ -]?)[0-9]{1,2}\1[A-Z]{1,3}\1[0-9]{4}(?![\w-])")


# Every plate above holds a capital letter, then maybe a space or dash, then a digit ("B12",
# "AB 1234", "ABC 123"); `re` scans for the capitals.
_PLATE_HINT_RE = with_digit(re.compile(r"[A-Z][ -]?[0-9]"))


def _uk_plate_age_exists(m: re.Match) -> bool:
    """The age identifier of a current-style UK plate: 02-29 (March) or 51-79 (September)."""
    age = int(m.group("age"))
    return 2 <= age <= 29 or 51 <= age <= 79


def _plate_near_cue(text: str, m: re.Match) -> bool:
    return _has_cue(text, m.start(), m.end(), _PLATE_CUE)


def recognize_vehicles(text: str, settings: PatternSettings) -> list[EntitySpan]:
    """Vehicle registrations: UK (AB12 CDE: spaced, context-free; compact after a cue), India
    (MH 12 AB 1234, a state code: context-free), Germany (M-AB 1234) and Turkey (34 ABC 123)
    after a cue word such as "plate", "registration", "Kennzeichen" or "plaka"."""
    spans: list[EntitySpan] = []
    plate_lines = lines_with(_PLATE_HINT_RE, text)   # no plate crosses a line break
    if not plate_lines:
        return spans
    for m in finditer_on_lines(_UK_PLATE_RE, _PLATE_HINT_RE, text, plate_lines):
        if _uk_plate_age_exists(m) and (m.group(2) or _plate_near_cue(text, m)):
            spans.append(EntitySpan(m.start(), m.end(), "VEHICLE", SCORE_FORMAT))
    spans += [EntitySpan(m.start(), m.end(), "VEHICLE", SCORE_FORMAT)
              for m in finditer_on_lines(_IN_PLATE_RE, _PLATE_HINT_RE, text, plate_lines)]
    for pattern in (_DE_PLATE_RE, _TR_PLATE_RE) if _PLATE_CUE.search(text) else ():
        spans += [EntitySpan(m.start(), m.end(), "VEHICLE", SCORE_FORMAT)
                  for m in finditer_on_lines(pattern, _PLATE_HINT_RE, text, plate_lines)
                  if _plate_near_cue(text, m)]
    return spans


KINDS = (
    Kind("ID", recognize_ids, 0,
         "national identity, tax and social security numbers (one row per scheme in ID_SCHEMES)",
         validation="each scheme's check digit (python-stdnum) or allocation rules",
         context="per scheme: weak digit strings need a cue word (NHS, SSN, BSN, PESEL, ...)"),
    Kind("CODE", recognize_codes, 2,
         "case, file, account, patient, booking and similar references after a cue word",
         context="a cue word before the code (case no., file, patient, invoice, ...)"),
    Kind("VEHICLE", recognize_vehicles, 1,
         "vehicle registrations: UK AB12 CDE, IN MH 12 AB 1234, DE M-AB 1234, TR 34 ABC 123",
         validation="UK age identifier; IN state code",
         context="DE, TR and compact UK plates: plate, registration, Kennzeichen, plaka, vehicle"),
)
