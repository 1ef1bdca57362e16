"""Separator folding: every Unicode space, dash and digit folded to ASCII, each offset kept."""
from __future__ import annotations

import sys
import unicodedata

import pytest

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


def found(text):
    from larvatus.transforms.recognizers import find_patterns

    return {(s.label, text[s.start:s.end]) for s in find_patterns(text)}


@pytest.mark.parametrize("text, label, value", [
    ("Card 4111.1111.1111.1111 on file", "CARD", "4111.1111.1111.1111"),
    ("Card 4111-1111 1111.1111 on file", "CARD", "4111-1111 1111.1111"),       # mixed
    ("Card 4111/1111/1111/1111 on file", "CARD", "4111/1111/1111/1111"),
    ("Card 4111_1111_1111_1111 on file", "CARD", "4111_1111_1111_1111"),
    ("Card 4111 - 1111 - 1111 - 1111 on file", "CARD", "4111 - 1111 - 1111 - 1111"),
    ("IBAN DE89 - 3704 - 0044 - 0532 - 0130 - 00.", "IBAN", "DE89 - 3704 - 0044 - 0532 - 0130 - 00"),
    ("IBAN DE89.3704.0044.0532.0130.00.", "IBAN", "DE89.3704.0044.0532.0130.00"),
    ("IBAN GB82/WEST/1234/5698/7654/32 ok", "IBAN", "GB82/WEST/1234/5698/7654/32"),
    ("IBAN Gb33BuKb20201555555555 ok", "IBAN", "Gb33BuKb20201555555555"),        # mixed case
    ("SSN 536.22.1234", "ID", "536.22.1234"),
    ("NHS 943.476.5919 today", "ID", "943.476.5919"),
    ("Born 12 - 08 - 1956 in Leeds", "DATE", "12 - 08 - 1956"),
    ("Born 12 / 08 / 1956 in Leeds", "DATE", "12 / 08 / 1956"),
    ("Tel 030 / 1234 - 5678", "PHONE", "030 / 1234 - 5678"),
])
def test_digit_groups_joined_by_any_separators_are_found(text, label, value):
    assert (label, value) in found(text)


@pytest.mark.parametrize("text, kept", [
    ("pip install pkg==2.10.1 today", set()),                     # a version
    ("Upgrade to macOS 10.15.7 now, or 11.2.3.", set()),
    ("pi is 3.14159 roughly", set()),                             # a decimal
    ("They won 3 - 1 and 21 - 18 - 15 away", set()),              # scores
    ("A population of 1.234.567 people", set()),                  # thousands
    ("Server 192.168.1.1 is up", {("IP", "192.168.1.1")}),       # an IP address stays one
])
def test_versions_decimals_scores_and_addresses_stay_as_they_are(text, kept):
    assert found(text) == kept


def test_normalised_runs_map_back_to_every_original_offset():
    text = "x DE89 - 3704 - 0044 - 0532 - 0130 - 00 and 12 / 08 / 1956"
    normalised, origin = separators.normalise_number_runs(text)
    assert normalised == "x DE89 3704 0044 0532 0130 00 and 12/08/1956"
    assert all(normalised[i] == text[origin[i]] if normalised[i].isalnum()
               else not text[origin[i]].isalnum() for i in range(len(normalised)))
    assert list(origin) == sorted(origin)
    assert separators.normalise_number_runs("nothing 4111 1111 1111 1111 here") is None
