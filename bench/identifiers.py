"""Identifier benchmark: valid and invalid numbers of every pattern kind in sentences, found or left alone."""
# For each kind it generates valid values (python-stdnum's validators, or the published check
# where stdnum has none, decide) and invalid ones (a broken check digit, or a broken shape for
# kinds without one), puts each in a sentence (with the kind's cue word where the kind needs
# one; context-free kinds in neutral sentences), runs `find_patterns` and reports per kind:
#
# - found: the share of valid values whose every character lies in spans of the kind's label;
# - hidden beside cue (identifier schemes, label ID): the share of invalid values, in a
#   sentence with the kind's cue word, whose every character lies in ID spans (a typed
#   identifier that fails its check is still personal data);
# - left alone: the share of invalid values, in a neutral sentence, that no span of the
#   kind's label touches.
#
# Usage (from the repository root): `python -m bench.identifiers --per-kind 200 --seed 1`.
from __future__ import annotations

import argparse
import datetime
import hashlib
import random
import string
import sys
from dataclasses import dataclass
from typing import Callable, Optional, Sequence

from stdnum import bitcoin, luhn, verhoeff
from stdnum import mac as stdnum_mac
from stdnum.au import abn as au_abn
from stdnum.au import acn as au_acn
from stdnum.au import tfn as au_tfn
from stdnum import iban as stdnum_iban
from stdnum.ca import sin as ca_sin
from stdnum.es import dni as es_dni
from stdnum.de import vat as de_vat
from stdnum.fi import hetu as fi_hetu
from stdnum.gb import nhs as gb_nhs
from stdnum.in_ import aadhaar as in_aadhaar
from stdnum.in_ import epic as in_epic
from stdnum.in_ import pan as in_pan
from stdnum.kr import rrn as kr_rrn
from stdnum.pl import pesel as pl_pesel
from stdnum.se import personnummer as se_personnummer
from stdnum.th import pin as th_pin
from stdnum.tr import tckimlik as tr_tckimlik
from stdnum.us import itin as us_itin
from stdnum.us import rtn as us_rtn
from stdnum.us import ssn as us_ssn
from stdnum.za import idnr as za_idnr

from larvatus.transforms.recognizers import find_patterns
from larvatus.transforms.recognizers import id_checks as ids

Maker = Callable[[random.Random], str]
NEUTRAL = ("Please update the record to {} before Friday.", "The form lists {} on page two.",
           "We received {} in the letter of last week.")


@dataclass(frozen=True)
class Spec:
    """One kind of the bench: its label, value makers and sentences."""

    kind: str
    label: str
    valid: Maker
    invalid: Maker
    sentences: tuple[str, ...] = NEUTRAL
    # sentences with the kind's cue word, for its invalid values (default: `sentences` when
    # they are not the neutral ones)
    cue_sentences: tuple[str, ...] = ()
    # False: the invalid values break the shape (no check digit to fail), so a cue cannot
    # make them an identifier
    shaped_invalid: bool = True

    @property
    def cued(self) -> tuple[str, ...]:
        if not self.shaped_invalid:
            return ()
        return self.cue_sentences or (self.sentences if self.sentences != NEUTRAL else ())


def _digits(rng: random.Random, n: int) -> str:
    return "".join(rng.choice(string.digits) for _ in range(n))


def _until(rng: random.Random, make: Maker, ok: Callable[[str], bool]) -> str:
    while True:
        value = make(rng)
        if ok(value):
            return value


def _break(rng: random.Random, value: str, is_valid: Callable[[str], bool],
           positions: Optional[Sequence[int]] = None) -> str:
    """`value` with one digit changed so that `is_valid` rejects it."""
    digit_at = [i for i, ch in enumerate(value) if ch.isdigit()]
    while True:
        i = rng.choice(positions if positions is not None else digit_at)
        broken = value[:i] + rng.choice(string.digits.replace(value[i], "")) + value[i + 1:]
        if not is_valid(broken):
            return broken


