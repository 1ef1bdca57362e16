"""Separators: length-preserving folding of Unicode spaces, dashes and digits, and one normalisation of digit groups."""
from __future__ import annotations

import re
from typing import Optional

# Unicode's space separators (category Zs) and dashes (Pd) beyond ASCII, and the zeros of
# its non-ASCII decimal digit blocks (Nd, ten consecutive code points each), Unicode 14;
# tests/transforms/test_separators.py checks them against `unicodedata`.
SPACES = ("\u00a0\u1680\u2000\u2001\u2002\u2003\u2004\u2005\u2006\u2007\u2008\u2009\u200a"
          "\u202f\u205f\u3000")
DASHES = ("\u058a\u05be\u1400\u1806\u2010\u2011\u2012\u2013\u2014\u2015\u2e17\u2e1a\u2e3a"
          "\u2e3b\u2e40\u2e5d\u301c\u3030\u30a0\ufe31\ufe32\ufe58\ufe63\uff0d\U00010ead")
DIGIT_ZEROS = tuple(int(z, 16) for z in (
    "660 6F0 7C0 966 9E6 A66 AE6 B66 BE6 C66 CE6 D66 DE6 E50 ED0 F20 1040 1090 17E0 1810 "
    "1946 19D0 1A80 1A90 1B50 1BB0 1C40 1C50 A620 A8D0 A900 A9D0 A9F0 AA50 ABF0 FF10 104A0 "
    "10D30 11066 110F0 11136 111D0 112F0 11450 114D0 11650 116C0 11730 118E0 11950 11C50 "
    "11D50 11DA0 16A60 16AC0 16B50 1D7CE 1D7D8 1D7E2 1D7EC 1D7F6 1E140 1E2F0 1E950 "
    "1FBF0").split())
# Invisible characters written between digit groups (zero-width space, word joiner, BOM)
# and minus signs, folded like spaces and dashes.
INVISIBLE_SEPARATORS = "\u200b\u2060\ufeff"
MINUS_SIGNS = "\u2212\u2796"

_FOLD = {**{ord(ch): " " for ch in SPACES + INVISIBLE_SEPARATORS},
         **{ord(ch): "-" for ch in DASHES + MINUS_SIGNS},
         **{zero + i: str(i) for zero in DIGIT_ZEROS for i in range(10)}}
# One character class of ranges: `re` scans for it in C, and only what folds reaches Python.
_FOLDED_RE = re.compile("[" + re.escape(SPACES + INVISIBLE_SEPARATORS + DASHES + MINUS_SIGNS)
                        + "".join(f"{chr(z)}-{chr(z + 9)}" for z in DIGIT_ZEROS) + "]")
# `re` tests every character against the class's many ranges; a set of the text's
# characters is ten times faster to rule out a text with nothing to fold.
_FOLDED = frozenset(map(chr, _FOLD))


def fold_separators(text: str) -> str:
    """`text` with every Unicode space separator (U+00A0, U+2009, U+202F, U+3000, ...) and
    zero-width space as " ", every dash and minus sign (U+2010-U+2015, U+2212, U+FF0D, ...)
    as "-", and every decimal digit of any script as its ASCII digit.

    One character for one character: offsets into the result are offsets into `text`, so
    a pattern matched on the result marks the same span of the original. ASCII text is
    returned as is.
    """
    if text.isascii() or _FOLDED.isdisjoint(text):
        return text
    return _FOLDED_RE.sub(lambda m: _FOLD[ord(m.group())], text)


# Digit groups joined by separators: any run of one to three spaces, dots, slashes,
# underscores or dashes (" - ", " / ", "._"), mixed within one number. A run is three groups
# or more; an IBAN opens with its country and check digits and may hold letters.
_GROUP_SEP = r"[ ._/-]{1,3}"
_NUMBER_RUN_RE = re.compile(
    rf"(?<![\w.,/+-])(?:[A-Za-z]{{2}}[0-9]{{2}}(?:{_GROUP_SEP}[A-Za-z0-9]{{4}}){{2,8}}"
    rf"(?:{_GROUP_SEP}[A-Za-z0-9]{{1,4}})?|[0-9]+(?:{_GROUP_SEP}[0-9]+){{2,}})(?![\w]|[.,/-][0-9])")
