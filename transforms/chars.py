"""Invisible and control characters: which ones words see through, and the normal form names are compared in."""
from __future__ import annotations

import re
import unicodedata

# Unicode's Default_Ignorable_Code_Point (DerivedCoreProperties.txt): characters a
# renderer shows as nothing when it has no glyph for them. Zero-width joiners and
# spaces, soft hyphen, variation selectors (VS16 U+FE0F), bidi controls, word joiner,
# byte-order mark, Hangul fillers, tag characters.
DEFAULT_IGNORABLE = (
    "\u00ad\u034f\u061c\u115f\u1160\u17b4\u17b5\u180b-\u180f\u200b-\u200f\u202a-\u202e"
    "\u2060-\u206f\u3164\ufe00-\ufe0f\ufeff\uffa0\ufff0-\ufff8"
    "\U0001bca0-\U0001bca3\U0001d173-\U0001d17a\U000e0000-\U000e0fff")
IGNORABLE = re.compile(f"[{DEFAULT_IGNORABLE}]")
IGNORABLE_RUN = re.compile(f"[{DEFAULT_IGNORABLE}]+")
# C0/C1 control characters that Python does not count as whitespace (NUL, ESC, DEL, ...;
# \t \n \r \v \f \x1c-\x1f \x85 are whitespace already).
CONTROL = "\x00-\x08\x0e-\x1b\x7f-\x84\x86-\x9f"
CONTROL_CHAR = re.compile(f"[{CONTROL}]")
HIDDEN = re.compile(f"[{CONTROL}]|[{DEFAULT_IGNORABLE}]+")


def is_separator(char: str) -> bool:
    """Whitespace or a control character: never part of a word."""
    return char.isspace() or CONTROL_CHAR.match(char) is not None


def visible(word: str) -> str:
    """A word as the model sees it: default-ignorable characters dropped ("Pe\u200dter" -> "Peter")."""
    return IGNORABLE.sub("", word) if IGNORABLE.search(word) else word


def normalize_surface(surface: str) -> str:
    """The form under which two mentions count as the same name.

    Default-ignorable characters dropped, NFKC (so NFC, NFD and compatibility
    forms agree), case-folded, whitespace collapsed: "Zoë", "Zoe\u0308",
    "ZO\u00adË" all give "zoë".
    """
    if surface.isascii():   # the same result: ASCII is NFKC, has no ignorable character
        return " ".join(surface.lower().split())   # and case-folds as it lowers
    text = unicodedata.normalize("NFKC", visible(surface)).casefold()
    text = unicodedata.normalize("NFKC", text)   # casefold can leave a non-NFKC sequence
    return " ".join(text.split())
