"""The cached phone matcher finds exactly what phonenumbers' own PhoneNumberMatcher finds."""
from __future__ import annotations

import random

import phonenumbers
import pytest

from larvatus.transforms.recognizers import phone_matcher
from larvatus.transforms.recognizers.phone_matcher import CachedPhoneNumberMatcher

TEXTS = [
    "Call (212) 555-0143 or +44 20 7946 0958 today.",
    "Tel: 020 7946 0958, fax 020 7946 0959; mobile 07911 123456.",
    "Barnsley 4 3 1 0 8 2 10 and 1996-08-28 and 12-15 (3) and 555-0143x12",
    "06 12 34 56 78 / 01.23.45.67.89 / +33 1 23 45 67 89",
    "abc8005001234 8005001234def (800) 500-1234 800/500/1234 1/2/2020",
    "030 1234567, 089-123456, +49 (0)30 1234 5678, 0049 30 12345678",
    "ISBN 978-3-16-148410-0 pages 12-34 (1999), 10:15 am, 2021-03-04 10:15",
]
LENIENCIES = (phonenumbers.Leniency.POSSIBLE, phonenumbers.Leniency.VALID,
              phonenumbers.Leniency.STRICT_GROUPING, phonenumbers.Leniency.EXACT_GROUPING)


def _matches(matcher_class, text, region, leniency):
    return [(m.start, m.end, m.raw_string, m.number)
            for m in matcher_class(text, region, leniency=leniency)]


def _random_texts(count: int, seed: int = 7) -> list[str]:
    rng = random.Random(seed)
    pieces = ["+", "(", ")", " ", "-", ".", "/", "0", "00", "x", "ext. ", "tel ", "a", "\n"]
    return ["".join(rng.choice(pieces) if rng.random() < 0.3 else str(rng.randrange(10 ** rng.randint(1, 4)))
                    for _ in range(rng.randint(3, 14))) for _ in range(count)]


@pytest.mark.parametrize("region", [None, "US", "GB", "FR", "DE", "IN"])
@pytest.mark.parametrize("leniency", LENIENCIES)
def test_cached_matcher_finds_what_phonenumbers_finds(region, leniency):
    for text in TEXTS + _random_texts(150):
        # twice: the second pass reads the cache
        for _ in range(2):
            assert _matches(CachedPhoneNumberMatcher, text, region, leniency) == \
                _matches(phonenumbers.PhoneNumberMatcher, text, region, leniency), text


def test_cached_matcher_parses_a_repeated_candidate_once():
    phone_matcher._verified_number.cache_clear()
    text = "Barnsley 4 3 1 0 8 2 10"
    for _ in range(3):
        list(CachedPhoneNumberMatcher(text, "GB", leniency=phonenumbers.Leniency.STRICT_GROUPING))
    info = phone_matcher._verified_number.cache_info()
    assert info.misses > 0 and info.hits >= 2 * info.misses