_SEPARATOR_RE = re.compile(r"[ ._/-]+")
_DATE_GROUPS_RE = re.compile(r"[0-9]{1,2} [0-9]{1,2} (?:[0-9]{2}|[0-9]{4})|[0-9]{4} [0-9]{1,2} [0-9]{1,2}")
_THOUSANDS_RE = re.compile(r"[0-9]{1,3}(?:\.[0-9]{3})+")
_IPV4_RE = re.compile(r"[0-9]{1,3}(?:\.[0-9]{1,3}){3}")
_MIN_DIGITS = 8     # fewer: versions ("2.10.1"), sections, scores, never a card or an id
_MAX_RUN = 80       # longer: a table or a listing, not one number (an IBAN spaced " - " is 58)


def _canonical_run(run: str) -> Optional[str]:
    """The run written the usual way, or None where it is already usual or is not a number
    to rewrite (a version, an IP address, thousands, a decimal)."""
    if len(run) > _MAX_RUN:
        return None
    separators = _SEPARATOR_RE.findall(run)
    if len(set(separators)) == 1 and separators[0] in (" ", "-"):
        return None                                     # "4111 1111 ...", "078-05-1121"
    if _IPV4_RE.fullmatch(run) or _THOUSANDS_RE.fullmatch(run):
        return None
    groups = _SEPARATOR_RE.split(run)
    stripped = {sep.strip() or " " for sep in separators}
    if _DATE_GROUPS_RE.fullmatch(" ".join(groups)):
        # a date: one separator, written without its spaces ("12 / 08 / 1956" -> "12/08/1956")
        if len(stripped) != 1 or stripped == {" "} or len(separators[0]) == 1:
            return None
        return stripped.pop()[0].join(groups)
    if sum(len(g) for g in groups if g.isdigit()) < _MIN_DIGITS:
        return None
    return " ".join(groups)


def normalise_number_runs(text: str) -> Optional[tuple[str, tuple[int, ...]]]:
    """`text` with digit groups joined by unusual separators written the usual way, and
    where each character of the result comes from in `text`; None when nothing changes.

    One normalisation for every kind that reads grouped digits (cards, IBANs, national ids,
    phones, dates): a run of three groups or more whose separators are runs of spaces,
    dots, slashes, underscores or dashes, mixed or spaced, is rewritten with single spaces
    ("4111.1111.1111.1111", "4111-1111 1111.1111", "DE89 - 3704 - 0044 ..." and
    "536.22.1234" as "4111 1111 1111 1111", ... "536 22 1234"), and a date of three groups
    with one spaced separator without its spaces ("12 / 08 / 1956" as "12/08/1956"). Left
    as they are: runs already written with single spaces or single dashes, IPv4 addresses,
    thousands ("1.234.567"), decimals and scores (fewer than three groups), and versions and
    other runs of fewer than eight digits ("2.10.1").

    Returns:
      (normalised text, origin): `origin[i]` is the index in `text` of the result's i-th
      character (a separator written for several takes the first one's index).
    """
    if "_" not in text and "." not in text and "/" not in text and " - " not in text \
            and "  " not in text and "- " not in text and " -" not in text:
        return None
    pieces: list[str] = []
    origin: list[int] = []
    cursor = 0
    for m in _NUMBER_RUN_RE.finditer(text):
        canonical = _canonical_run(m.group())
        if canonical is None:
            continue
        pieces.append(text[cursor:m.start()])
        origin.extend(range(cursor, m.start()))
        position = m.start()
        for part in re.split(r"([ ._/-]+)", m.group()):
            if not part:
                continue
            if _SEPARATOR_RE.fullmatch(part):
                origin.append(position)
            else:
                origin.extend(range(position, position + len(part)))
            position += len(part)
        written = canonical
        pieces.append(written)
        cursor = m.end()
    if not pieces:
        return None
    pieces.append(text[cursor:])
    origin.extend(range(cursor, len(text)))
    normalised = "".join(pieces)
    assert len(normalised) == len(origin)
    return normalised, tuple(origin)
