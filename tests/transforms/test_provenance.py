"""Where each entity came from (source, recognizer), and the name rules reading the model's own label scheme."""
from __future__ import annotations

import numpy as np
import pytest

from larvatus.transforms.labels import (
    DECLARED_ROLES, ROLE_OF_TYPE, EntityRole, name_roles, read_scheme, roles_of_types)
from larvatus.transforms.names import apply_name_rules
from larvatus.transforms.ordinary import refine_span, refine_spans
from larvatus.transforms.realign import RedactionDecision, realign
from larvatus.transforms.recognizers import find_patterns
from larvatus.transforms.records import (
    ENTITY_SOURCES, Document, EncodedDocument, EntitySource, EntitySpan, SegmentedDocument,
    Window)
from larvatus.transforms.redact import RedactionPolicy, join_name_lists, redact, term_spans
from larvatus.transforms.segment import segment

CONLL = read_scheme(["O", "B-PER", "I-PER", "B-LOC", "I-LOC", "B-ORG", "I-ORG", "B-MISC", "I-MISC"])
ONTONOTES = read_scheme(["O", "B-PERSON", "I-PERSON", "B-GPE", "I-GPE", "B-ORG", "I-ORG",
                         "B-NORP", "I-NORP", "B-DATE", "I-DATE"])
# The same roles under other names: what the CoNLL label of each role is called here.
RENAMED = {"PER": "PERSON", "LOC": "GPE", "ORG": "ORG", "MISC": "NORP"}


def _span(text: str, surface: str, label: str, score: float = 0.9, **fields) -> EntitySpan:
    start = text.index(surface)
    return EntitySpan(start, start + len(surface), label, score, **fields)


def _redact(text: str, spans, scheme=CONLL, **policy):
    labels = frozenset(RENAMED.values()) if scheme is ONTONOTES else frozenset(RENAMED)
    policy = RedactionPolicy(labels - {"MISC", "NORP"}, name_roles=name_roles(scheme), **policy)
    return redact(segment(Document("d", text)), spans, policy)


def _provenance(text: str, entities):
    return [(text[e.start:e.end], e.label, e.source, e.recognizer) for e in entities]


# --- the roles of a model's types ------------------------------------------------------------

def test_the_roles_come_from_the_scheme_by_the_declared_correspondence():
    roles = name_roles(ONTONOTES)
    assert roles.roles == (("PERSON", EntityRole.PERSON), ("GPE", EntityRole.PLACE),
                           ("ORG", EntityRole.ORGANISATION), ("NORP", EntityRole.MISC))
    assert roles.role("DATE") is None and "DATE" not in roles.types   # a type with no role
    assert roles.organisation_label == "ORG"
    assert name_roles(CONLL).types == frozenset({"PER", "LOC", "ORG", "MISC"})
    # Names are compared in capitals: WNUT-style lowercase labels have their roles too.
    wnut = name_roles(read_scheme(["O", "B-person", "I-person", "B-corporation", "B-location"]))
    assert [(t, r.value) for t, r in wnut.roles] == [
        ("person", "person"), ("corporation", "organisation"), ("location", "place")]
    assert wnut.organisation_label == "corporation"


def test_a_model_without_an_organisation_type_gets_firms_under_the_fallback_label():
    roles = roles_of_types(["PER", "LOC"])
    assert roles.label_for(EntityRole.ORGANISATION) is None
    assert roles.organisation_label == "ORG"
    text = "Paid by Nordic Freight A/S today."
    assert _provenance(text, apply_name_rules(text, [], frozenset({"PER"}), roles)) == [
        ("Nordic Freight A/S", "ORG", "rule", "legal_form")]


def test_every_declared_type_has_a_role_and_every_role_a_type():
    assert set(ROLE_OF_TYPE.values()) == set(EntityRole)
    assert all(t == t.upper() for t in ROLE_OF_TYPE)
    assert DECLARED_ROLES.types == frozenset(ROLE_OF_TYPE)


def test_provenance_is_carried_but_is_no_part_of_a_spans_identity():
    model = EntitySpan(0, 4, "PER", 0.9, recognizer="PER")
    rule = EntitySpan(0, 4, "PER", 0.9, source="rule", recognizer="name_list")
    assert model == rule and len({model, rule}) == 1   # as Presidio's RecognizerResult
    assert (rule.source, rule.recognizer) == ("rule", "name_list")


