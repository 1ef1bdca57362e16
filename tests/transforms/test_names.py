"""Unit tests for transforms/names.py: legal forms, institutions at a place, place particles."""
from __future__ import annotations

from larvatus.transforms.names import (
    apply_name_rules, extend_legal_forms, extend_place_particles, join_institution_places)
from larvatus.transforms.records import Document, EntitySpan
from larvatus.transforms.redact import RedactionPolicy, redact
from larvatus.transforms.segment import segment

ALL = frozenset({"PER", "LOC", "ORG"})


def _span(text: str, surface: str, label: str, score: float = 0.9) -> EntitySpan:
    start = text.index(surface)
    return EntitySpan(start, start + len(surface), label, score)


def _surfaces(text, spans):
    return [(text[s.start:s.end], s.label) for s in spans]


def test_a_model_span_takes_its_legal_form_in_and_becomes_org():
    text = "Invoice from Müller GmbH & Co. KG and from van Bergen BV; Ruiz, Inc. paid."
    spans = [_span(text, "Müller", "PER"), _span(text, "van Bergen", "ORG"),
             _span(text, "Ruiz", "PER")]
    out = extend_legal_forms(text, spans, ALL)
    assert _surfaces(text, out) == [
        ("Müller GmbH & Co. KG", "ORG"), ("van Bergen BV", "ORG"), ("Ruiz, Inc.", "ORG")]
    assert all(s.redacted for s in out)


def test_firm_endings_follow_a_model_span_but_do_not_make_a_firm_alone():
    text = "Smith and Sons wrote. The Working Group met."
    out = extend_legal_forms(text, [_span(text, "Smith", "PER")], ALL)
    assert _surfaces(text, out) == [("Smith and Sons", "ORG")]


def test_a_firm_ending_in_lowercase_follows_only_a_name_in_lowercase():
    text = "the SPC group met; pay smith and sons today"
    spans = [_span(text, "SPC", "ORG"), _span(text, "smith", "PER")]
    out = extend_legal_forms(text, spans, ALL)
    assert _surfaces(text, out) == [("SPC", "ORG"), ("smith and sons", "ORG")]


def test_capitalised_words_before_a_legal_form_become_an_org_span():
    text = "EMPLOYEE RECORD\nLÖWER PRUSCHKE E.G.\n\nPaid by Nordic Freight A/S\nVesterbrogade 4"
    out = extend_legal_forms(text, [], ALL)
    assert _surfaces(text, out) == [("LÖWER PRUSCHKE E.G.", "ORG"), ("Nordic Freight A/S", "ORG")]
    assert all(s.redacted and s.label == "ORG" for s in out)


def test_words_that_only_look_like_legal_forms_are_left_alone():
    text = ("Cities, e.g. Paris e.g. London. Smith as well as Jones AS left. "
            "Sri Lanka won the limited overs match. Berlin se fue. Smith co-wrote it.")
    spans = [_span(text, "Paris", "LOC"), _span(text, "Smith", "PER"),
             _span(text, "Berlin", "LOC")]
    out = extend_legal_forms(text, spans, ALL)
    assert _surfaces(text, out) == _surfaces(text, sorted(spans, key=lambda s: s.start))


def test_an_unredacted_span_is_not_extended_and_a_taken_word_is_not_taken_twice():
    text = "Acme Ltd and Beta Ltd"
    misc = _span(text, "Acme", "MISC")
    ltd = EntitySpan(5, 8, "ORG", 0.9)
    out = extend_legal_forms(text, [misc, ltd], frozenset({"PER"}))
    assert (out[0].start, out[0].end, out[0].label) == (0, 4, "MISC")
    assert _surfaces(text, out)[1:] == [("Ltd", "ORG"), ("Beta Ltd", "ORG")]


def test_an_institution_and_its_place_join_into_one_org():
    text = "IN THE COUNTY COURT AT GLASGOW\nThe University of Leeds and Google in London."
    spans = [_span(text, "COUNTY COURT", "ORG"), _span(text, "GLASGOW", "LOC"),
             _span(text, "University", "ORG"), _span(text, "Leeds", "LOC"),
             _span(text, "Google", "ORG"), _span(text, "London", "LOC")]
    out = join_institution_places(text, spans, ALL)
    assert _surfaces(text, out) == [("COUNTY COURT AT GLASGOW", "ORG"),
                                    ("University of Leeds", "ORG"),
                                    ("Google", "ORG"), ("London", "LOC")]


