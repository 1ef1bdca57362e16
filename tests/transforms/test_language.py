"""Document language: too few letters give "und", and letters are counted exactly up to the threshold."""
from __future__ import annotations

import pytest

from larvatus.transforms.language import MIN_LETTERS, UNDETERMINED, _has_letters, detect_language


@pytest.mark.parametrize("text, least, expected", [
    ("", 0, True), ("", 1, False), ("a", 1, True), ("12 3", 1, False),
    ("a1b2c3", 3, True), ("a1b2c3", 4, False), ("é" * 20, 20, True), ("ß" * 19 + "9", 20, False),
])
def test_has_letters_counts_letters_up_to_the_threshold(text, least, expected):
    assert _has_letters(text, least) is expected


def test_text_with_too_few_letters_is_undetermined():
    assert detect_language("a" * (MIN_LETTERS - 1) + " 123 456 !!!") == UNDETERMINED
    assert detect_language("The weather is very nice today and we are going outside.") == "en"


def test_the_redact_stage_loads_the_language_model_in_its_setup():
    from larvatus.transforms import language, stages
    from larvatus.transforms.redact import RedactionPolicy

    language._identifier.cache_clear()
    stages.Redact(RedactionPolicy(labels=frozenset({"PER"}))).setup()
    assert language._identifier.cache_info().currsize == 1