def _birth(rng: random.Random) -> datetime.date:
    return datetime.date(1940, 1, 1) + datetime.timedelta(days=rng.randrange(60 * 365))


def _checked(make: Maker, is_valid: Callable[[str], bool]) -> tuple[Maker, Maker]:
    """(valid maker, invalid maker) for a kind with a check digit."""
    def valid(rng):
        return _until(rng, make, is_valid)

    def invalid(rng):
        return _break(rng, valid(rng), is_valid)
    return valid, invalid


def _nif(rng):
    body = _digits(rng, 8)
    return body + es_dni.calc_check_digit(body)


def _rrn(rng):
    born = _birth(rng)
    gender = rng.choice("12") if born.year < 2000 else rng.choice("34")
    body = born.strftime("%y%m%d") + gender + _digits(rng, 5)
    return f"{body[:6]}-{body[6:]}{kr_rrn.calc_check_digit(body)}"


def _kimlik(rng):
    body = rng.choice("123456789") + _digits(rng, 8)
    return body + tr_tckimlik.calc_check_digits(body)


def _thai(rng):
    body = rng.choice("12345678") + _digits(rng, 11)
    n = body + th_pin.calc_check_digit(body)
    return f"{n[0]}-{n[1:5]}-{n[5:10]}-{n[10:12]}-{n[12]}"


def _za(rng):
    body = _birth(rng).strftime("%y%m%d") + _digits(rng, 4) + rng.choice("01") + "8"
    return body + luhn.calc_check_digit(body)


def _personnummer(rng):
    body = _birth(rng).strftime("%y%m%d") + _digits(rng, 3)
    return f"{body[:6]}-{body[6:]}{luhn.calc_check_digit(body)}"


def _hetu(rng):
    born = _birth(rng)
    sign = "-" if born.year < 2000 else "A"
    return _until(rng, lambda r: born.strftime("%d%m%y") + sign + f"{r.randint(2, 899):03d}"
                  + r.choice("0123456789ABCDEFHJKLMNPRSTUVWXY"), fi_hetu.is_valid)


def _aadhaar(rng):
    body = rng.choice("23456789") + _digits(rng, 10)
    n = body + verhoeff.calc_check_digit(body)
    return f"{n[:4]} {n[4:8]} {n[8:]}"


def _sin(rng):
    body = rng.choice("123456789") + _digits(rng, 7)
    n = body + luhn.calc_check_digit(body)
    return f"{n[:3]} {n[3:6]} {n[6:]}"


def _rvnr(rng):
    body = f"{rng.randint(10, 89)} {_birth(rng).strftime('%d%m%y')} {rng.choice(string.ascii_uppercase)} " \
           f"{_digits(rng, 2)}"
    return next(body + d for d in string.digits if ids._valid_rvnr(body + d))


def _itin(rng):
    return _until(rng, lambda r: f"9{_digits(r, 2)}-{r.choice('78')}{_digits(r, 1)}-{_digits(r, 4)}",
                  us_itin.is_valid)


def _npi(rng):
    body = rng.choice("12") + _digits(rng, 8)
    return body + luhn.calc_check_digit("80840" + body)


_MBI_LETTERS = "ACDEFGHJKMNPQRTUVWXY"


def _mbi(rng):
    def letter():
        return rng.choice(_MBI_LETTERS)

    def either():
        return rng.choice(_MBI_LETTERS + string.digits)
    return (f"{rng.randint(1, 9)}{letter()}{either()}{rng.randint(0, 9)}-{letter()}{either()}"
            f"{rng.randint(0, 9)}-{letter()}{letter()}{_digits(rng, 2)}")


def _medicare(rng):
    body = [rng.randint(2, 6)] + [rng.randint(0, 9) for _ in range(7)]
    check = sum(d * w for d, w in zip(body, (1, 3, 7, 9, 1, 3, 7, 9))) % 10
    n = "".join(map(str, body)) + str(check) + str(rng.randint(1, 9))
    return f"{n[:4]} {n[4:9]} {n[9]}"


