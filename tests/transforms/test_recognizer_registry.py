"""The recognizer registry: every kind is complete, user kinds plug in, placeholder order is stable."""
from __future__ import annotations

import re

import pytest

from larvatus.transforms import recognizers
from larvatus.transforms.recognizers import (
    BUILTIN_LABELS, FIXED_PLACEHOLDER_LABELS, Kind, PatternSettings, find_patterns, kinds,
    pattern_labels, placeholder_order, register, unregister)
from larvatus.transforms.records import EntitySpan
from tests.paths import ROOT

_EMPLOYEE_RE = re.compile(r"\bEMP-[0-9]{6}\b")


def find_employee_numbers(text, settings):
    return [EntitySpan(m.start(), m.end(), "EMPLOYEE", 0.9) for m in _EMPLOYEE_RE.finditer(text)]


EMPLOYEE = Kind("EMPLOYEE", find_employee_numbers, tier=1,
                matches="employee numbers EMP-123456", context="")


@pytest.fixture
def employee_kind():
    register(EMPLOYEE)
    yield EMPLOYEE
    unregister("EMPLOYEE")


@pytest.mark.parametrize("label", BUILTIN_LABELS)
def test_every_registered_kind_has_everything_it_needs(label):
    kind = recognizers.kind(label)
    assert kind.problems() == []
    assert kind.label == label


def test_every_builtin_kind_is_found_in_the_placeholder_table():
    assert set(BUILTIN_LABELS) <= set(FIXED_PLACEHOLDER_LABELS)


@pytest.mark.parametrize("broken, problem", [
    (Kind("EMPLOYEE", find_employee_numbers, None, "x"), "tier None"),
    (Kind("EMPLOYEE", find_employee_numbers, 12, "x"), "tier 12"),
    (Kind("EMPLOYEE", find_employee_numbers, True, "x"), "tier True"),
    (Kind("employee", find_employee_numbers, 2, "x"), "label 'employee'"),
    (Kind("EMPLOYEE", "not a function", 2, "x"), "find is not callable"),
    (Kind("EMPLOYEE", find_employee_numbers, 2, " "), "matches"),
])
def test_an_incomplete_kind_is_refused_when_registered(broken, problem):
    with pytest.raises(ValueError, match=re.escape(problem)):
        register(broken)
    assert "EMPLOYEE" not in pattern_labels()


def test_a_label_cannot_be_registered_twice_unless_replaced():
    email = recognizers.kind("EMAIL")
    with pytest.raises(ValueError, match="already registered"):
        register(Kind("EMAIL", find_employee_numbers, 0, "x"))
    assert register(email, replace=True) is email
    assert recognizers.kind("EMAIL") is email


def test_a_registered_kind_runs_by_default_and_can_be_chosen(employee_kind):
    text = "Badge EMP-004211 for jane@example.com"
    spans = find_patterns(text)
    assert [(s.label, text[s.start:s.end]) for s in spans] == [
        ("EMPLOYEE", "EMP-004211"), ("EMAIL", "jane@example.com")]
    only = find_patterns(text, PatternSettings(labels=frozenset({"EMPLOYEE"})))
    assert [s.label for s in only] == ["EMPLOYEE"]
    assert "EMPLOYEE" not in {s.label for s in find_patterns(
        text, PatternSettings(labels=frozenset({"EMAIL"})))}


def test_a_registered_label_is_accepted_by_the_redact_labels_option(employee_kind):
    from larvatus.options import resolve_redact_labels

    assert "EMPLOYEE" in resolve_redact_labels("default", ("PER", "LOC", "ORG", "MISC"))


def test_an_unregistered_label_is_refused_by_the_settings():
    with pytest.raises(ValueError, match="unknown pattern labels"):
        PatternSettings(labels=frozenset({"EMPLOYEE"}))


def test_the_tier_of_a_registered_kind_decides_overlaps(employee_kind):
    text = "case no. EMP-004211"
    assert [s.label for s in find_patterns(text)] == ["EMPLOYEE"]   # tier 1 over CODE's 2
    register(Kind("EMPLOYEE", find_employee_numbers, 9, "x"), replace=True)
    assert [s.label for s in find_patterns("case no. EMP-004211")] == ["CODE"]


def test_builtin_placeholder_order_is_the_fixed_table():
    labels = ["PER", "LOC", "ORG", "MISC", *BUILTIN_LABELS]
    assert placeholder_order(labels) == list(FIXED_PLACEHOLDER_LABELS)
    assert placeholder_order(reversed(labels)) == list(FIXED_PLACEHOLDER_LABELS)


def test_registering_a_label_appends_its_placeholder_after_the_others(employee_kind):
    labels = ["PER", "LOC", "ORG", "MISC", "NORP", *pattern_labels()]
    order = placeholder_order(labels)
    assert order[-1] == "EMPLOYEE"
    without = placeholder_order([label for label in labels if label != "EMPLOYEE"])
    assert order[:-1] == without


def test_kinds_run_in_registration_order_with_builtins_first(employee_kind):
    assert [k.label for k in kinds()] == [*BUILTIN_LABELS, "EMPLOYEE"]


_DOCS = ROOT / "docs" / "privacy.md"


def test_the_documented_way_to_add_a_kind_runs_as_written():
    block = _DOCS.read_text(encoding="utf-8").split("```python\n", 1)[1].split("```", 1)[0]
    try:
        exec(compile(block, str(_DOCS), "exec"), {})
        assert "EMPLOYEE" in pattern_labels()
    finally:
        unregister("EMPLOYEE")


def test_the_documentation_lists_every_label_and_identifier_scheme():
    from larvatus.transforms.recognizers.identifiers import ID_SCHEMES

    rows = [line for line in _DOCS.read_text(encoding="utf-8").splitlines() if line.startswith("| ")]
    documented_labels = {row.split("|")[1].strip() for row in rows}
    assert set(BUILTIN_LABELS) <= documented_labels
    kinds_column = "\n".join(row.split("|")[2] for row in rows if row.split("|")[1].strip() == "ID")
    assert [s.name for s in ID_SCHEMES if s.name not in kinds_column] == []
