"""Postcodes (UK, US ZIP, German, French, Spanish, Italian, Dutch) and post-office boxes, in context."""
from __future__ import annotations

import bisect
import re
from typing import Iterable

from larvatus.transforms.recognizers.base import (
    DIGIT_RE, H, SCORE_FORMAT, cue_pattern, finditer_on_lines, line_window, with_digit)
from larvatus.transforms.recognizers.line_hints import lines_holding, with_line_stems
from larvatus.transforms.records import EntitySpan

# UK: outward code (A9, A99, AA9, AA99, A9A, AA9A) and inward code (9AA, without C I K M O V),
# upper case; "GIR 0AA" too. Full postcodes only: an outward code alone ("M20") is kept.
_UK_POSTCODE_RE = re.compile(
    r"(?=[A-Z])(?<![\w-])(?:GIR 0AA|(?:[A-PR-UWYZ][0-9][0-9A-HJKPSTUW]?|"
    r"[A-PR-UWYZ][A-HK-Y][0-9][0-9ABEHMNPRVWXY]?)" + f"{H}?" + r"[0-9][ABD-HJLNP-UW-Z]{2})(?!\w)")
_US_STATES = (
    "AL|AK|AZ|AR|CA|CO|CT|DE|DC|FL|GA|HI|ID|IL|IN|IA|KS|KY|LA|ME|MD|MA|MI|MN|MS|MO|MT|NE|NV|"
    "NH|NJ|NM|NY|NC|ND|OH|OK|OR|PA|RI|SC|SD|TN|TX|UT|VT|VA|WA|WV|WI|WY|PR|GU|VI|AS|MP")
# "Springfield, IL 62704", "New York, NY 10001-2345": a ZIP after a state abbreviation
_US_ZIP_AFTER_STATE_RE = re.compile(
    rf"(?=[A-Z])(?<![\w-])(?:{_US_STATES}),?{H}+(?P<zip>[0-9]{{5}}(?:-[0-9]{{4}})?)(?![\w-])")
# After a postcode cue: "ZIP 02110-1301", "PLZ: 80331", "code postal 75008", "CAP 00184".
_POSTCODE_CUE_RE = re.compile(
    rf"(?=[CPZcpz])(?<![\w-])(?i:zip(?:{H}?code)?|post(?:al)?{H}?code|postleitzahl|plz|"
    rf"code{H}postal|c\.?p\.|cap|c[óo]digo{H}postal)(?!\w)\.?{H}*[:#]?{H}*"
    r"(?P<zip>(?:[A-Z]-)?[0-9]{4,5}(?:-[0-9]{4})?(?:" + f"{H}?" + r"[A-Z]{2})?)(?![\w-])")
# A continental postcode with its town: "80331 München", "D-80331 München", "75008 Paris",
# "28013 Madrid", "00184 Roma", "1012 AB Amsterdam" (Dutch: four digits and two letters).
_POSTCODE_TOWN_RE = re.compile(
    rf"(?=[0-9A-Z])(?<![\w.,/-])(?P<zip>(?:[A-Z]{{1,2}}-)?(?:[0-9]{{5}}|[1-9][0-9]{{3}}{H}?"
    rf"(?!SA|SD|SS|AD|BC)[A-Z]{{2}}))(?![\w-]){H}+(?P<town>[A-ZÀ-ÖØ-Þ][^\W\d_]+(?:[-'’][^\W\d_]+)*)")
# Words after a five-digit number that make it a quantity, not a postcode and its town.
_NOT_TOWNS = frozenset(
    "euro euros eur usd gbp chf dollar dollars pounds francs yen people persons employees "
    "members users visitors items units pieces steps words pages copies tons tonnes km miles "
    "jahre stück menschen personen mitarbeiter einwohner personnes habitants euros personas "
    "habitantes persone abitanti mensen inwoners and the in of".split())
# P.O. boxes: "P.O. Box 1234", "PO Box 12", "Post Office Box 7", "Postfach 10 02 03",
# "B.P. 123" and "boîte postale 12", "Apartado 45", "Casella postale 12", "Postbus 1234"
# (not "BP 120/80": blood pressure).
_PO_BOX_RE = re.compile(
    rf"(?=[ABCPabcp])(?<![\w-])(?:P\.?{H}?O\.?{H}?Box|post{H}office{H}box|postfach|postbus|"
    rf"B\.P\.|bo[iî]te{H}postale|apartado(?:{H}de{H}correos)?|casella{H}postale|"
    rf"c\.?{H}?p\.?{H}?box)(?!\w)\.?{H}*[:#]?{H}*(?i:n[°º.]?{H}*)?"
    rf"[0-9]{{1,6}}(?:{H}[0-9]{{2,3}}){{0,2}}(?![\w/-])", re.IGNORECASE)
# Words of an address line: a continental postcode and town needs one of them on its line,
# or to open its line or follow a comma (an address's last part).
_ADDRESS_CUE = cue_pattern(
    r"address|adresse|anschrift|dirección|direccion|domicilio|indirizzo|adres|wohnhaft|"
    r"residing|resident|lives|living|wohnt|domicilié|domiciliée|str\.|straße|strasse|rue|"
    r"avenue|calle|via|viale|piazza|straat|laan|weg|plein|gracht|postfach|postbus")