def _nric(rng):
    prefix = rng.choice("STFG")
    body = prefix + _digits(rng, 7)
    return next(body + c for c in string.ascii_uppercase if ids._valid_nric(body + c))


def _dea(rng):
    body = rng.choice("ABFGM") + rng.choice(string.ascii_uppercase) + _digits(rng, 6)
    return next(body + d for d in string.digits if ids._valid_dea(body + d))


def _uk_licence(rng, month: Optional[int] = None):
    surname = "".join(rng.choice(string.ascii_uppercase) for _ in range(5))
    born = _birth(rng)
    month = month if month is not None else born.month + rng.choice((0, 50))
    return (f"{surname}{str(born.year)[2]}{month:02d}{born.day:02d}{str(born.year)[3]}"
            f"{rng.choice(string.ascii_uppercase)}{rng.choice(string.ascii_uppercase)}"
            f"{rng.randint(0, 9)}{rng.choice(string.ascii_uppercase)}{rng.choice(string.ascii_uppercase)}")


_B58 = "123456789ABCDEFGHJKLMNPQRSTUVWXYZabcdefghijkmnopqrstuvwxyz"


def _base58check(payload: bytes) -> str:
    data = payload + hashlib.sha256(hashlib.sha256(payload).digest()).digest()[:4]
    number, out = int.from_bytes(data, "big"), ""
    while number:
        number, digit = divmod(number, 58)
        out = _B58[digit] + out
    return "1" * (len(data) - len(data.lstrip(b"\0"))) + out


_BECH32 = "qpzry9x8gf2tvdw0s3jn54khce6mua7l"


def _bech32_polymod(values: list[int]) -> int:
    generator = (0x3b6a57b2, 0x26508e6d, 0x1ea119fa, 0x3d4233dd, 0x2a1462b3)
    check = 1
    for value in values:
        top = check >> 25
        check = (check & 0x1ffffff) << 5 ^ value
        for i in range(5):
            check ^= generator[i] if (top >> i) & 1 else 0
    return check


def _bech32(rng: random.Random) -> str:
    program = bytes(rng.randrange(256) for _ in range(20))
    bits = "".join(f"{b:08b}" for b in program)
    data = [0] + [int(bits[i:i + 5], 2) for i in range(0, 160, 5)]   # witness v0
    hrp = [ord(c) >> 5 for c in "bc"] + [0] + [ord(c) & 31 for c in "bc"]
    polymod = _bech32_polymod(hrp + data + [0] * 6) ^ 1
    checksum = [(polymod >> 5 * (5 - i)) & 31 for i in range(6)]
    return "bc1" + "".join(_BECH32[d] for d in data + checksum)


def _bitcoin(rng):
    if rng.random() < 0.5:
        return _bech32(rng)
    return _base58check(bytes([rng.choice((0, 5))]) + bytes(rng.randrange(256) for _ in range(20)))


def _bitcoin_invalid(rng):
    value = _bitcoin(rng)
    alphabet = _BECH32 if value.startswith("bc1") else _B58
    while True:
        i = rng.randrange(5, len(value))
        broken = value[:i] + rng.choice(alphabet.replace(value[i], "")) + value[i + 1:]
        if not bitcoin.is_valid(broken):
            return broken


def _eip55(rng):
    from Crypto.Hash import keccak

    body = "".join(rng.choice("0123456789abcdef") for _ in range(40))
    digest = keccak.new(digest_bits=256, data=body.encode()).hexdigest()
    return "0x" + "".join(c.upper() if c.isalpha() and int(h, 16) >= 8 else c
                          for c, h in zip(body, digest))


