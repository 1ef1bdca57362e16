"""The audit of redacted text: leftovers that still look personal, found by kind and offset, in any script."""
from __future__ import annotations

import pytest

from larvatus.transforms.audit import audit
from larvatus.transforms.records import Replacement


def audited(text, replacements=()):
    return {(f.kind, text[f.start:f.end]) for f in audit(text, replacements).findings}


def test_audit_finds_leftovers_by_offset_and_skips_placeholders():
    text = "[PER] met Smith at noon. Call 020 7946 0958, mail a.b@x.org or @jdoe.\nThe end."
    result = audit(text, [Replacement(0, 5, "PER", "[PER]")])
    found = {(f.kind, text[f.start:f.end]) for f in result.findings}
    assert found == {("capitalized", "Smith"), ("digits", "020 7946 0958"),
                     ("email", "a.b@x.org"), ("handle", "@jdoe")}
    assert result.counts == {"capitalized": 1, "digits": 1, "email": 1, "handle": 1,
                             "uncased_name": 0}


def test_audit_ignores_sentence_initial_and_common_words():
    assert audit("The cat sat. On Monday I left.\nHello there.").total == 0


def test_audit_offsets_are_code_points_with_emoji_before():
    text = "👍🏽 ok, then Kowalczyk"
    [finding] = audit(text).findings
    assert text[finding.start:finding.end] == "Kowalczyk"


@pytest.mark.parametrize("hostile", ["1" * 200_000, "a@" * 100_000, "x" * 200_000 + "@"])
def test_audit_is_linear_on_hostile_text(hostile):
    import time

    started = time.perf_counter()
    audit(hostile)
    assert time.perf_counter() - started < 10


@pytest.mark.parametrize("text, run", [
    ("[PER] paid with 4111\u00a01111\u00a01111\u00a01111", "4111\u00a01111\u00a01111\u00a01111"),
    ("[PER] paid with 4111\u20091111\u20091111\u20091111", "4111\u20091111\u20091111\u20091111"),
    ("[PER] paid with 4111 - 1111 - 1111 - 1111", "4111 - 1111 - 1111 - 1111"),
    ("[PER] rang +33\u202f6\u202f12\u202f34\u202f56\u202f78", "33\u202f6\u202f12\u202f34\u202f56\u202f78"),
])
def test_audit_joins_digit_groups_split_by_any_space_or_dash(text, run):
    assert ("digits", run) in audited(text, [Replacement(0, 5, "PER", "[PER]")])


@pytest.mark.parametrize("text, name", [
    ("Name: محمد علي", "محمد علي"),
    ("حضر السيد محمد الاجتماع", "محمد الاجتماع"),
    ("Dear محمد,", "محمد"),
    ("姓名：王小明", "王小明"),
    ("我认识王小明先生。", "王小明"),
    ("田中様へ", "田中"),
    ("김민수 씨가 왔다", "김민수"),
    ("이름: 김민수", "김민수"),
    ("שם: דוד", "דוד"),
])
def test_audit_flags_uncased_script_names_next_to_a_title_or_label(text, name):
    assert ("uncased_name", name) in audited(text)


@pytest.mark.parametrize("text", [
    "تم الاجتماع في المكتب", "今天天气很好。", "Dear [PER],", "Name: [PER] arrived",
])
def test_audit_leaves_uncased_text_without_a_title_or_label(text):
    replacements = [Replacement(text.index("[PER]"), text.index("[PER]") + 5, "PER", "[PER]")] \
        if "[PER]" in text else []
    assert not {kind for kind, _ in audited(text, replacements)} & {"uncased_name"}