def test_an_institution_does_not_join_across_a_line_or_an_unredacted_span():
    text = "the Court at\nGlasgow; the Court at Euro"
    spans = [_span(text, "Court", "ORG"), _span(text, "Glasgow", "LOC"),
             EntitySpan(text.rindex("Court"), text.rindex("Court") + 5, "ORG", 0.9),
             _span(text, "Euro", "MISC")]
    out = join_institution_places(text, spans, ALL)
    assert len(out) == 4


def test_a_firm_ending_or_place_name_tagged_on_its_own_is_taken_in():
    text = "Finance Manager, Freeman and Sons, Havelberg; lives in Frankfurt am Main."
    spans = [_span(text, "Freeman", "PER"), _span(text, "Sons", "ORG"),
             _span(text, "Havelberg", "PER"), _span(text, "Frankfurt", "LOC"),
             _span(text, "Main", "LOC")]
    out = apply_name_rules(text, spans, ALL)
    assert _surfaces(text, out) == [("Freeman and Sons", "ORG"), ("Havelberg", "PER"),
                                    ("Frankfurt am Main", "LOC")]


def test_a_name_after_a_joiner_that_is_no_firm_ending_stays_apart():
    text = "Smith and Jones, Meyer and Sons"
    spans = [_span(text, "Smith", "PER"), _span(text, "Jones", "PER"),
             _span(text, "Meyer", "PER"), EntitySpan(text.index("Sons"), len(text), "MISC", 0.9)]
    out = apply_name_rules(text, spans, ALL)
    assert _surfaces(text, out) == [("Smith", "PER"), ("Jones", "PER"), ("Meyer", "PER"),
                                    ("Sons", "MISC")]


def test_place_particles_join_the_second_name_but_not_a_date():
    text = "Frankfurt am Main, NEWCASTLE UPON TYNE, Berlin am Montag, Halle an der Saale, Bonn im mai"
    spans = [_span(text, w, "LOC") for w in ("Frankfurt", "NEWCASTLE", "Berlin", "Halle", "Bonn")]
    out = extend_place_particles(text, spans, ALL)
    assert [t for t, _ in _surfaces(text, out)] == [
        "Frankfurt am Main", "NEWCASTLE UPON TYNE", "Berlin", "Halle an der Saale", "Bonn"]


def test_rules_run_inside_redact_and_hide_every_word():
    text = "Keys at Mosemannallee 5745, Frankfurt am Main. Sent by LÖWER PRUSCHKE E.G. today."
    segmented = segment(Document("d", text))
    spans = (_span(text, "Frankfurt", "LOC"),)
    _, redacted, _ = redact(segmented, spans, RedactionPolicy(labels=ALL))
    assert "Main" not in redacted and "PRUSCHKE" not in redacted and "E.G." not in redacted
    assert redacted.endswith(" today.")


def test_apply_name_rules_leaves_plain_spans_unchanged():
    text = "Anna Schmidt met Tom in Paris."
    spans = (_span(text, "Anna Schmidt", "PER"), _span(text, "Tom", "PER"),
             _span(text, "Paris", "LOC"))
    assert apply_name_rules(text, spans, ALL) == spans


def test_a_model_span_on_part_of_a_firm_or_place_is_completed():
    text = "a claim against Dippel Bruder e.G. for wages; office in Frankfurt am Main (2019)"
    firm = _span(text, "Dippel Bruder e.", "ORG")
    place = _span(text, "Frankfurt am", "LOC")
    out = apply_name_rules(text, [firm, place], ALL)
    assert _surfaces(text, out) == [("Dippel Bruder e.G.", "ORG"), ("Frankfurt am Main", "LOC")]


def test_a_firm_does_not_swallow_a_pattern_span():
    text = "Mail info@acme.example Acme Ltd"
    email = EntitySpan(5, 22, "EMAIL", 1.0, redacted=True)
    out = extend_legal_forms(text, [email], ALL)
    assert _surfaces(text, out) == [("info@acme.example", "EMAIL"), ("Acme Ltd", "ORG")]


def test_no_firm_or_legal_form_crosses_a_line_break():
    text = "Paid by Nordic Freight B.\nV. and by Bergen N.\nV. in full."
    assert extend_legal_forms(text, [], ALL) == ()
    out = extend_legal_forms(text, [_span(text, "Bergen", "ORG")], ALL)
    assert _surfaces(text, out) == [("Bergen", "ORG")]