def test_only_model_and_rule_spans_of_a_name_type_are_covered():
    roles = name_roles(CONLL)
    assert roles.covers(EntitySpan(0, 1, "PER", 0.9))
    assert roles.covers(EntitySpan(0, 1, "ORG", 0.9, source="rule", recognizer="legal_form"))
    assert not roles.covers(EntitySpan(0, 1, "PER", 1.0, source="term_list"))
    assert not roles.covers(EntitySpan(0, 1, "PER", 1.0, source="pattern"))
    assert not roles.covers(EntitySpan(0, 1, "PERSON", 0.9))   # not this model's type
    assert not roles.covers(EntitySpan(0, 1, "EMAIL", 0.9, source="pattern"))


# --- provenance of each source -----------------------------------------------------------------

def test_model_spans_say_model_and_their_entity_type():
    text = "Xanthippe Moreau"
    window = Window(np.arange(4), np.zeros(4, np.int64), np.array([-1, 0, 1, -1]),
                    np.array([False, True, True, False]), 0)
    encoded = EncodedDocument(SegmentedDocument(Document("d", text), (0, 10), (9, 16)),
                              (window,), 2)
    probs = np.array([[0.05, 0.9, 0.05], [0.05, 0.05, 0.9]], dtype=np.float32)
    scheme = read_scheme(["O", "B-PERSON", "I-PERSON"])
    for decision in (None, RedactionDecision(frozenset({"PERSON"}), 0.5)):
        spans = realign(encoded, [probs], scheme, "first", decision)
        assert _provenance(text, spans) == [("Xanthippe Moreau", "PERSON", "model", "PERSON")]


def test_pattern_spans_say_pattern_and_their_kind():
    text = "Write to ada@example.org or call +44 20 7946 0958."
    found = find_patterns(text)
    assert {(s.label, s.source, s.recognizer) for s in found} == {
        ("EMAIL", "pattern", "EMAIL"), ("PHONE", "pattern", "PHONE")}


def test_term_list_spans_say_term_list_whatever_their_label():
    text = "Ruiz met acme and RUIZ."
    spans = term_spans(text, (("Ruiz", "PER"), ("acme", "CLIENT")))
    assert _provenance(text, spans) == [("Ruiz", "PER", "term_list", "always_redact"),
                                        ("acme", "CLIENT", "term_list", "always_redact"),
                                        ("RUIZ", "PER", "term_list", "always_redact")]
    assert all(s.decision_score is None and s.redacted for s in spans)


def test_each_name_rule_marks_the_spans_it_makes_or_reshapes():
    text = ("Ruiz Inc paid. Nordic Freight A/S sent it to the County Court at Glasgow, "
            "then to Frankfurt am Main. Taylor, Wiggins and Mcneil signed.")
    spans = [_span(text, "Ruiz", "PER"), _span(text, "County Court", "ORG"),
             _span(text, "Glasgow", "LOC"), _span(text, "Frankfurt", "LOC"),
             _span(text, "Taylor", "PER"), _span(text, "Wiggins", "PER"),
             _span(text, "Mcneil", "PER")]
    entities, _, _ = _redact(text, spans)
    assert _provenance(text, entities) == [
        ("Ruiz Inc", "ORG", "rule", "legal_form"),
        ("Nordic Freight A/S", "ORG", "rule", "legal_form"),
        ("County Court at Glasgow", "ORG", "rule", "institution_place"),
        ("Frankfurt am Main", "LOC", "rule", "place_particle"),
        ("Taylor, Wiggins and Mcneil", "PER", "rule", "name_list")]


def test_a_span_joined_at_a_particle_is_the_rules():
    text = "Julie d' Heripon wrote."
    spans = [_span(text, "Julie", "PER"), _span(text, "Heripon", "PER")]
    assert _provenance(text, refine_spans(text, spans, roles=name_roles(CONLL))) == [
        ("Julie d' Heripon", "PER", "rule", "particle_join")]


def test_a_propagated_mention_keeps_the_source_of_the_one_it_copies():
    text = "Mail bob@example.org today. Morse called. Later Morse left."
    spans = [_span(text, "Morse", "PER", decision_score=0.9, redacted=True, recognizer="PER"),
             *(EntitySpan(s.start, s.end, s.label, s.score, redacted=True, source=s.source,
                          recognizer=s.recognizer) for s in find_patterns(text))]
    entities, _, _ = _redact(text, spans)
    assert [(text[e.start:e.end], e.source, e.recognizer, e.propagated) for e in entities] == [
        ("bob@example.org", "pattern", "EMAIL", False), ("Morse", "model", "PER", False),
        ("Morse", "model", "PER", True)]
    assert set(ENTITY_SOURCES) == {s.value for s in EntitySource}