_CUE_BEFORE = 60
_NEWLINE_RE = re.compile("\n")
# Hints (`finditer_on_lines`): what each pattern cannot do without, found faster than the
# patterns' opening lookarounds are tried (`[0-9][0-9]{3}`, not `[0-9]{4}`: `re` scans
# ahead for a pattern's first character only when it is no repeat).
_UK_HINT_RE = with_digit(re.compile(r"[0-9][ABD-HJLNP-UW-Z]{2}"))
_FIVE_DIGITS_RE = with_digit(re.compile(r"[0-9][0-9]{4}"))
_FOUR_DIGITS_RE = with_digit(re.compile(r"[0-9][0-9]{3}"))
# A case-insensitive hint opens with a case-sensitive class of its words' initials (no
# letter of these has another case-insensitive match in `re`): `re` then scans for the
# class instead of trying the words at every position, four times faster.
_POSTCODE_CUE_HINT_RE = with_line_stems(re.compile(
    r"(?=[CPZcpz])(?i:zip|post|plz|code|c\.?p|cap|c[óo]digo)"), "zip|post|plz|code|cp|c.p|cap|digo")
_PO_BOX_HINT_RE = with_line_stems(re.compile(
    r"(?=[ABPabp])(?i:box|postfach|postbus|postale|apartado|B\.P\.)"),
    "box|postfach|postbus|postale|apartado|b.p.")


def _town_postcodes(text: str, addresses: Iterable[EntitySpan]) -> Iterable[EntitySpan]:
    """Continental postcodes followed by a town, where the line reads as an address."""
    line_starts: list[int] = []
    address_lines: set[int] = set()
    for m in finditer_on_lines(_POSTCODE_TOWN_RE, _FOUR_DIGITS_RE, text,
                               lines_holding(text, DIGIT_RE, _FOUR_DIGITS_RE)):
        if m.group("town").lower() in _NOT_TOWNS:
            continue
        ws, _ = line_window(text, m.start(), m.end(), _CUE_BEFORE, 0)
        before = text[ws:m.start()].rstrip()
        if not line_starts:     # once, and only for a text with a candidate
            line_starts = [0] + [n.end() for n in _NEWLINE_RE.finditer(text)]
            address_lines = {bisect.bisect_right(line_starts, a.start) - 1 for a in addresses}
        line = bisect.bisect_right(line_starts, m.start()) - 1
        if not (before == "" or before.endswith(",") or _ADDRESS_CUE.search(text, ws, m.start())
                or line in address_lines or line - 1 in address_lines):
            continue
        yield EntitySpan(m.start("zip"), m.end("zip"), "ADDRESS", SCORE_FORMAT)


def recognize_postcodes(text: str, addresses: Iterable[EntitySpan] = ()) -> list[EntitySpan]:
    """Postcodes and post-office boxes, as ADDRESS spans (the postcode alone, not its town).

    - UK postcodes, full and upper case ("M20 6RT", "EC1A 1BB"), anywhere;
    - US ZIP and ZIP+4 codes after a state abbreviation ("Springfield, IL 62704");
    - any postcode after a cue ("ZIP", "postcode", "PLZ", "code postal", "CAP", "C.P.");
    - German, French, Spanish, Italian (five digits) and Dutch ("1012 AB") postcodes followed
      by a capitalised town, when the line opens with them, they follow a comma, an address
      word ("Anschrift", "rue", "wohnhaft", ...) is shortly before them, or the line or the
      one before holds one of `addresses` (street addresses found already);
    - P.O. boxes with their number ("P.O. Box 1234", "Postfach 10 02 03", "B.P. 123").
    """
    # Every pattern needs a digit: its other hints are searched on the digit lines alone.
    spans = [EntitySpan(m.start(), m.end(), "ADDRESS", SCORE_FORMAT)
             for m in finditer_on_lines(_UK_POSTCODE_RE, _UK_HINT_RE, text,
                                        lines_holding(text, DIGIT_RE, _UK_HINT_RE))]
    for pattern, hints in ((_US_ZIP_AFTER_STATE_RE, (_FIVE_DIGITS_RE,)),
                           (_POSTCODE_CUE_RE, (_FOUR_DIGITS_RE, _POSTCODE_CUE_HINT_RE))):
        spans += [EntitySpan(m.start("zip"), m.end("zip"), "ADDRESS", SCORE_FORMAT)
                  for m in finditer_on_lines(pattern, hints[-1], text,
                                             lines_holding(text, DIGIT_RE, *hints))]
    spans += _town_postcodes(text, addresses)
    spans += [EntitySpan(m.start(), m.end(), "ADDRESS", SCORE_FORMAT)
              for m in finditer_on_lines(_PO_BOX_RE, _PO_BOX_HINT_RE, text,
                                         lines_holding(text, DIGIT_RE, _PO_BOX_HINT_RE))]
    return spans