def test_the_legal_form_hint_grouped_by_first_letter_matches_where_the_plain_pattern_does():
    """The hint, its forms grouped by first letter behind a lookahead, starts a match at
    exactly the places where a space and any legal form do (fixed and random texts)."""
    import random
    import re

    from larvatus.transforms import names

    plain = re.compile(rf"[ \t]{names._LEGAL}")
    forms = [f.replace("\\", "") for f in names._LEGAL_ANY_CASE.split("|")] \
        + names._LEGAL_EXACT.replace("\\", "").split("|")
    pieces = forms + [f.upper() for f in forms] + [f.title() for f in forms] + [
        " ", "\t", "\n", "x", "Ltd", "ſa", "\u212aG", "İnc", "ınc", "a", "/", ".", "9", "é",
        "Nordic", " Freight", "said", "in", "co", "as", "se", "AG/"]
    rng = random.Random(5)
    found = 0
    for _ in range(20_000):
        text = "".join(rng.choice(pieces) + rng.choice(("", " ", "\t", " ")) for _ in range(8))
        starts = [m.start() for m in plain.finditer(text)]
        assert [m.start() for m in names._FORM_HINT_RE.finditer(text)] == starts, text
        assert all(names._FORM_HINT_RE.match(text, i) is None for i in range(len(text))
                   if plain.match(text, i) is None), text
        found += len(starts)
    assert found > 10_000, found


def test_the_legal_form_hint_lookahead_lets_through_every_letter_a_form_may_open_with():
    """The lookahead's letters, in any case, are every character that the forms' first letters
    match without regard to case (the Kelvin sign is a "k", the long s an "s")."""
    import re
    import sys

    from larvatus.transforms import names

    letters = names._LEGAL_FIRST_LETTERS
    lookahead = re.compile(rf"(?i:[{letters}])")
    firsts = re.compile("(?i:" + "|".join(letters) + ")")
    chars = "".join(map(chr, range(sys.maxunicode + 1))).encode("utf-8", "surrogatepass") \
        .decode("utf-8", "replace")
    assert [m.start() for m in lookahead.finditer(chars)] \
        == [m.start() for m in firsts.finditer(chars)]
    assert letters == "".join(sorted({f[0].lower() for f in names._LEGAL_ANY_CASE.split("|")}))


def test_a_place_particle_far_after_a_place_on_its_line_is_not_taken():
    """Only a particle right after the place joins it, however many follow on its line."""
    text = "Berlin is big. " + "Halle an der Saale and Frankfurt am Main. " * 3
    spans = (_span(text, "Berlin", "LOC"),)
    assert extend_place_particles(text, spans, ALL) == spans
    text = "Frankfurt am Main and Halle an der Saale"
    out = extend_place_particles(text, (_span(text, "Frankfurt", "LOC"),), ALL)
    assert _surfaces(text, out) == [("Frankfurt am Main", "LOC")]


def test_the_place_particle_after_a_span_is_the_first_the_line_search_finds():
    """The particle tried only at the spaces within a span's reach is the one a search along
    its line finds first (fixed and random lines)."""
    import random

    from larvatus.transforms import names

    def reference(text, span, line_end):
        return next((m for m in names._PLACE_PARTICLE_RE.finditer(text, span.start, line_end)
                     if m.start() <= span.end < m.end("word")), None)

    rng = random.Random(41)
    pieces = ["Frankfurt", "am", "Main", "an der", "Saale", "upon", "Tyne", "on the", "Rhine",
              " ", "  ", "\t", "\n", "x", "AM", "im", "Ober", "bei", "Berlin", "9", "-"]
    found = 0
    for _ in range(20_000):
        text = "".join(rng.choice(pieces) + rng.choice(["", " ", " "])
                       for _ in range(rng.randrange(1, 12)))
        start = rng.randrange(len(text))
        end = rng.randrange(start + 1, len(text) + 1)
        span = EntitySpan(start, end, "LOC", 0.9)
        line_end = text.find("\n", end)
        line_end = len(text) if line_end < 0 else line_end
        expected = reference(text, span, line_end)
        got = names._particle_at(text, span, line_end)
        assert (got and got.span()) == (expected and expected.span()), (text, span)
        found += expected is not None
    assert found > 1_000, found
