"""Length-preserving separator folding: every Unicode space to " ", dash to "-", digit to ASCII."""
from __future__ import annotations

import re

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
