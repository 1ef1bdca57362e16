"""Identifiers: national identity, tax and social security numbers, and cue-anchored reference codes."""
from __future__ import annotations

import functools
import re
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Callable, Iterable, Mapping, Optional

from stdnum.be import nn as be_nn
from stdnum.de import idnr as de_idnr
from stdnum.es import dni as es_dni
from stdnum.es import nie as es_nie
from stdnum.fr import nir as fr_nir
from stdnum.gb import nhs as gb_nhs
from stdnum.ie import pps as ie_pps
from stdnum.nl import bsn as nl_bsn
from stdnum.pl import pesel as pl_pesel
from stdnum.au import abn as au_abn
from stdnum.au import acn as au_acn
from stdnum.au import tfn as au_tfn
from stdnum.ca import sin as ca_sin
from stdnum.de import stnr as de_stnr
from stdnum.de import vat as de_vat
from stdnum.in_ import aadhaar as in_aadhaar
from stdnum.in_ import epic as in_epic
from stdnum.in_ import pan as in_pan
from stdnum.se import personnummer as se_personnummer
from stdnum.th import pin as th_pin
from stdnum.tr import tckimlik as tr_tckimlik
from stdnum.us import itin as us_itin
from stdnum.za import idnr as za_idnr

from larvatus.transforms.recognizers.base import (
    CUE_AFTER, CUE_BEFORE, DIGIT_RE, H, NUM_END, NUM_START, SCORE_CHECKSUM, SCORE_FORMAT,
    SCORE_UNVALIDATED, SCORE_VALIDATED, count_digits, cue_anywhere, cue_near, cue_pattern,
    finditer_on_lines, joined_lines, lines_with, longest_number, with_digit)
from larvatus.transforms.recognizers.references import recognize_references
from larvatus.transforms.recognizers.registry import Kind, PatternSettings
from larvatus.transforms.records import EntitySpan

# ----------------------------------------------------------------------------- ID

# The fewest digits a candidate whose check failed must hold to be hidden beside its cue: a
# word of capitals in a scheme's alphabet ("PRTVWXYZ") is not a mistyped number.
_UNVALIDATED_MIN_DIGITS = 2


@dataclass(frozen=True)
class IdScheme:
    """One identifier scheme: its shape, validator, cue words per language and label.

    One generic finder (`recognize_ids`) runs every scheme the same way; a new scheme is one
    more row of `ID_SCHEMES`, and the documentation's table of schemes is generated from the
    rows (`scheme_table`). What the finder does with a candidate of the scheme's `shape`:

    - its check holds (`is_valid`; None: the shape is the check) and the scheme is `strong`
      (or the candidate fully matches `formatted`, its usual written form): hidden anywhere;
    - its check holds and a cue word of any of `cues`' languages is within `window`
      (characters before, after, on the same line): hidden;
    - its check fails but a cue word is within `window` and it holds two digits or more:
      hidden all the same, with `SCORE_UNVALIDATED` (a typed identifier with a typo, or one
      the validator does not know, is still personal data);
    - otherwise left alone.
    """

    name: str
    shape: re.Pattern
    is_valid: Optional[Callable[[str], bool]]
    score: float = SCORE_CHECKSUM
    # Cue words per language (ISO 639-1, "any" for words every language writes): a regular
    # expression of `|`-separated words, matched whole and in any case.
    cues: Mapping[str, str] = field(default_factory=dict)
    strong: bool = False
    formatted: Optional[re.Pattern] = None
    window: tuple[int, int] = (CUE_BEFORE, CUE_AFTER)
    label: str = "ID"
    # For the documentation (`scheme_table`): examples, the check in words, the forms found
    # without a cue beyond `strong`, and the Presidio entity of the same kind ("-": none).
    example: str = ""
    check: str = ""
    free_form: str = ""
    presidio: str = "-"
    # Searched only on the lines holding `_ID_HINT_RE` (`finditer_on_lines`); False: everywhere.
    hinted: bool = True
    # The fewest digits every match holds in one number (`longest_number`): a text whose
    # longest number holds fewer has no candidate.
    min_digits: int = 0
    # Searched only on the lines holding this hint instead (every match holds one).
    hint: Optional[re.Pattern] = None

    def __post_init__(self):
        object.__setattr__(self, "cues", MappingProxyType(dict(self.cues)))

    @property
    def cue(self) -> Optional[re.Pattern]:
        """Every language's cue words as one pattern (None: the scheme has none)."""
        return _cue_of(tuple(self.cues.values()))

    def candidates(self, text: str,
                   hint_lines: Optional[list[tuple[int, int]]] = None) -> Iterable[re.Match]:
        """The shape's matches; `hint_lines`: `_ID_HINT_RE`'s lines, when already found."""
        if self.hint is not None:
            return finditer_on_lines(self.shape, self.hint, text)
        if not self.hinted:
            return self.shape.finditer(text)
        return finditer_on_lines(self.shape, _ID_HINT_RE, text, hint_lines)


