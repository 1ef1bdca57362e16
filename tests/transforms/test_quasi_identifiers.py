"""Quasi-identifiers of the strict profile: found by their kind, never redacted by default."""
from __future__ import annotations

import pytest

from larvatus.options import OptionsError, resolve_redact_labels
from larvatus.transforms.recognizers import (
    PatternSettings, find_patterns, pattern_labels, profile_pattern_labels)

STRICT = PatternSettings(labels=frozenset(profile_pattern_labels("strict")))


def found(text, settings=STRICT):
    return {(s.label, text[s.start:s.end]) for s in find_patterns(text, settings)}


def test_the_default_pattern_settings_do_not_look_for_quasi_identifiers():
    assert found("aged 65, in 1987, for two years", PatternSettings()) == set()
    assert PatternSettings().labels == frozenset(profile_pattern_labels("default"))


@pytest.mark.parametrize("text, value", [
    ("He retired at the age of 65.", "age of 65"),
    ("The claimant, aged 65, appeared", "aged 65"),
    ("a 65-year-old man", "65-year-old"),
    ("im Alter von 65 verstorben", "im Alter von 65"),
    ("sentenced to two years in prison", "two years"),
    ("after 12 months of treatment", "12 months"),
    ("für drei Jahre verurteilt", "drei Jahre"),
    ("She moved there in 1987 with her son", "1987"),
    ("Judgment no. 511 of the court", "511"),
    ("sold with 11/15W.2 and more", "11/15W.2"),
])
def test_quasi_identifiers_are_found(text, value):
    assert ("QUASI", value) in found(text)


def test_plot_numbers_after_their_cue_are_codes_by_default_already():
    assert found("the land plot 11/15W.2 of sheet 22/1") == {("CODE", "11/15W.2"), ("CODE", "22/1")}


@pytest.mark.parametrize("text", [
    "Version 2.10 ships today",
    "It costs 1500 euros",          # an amount, not a year
    "page 12 of the report",
])
def test_amounts_versions_and_pages_are_not_quasi_identifiers(text):
    assert "QUASI" not in {label for label, _ in found(text)}


def test_the_default_profile_keeps_quasi_identifiers_and_misc():
    labels = resolve_redact_labels("default", ("PER", "LOC", "ORG", "MISC"))
    assert "QUASI" not in labels and "MISC" not in labels
    assert "QUASI" not in resolve_redact_labels("all", ("PER", "LOC", "ORG", "MISC"))
    assert "QUASI" in pattern_labels() and "QUASI" not in profile_pattern_labels("default")


def test_the_strict_profile_adds_misc_and_quasi_identifiers_to_default():
    default = resolve_redact_labels("default", ("PER", "LOC", "ORG", "MISC"))
    strict = resolve_redact_labels("default", ("PER", "LOC", "ORG", "MISC"), "strict")
    assert strict == default | {"MISC", "QUASI"}
    assert resolve_redact_labels("default,-QUASI", ("PER", "MISC"), "strict") == \
        strict - {"QUASI", "LOC", "ORG"}
    assert "QUASI" in resolve_redact_labels("default,QUASI", ("PER",))   # named: hidden


def test_an_unknown_profile_is_refused():
    with pytest.raises(OptionsError, match="--profile"):
        resolve_redact_labels("default", ("PER",), "lenient")
