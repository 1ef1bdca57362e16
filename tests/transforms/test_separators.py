"""Separator folding: every Unicode space, dash and digit folded to ASCII, each offset kept."""
from __future__ import annotations

import sys
import unicodedata

from larvatus.transforms import separators


def test_folding_keeps_every_offset():
    text = "4111\u00a01111\u20091111\u202f1111 \u2013 \u0664\u0661 \u3000x \u200bé \u2212"
    folded = separators.fold_separators(text)
    assert folded == "4111 1111 1111 1111 - 41  x  é -"
    assert len(folded) == len(text)


def test_ascii_text_is_returned_unchanged():
    text = "plain - text 12"
    assert separators.fold_separators(text) is text


def _category(name):
    return {chr(c) for c in range(0x80, sys.maxunicode + 1)
            if unicodedata.category(chr(c)) == name}


def test_folded_characters_are_unicode_spaces_dashes_and_digits():
    assert set(separators.SPACES) == _category("Zs")
    assert set(separators.DASHES) == _category("Pd")
    zeros = {chr(c) for c in separators.DIGIT_ZEROS}
    assert all(unicodedata.decimal(chr(z + i)) == i
               for z in separators.DIGIT_ZEROS for i in range(10))
    if unicodedata.unidata_version == "14.0.0":     # later versions add digit blocks
        assert zeros == {d for d in _category("Nd") if unicodedata.decimal(d) == 0}