@functools.lru_cache(maxsize=None)
def _cue_of(words: tuple[str, ...]) -> Optional[re.Pattern]:
    return cue_pattern("|".join(words)) if words else None


# Every identifier below but the codice fiscale (whose digits may all be written as
# letters) holds two digits, at most one space, dot or dash, and two digits.
_ID_HINT_RE = with_digit(re.compile(r"[0-9][0-9][ .-]?[0-9]{2}"))   # opens with a class: `re` scans for it


def _digits_shape(body: str) -> re.Pattern:
    return re.compile(NUM_START + body + NUM_END)


from larvatus.transforms.recognizers.id_checks import (
    _valid_ssn, _valid_pesel_context_free, _valid_de_document, _valid_codice_fiscale, _valid_rvnr, _valid_npi, _valid_medicare, _valid_nric, _valid_dea, _valid_uk_driving_licence, _stdnum, _valid_hetu, _valid_kr_rrn, _valid_lanr)

_NINO_PREFIX = r"(?!BG|GB|KN|NK|NT|TN|ZZ)[A-CEGHJ-PR-TW-Z][A-CEGHJ-NPR-TW-Z]"
_NIR_GROUPS = ("[1-478]", "[0-9]{2}", "[0-9]{2}", "(?:[0-9]{2}|2[AB])", "[0-9]{3}", "[0-9]{3}",
               "[0-9]{2}")

# NHS numbers in their usual 3-3-4 groups are found without a cue. Written with dashes the
# groups are also a North American phone number's, so only where the second group cannot be
# a NANP exchange (it opens with 0 or 1): 401-023-2137.
_NHS_FORMATTED = re.compile(r"[0-9]{3} [0-9]{3} [0-9]{4}|[0-9]{3}-[01][0-9]{2}-[0-9]{4}")
_ID_WORDS = {"en": r"ID|identity|identification|ID card|ID number|national id"}
_PASSPORT_CUES = {
    "en": r"passports?|passport (?:no|number)", "fr": r"passeport", "de": r"reisepass|pass-?nr\.?|"
    r"passnummer", "es": r"pasaporte", "it": r"passaporto", "nl": r"paspoort", "pl": r"paszport",
    "ko": r"여권|여권번호"}
_LICENCE_CUES = {
    "en": r"driver'?s? licen[cs]e|driving licen[cs]e|DL|licen[cs]e (?:no|number)",
    "de": r"F[üu]hrerschein|F[üu]hrerscheinnummer", "es": r"permiso de conducir|carnet de conducir",
    "it": r"patente(?: di guida)?", "nl": r"rijbewijs", "ko": r"운전면허|운전면허번호"}

