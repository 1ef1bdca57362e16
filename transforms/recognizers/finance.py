"""Payment data: card numbers, IBANs, US bank routing and account numbers, crypto wallet addresses."""
from __future__ import annotations

import re
from typing import Iterable

from stdnum import bitcoin
from stdnum import iban as stdnum_iban
from stdnum import luhn
from stdnum.us import rtn as us_rtn
from stdnum.za import idnr as za_idnr

from larvatus.transforms.recognizers.base import (
    DIGIT_RUN_RE, NUM_END, NUM_START, SCORE_CHECKSUM, SCORE_FORMAT, cue_pattern,
    finditer_on_lines, line_window, longest_number, with_digit)
from larvatus.transforms.recognizers.registry import Kind, PatternSettings
from larvatus.transforms.records import EntitySpan

# ----------------------------------------------------------------------------- CARD

_CARD_RE = re.compile(
    NUM_START + r"[0-9]{3,19}(?:( - | |-)[0-9]{1,19}(?:\1[0-9]{1,19}){0,8})?" + NUM_END)
# Maestro numbers may have 12 digits; only these prefixes are taken at that length
_MAESTRO_12 = ("0604", "5018", "5020", "5038", "56", "57", "58", "6304", "6390", "6759", "6761",
               "6762", "6763")


_CARD_MIN_DIGITS = 12


def _card_in(text: str, groups: list[tuple[int, int]]) -> Iterable[tuple[int, int]]:
    """Yields the longest Luhn-valid card numbers made of whole, consecutive digit groups."""
    i = 0
    while i < len(groups):
        for j in range(len(groups), i, -1):
            parts = [text[s:e] for s, e in groups[i:j]]
            if j - i > 1 and not (all(3 <= len(p) <= 6 for p in parts[:-1])
                                  and 1 <= len(parts[-1]) <= 6):
                continue
            digits = "".join(parts)
            if _card_shaped(digits) and luhn.is_valid(digits):
                yield groups[i][0], groups[j - 1][1]
                i = j
                break
        else:
            i += 1


def _card_shaped(digits: str) -> bool:
    """Whether a card network issues numbers of this length and first digits. A 13-digit
    number that is a valid South African identity number is left to the ID recognizer."""
    if len(digits) == 15 and digits[0] == "1":     # UATP (airline cards)
        return True
    if 13 <= len(digits) <= 19:
        return (digits[0] in "23456" or digits.startswith("1800")) \
            and not (len(digits) == 13 and za_idnr.is_valid(digits))     # 1800: JCB
    return len(digits) == 12 and digits.startswith(_MAESTRO_12)


def recognize_cards(text: str, settings: PatternSettings) -> list[EntitySpan]:
    """Payment cards: 13 to 19 Luhn-valid digits, grouped by one kind of separator (a space, a
    dash, or a dash between spaces).

    Groups of 3 to 6 digits (the last may be shorter: "4445 3499 6189 9") or one unbroken
    run; the number starts as a card network's do (2 to 6: Mastercard, Amex/Diners/JCB,
    Visa, Mastercard/Maestro, Discover/UnionPay; 1800: JCB). Maestro's 12-digit numbers
    are taken too, with Maestro prefixes only. Digits inside something shaped like an IBAN
    (one whose checksum failed) are not a card.
    """
    spans: list[EntitySpan] = []
    if longest_number(text) < _CARD_MIN_DIGITS:   # a card's groups are one number
        return spans
    for m in _CARD_RE.finditer(text):
        groups = [(g.start(), g.end()) for g in DIGIT_RUN_RE.finditer(text, m.start(), m.end())]
        spans.extend(EntitySpan(s, e, "CARD", SCORE_CHECKSUM) for s, e in _card_in(text, groups))
    if spans:
        iban_shaped = [m.span() for m in _IBAN_RE.finditer(text)]
        spans = [span for span in spans
                 if not any(s < span.end and span.start < e for s, e in iban_shaped)]
    return spans