# --- a model labelled PERSON/GPE/ORG gets the name rules -----------------------------------------

def _with_provenance(spans):
    """Spans with their provenance (which span equality leaves out)."""
    return [(s, s.source, s.recognizer) for s in spans]


def _renamed(spans):
    return [EntitySpan(s.start, s.end, RENAMED[s.label], s.score, s.propagated, s.redacted,
                       s.decision_score, s.source, RENAMED.get(s.recognizer, s.recognizer))
            for s in spans]


NAME_RULE_CASES = [
    # span refinement: a role before a person's name, a greeting before any name
    ("Inspector Morse and Dear Paris wrote.", [("Inspector Morse", "PER"), ("Dear Paris", "LOC")]),
    # a legal form after a model span makes an organisation
    ("Invoice from Müller GmbH & Co. KG and Ruiz, Inc. today.", [("Müller", "PER"), ("Ruiz", "PER")]),
    # an institution at a place
    ("Heard at the County Court at Glasgow on Monday.", [("County Court", "ORG"), ("Glasgow", "LOC")]),
    # a place particle
    ("She moved to Frankfurt am Main last year.", [("Frankfurt", "LOC")]),
    # a list of names joined, organisation when one part is
    ("Signed by Taylor, Wiggins and Mcneil for us.",
     [("Taylor", "PER"), ("Wiggins", "ORG"), ("Mcneil", "PER")]),
    # a particle join
    ("Julie d' Heripon wrote.", [("Julie", "PER"), ("Heripon", "PER")]),
]


@pytest.mark.parametrize("text,found", NAME_RULE_CASES, ids=lambda v: v if isinstance(v, str) else "")
def test_a_model_labelled_person_gpe_org_gets_the_rules_of_per_loc_org(text, found):
    spans = [_span(text, surface, label, decision_score=0.9, redacted=True)
             for surface, label in found]
    conll, conll_text, _ = _redact(text, spans)
    ontonotes, ontonotes_text, _ = _redact(text, _renamed(spans), ONTONOTES)
    assert conll != tuple(spans)   # a rule changed something
    assert _with_provenance(ontonotes) == _with_provenance(_renamed(conll))
    assert ontonotes_text == conll_text.replace("[PER]", "[PERSON]").replace("[LOC]", "[GPE]")


def test_a_type_without_a_role_is_left_as_the_model_tagged_it():
    text = "Paid on Monday 3 March by card."
    span = _span(text, "Monday 3 March", "DATE", decision_score=0.9, redacted=True)
    assert refine_span(text, span, roles=name_roles(ONTONOTES)) == span
    assert refine_span(text, _span(text, "Monday 3 March", "GPE", 0.4), roles=name_roles(ONTONOTES)) \
        is None   # a place span of months and digits is dropped


# --- an always-redact term is not the model's ----------------------------------------------------

@pytest.mark.parametrize("label", ["PER", "CLIENT"])
def test_a_term_labelled_per_is_redacted_as_listed_and_never_reshaped_as_a_model_name(label):
    text = "Ruiz Inc paid Taylor, Wiggins and Mcneil."
    terms = (("Ruiz", label), ("Taylor", label), ("Wiggins", label), ("Mcneil", label))
    entities, redacted_text, _ = _redact(text, [], always_redact=terms)
    assert _provenance(text, entities) == [
        ("Ruiz", label, "term_list", "always_redact"),
        ("Taylor", label, "term_list", "always_redact"),
        ("Wiggins", label, "term_list", "always_redact"),
        ("Mcneil", label, "term_list", "always_redact")]
    assert redacted_text == f"[{label}] Inc paid [{label}], [{label}] and [{label}]."


def test_join_name_lists_passes_term_spans_through():
    text = "Taylor, Wiggins and Mcneil."
    spans = term_spans(text, (("Taylor", "PER"), ("Wiggins", "PER"), ("Mcneil", "PER")))
    joined = join_name_lists(text, spans, frozenset({"PER"}), name_roles(CONLL))
    assert _with_provenance(joined) == _with_provenance(spans)
