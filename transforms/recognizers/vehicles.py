"""Vehicle registrations: UK, German, Turkish and Indian plates, with or without their cue word."""
from __future__ import annotations

import re


from larvatus.transforms.recognizers.base import (
    SCORE_FORMAT, cue_near, cue_pattern, finditer_on_lines, lines_with, with_digit)
from larvatus.transforms.recognizers.registry import PatternSettings
from larvatus.transforms.records import EntitySpan



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


# German district codes of the largest cities and districts: a plate opening with one is
# found without a cue ("B AB 1234", "HH-XY 12"); other codes need one.
_DE_BIG_DISTRICTS = frozenset(
    "B M HH K F S D DO E L HB H N DD DU BO W BI MS KA MA A WI GE MG BN C KI HAL MD FR OB LU EF "
    "HRO KS HA SB HAM MZ OL OS PB HD DA R WÜ IN UL HN PF FÜ WOB GÖ BOT RE TR KO J ER SN Z HI RT "
    "GT SI LEV NE ME RS SG BS CB PO AC BB ES LB TÜ KN FN RV GP".split())
_DE_BARE_PLATE_RE = re.compile(
    r"(?=[A-ZÄÖÜ])(?<![\w-])(?P<district>[A-ZÄÖÜ]{1,3})[- ][A-Z]{1,2} [1-9][0-9]{0,3}[EH]?(?![\w-])")


def _uk_plate_age_exists(m: re.Match) -> bool:
    """The age identifier of a current-style UK plate: 02-29 (March) or 51-79 (September)."""
    age = int(m.group("age"))
    return 2 <= age <= 29 or 51 <= age <= 79


def _plate_near_cue(text: str, m: re.Match) -> bool:
    return cue_near(text, m.start(), m.end(), _PLATE_CUE)


def recognize_vehicles(text: str, settings: PatternSettings) -> list[EntitySpan]:
    """Vehicle registrations: UK (AB12 CDE: spaced, context-free; compact after a cue), India
    (MH 12 AB 1234, a state code: context-free), Germany (M-AB 1234) and Turkey (34 ABC 123)
    after a cue word such as "plate", "registration", "Kennzeichen" or "plaka"; German plates
    of the largest districts ("B AB 1234", `_DE_BIG_DISTRICTS`) without one."""
    spans: list[EntitySpan] = []
    plate_lines = lines_with(_PLATE_HINT_RE, text)   # no plate crosses a line break
    if not plate_lines:
        return spans
    for m in finditer_on_lines(_UK_PLATE_RE, _PLATE_HINT_RE, text, plate_lines):
        if _uk_plate_age_exists(m) and (m.group(2) or _plate_near_cue(text, m)):
            spans.append(EntitySpan(m.start(), m.end(), "VEHICLE", SCORE_FORMAT))
    spans += [EntitySpan(m.start(), m.end(), "VEHICLE", SCORE_FORMAT)
              for m in finditer_on_lines(_IN_PLATE_RE, _PLATE_HINT_RE, text, plate_lines)]
    spans += [EntitySpan(m.start(), m.end(), "VEHICLE", SCORE_FORMAT)
              for m in finditer_on_lines(_DE_BARE_PLATE_RE, _PLATE_HINT_RE, text, plate_lines)
              if m.group("district") in _DE_BIG_DISTRICTS]
    for pattern in (_DE_PLATE_RE, _TR_PLATE_RE) if _PLATE_CUE.search(text) else ():
        spans += [EntitySpan(m.start(), m.end(), "VEHICLE", SCORE_FORMAT)
                  for m in finditer_on_lines(pattern, _PLATE_HINT_RE, text, plate_lines)
                  if _plate_near_cue(text, m)]
    return spans
