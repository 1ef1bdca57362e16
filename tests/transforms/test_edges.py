"""Model spans read in context: opening verbs, cue words, hashtags, defined terms, doses, joined names, other languages' common words."""
from __future__ import annotations

import re

import pytest

from larvatus.transforms.edges import settle_edges
from larvatus.transforms.records import EntitySpan


def _span(text: str, surface: str, label: str, score: float = 0.9, nth: int = 0) -> EntitySpan:
    start = [m.start() for m in re.finditer(re.escape(surface), text)][nth]
    return EntitySpan(start, start + len(surface), label, score, redacted=True, decision_score=0.9)


def _surfaces(text: str, spans) -> list[tuple[str, str]]:
    return [(text[s.start:s.end], s.label) for s in sorted(spans, key=lambda s: s.start)]


def test_an_opening_verb_leaves_a_persons_span():
    text = "Contact Maria Garcia at the office."
    out = settle_edges(text, [_span(text, "Contact Maria Garcia", "PER", 0.66)])
    assert _surfaces(text, out) == [("Maria Garcia", "PER")]


def test_an_opening_verb_of_its_own_before_a_person_is_dropped():
    text = "Thanks. Ask Maria Garcia."
    out = settle_edges(text, [_span(text, "Ask", "LOC", 0.34), _span(text, "Maria Garcia", "PER")])
    assert _surfaces(text, out) == [("Maria Garcia", "PER")]


@pytest.mark.parametrize("text,surface,label", [
    ("Grant Smith said so.", "Grant Smith", "PER"),           # one name after the verb: kept
    ("Bay Co Building Authority bonds", "Bay Co Building Authority", "ORG"),   # not a person
    ("We will Contact Maria Garcia later.", "Contact Maria Garcia", "PER"),    # mid-sentence
])
def test_spans_that_keep_their_first_word(text, surface, label):
    out = settle_edges(text, [_span(text, surface, label)])
    assert _surfaces(text, out) == [(surface, label)]


def test_a_word_before_an_object_pronoun_is_a_verb():
    text = "DM me if you need the files."
    assert settle_edges(text, [_span(text, "DM", "ORG", 0.6)]) == ()


def test_a_persons_span_before_a_pronoun_stays():
    text = "I told Anna me too."
    assert _surfaces(text, settle_edges(text, [_span(text, "Anna", "PER")])) == [("Anna", "PER")]


@pytest.mark.parametrize("text,word,value,value_label", [
    ("Badge EMP-004211 was issued.", "Badge", "EMP-004211", "CODE"),
    ("Aadhaar 2341 2341 2346 is on file.", "Aadhaar", "2341 2341 2346", "ID"),
    ("Mobile: +44 7700 900123", "Mobile", "+44 7700 900123", "PHONE"),
    ("Kennzeichen B AB 1234", "Kennzeichen", "B AB 1234", "VEHICLE"),
])
def test_a_cue_word_before_its_value_is_a_label(text, word, value, value_label):
    spans = [_span(text, word, "ORG"), _span(text, value, value_label, 1.0)]
    assert _surfaces(text, settle_edges(text, spans)) == [(value, value_label)]


def test_a_name_before_a_value_stays():
    text = "Maria Garcia +44 7700 900123"
    spans = [_span(text, "Garcia", "PER"), _span(text, "+44 7700 900123", "PHONE", 1.0)]
    assert _surfaces(text, settle_edges(text, spans))[0] == ("Garcia", "PER")


def test_a_hashtag_names_no_person_unless_the_model_says_so():
    text = "Great panel at #SXSW with #JaneDoe"
    out = settle_edges(text, [_span(text, "SXSW", "ORG"), _span(text, "JaneDoe", "PER")])
    assert _surfaces(text, out) == [("JaneDoe", "PER")]


def test_a_weak_defined_term_is_kept_and_a_sure_one_is_not():
    text = 'Acme Corp ("Supplier") and Beta Ltd (the "Buyer")'
    spans = [_span(text, "Supplier", "ORG", 0.09), _span(text, "Buyer", "ORG", 0.9)]
    assert _surfaces(text, settle_edges(text, spans)) == [("Buyer", "ORG")]