def _eip55_invalid(rng):
    value = _until(rng, _eip55, lambda v: sum(c.isalpha() for c in v[2:]) >= 3)
    letters = [i for i, c in enumerate(value) if c.isalpha() and i > 1]
    i = rng.choice(letters)
    return value[:i] + value[i].swapcase() + value[i + 1:]


def _any_mac(rng):
    sep = rng.choice(":-")
    upper = rng.random() < 0.5
    return sep.join(f"{rng.randrange(256):02X}" if upper else f"{rng.randrange(256):02x}"
                    for _ in range(6))


def _mac(rng, valid: bool = True):
    """A MAC address stdnum.mac accepts (a registered manufacturer, or locally administered)
    or, with `valid` false, one it rejects (universally administered, unknown manufacturer)."""
    return _until(rng, _any_mac, lambda v: stdnum_mac.is_valid(v) == valid)


def _routing(rng):
    body = rng.choice(["0", "1", "2", "3"]) + _digits(rng, 7)
    return body + us_rtn.calc_check_digit(body)


def _uk_plate(rng, age: Optional[int] = None):
    age = age if age is not None else rng.choice(list(range(2, 26)) + list(range(51, 76)))
    letters = "ABCDEFGHJKLMNOPRSTUVWXY"
    return (f"{rng.choice(letters)}{rng.choice(letters)}{age:02d} "
            f"{''.join(rng.choice(letters) for _ in range(3))}")


def _in_plate(rng, state: Optional[str] = None):
    state = state or rng.choice(("MH", "DL", "KA", "TN", "UP", "GJ", "WB"))
    return f"{state} {rng.randint(1, 99):02d} {rng.choice(string.ascii_uppercase)}" \
           f"{rng.choice(string.ascii_uppercase)} {_digits(rng, 4)}"


def _timestamp(rng, month: Optional[int] = None):
    day = _birth(rng) + datetime.timedelta(days=365 * 30)
    month = month or day.month
    offset = rng.choice(("Z", "+02:00", "-07:00", "+0530"))
    return (f"{day.year}-{month:02d}-{day.day:02d}T{rng.randint(0, 23):02d}:{rng.randint(0, 59):02d}"
            f":{rng.randint(0, 59):02d}.{_digits(rng, 3)}{offset}")


def _month_year(rng, month: Optional[int] = None):
    month = month or rng.randint(1, 12)
    year = rng.randint(1990, 2030)
    if rng.random() < 0.5 and month <= 12:
        return f"{datetime.date(2000, month, 1):%b}-{year}"
    return f"{month:02d}/{year}"


def _national_phone(region: str, valid: bool = True) -> Maker:
    """A mobile number of `region` in its national format that phonenumbers accepts or, with
    `valid` false, the same one digit short, which it rejects for that region."""
    import phonenumbers

    example = str(phonenumbers.example_number_for_type(
        region, phonenumbers.PhoneNumberType.MOBILE).national_number)

    def valid_number(rng):
        while True:
            number = phonenumbers.parse(example[:3] + _digits(rng, len(example) - 3), region)
            if phonenumbers.is_valid_number(number):
                return phonenumbers.format_number(number, phonenumbers.PhoneNumberFormat.NATIONAL)

    def invalid_number(rng):
        while True:
            written = valid_number(rng)[:-1]
            if not phonenumbers.is_valid_number(phonenumbers.parse(written, region)):
                return written
    return valid_number if valid else invalid_number


_PLATE_LETTERS = "ABCDEFGHJKLMNPRSTUVWXYZ"


def _de_plate(rng, digits: int = 0):
    area = "".join(rng.choice(_PLATE_LETTERS) for _ in range(rng.randint(1, 3)))
    return f"{area}-{''.join(rng.choice(_PLATE_LETTERS) for _ in range(rng.randint(1, 2)))} " \
           f"{rng.randint(1, 9)}{_digits(rng, digits or rng.randint(0, 3))}"


