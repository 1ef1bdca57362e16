"""Payment data: card numbers and IBANs, with their check digits."""
from __future__ import annotations

import re
from typing import Iterable

from stdnum import iban as stdnum_iban
from stdnum import luhn

from larvatus.transforms.recognizers.base import DIGIT_RUN_RE, NUM_END, NUM_START, SCORE_CHECKSUM, finditer_on_lines, DIGIT_RE
from larvatus.transforms.recognizers.registry import Kind, PatternSettings
from larvatus.transforms.records import EntitySpan

# ----------------------------------------------------------------------------- CARD

_CARD_RE = re.compile(
    NUM_START + r"[0-9]{3,19}(?:( - | |-)[0-9]{1,19}(?:\1[0-9]{1,19}){0,8})?" + NUM_END)
# Maestro numbers may have 12 digits; only these prefixes are taken at that length
_MAESTRO_12 = ("0604", "5018", "5020", "5038", "56", "57", "58", "6304", "6390", "6759", "6761",
               "6762", "6763")


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
    """Whether a card network issues numbers of this length and first digits."""
    if 13 <= len(digits) <= 19:
        return digits[0] in "23456" or digits.startswith("1800")     # 1800: JCB
    return len(digits) == 12 and digits.startswith(_MAESTRO_12)


def recognize_cards(text: str, settings: PatternSettings) -> list[EntitySpan]:
    """Payment cards: 13 to 19 Luhn-valid digits, grouped by one kind of separator (a space, a
    dash, or a dash between spaces).

    Groups of 3 to 6 digits (the last may be shorter: "4445 3499 6189 9") or one unbroken
    run; the number starts as a card network's do (2 to 6: Mastercard, Amex/Diners/JCB,
    Visa, Mastercard/Maestro, Discover/UnionPay; 1800: JCB). Maestro's 12-digit numbers
    are taken too, with Maestro prefixes only.
    """
    spans = []
    for m in _CARD_RE.finditer(text):
        groups = [(g.start(), g.end()) for g in DIGIT_RUN_RE.finditer(text, m.start(), m.end())]
        spans.extend(EntitySpan(s, e, "CARD", SCORE_CHECKSUM) for s, e in _card_in(text, groups))
    return spans


# ----------------------------------------------------------------------------- IBAN

_IBAN_RE = re.compile(
    r"(?=[A-Za-z])(?<!\w)[A-Z]{2}[0-9]{2}"
    r"(?:[A-Z0-9]{11,30}|(?: [A-Z0-9]{4}){2,7}(?: [A-Z0-9]{1,4})?)(?!\w)",
    re.IGNORECASE)


def recognize_ibans(text: str, settings: PatternSettings) -> list[EntitySpan]:
    """IBANs of any country, compact or in groups of four, valid for `stdnum.iban`.

    A grouped candidate that fails is retried without its trailing groups, in case a
    word of four letters or digits followed it.
    """
    spans = []
    for m in _IBAN_RE.finditer(text):
        parts = m.group().split(" ")
        for k in range(len(parts), 0, -1):
            candidate = " ".join(parts[:k])
            if len(candidate) < 15:
                break
            if stdnum_iban.is_valid(candidate):
                end = m.start() + len(candidate)
                spans.append(EntitySpan(m.start(), end, "IBAN", SCORE_CHECKSUM))
                break
    return spans



KINDS = (
    Kind("CARD", recognize_cards, 0, "payment card numbers, 12 to 19 digits, compact or grouped",
         validation="Luhn (stdnum.luhn)"),
    Kind("IBAN", recognize_ibans, 0, "IBANs of any country, compact or in groups of four",
         validation="mod 97 and country format (stdnum.iban)"),
)