def test_a_lowercase_drug_before_its_dose_is_kept():
    text = "started on metoprolol 25 mg and Garcia 10 mg"
    spans = [_span(text, "metoprolol", "ORG", 0.73), _span(text, "Garcia", "PER")]
    assert _surfaces(text, settle_edges(text, spans)) == [("Garcia", "PER")]


def test_a_hyphenated_given_name_and_a_surname_are_one_person():
    text = "Marie-Claire Dubois est ingénieure."
    spans = [_span(text, "Marie-Claire", "ORG"), _span(text, "Dubois", "PER")]
    assert _surfaces(text, settle_edges(text, spans, "fr")) == [("Marie-Claire Dubois", "PER")]
    split = [_span(text, "Marie", "PER"), _span(text, "Claire", "ORG"), _span(text, "Dubois", "PER")]
    assert _surfaces(text, settle_edges(text, split, "fr")) == [("Marie-Claire Dubois", "PER")]


def test_two_capitalised_words_one_a_person_are_one_person():
    text = "Mit freundlichen Grüßen\nThomas Becker"
    spans = [_span(text, "Thomas", "ORG", 0.28), _span(text, "Becker", "PER", 0.48)]
    assert _surfaces(text, settle_edges(text, spans, "de")) == [("Thomas Becker", "PER")]


@pytest.mark.parametrize("text", ["pro-Moscow rebels", "URUS-MARTAN, Russia"])
def test_other_hyphenated_spans_are_not_joined(text):
    left, right = re.split(r"-", text.split()[0].rstrip(","))
    spans = [_span(text, left, "ORG"), _span(text, right, "LOC")]
    assert len(settle_edges(text, spans)) == 2


GERMAN = ("vielen Dank für Ihr Schreiben. Hiermit teile ich mit, dass der Vertrag wird zum "
          "Monatsende gekündigt. Meine Steuer-ID lautet 1. Frau Lange kommt. Peter Klein auch.")


@pytest.mark.parametrize("surface,label,score,expected", [
    ("Schreiben", "ORG", 0.66, None),
    ("Ihr Schreiben", "ORG", 0.66, None),
    ("Hiermit", "LOC", 0.67, None),
    ("gekündigt", "ORG", 0.76, None),
    ("Vertrag", "ORG", 0.71, None),
    ("Steuer-ID lautet", "PER", 0.54, None),
    ("Lange", "PER", 0.6, "Lange"),            # after a title: a surname
    ("Peter Klein", "PER", 0.9, "Peter Klein"),   # a given name in it: not all common
])
def test_german_common_words_leave_model_spans(surface, label, score, expected):
    spans = [_span(GERMAN, surface, label, score)]
    out = settle_edges(GERMAN, spans, "de")
    assert [GERMAN[s.start:s.end] for s in out] == ([] if expected is None else [expected])


def test_common_words_of_the_language_are_not_read_in_english_documents():
    text = "The Vertrag was signed."
    assert len(settle_edges(text, [_span(text, "Vertrag", "ORG", 0.7)], "en")) == 1


def test_pattern_spans_pass_unchanged():
    text = "Mobile: +44 7700 900123"
    phone = _span(text, "+44 7700 900123", "PHONE", 1.0)
    assert settle_edges(text, [phone], "de") == (phone,)


@pytest.mark.parametrize("text,town,language", [
    ("Sie stellte sich in der Praxis in Chemnitz vor.", "Chemnitz", "de"),
    ("Mi compañera tiene el mismo problema en Huesca.", "Huesca", "es"),
    ("De levering vindt plaats in Winkel.", "Winkel", "nl"),
])
def test_a_town_after_a_preposition_of_place_stays_hidden(text, town, language):
    out = settle_edges(text, [_span(text, town, "LOC", 0.83)], language)
    assert _surfaces(text, out) == [(town, "LOC")]


def test_a_common_word_beside_a_name_word_is_part_of_the_name():
    text = "Deze overeenkomst wordt gesloten tussen Acme en Maartje Blokland (de klant)."
    out = settle_edges(text, [_span(text, "Maartje", "LOC", 0.27)], "nl")
    assert _surfaces(text, out) == [("Maartje", "LOC")]