def _tr_plate(rng, province: Optional[int] = None):
    province = province or rng.randint(1, 81)
    return f"{province:02d} {''.join(rng.choice(_PLATE_LETTERS) for _ in range(3))} {_digits(rng, 3)}"


def _dashed_iban(rng):
    from stdnum import iban

    country, bban = rng.choice((("DE", 18), ("AT", 16), ("PL", 24), ("AL", 24)))

    def make(r):
        digits = _digits(r, bban)
        return f"{country}{iban.calc_check_digits(country + '00' + digits)}{digits}"
    value = _until(rng, make, iban.is_valid)
    return "-".join(value[i:i + 4] for i in range(0, len(value), 4))


_DE_DOC_ALPHABET = "CFGHJKLMNPRTVWXYZ"


def _de_document(rng, check: bool = True):
    """A German passport or identity card serial, with its ICAO check digit half the time;
    with `check` false, always with a wrong one."""
    while True:
        serial = rng.choice(_DE_DOC_ALPHABET) + "".join(
            rng.choice(_DE_DOC_ALPHABET + string.digits) for _ in range(8))
        if any(ch.isdigit() for ch in serial[1:]):
            break
    digit = ids._icao_check_digit(serial)
    if not check:
        return serial + str((digit + rng.randint(1, 9)) % 10)
    return serial + (str(digit) if rng.random() < 0.5 else "")


def _short_date(rng, valid: bool = True):
    """`5/21` (month and year) or `21.5.21`; invalid: month 13-19, or day 32-39."""
    month = rng.randint(1, 12) if valid else rng.randint(13, 19)
    if rng.random() < 0.5:
        return f"{month}/{_digits(rng, 2)}"
    day = rng.randint(1, 28) if valid else rng.randint(32, 39)
    return f"{day}.{rng.randint(1, 12)}.{_digits(rng, 2)}"


def _ssn_valid(rng):
    return _until(rng, lambda r: _digits(r, 9), lambda v: us_ssn.is_valid(v))


def _ssn_invalid(rng):
    return rng.choice(("000", "666", str(rng.randint(900, 999)))) + _digits(rng, 6)


def _hetu_2023(rng):
    """A HETU with a century sign in use since 2023 (Y X W V U, B-F), any individual number."""
    born = _birth(rng)
    sign = rng.choice("YXWVU") if born.year < 2000 else rng.choice("BCDEF")
    body = born.strftime("%d%m%y") + f"{rng.randint(2, 999):03d}"
    return body[:6] + sign + body[6:] + ids._HETU_CHECK[int(body) % 31]


def _rrn_2020(rng):
    """A Korean RRN issued since October 2020: birth date, sex digit, six random digits."""
    born = datetime.date(2020, 10, 1) + datetime.timedelta(days=rng.randrange(1800))
    body = born.strftime("%y%m%d") + rng.choice("34") + _digits(rng, 6)
    return f"{body[:6]}-{body[6:]}"


def _de_vat(rng):
    return _until(rng, lambda r: "DE" + rng.choice("123456789") + _digits(r, 8), de_vat.is_valid)


def _pan(rng):
    letters = string.ascii_uppercase
    return ("".join(rng.choice(letters) for _ in range(3)) + rng.choice("PCHABGJLFT")
            + rng.choice(letters) + f"{rng.randint(1, 9999):04d}" + rng.choice(letters))


def _pan_invalid(rng):
    value = _pan(rng)
    return value[:3] + rng.choice("DEIKMNOQRSUVWXYZ") + value[4:]   # no such holder type


def _epic(rng):
    body = "".join(rng.choice(string.ascii_uppercase) for _ in range(3)) + _digits(rng, 6)
    return body + luhn.calc_check_digit(body[3:])


def _lanr(rng):
    body = _digits(rng, 6)
    check = (10 - sum(int(d) * w for d, w in zip(body, (4, 9, 4, 9, 4, 9))) % 10) % 10
    return body + str(check) + _digits(rng, 2)