# ----------------------------------------------------------------------------- IBAN

_IBAN_RE = re.compile(
    r"(?=[A-Za-z])(?<!\w)[A-Z]{2}[0-9]{2}"
    r"(?:[A-Z0-9]{11,30}|(?P<sep>[ -])[A-Z0-9]{4}(?:(?P=sep)[A-Z0-9]{4}){1,6}"
    r"(?:(?P=sep)[A-Z0-9]{1,4})?)(?!\w)",
    re.IGNORECASE)


# Every IBAN holds its check digits and then eleven letters or digits, or two groups of four
# (`re` scans for the digits; the letter classes match what `_IBAN_RE`'s do).
_IBAN_HINT_RE = with_digit(re.compile(
    r"[0-9][0-9](?:[A-Z0-9]{11}|[ -][A-Z0-9]{4}[ -][A-Z0-9]{4})", re.IGNORECASE))


def recognize_ibans(text: str, settings: PatternSettings) -> list[EntitySpan]:
    """IBANs of any country, compact or in groups of four (spaces or dashes), valid for
    `stdnum.iban` (country length and format, mod 97), in any letter case ("Gb33BuKb...":
    a typed IBAN in mixed case is still the account).

    A grouped candidate that fails is retried without its trailing groups, in case a
    word of four letters or digits followed it.
    """
    spans = []
    for m in finditer_on_lines(_IBAN_RE, _IBAN_HINT_RE, text):
        sep = m.group("sep") or " "
        parts = m.group().split(sep)
        for k in range(len(parts), 0, -1):
            candidate = sep.join(parts[:k])
            if len(candidate) < 15:
                break
            if stdnum_iban.is_valid(candidate.replace("-", " ")):
                end = m.start() + len(candidate)
                spans.append(EntitySpan(m.start(), end, "IBAN", SCORE_CHECKSUM))
                break
    return spans



# ----------------------------------------------------------------------------- BANK

_ROUTING_RE = re.compile(NUM_START + r"[0-9]{9}" + NUM_END)
_ROUTING_CUE = cue_pattern(r"routing|ABA|RTN|transit|bank code")
_ACCOUNT_MIN_DIGITS = 8    # and routing numbers have nine
_ACCOUNT_RE = re.compile(NUM_START + r"[0-9]{%d,17}" % _ACCOUNT_MIN_DIGITS + NUM_END)
_ACCOUNT_CUE = cue_pattern(r"account|acct\.?|a/c|checking|savings|bank|kontonummer|konto|"
                           r"cuenta|compte|conto")
_BANK_CUE_BEFORE = 40
_BANK_CUE_AFTER = 24


def _near(text: str, start: int, end: int, cue: re.Pattern) -> bool:
    ws, we = line_window(text, start, end, _BANK_CUE_BEFORE, _BANK_CUE_AFTER)
    return bool(cue.search(text, ws, start) or cue.search(text, end, we))


def recognize_bank_numbers(text: str, settings: PatternSettings) -> list[EntitySpan]:
    """US ABA routing numbers (9 digits, checksum by `stdnum.us.rtn`) after a routing cue, and
    bank account numbers (8 to 17 digits, no checksum) after an account cue, on the same line."""
    spans: list[EntitySpan] = []
    if longest_number(text) < _ACCOUNT_MIN_DIGITS:   # no run of eight digits
        return spans
    if not (_ROUTING_CUE.search(text) or _ACCOUNT_CUE.search(text)):   # no cue, no number
        return spans
    for m in _ROUTING_RE.finditer(text):
        if us_rtn.is_valid(m.group()) and _near(text, m.start(), m.end(), _ROUTING_CUE):
            spans.append(EntitySpan(m.start(), m.end(), "BANK", SCORE_CHECKSUM))
    for m in _ACCOUNT_RE.finditer(text):
        if _near(text, m.start(), m.end(), _ACCOUNT_CUE) \
                and not _near(text, m.start(), m.end(), _ROUTING_CUE):
            spans.append(EntitySpan(m.start(), m.end(), "BANK", SCORE_FORMAT))
    return spans


