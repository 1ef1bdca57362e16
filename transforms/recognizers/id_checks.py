"""Identifier checks that python-stdnum lacks or that need more than its check digit: published rules, tested against stdnum where both apply."""
from __future__ import annotations

import datetime
from typing import Callable

from stdnum.it import codicefiscale as it_codicefiscale
from stdnum.pl import pesel as pl_pesel
from stdnum import luhn
from stdnum.kr import rrn as kr_rrn
from stdnum.us import ssn as us_ssn




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
    """US National Provider Identifier: a first digit 1 or 2, and Luhn over the number
    prefixed with 80840."""
    return candidate[0] in "12" and luhn.is_valid("80840" + candidate)


def _valid_medicare(candidate: str) -> bool:
    """Australian Medicare card number: a first digit 2-6, and weights 1,3,7,9,1,3,7,9 on the
    first eight digits, mod 10, give the ninth."""
    digits = [int(d) for d in candidate if d.isdigit()]
    return 2 <= digits[0] <= 6 and \
        sum(d * w for d, w in zip(digits, (1, 3, 7, 9, 1, 3, 7, 9))) % 10 == digits[8]


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

_HETU_CENTURY = {"+": 1800, **{sign: 1900 for sign in "-YXWVU"}, **{sign: 2000 for sign in "ABCDEF"}}
_HETU_CHECK = "0123456789ABCDEFHJKLMNPRSTUVWXY"


def _valid_hetu(candidate: str) -> bool:
    """Finnish personal identity code by the rule in force since 2023 (python-stdnum knows
    only the signs +, - and A): DDMMYY, a century sign (+ for the 1800s; -, Y, X, W, V, U for
    the 1900s; A-F for the 2000s), an individual number 002-999 (900-999: temporary numbers,
    personal all the same), and the character of DDMMYYNNN mod 31 in `_HETU_CHECK`."""
    code = candidate.upper()
    if len(code) != 11 or code[6] not in _HETU_CENTURY or not (code[:6] + code[7:10]).isdigit():
        return False
    try:
        datetime.date(_HETU_CENTURY[code[6]] + int(code[4:6]), int(code[2:4]), int(code[:2]))
    except ValueError:
        return False
    if int(code[7:10]) < 2:
        return False
    return _HETU_CHECK[int(code[:6] + code[7:10]) % 31] == code[10]


_KR_RRN_WITHOUT_CHECK_SINCE = datetime.date(2020, 10, 1)


def _valid_kr_rrn(candidate: str) -> bool:
    """Korean resident registration number: python-stdnum's check (birth date, sex and
    century digit, place code, check digit), or, for numbers issued since October 2020 whose
    last six digits are random, a birth date since then that exists and is not in the future."""
    compact = candidate.replace("-", "")
    if kr_rrn.is_valid(compact):
        return True
    try:
        born = kr_rrn.get_birth_date(compact, allow_future=False)
    except (ValueError, ArithmeticError):   # stdnum's ValidationError is a ValueError
        return False
    return born >= _KR_RRN_WITHOUT_CHECK_SINCE


def _valid_lanr(candidate: str) -> bool:
    """German lifelong physician number (LANR): digits 1-6 weighted 4, 9, 4, 9, 4, 9, and
    (10 - their sum mod 10) mod 10 is digit 7; digits 8-9 are the specialty group."""
    digits = [int(d) for d in candidate]
    total = sum(d * w for d, w in zip(digits[:6], (4, 9, 4, 9, 4, 9)))
    return (10 - total % 10) % 10 == digits[6]


# UK National Insurance numbers have no check digit (python-stdnum has no module for them):
# HMRC's allocation rules on the two prefix letters and the A-D suffix are the check.