ID_SCHEMES = (
    IdScheme("UK NHS number",
             _digits_shape(r"[0-9]{3}([ -]?)[0-9]{3}\1[0-9]{4}"), _stdnum(gb_nhs),
             cues={"en": r"NHS"}, formatted=_NHS_FORMATTED, min_digits=10,
             example="`943 476 5919`, `401-023-2137`", check="stdnum.gb.nhs (mod 11)",
             free_form="as `3 3 4` groups, and as `3-3-4` with dashes when the second group opens "
                       "with 0 or 1 (otherwise a North American phone layout)", presidio="UK_NHS"),
    IdScheme("US SSN",
             _digits_shape(r"[0-9]{3}([ -]?)[0-9]{2}\1[0-9]{4}"), _valid_ssn, score=SCORE_VALIDATED,
             cues={"en": r"SSN|SS#|social[ -]security"},
             formatted=re.compile(r"[0-9]{3}-[0-9]{2}-[0-9]{4}"), min_digits=9,
             example="`536-90-4399`, `078051121`", check="stdnum.us.ssn (area, group, serial)",
             free_form="as `3-2-4`", presidio="US_SSN"),
    IdScheme("UK NINO",
             re.compile(rf"(?=[A-Z])(?<!\w){_NINO_PREFIX}(?: ?[0-9]{{2}}){{3}} ?[A-D](?!\w)"), None,
             score=SCORE_FORMAT, strong=True, min_digits=6,
             cues={"en": r"NI|NINO|national insurance"},
             example="`AB 12 34 56 C`", check="HMRC prefix and suffix rules", presidio="UK_NINO"),
    IdScheme("UK NINO, lower case",
             re.compile(rf"(?=[a-z])(?<!\w)(?i:{_NINO_PREFIX})(?: ?[0-9]{{2}}){{3}} ?[a-d](?!\w)"),
             lambda candidate: candidate[:2].islower(), score=SCORE_FORMAT,
             cues={"en": r"NI|NINO|national insurance"}, min_digits=6,
             example="`hh 01 02 03 d`", check="HMRC prefix and suffix rules", presidio="UK_NINO"),
    IdScheme("ES DNI",
             re.compile(r"(?=[0-9])(?<!\w)[0-9]{8}-?[A-Za-z](?!\w)"), es_dni.is_valid, strong=True,
             cues={"es": r"DNI|NIF|documento nacional de identidad"}, min_digits=8,
             example="`12345678Z`, `12345678z`", check="stdnum.es.dni (check letter)",
             presidio="ES_NIF"),
    IdScheme("ES NIE",
             re.compile(r"(?=[XYZ])(?<!\w)[XYZ]-?[0-9]{7}-?[A-Z](?!\w)"), es_nie.is_valid,
             strong=True, cues={"es": r"NIE|extranjero"}, min_digits=7,
             example="`X1234567L`", check="stdnum.es.nie (check letter)", presidio="ES_NIE"),
    IdScheme("NL BSN",
             _digits_shape(r"(?:[0-9]{9}|[0-9]{4}\.[0-9]{2}\.[0-9]{3})"), nl_bsn.is_valid,
             cues={"nl": r"BSN|burgerservicenummer|sofi-?nummer"}, min_digits=9,
             example="`123456782`", check="stdnum.nl.bsn (11-proef)"),
    IdScheme("FR NIR",
             _digits_shape(" ?".join(_NIR_GROUPS)), fr_nir.is_valid,
             cues={"fr": r"NIR|INSEE|s[ée]curit[ée] sociale|num[ée]ro de s[ée]cu",
                   "en": r"social security"},
             formatted=re.compile(" ".join(_NIR_GROUPS)), min_digits=8,
             example="`2 95 10 99 126 111 93`", check="stdnum.fr.nir (mod 97)",
             free_form="in its groups"),
    IdScheme("IT codice fiscale",
             re.compile(r"(?=[A-Z])(?<!\w)[A-Z]{6}[0-9LMNP-V]{2}[ABCDEHLMPRST][0-9LMNP-V]{2}[A-Z]"
                        r"[0-9LMNP-V]{3}[A-Z](?!\w)"), _valid_codice_fiscale, strong=True,
             cues={"it": r"codice fiscale|C\.?F\.?"},
             hint=re.compile(r"[A-Z][A-Z]{5}[0-9LMNP-V]{2}[ABCDEHLMPRST][0-9LMNP-V]{2}[A-Z]"),
             example="`RCCMNL83S18D969H`", check="stdnum.it.codicefiscale (check letter)",
             presidio="IT_FISCAL_CODE"),
    IdScheme("PL PESEL",   # checksum and a birth date from 1900 to today
             _digits_shape(r"[0-9]{11}"), _valid_pesel_context_free, strong=True,
             cues={"pl": r"PESEL"}, min_digits=11,
             example="`44051401359`", check="stdnum.pl.pesel (check digit), born 1900 to today",
             presidio="PL_PESEL"),
    IdScheme("PL PESEL, any century",   # 1800s, 2100s and 2200s encodings, after a cue
             _digits_shape(r"[0-9]{11}"), pl_pesel.is_valid, cues={"pl": r"PESEL"},
             min_digits=11, example="`44851401353`", check="stdnum.pl.pesel (check digit, date)",
             presidio="PL_PESEL"),
    IdScheme("DE passport or identity card number",
             re.compile(r"(?=[CFGHJKLMNPRTVWXYZ])(?<![\w-])[CFGHJKLMNPRTVWXYZ]"
                        r"[0-9CFGHJKLMNPRTVWXYZ]{8}[0-9]?(?![\w-])"), _valid_de_document,
             cues={"de": r"reisepass|personalausweis|ausweis|ausweisnummer|personalausweisnummer|"
                         r"passnummer|pass-?nr\.?|Dokumentennummer",
                   "en": r"passports?|ID card|identity card|document (?:no|number)"},
             hint=re.compile(r"[CFGHJKLMNPRTVWXYZ][0-9CFGHJKLMNPRTVWXYZ]{8}"),
             example="`C01X00T47`, `C01X00T478`, `T220001293`",
             check="9 characters of the document alphabet (`CFGHJKLMNPRTVWXYZ`, digits); a 10th: "
                   "ICAO 9303 check digit (weights 7 3 1)", presidio="DE_PASSPORT, DE_ID_CARD"),
    IdScheme("DE tax id",
             _digits_shape(r"[0-9]{2}( ?)[0-9]{3}\1[0-9]{3}\1[0-9]{3}"), de_idnr.is_valid,
             cues={"de": r"steuer-?id|steuer-?identifikationsnummer|identifikationsnummer|IdNr|"
                         r"Steuer-?IdNr",
                   "en": r"tax[ -]id(?:entification)?|TIN"}, min_digits=11,
             example="`36 574 261 809`", check="stdnum.de.idnr (ISO 7064 mod 11, 10)",
             presidio="DE_TAX_ID"),
    IdScheme("DE VAT ID",
             re.compile(r"(?=D)(?<![\w-])DE ?[0-9]{9}(?![\w-])"), _stdnum(de_vat), strong=True,
             cues={"de": r"USt-?IdNr\.?|USt-?ID|Umsatzsteuer-?(?:Identifikationsnummer|ID)",
                   "en": r"VAT(?: (?:number|no|ID))?"}, min_digits=9,
             example="`DE136695976`", check="stdnum.de.vat (ISO 7064 mod 11, 10)",
             presidio="DE_VAT_ID"),
    IdScheme("DE Handelsregister number",
             re.compile(r"(?=H)(?<![\w-])HR[AB] ?[0-9]{1,6}(?: ?[A-Z]{1,2})?(?![\w-])"), None,
             score=SCORE_FORMAT, strong=True, hinted=False,
             hint=with_digit(re.compile(r"HR[AB] ?[0-9]")),
             cues={"de": r"Handelsregister|Registergericht|Amtsgericht|HRB|HRA"},
             example="`HRB 12345`, `HRA 1234 B`", check="register section HRA or HRB",
             presidio="DE_HANDELSREGISTER"),
    IdScheme("DE LANR (physician number)",
             _digits_shape(r"[0-9]{9}"), _valid_lanr,
             cues={"de": r"LANR|Arztnummer|lebenslange Arztnummer"}, min_digits=9,
             example="`123456601`", check="published check digit (weights 4 9, digit 7)",
             presidio="DE_LANR"),
    IdScheme("DE BSNR (practice number)",
             _digits_shape(r"(?:0[1-9]|[1-9][0-9])[0-9]{7}"), None,
             cues={"de": r"BSNR|Betriebsst[äa]ttennummer"}, score=SCORE_FORMAT, min_digits=9,
             example="`721234500`", check="a regional code 01-99",
             presidio="DE_BSNR"),
    IdScheme("IE PPS number",
             re.compile(r"(?=[0-9])(?<!\w)[0-9]{7}[A-W][A-IW]?(?!\w)"), ie_pps.is_valid,
             cues={"en": r"PPSN?|personal public service"}, min_digits=7,
             example="`6433435F`", check="stdnum.ie.pps (check letter)"),
    IdScheme("BE national number",
             _digits_shape(r"[0-9]{2}\.[0-9]{2}\.[0-9]{2}-[0-9]{3}\.[0-9]{2}"), be_nn.is_valid,
             strong=True, min_digits=11,
             cues={"fr": r"num[ée]ro national|NN", "nl": r"rijksregisternummer|RRN"},
             example="`85.07.30-033.28`", check="stdnum.be.nn (mod 97)"),
    IdScheme("passport number",
             re.compile(r"(?=[A-Z0-9])(?<![\w-])[A-Z]{0,3}[0-9]{6,9}[A-Z]?(?![\w-])"), None,
             score=SCORE_FORMAT, cues=_PASSPORT_CUES, min_digits=6,
             example="US/UK `123456789`, ES `AAA123456`, IT `YA1234567`, IN `A1234567`, "
                     "KR `M12345678`", check="shape",
             presidio="US/UK/ES/IT/IN/KR_PASSPORT"),
    IdScheme("KR passport number (2021)",
             re.compile(r"(?=[MSRODG])(?<![\w-])[MSRODG][0-9]{3}[A-Z][0-9]{4}(?![\w-])"), None,
             score=SCORE_FORMAT, cues=_PASSPORT_CUES, min_digits=4,
             example="`M123A4567`", check="shape (type letter, 3 digits, letter, 4 digits)",
             presidio="KR_PASSPORT"),
    IdScheme("KR resident registration number",
             _digits_shape(r"[0-9]{6}(-?)[0-9]{7}"), _valid_kr_rrn,
             cues={"en": r"RRN|resident registration(?: number)?", "ko": r"주민등록번호|주민번호"},
             formatted=re.compile(r"[0-9]{6}-[0-9]{7}"), min_digits=13,
             example="`971013-9019902`, `201105-3123456`",
             check="stdnum.kr.rrn (date, check digit); born since October 2020: date and sex digit "
                   "(no check digit)", free_form="with its dash", presidio="KR_RRN"),
    IdScheme("TR T.C. Kimlik No",
             _digits_shape(r"[1-9][0-9]{10}"), tr_tckimlik.is_valid, strong=True, min_digits=11,
             cues={"tr": r"T\.?C\.?|kimlik(?: no| numarası)?|TCKN"},
             example="`10000000146`", check="stdnum.tr.tckimlik (two check digits)",
             presidio="TR_NATIONAL_ID"),
    IdScheme("TH personal ID",
             _digits_shape(r"[1-8](-?)[0-9]{4}\1[0-9]{5}\1[0-9]{2}\1[0-9]"), th_pin.is_valid,
             cues={**_ID_WORDS, "en": _ID_WORDS["en"] + r"|Thai|citizen",
                   "th": r"บัตรประชาชน|เลขประจำตัวประชาชน"},
             formatted=re.compile(r"[0-9]-[0-9]{4}-[0-9]{5}-[0-9]{2}-[0-9]"), min_digits=13,
             example="`1-2345-45678-78-1`", check="stdnum.th.pin (check digit)",
             free_form="with dashes", presidio="TH_TNIN"),
    IdScheme("ZA identity number",
             _digits_shape(r"[0-9]{6}( ?)[0-9]{4}\1[0-9]{3}"), _stdnum(za_idnr), strong=True,
             cues=_ID_WORDS, min_digits=13, example="`7503305044089`",
             check="stdnum.za.idnr (date, citizenship, Luhn)", presidio="ZA_ID_NUMBER"),
    IdScheme("SE personnummer",
             _digits_shape(r"(?:19|20)?[0-9]{6}[-+]?[0-9]{4}"), se_personnummer.is_valid,
             cues={"en": _ID_WORDS["en"] + r"|person(?:al)? (?:identity )?number",
                   "sv": r"personnummer|personnr|samordningsnummer"},
             formatted=re.compile(r"(?:19|20)[0-9]{6}-[0-9]{4}"), min_digits=10,
             example="`880320-0016`, `19880320-0016`", check="stdnum.se.personnummer (date, Luhn)",
             free_form="12 digits with dash", presidio="SE_PERSONNUMMER"),
    IdScheme("FI HETU",
             re.compile(r"(?=[0-9])(?<!\w)[0-9]{6}[-+A-FU-Y][0-9]{3}[0-9A-Y](?!\w)"),
             _valid_hetu, strong=True, min_digits=6,
             cues={"fi": r"HETU|henkilötunnus|sotu", "sv": r"personbeteckning",
                   "en": r"personal identity code"},
             example="`131052-308T`, `010594Y9032`",
             check="published rule: date, century sign (+; - Y X W V U; A-F), mod 31 check "
                   "character", presidio="FI_PERSONAL_IDENTITY_CODE"),
    IdScheme("IN Aadhaar",
             _digits_shape(r"[2-9][0-9]{3}( ?)[0-9]{4}\1[0-9]{4}"), _stdnum(in_aadhaar),
             cues={"en": r"aadhaa?r|UIDAI|UID", "hi": r"आधार"},
             formatted=re.compile(r"[2-9][0-9]{3} [0-9]{4} [0-9]{4}"), min_digits=12,
             example="`2341 2341 2346`", check="stdnum.in_.aadhaar (Verhoeff)",
             free_form="in `4 4 4` groups", presidio="IN_AADHAAR"),
    IdScheme("IN PAN",
             re.compile(r"(?=[A-Z])(?<![\w-])[A-Z]{5}[0-9]{4}[A-Z](?![\w-])"), _stdnum(in_pan),
             score=SCORE_FORMAT, cues={"en": r"PAN|permanent account(?: number)?|PAN card|"
                                             r"income tax", "hi": r"पैन"}, min_digits=4,
             example="`ABCPD1234E`", check="stdnum.in_.pan (holder type letter)",
             presidio="IN_PAN"),
    IdScheme("IN voter ID (EPIC)",
             re.compile(r"(?=[A-Z])(?<![\w-])[A-Z]{3}[0-9]{7}(?![\w-])"), _stdnum(in_epic),
             cues={"en": r"voter(?: ID)?|EPIC|electoral|election(?: card)?", "hi": r"मतदाता"},
             min_digits=7, example="`WKH1234566`", check="stdnum.in_.epic (Luhn)",
             presidio="IN_VOTER"),
    IdScheme("CA social insurance number",
             _digits_shape(r"[0-9]{3}([ -]?)[0-9]{3}\1[0-9]{3}"), _stdnum(ca_sin),
             cues={"en": r"SIN|social insurance", "fr": r"NAS|assurance sociale"}, min_digits=9,
             example="`046 454 286`", check="stdnum.ca.sin (Luhn)", presidio="CA_SIN"),
    IdScheme("DE pension insurance number",
             re.compile(r"(?=[0-9])(?<!\w)[0-9]{2}( ?)[0-9]{6}\1[A-Z]\1[0-9]{3}(?!\w)"),
             _valid_rvnr, strong=True, min_digits=8,
             cues={"de": r"Rentenversicherungsnummer|Sozialversicherungsnummer|RVNR|SVNR|"
                         r"Versicherungsnummer"},
             example="`15 070649 C 103`",
             check="published check (weights 2121 2571 2121, digit sums)",
             presidio="DE_SOCIAL_SECURITY"),
    IdScheme("DE tax number",
             _digits_shape(r"(?:[0-9]{2,3}/[0-9]{3,4}/[0-9]{4,5}|[0-9]{10,13})"), de_stnr.is_valid,
             cues={"de": r"Steuernummer|St\.?-?Nr\.?|StNr", "en": r"tax (?:number|no)"},
             min_digits=9, example="`181/815/08155`", check="stdnum.de.stnr (state formats)",
             presidio="DE_TAX_NUMBER"),
    IdScheme("US ITIN",
             _digits_shape(r"9[0-9]{2}([ -]?)[0-9]{2}\1[0-9]{4}"), _stdnum(us_itin),
             cues={"en": r"ITIN|taxpayer identification|tax ID"},
             formatted=re.compile(r"[0-9]{3}-[0-9]{2}-[0-9]{4}"), min_digits=9,
             example="`912-71-1234`", check="stdnum.us.itin (group ranges)",
             free_form="as `3-2-4`", presidio="US_ITIN"),
    IdScheme("US NPI",
             _digits_shape(r"[0-9]{10}"), _valid_npi,
             cues={"en": r"NPI|national provider|provider (?:id|number)"}, min_digits=10,
             example="`1234567893`", check="Luhn after 80840", presidio="US_NPI"),
    IdScheme("US Medicare beneficiary identifier",
             re.compile(r"(?=[1-9])(?<![\w-])[1-9](?:[AC-HJKMNP-RT-Y][AC-HJKMNP-RT-Y0-9][0-9]){2}"
                        r"[AC-HJKMNP-RT-Y]{2}[0-9]{2}(?![\w-])|"
                        r"(?=[1-9])(?<![\w-])[1-9][AC-HJKMNP-RT-Y][AC-HJKMNP-RT-Y0-9][0-9]-"
                        r"[AC-HJKMNP-RT-Y][AC-HJKMNP-RT-Y0-9][0-9]-[AC-HJKMNP-RT-Y]{2}[0-9]{2}(?![\w-])"),
             None, score=SCORE_FORMAT, strong=True, cues={"en": r"MBI|medicare"},
             hint=with_digit(re.compile(r"[1-9][AC-HJKMNP-RT-Y]")),
             example="`1EG4-TE5-MK73`", check="CMS character positions", presidio="US_MBI"),
    IdScheme("AU tax file number",
             _digits_shape(r"[0-9]{3}( ?)[0-9]{3}\1[0-9]{2,3}"), _stdnum(au_tfn),
             cues={"en": r"TFN|tax file(?: number)?"}, min_digits=8,
             example="`123 456 782`", check="stdnum.au.tfn (weights, mod 11)", presidio="AU_TFN"),
    IdScheme("AU business number",
             _digits_shape(r"[0-9]{2}( ?)[0-9]{3}\1[0-9]{3}\1[0-9]{3}"), _stdnum(au_abn),
             cues={"en": r"ABN|business number"},
             formatted=re.compile(r"[0-9]{2} [0-9]{3} [0-9]{3} [0-9]{3}"), min_digits=11,
             example="`51 824 753 556`", check="stdnum.au.abn (mod 89)",
             free_form="in `2 3 3 3` groups", presidio="AU_ABN"),
    IdScheme("AU company number",
             _digits_shape(r"[0-9]{3}([ -]?)[0-9]{3}\1[0-9]{3}"), _stdnum(au_acn),
             cues={"en": r"ACN|company number|Australian company"}, min_digits=9,
             example="`004 085 616`", check="stdnum.au.acn (weights, mod 10)", presidio="AU_ACN"),
    IdScheme("AU Medicare number",
             _digits_shape(r"[0-9]{4}([ -]?)[0-9]{5}\1[0-9](?:[ /-]?[1-9])?"), _valid_medicare,
             cues={"en": r"medicare(?: card| number)?"}, min_digits=10,
             example="`2123 45670 1`", check="published check (weights 1379)",
             presidio="AU_MEDICARE"),
    IdScheme("PH taxpayer identification number",
             _digits_shape(r"[0-9]{3}-[0-9]{3}-[0-9]{3}(?:-[0-9]{3,5})?"), None,
             score=SCORE_FORMAT, cues={"en": r"TIN|taxpayer identification|BIR"}, min_digits=9,
             example="`123-456-789-000`", check="shape", presidio="PH_TIN"),
    IdScheme("SG NRIC/FIN",
             re.compile(r"(?=[STFG])(?<!\w)[STFG][0-9]{7}[A-Z](?!\w)"), _valid_nric, strong=True,
             cues={"en": r"NRIC|FIN|IC"}, min_digits=7,
             example="`S1234567D`", check="published check letter (S, T, F, G)",
             presidio="SG_NRIC_FIN"),
    IdScheme("US DEA number (medical licence)",
             re.compile(r"(?=[A-Z])(?<!\w)[ABCDEFGHJKLMPRSTUX][A-Z9][0-9]{7}(?!\w)"), _valid_dea,
             cues={"en": r"DEA|licen[cs]e|prescriber|registration"}, min_digits=7,
             example="`AB1234563`", check="published check digit", presidio="MEDICAL_LICENSE"),
    IdScheme("medical licence number",
             re.compile(r"(?=[A-Z0-9])(?<![\w-])[A-Z]{0,3}-?[0-9]{4,10}(?![\w-])"), None,
             score=SCORE_FORMAT, min_digits=4,
             cues={"en": r"medical licen[cs]e(?: (?:no|number))?|GMC(?: number)?|"
                         r"medical council(?: number)?|physician licen[cs]e",
                   "de": r"Approbation(?:snummer)?|Arztausweis", "it": r"iscrizione all'albo"},
             example="`GMC 1234567`, `MD-123456`", check="shape", presidio="MEDICAL_LICENSE"),
    IdScheme("UK driving licence number",
             re.compile(r"(?=[A-Z9])(?<!\w)[A-Z9]{5}[0-9]{6}[A-Z9]{2}[0-9][A-Z]{2}(?!\w)"),
             _valid_uk_driving_licence, score=SCORE_FORMAT, strong=True, min_digits=6,
             cues=_LICENCE_CUES, example="`MORGA753116SM9IJ`", check="month and day of birth",
             presidio="UK_DRIVING_LICENCE"),
    IdScheme("IT identity card number",
             re.compile(r"(?=[A-Z])(?<![\w-])(?:[A-Z]{2}[0-9]{5}[A-Z]{2}|[A-Z]{2} ?[0-9]{7})(?![\w-])"),
             None, score=SCORE_FORMAT, min_digits=5,
             cues={"it": r"carta d'identit[àa]|CIE|documento d'identit[àa]",
                   "en": r"identity card|ID card"},
             example="`CA00000AA`, `AX 1234567`", check="shape", presidio="IT_IDENTITY_CARD"),
    IdScheme("driving licence number",
             re.compile(r"(?=[A-Z]{0,3}[0-9][0-9A-Z-]*?[0-9]{2}-?[0-9]{2})(?<![\w-])[A-Z]{0,3}[0-9]"
                        r"(?:[0-9A-Z]|-(?=[0-9A-Z])){4,16}(?![\w-])"), None, score=SCORE_FORMAT,
             cues=_LICENCE_CUES, min_digits=4,
             example="US `D1234567`, IT `U1H123456A`, KR `11-12-345678-90`", check="shape",
             presidio="US/IT/KR_DRIVER_LICENSE, DE_FUEHRERSCHEIN"),
)
# Every scheme's cue words compiled now: `base.is_cue_word` knows them before any text is read.
for _scheme in ID_SCHEMES:
    _scheme.cue  # noqa: B018  (compiles and registers the pattern)