def _cue(*words: str) -> tuple[str, ...]:
    return tuple(f"{word} {{}} was checked." if i % 2 else f"Her {word} is {{}}, as filed."
                 for i, word in enumerate(words))


def specs() -> list[Spec]:
    """Every kind of the bench."""
    def spec(kind, label, maker, is_valid, sentences=NEUTRAL):
        valid, invalid = _checked(maker, is_valid)
        return Spec(kind, label, valid, invalid, sentences)
    def cued(base: Spec, *sentences: str) -> Spec:
        return Spec(base.kind, base.label, base.valid, base.invalid, base.sentences, sentences)
    return [
        cued(spec("KR RRN", "ID", _rrn, kr_rrn.is_valid), "주민등록번호 {} 입니다", "RRN: {}"),
        cued(spec("KR RRN since October 2020", "ID", _rrn_2020, ids._valid_kr_rrn),
             "주민등록번호 {} 입니다", "His Korean RRN is {}"),
        cued(spec("TR Kimlik", "ID", _kimlik, tr_tckimlik.is_valid), "T.C. Kimlik No: {}",
             "Kimlik numarası {} olarak kayıtlı."),
        cued(spec("TH PIN", "ID", _thai, th_pin.is_valid), "เลขประจำตัวประชาชน {}", "Thai ID {}"),
        cued(spec("ZA ID", "ID", _za, za_idnr.is_valid), "ID number {} on file.",
             "Her identity number is {}."),
        cued(spec("FI HETU, 2023 century signs", "ID", _hetu_2023, ids._valid_hetu),
             "Henkilötunnus {} on rekisterissä.", "HETU: {}"),
        spec("DE VAT ID", "ID", _de_vat, de_vat.is_valid,
             ("Unsere USt-IdNr. lautet {}.", "Our VAT number is {}.")),
        spec("DE VAT ID, bare", "ID", _de_vat, de_vat.is_valid),
        spec("DE LANR", "ID", _lanr, ids._valid_lanr,
             ("Die LANR {} ist hinterlegt.", "Lebenslange Arztnummer: {}")),
        Spec("IN PAN", "ID", _pan, _pan_invalid, ("PAN card {} issued.", "Her PAN is {}.")),
        spec("IN voter ID (EPIC)", "ID", _epic, in_epic.is_valid,
             ("Voter ID {} was checked.", "EPIC number {}")),
        spec("IN Aadhaar, bare in groups", "ID", _aadhaar, in_aadhaar.is_valid),
        spec("SE personnummer", "ID", _personnummer, se_personnummer.is_valid,
             _cue("personnummer", "personal identity number")),
        cued(spec("FI HETU", "ID", _hetu, fi_hetu.is_valid), "Henkilötunnus {} on rekisterissä.",
             "HETU: {}"),
        spec("IN Aadhaar", "ID", _aadhaar, in_aadhaar.is_valid, _cue("Aadhaar", "Aadhaar number")),
        spec("CA SIN", "ID", _sin, ca_sin.is_valid, _cue("SIN", "social insurance number")),
        cued(spec("DE RVNR", "ID", _rvnr, ids._valid_rvnr),
             "Rentenversicherungsnummer {} liegt vor.", "Versicherungsnummer: {}"),
        Spec("US ITIN", "ID", _itin, lambda r: _break(r, _itin(r), us_itin.is_valid, (4, 5)),
             cue_sentences=_cue("ITIN", "taxpayer identification number")),
        spec("US NPI", "ID", _npi, ids._valid_npi, _cue("NPI", "national provider identifier")),
        Spec("US MBI", "ID", _mbi, lambda r: _mbi(r)[:1] + "S" + _mbi(r)[2:], shaped_invalid=False),
        spec("AU TFN", "ID", lambda r: _digits(r, 9), au_tfn.is_valid, _cue("TFN", "tax file number")),
        cued(spec("AU ABN", "ID",
                  lambda r: f"{r.randint(10, 99)} {_digits(r, 3)} {_digits(r, 3)} {_digits(r, 3)}",
                  lambda v: au_abn.is_valid(v.replace(" ", ""))), *_cue("ABN")),
        spec("AU ACN", "ID", lambda r: f"{_digits(r, 3)} {_digits(r, 3)} {_digits(r, 3)}",
             lambda v: au_acn.is_valid(v.replace(" ", "")), _cue("ACN", "company number")),
        spec("AU Medicare", "ID", _medicare, ids._valid_medicare, _cue("Medicare", "Medicare card")),
        cued(spec("SG NRIC/FIN", "ID", _nric, ids._valid_nric), "NRIC {} was checked.", "FIN: {}"),
        spec("US DEA (medical licence)", "ID", _dea, ids._valid_dea, _cue("DEA number", "licence")),
        Spec("UK driving licence", "ID", _uk_licence, lambda r: _uk_licence(r, month=r.randint(13, 50)),
             cue_sentences=_cue("driving licence")),
        Spec("passport", "ID", lambda r: r.choice(["", "A", "YA", "AAA"]) + _digits(r, 7),
             lambda r: _digits(r, 4), _cue("passport", "passport number"), shaped_invalid=False),
        cued(spec("UK NHS", "ID", lambda r: f"{_digits(r, 3)} {_digits(r, 3)} {_digits(r, 4)}",
                  lambda v: gb_nhs.is_valid(v.replace(" ", ""))), *_cue("NHS number")),
        spec("PL PESEL", "ID", lambda r: _birth(r).strftime("%y%m%d") + _digits(r, 5),
             lambda v: pl_pesel.is_valid(v), _cue("PESEL", "numer PESEL")),
        spec("PL PESEL without a cue", "ID", lambda r: _birth(r).strftime("%y%m%d") + _digits(r, 5),
             pl_pesel.is_valid),
        cued(spec("UK NHS with dashes", "ID",
                  lambda r: f"{_digits(r, 3)}-{r.choice('01')}{_digits(r, 2)}-{_digits(r, 4)}",
                  lambda v: gb_nhs.is_valid(v.replace("-", ""))), *_cue("NHS number")),
        Spec("US SSN, bare digits", "ID", _ssn_valid, _ssn_invalid,
             _cue("SSN", "social security number")),
        Spec("DE passport, ID card", "ID", _de_document, lambda r: _de_document(r, check=False),
             _cue("Reisepass", "Personalausweis")),
        Spec("short date", "DATE", _short_date, lambda r: _short_date(r, valid=False),
             ("Born {}, as filed.", "The card expires {} and was checked.")),
        Spec("Bitcoin", "CRYPTO", _bitcoin, _bitcoin_invalid),
        Spec("Ethereum", "CRYPTO", _eip55, _eip55_invalid),
        Spec("MAC", "MAC", _mac, lambda r: _mac(r, valid=False)),
        spec("ABA routing", "BANK", _routing, us_rtn.is_valid, _cue("routing number", "ABA")),
        Spec("bank account", "BANK", lambda r: _digits(r, r.randint(8, 17)), lambda r: _digits(r, 6),
             _cue("account number", "checking account")),
        Spec("UK plate", "VEHICLE", _uk_plate, lambda r: _uk_plate(r, age=r.randint(30, 49))),
        Spec("IN plate", "VEHICLE", _in_plate, lambda r: _in_plate(r, state="ZQ")),
        Spec("DE plate", "VEHICLE", _de_plate, lambda r: _de_plate(r, digits=4),
             _cue("Kennzeichen", "number plate")),
        Spec("TR plate", "VEHICLE", _tr_plate, lambda r: _tr_plate(r, province=r.randint(82, 99)),
             _cue("plaka", "plate")),
        Spec("IBAN with dashes", "IBAN", _dashed_iban,
             lambda r: _break(r, _dashed_iban(r), lambda v: stdnum_iban.is_valid(v.replace("-", "")),
                              (2, 3))),
        Spec("ES NIF, lower case", "ID", lambda r: _nif(r).lower(),
             lambda r: _break(r, _nif(r), es_dni.is_valid).lower(), _cue("NIF", "DNI")),
        Spec("IL phone", "PHONE", _national_phone("IL"), _national_phone("IL", valid=False),
             ("טלפון {} בבית", "מספר נייד {} תודה")),
        Spec("CN phone", "PHONE", _national_phone("CN"), _national_phone("CN", valid=False),
             ("电话: {}", "手机 {} 联系")),
        Spec("TR phone", "PHONE", _national_phone("TR"), _national_phone("TR", valid=False),
             ("Telefon numaram {}, İstanbul.", "Cep: {} (Ağustos)")),
        Spec("PH phone", "PHONE", _national_phone("PH"), _national_phone("PH", valid=False),
             ("Call {} or the office on +63 2 8123 4567.", "Mobile {}, Manila (+63).")),
        Spec("ISO timestamp", "DATE", _timestamp, lambda r: _timestamp(r, month=13)),
        Spec("month-year", "DATE", _month_year, lambda r: f"{r.randint(13, 99)}/{r.randint(1990, 2030)}"),
    ]


