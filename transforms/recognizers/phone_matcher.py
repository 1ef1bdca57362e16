"""phonenumbers' PhoneNumberMatcher with each candidate's parse and check remembered (the same matches, found faster)."""
from __future__ import annotations

from functools import lru_cache
from typing import Optional

import phonenumbers
from phonenumbers import NumberParseException, PhoneNumber, PhoneNumberMatch, PhoneNumberMatcher

try:   # the matcher's own rules, so that only the part that depends on the candidate is cached
    from phonenumbers.phonenumbermatcher import (
        _LEAD_PATTERN, _MATCHING_BRACKETS, _PUB_PAGES, _verify, fullmatch)
    from phonenumbers.phonenumber import CountryCodeSource
except ImportError:   # another phonenumbers layout: the plain matcher (same matches, slower)
    _verify = None


@lru_cache(maxsize=1 << 15)
def _verified_number(candidate: str, region: Optional[str], leniency: int) -> Optional[PhoneNumber]:
    """The number `candidate` holds for `region` if it passes `leniency`, else None.

    What PhoneNumberMatcher does for a candidate once its surroundings have passed:
    it depends on the candidate, the region and the leniency alone (the grouping check
    reads no state of its matcher), so tables and dates that repeat the same digit
    groups are parsed once. The returned number is shared: never change it.
    """
    try:
        number = phonenumbers.parse(candidate, region, keep_raw_input=True)
        if not _verify(leniency, number, candidate, _CHECKER):
            return None
    except NumberParseException:
        return None
    number.country_code_source = CountryCodeSource.UNSPECIFIED
    number.raw_input = None
    number.preferred_domestic_carrier_code = None
    return number


class CachedPhoneNumberMatcher(PhoneNumberMatcher):
    """PhoneNumberMatcher whose `_parse_and_verify` looks its candidate up in `_verified_number`."""

    def _parse_and_verify(self, candidate, offset):
        if _verify is None:
            return super()._parse_and_verify(candidate, offset)
        # Formatting that says "not a phone number", then (VALID and stricter) the
        # characters around the candidate: as PhoneNumberMatcher checks them.
        if not fullmatch(_MATCHING_BRACKETS, candidate) or _PUB_PAGES.search(candidate):
            return None
        if self.leniency >= phonenumbers.Leniency.VALID:
            if offset > 0 and not _LEAD_PATTERN.match(candidate):
                previous_char = self.text[offset - 1]
                if (self._is_invalid_punctuation_symbol(previous_char)
                        or self._is_latin_letter(previous_char)):
                    return None
            last_char_index = offset + len(candidate)
            if last_char_index < len(self.text):
                next_char = self.text[last_char_index]
                if (self._is_invalid_punctuation_symbol(next_char)
                        or self._is_latin_letter(next_char)):
                    return None
        number = _verified_number(candidate, self.preferred_region, int(self.leniency))
        return None if number is None else PhoneNumberMatch(offset, candidate, number)


# The grouping checks call a matcher's `_check_number_grouping_is_valid`, which uses none of
# its state: one idle matcher serves every cached check.
_CHECKER = PhoneNumberMatcher("", None)