# "+1 503 837 8935" is a phone number, not an NHS number in its usual groups
_PHONE_PREFIX_RE = re.compile(r"(?:\+|\b00)[0-9]{1,3}[ .-]?(?:\(0\)[ ]?)?\Z")


def scheme_decision(scheme: IdScheme, text: str, m: re.Match) -> Optional[float]:
    """The score of a span for the candidate `m` of `scheme`, or None to leave it alone
    (the rule of `IdScheme`'s docstring)."""
    candidate = m.group()
    valid = scheme.is_valid is None or scheme.is_valid(candidate)
    if valid and scheme.strong:
        return scheme.score
    cue = scheme.cue
    has_cue = cue is not None and cue_near(text, m.start(), m.end(), cue, scheme.window)
    if valid:
        formatted = scheme.formatted is not None and scheme.formatted.fullmatch(candidate) \
            and not _PHONE_PREFIX_RE.search(text, max(0, m.start() - 10), m.start())
        return scheme.score if has_cue or formatted else None
    if has_cue and count_digits(candidate) >= _UNVALIDATED_MIN_DIGITS:
        return SCORE_UNVALIDATED
    return None


def recognize_ids(text: str, settings: PatternSettings) -> list[EntitySpan]:
    """National identity, tax, health, company and licence numbers: every row of `ID_SCHEMES`
    by one rule (`IdScheme`): a valid value of a strong scheme anywhere, of a weak one beside
    a cue word (or in its usual written form), and a value of the scheme's shape whose check
    fails beside a cue word, scored `SCORE_UNVALIDATED`."""
    spans: dict[tuple[int, int], EntitySpan] = {}
    hint_lines: Optional[list[tuple[int, int]]] = None   # found once for every hinted kind
    longest = longest_number(text)
    for scheme in ID_SCHEMES:
        if scheme.min_digits > longest:
            continue
        if not scheme.strong and scheme.formatted is None and not cue_anywhere(text, scheme.cue):
            continue     # every span of the scheme needs its cue: a text without one has none
        if hint_lines is None and scheme.hinted and scheme.hint is None:
            hint_lines = joined_lines(lines_with(_ID_HINT_RE, text))
        for m in scheme.candidates(text, hint_lines):
            score = scheme_decision(scheme, text, m)
            if score is None:
                continue
            key = (m.start(), m.end())
            if key not in spans or spans[key].score < score:
                spans[key] = EntitySpan(m.start(), m.end(), scheme.label, score)
    return list(spans.values())