def _covered(spans, start: int, end: int, label: str) -> bool:
    chars = set(range(start, end))
    for span in spans:
        if span.label == label:
            chars -= set(range(span.start, span.end))
    return not chars


def _touched(spans, start: int, end: int, label: str) -> bool:
    return any(s.label == label and s.start < end and start < s.end for s in spans)


def run(per_kind: int, seed: int) -> list[dict]:
    """Per kind: found (valid values covered by the kind's label), hidden beside cue (invalid
    identifiers in a cue sentence covered by ID; None for other kinds), left alone (invalid
    values in a neutral sentence not touched by the label), each over `per_kind` values."""
    rng = random.Random(seed)
    rows = []
    for spec in specs():
        found = alone = hidden = 0
        for i in range(per_kind):
            template = spec.sentences[i % len(spec.sentences)]
            value = spec.valid(rng)
            text = template.format(value)
            start = text.index(value)
            found += _covered(find_patterns(text), start, start + len(value), spec.label)
            value = spec.invalid(rng)
            text = NEUTRAL[i % len(NEUTRAL)].format(value)
            start = text.index(value)
            alone += not _touched(find_patterns(text), start, start + len(value), spec.label)
            if spec.label == "ID" and spec.cued:
                text = spec.cued[i % len(spec.cued)].format(value)
                start = text.index(value)
                hidden += _covered(find_patterns(text), start, start + len(value), "ID")
        rows.append({"kind": spec.kind, "label": spec.label, "found": found / per_kind,
                     "hidden_beside_cue": hidden / per_kind if spec.label == "ID" and spec.cued
                     else None,
                     "left_alone": alone / per_kind})
    return rows


def main(argv: Optional[Sequence[str]] = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--per-kind", type=int, default=200)
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args(argv)
    rows = run(args.per_kind, args.seed)
    print(f"{'kind':<32} {'label':<8} {'found':>7} {'hidden beside cue':>18} {'left alone':>11}")
    for row in rows:
        beside = "-" if row["hidden_beside_cue"] is None else f"{row['hidden_beside_cue']:.1%}"
        print(f"{row['kind']:<32} {row['label']:<8} {row['found']:>7.1%} {beside:>18} "
              f"{row['left_alone']:>11.1%}")
    worst = min(min(r["found"], r["left_alone"], 1.0 if r["hidden_beside_cue"] is None
                    else r["hidden_beside_cue"]) for r in rows)
    print(f"lowest rate: {worst:.1%} over {len(rows)} kinds, {args.per_kind} valid and "
          f"{args.per_kind} invalid values each")
    return 0


if __name__ == "__main__":
    sys.exit(main())