# ----------------------------------------------------------------------------- CRYPTO

_BITCOIN_RE = re.compile(
    r"(?=[13bB])(?<![\w/])(?:[13][1-9A-HJ-NP-Za-km-z]{25,34}|(?:bc1|BC1)[02-9ac-hj-np-zAC-HJ-NP-Z]{11,71})"
    r"(?![\w/])")
_ETHEREUM_RE = re.compile(r"(?=0)(?<![\w/])0x[0-9a-fA-F]{40}(?![\w/])")
# Hints (`finditer_on_lines`): a "1" or "3" and eleven more letters or digits (base58's "1" or
# "3", bech32's "bc1"), "0x" and the forty hex digits.
_BITCOIN_HINT_RE = with_digit(re.compile(r"[13][0-9A-Za-z]{11}"))
_ETHEREUM_HINT_RE = with_digit(re.compile(r"0x[0-9a-fA-F]{40}"))
_ETHEREUM_CUE = cue_pattern(r"eth|ethereum|ether|wallet|address|metamask")


def _valid_eip55(address: str) -> bool:
    """An Ethereum address's EIP-55 mixed-case checksum: each letter is upper case exactly
    where the Keccak-256 of the lower-case hex digits has a nibble of 8 or more."""
    from Crypto.Hash import keccak

    body = address[2:]
    digest = keccak.new(digest_bits=256, data=body.lower().encode("ascii")).hexdigest()
    return all(ch.isupper() == (int(nibble, 16) >= 8)
               for ch, nibble in zip(body, digest) if ch.isalpha())


def recognize_crypto(text: str, settings: PatternSettings) -> list[EntitySpan]:
    """Bitcoin addresses (base58check and bech32, `stdnum.bitcoin`) and Ethereum addresses
    (mixed case: a valid EIP-55 checksum; all one case, which carries none: a cue word nearby)."""
    spans = [EntitySpan(m.start(), m.end(), "CRYPTO", SCORE_CHECKSUM)
             for m in finditer_on_lines(_BITCOIN_RE, _BITCOIN_HINT_RE, text)
             if bitcoin.is_valid(m.group())]
    for m in finditer_on_lines(_ETHEREUM_RE, _ETHEREUM_HINT_RE, text):
        body = m.group()[2:]
        if body.lower() == body or body.upper() == body:
            if _near(text, m.start(), m.end(), _ETHEREUM_CUE):
                spans.append(EntitySpan(m.start(), m.end(), "CRYPTO", SCORE_FORMAT))
        elif _valid_eip55(m.group()):
            spans.append(EntitySpan(m.start(), m.end(), "CRYPTO", SCORE_CHECKSUM))
    return spans


KINDS = (
    Kind("CARD", recognize_cards, 0, "payment card numbers, 12 to 19 digits, compact or grouped",
         validation="Luhn (stdnum.luhn)"),
    Kind("IBAN", recognize_ibans, 0, "IBANs of any country, compact or in groups of four",
         validation="mod 97 and country format (stdnum.iban)"),
    Kind("BANK", recognize_bank_numbers, 1,
         "US ABA routing numbers (9 digits) and bank account numbers (8-17 digits)",
         validation="routing: ABA checksum (stdnum.us.rtn); account: none",
         context="routing, ABA, RTN, transit; account, acct, checking, savings, bank, konto, "
                 "cuenta, compte, conto"),
    Kind("CRYPTO", recognize_crypto, 0,
         "Bitcoin addresses (base58check, bech32) and Ethereum addresses (0x + 40 hex)",
         validation="base58check / bech32 (stdnum.bitcoin); EIP-55 (Keccak-256, pycryptodome)",
         context="Ethereum addresses all in one case (no checksum): eth, ethereum, wallet, address"),
)