def scheme_table() -> str:
    """The documentation's table of identifier schemes (docs/privacy.md), one row per scheme."""
    rows = ["| Label | Scheme | Matches | Validation | Context | Presidio |",
            "|---|---|---|---|---|---|"]
    for scheme in ID_SCHEMES:
        words = "; ".join(f"{language}: {_readable(words)}" for language, words in scheme.cues.items())
        if scheme.strong:
            context = "free" + (f"; a failed check beside {words}"
                                if words and scheme.is_valid is not None else "")
        else:
            free = f"free {scheme.free_form}; " if scheme.free_form else ""
            context = f"{free}{words}" if scheme.is_valid is None else \
                f"{free}{words} (also when the check fails)"
        rows.append(f"| {scheme.label} | {scheme.name} | {scheme.example} | {scheme.check} | "
                    f"{context} | {scheme.presidio} |")
    return "\n".join(rows) + "\n"


def _readable(words: str) -> str:
    """Cue words of a pattern as a reader would write them, split at its top-level `|`."""
    found, depth, current = [], 0, ""
    for ch in words:
        depth += (ch == "(") - (ch == ")")
        if ch == "|" and depth == 0:
            found.append(current)
            current = ""
        else:
            current += ch
    found.append(current)
    return ", ".join(f"`{word}`".replace("|", "\\|") for word in found)


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



from larvatus.transforms.recognizers.vehicles import recognize_vehicles  # noqa: E402


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
