"""Unit tests for transforms/redact.py: overlaps, mention propagation, placeholders."""
from __future__ import annotations

import dataclasses
import hashlib
import hmac
import re

import pytest
from hypothesis import given, settings, strategies as st

from larvatus.transforms.records import Document, EntitySpan
from larvatus.transforms.redact import (
    PSEUDONYM_HEX_DIGITS, RedactionPolicy, join_name_lists, normalize_surface, propagate_mentions,
    pseudonym, redact, redact_text, resolve_overlaps)
from larvatus.transforms.segment import segment

ALL = frozenset({"PER", "LOC", "ORG"})


def seg(text):
    return segment(Document("d", text, "src"))


def span_of(text, surface, label, score=0.9, occurrence=0):
    start = -1
    for _ in range(occurrence + 1):
        start = text.index(surface, start + 1)
    return EntitySpan(start, start + len(surface), label, score)


def surfaces(text, spans):
    return [(text[s.start:s.end], s.label) for s in spans]


# --- resolve_overlaps -----------------------------------------------------------

def test_resolve_overlaps_longer_wins():
    long = EntitySpan(0, 13, "PER", 0.5)
    short = EntitySpan(7, 13, "PER", 0.99)
    assert resolve_overlaps([short, long]) == (long,)


def test_resolve_overlaps_equal_length_higher_score_wins():
    a = EntitySpan(0, 6, "PER", 0.6)
    b = EntitySpan(3, 9, "LOC", 0.8)
    assert resolve_overlaps([a, b]) == (b,)


def test_resolve_overlaps_equal_length_and_score_earlier_wins():
    a = EntitySpan(0, 6, "PER", 0.7)
    b = EntitySpan(3, 9, "LOC", 0.7)
    assert resolve_overlaps([b, a]) == (a,)


def test_resolve_overlaps_keeps_disjoint_and_touching_sorted():
    a = EntitySpan(10, 15, "LOC", 0.5)
    b = EntitySpan(0, 5, "PER", 0.5)
    c = EntitySpan(5, 10, "ORG", 0.5)    # touches both, overlaps neither
    assert resolve_overlaps([a, b, c]) == (b, c, a)


def test_resolve_overlaps_chain():
    # The middle long span beats both sides, which then do not come back.
    left = EntitySpan(0, 4, "PER", 0.9)
    middle = EntitySpan(2, 12, "ORG", 0.1)
    right = EntitySpan(10, 14, "LOC", 0.9)
    far = EntitySpan(14, 16, "LOC", 0.2)
    assert resolve_overlaps([left, middle, right, far]) == (middle, far)


def test_resolve_overlaps_empty():
    assert resolve_overlaps([]) == ()


# --- propagate_mentions -----------------------------------------------------------

def test_propagate_finds_later_mention():
    text = "Angela Merkel spoke. Later Angela Merkel left."
    detected = span_of(text, "Angela Merkel", "PER", 0.93)
    found = propagate_mentions(seg(text), [detected], ALL)
    assert found == (EntitySpan(27, 40, "PER", 0.93, propagated=True),)
    assert text[27:40] == "Angela Merkel"


def test_the_folded_word_cache_stays_bounded_and_folds_as_normalize_surface(monkeypatch):
    from larvatus.transforms import redact as module

    monkeypatch.setattr(module, "_FOLDED_MAX", 3)
    monkeypatch.setattr(module, "_FOLDED", module._FoldedWords())
    text = "ZO\u00adË spoke. Later zoë and Zoe\u0308 left, then Zoë."
    detected = span_of(text, "ZO\u00adË", "PER", 0.93)
    for _ in range(3):
        found = propagate_mentions(seg(text), [detected], ALL)
        assert [text[s.start:s.end] for s in found] == ["Zoe\u0308", "Zoë"]
        assert len(module._FOLDED) <= 3 + len(text.split()) + 2
    words = ["Zoë", "ZO\u00adË", "Straße", "ﬁne", "x"]
    text = " ".join(words)
    starts = [text.index(w) for w in words]
    ends = [start + len(w) for start, w in zip(starts, words)]
    assert module._folded_words(text, starts, ends) == [normalize_surface(w) for w in words]


def test_propagate_finds_earlier_mention_too():
    text = "Angela Merkel spoke. Later Angela Merkel left."
    detected = span_of(text, "Angela Merkel", "PER", 0.93, occurrence=1)
    found = propagate_mentions(seg(text), [detected], ALL)
    assert found == (EntitySpan(0, 13, "PER", 0.93, propagated=True),)


def test_propagate_single_word_name_not_matched_by_lowercase_word():
    text = "Will met us. Will you come? I will. WILL said so."
    detected = span_of(text, "Will", "PER", 0.8)
    found = propagate_mentions(seg(text), [detected], ALL)
    assert surfaces(text, found) == [("Will", "PER"), ("WILL", "PER")]
    assert [s.start for s in found] == [13, 36]


def test_propagate_multi_word_lowercase_is_matched():
    text = "Angela Merkel spoke; then angela merkel and ANGELA  MERKEL left."
    detected = span_of(text, "Angela Merkel", "PER", 0.9)
    found = propagate_mentions(seg(text), [detected], ALL)
    assert surfaces(text, found) == [("angela merkel", "PER"), ("ANGELA  MERKEL", "PER")]


def test_propagate_lowercase_source_matches_lowercase_word():
    text = "the band nirvana played; nirvana fans cheered."
    detected = span_of(text, "nirvana", "ORG", 0.7)
    found = propagate_mentions(seg(text), [detected], ALL)
    assert surfaces(text, found) == [("nirvana", "ORG")]


def test_propagate_only_whole_words():
    text = "Paris is big. Parisian food, Paris's parks and PARIS again; comparison."
    detected = span_of(text, "Paris", "LOC", 0.9)
    found = propagate_mentions(seg(text), [detected], ALL)
    assert [(s.start, s.end) for s in found] == [(29, 34), (47, 52)]
    assert surfaces(text, found) == [("Paris", "LOC"), ("PARIS", "LOC")]


def test_propagate_skips_labels_not_redacted():
    text = "Paris is big. Paris is old."
    detected = span_of(text, "Paris", "LOC", 0.9)
    assert propagate_mentions(seg(text), [detected], frozenset({"PER"})) == ()


def test_propagate_skips_words_already_covered():
    text = "Angela Merkel met Merkel Foods and Angela Merkel."
    person = span_of(text, "Angela Merkel", "PER", 0.9)
    company = span_of(text, "Merkel Foods", "ORG", 0.8)
    found = propagate_mentions(seg(text), [person, company], ALL)
    # "Merkel Foods" is already covered; only the last "Angela Merkel" is new.
    assert surfaces(text, found) == [("Angela Merkel", "PER")]
    assert found[0].start == 35


def test_propagate_takes_score_of_best_source():
    text = "Paris and Paris and Paris."
    low = span_of(text, "Paris", "LOC", 0.4, occurrence=0)
    high = span_of(text, "Paris", "LOC", 0.95, occurrence=1)
    found = propagate_mentions(seg(text), [low, high], ALL)
    assert found == (EntitySpan(20, 25, "LOC", 0.95, propagated=True),)


def test_propagate_nothing_without_spans():
    assert propagate_mentions(seg("Angela Merkel"), [], ALL) == ()


def test_redact_end_to_end_with_propagation():
    text = "Angela Merkel met Will. will angela merkel return?"
    detected = [span_of(text, "Angela Merkel", "PER", 0.9), span_of(text, "Will", "PER", 0.8)]
    entities, redacted, replacements = redact(seg(text), detected, RedactionPolicy(ALL))
    assert redacted == "[PER] met [PER]. will [PER] return?"
    assert [e.propagated for e in entities] == [False, False, True]
    assert len(replacements) == 3


# --- redact_text ------------------------------------------------------------------

def check_replacements(redacted, replacements):
    for r in replacements:
        assert redacted[r.start:r.end] == r.placeholder


def test_redact_label_style():
    text = "Angela Merkel visited Paris with Xanthippe Moreau."
    spans = [span_of(text, "Angela Merkel", "PER"), span_of(text, "Paris", "LOC"),
             span_of(text, "Xanthippe Moreau", "PER")]
    redacted, replacements = redact_text(text, spans, RedactionPolicy(ALL))
    assert redacted == "[PER] visited [LOC] with [PER]."
    assert [(r.start, r.end, r.label, r.placeholder) for r in replacements] == [
        (0, 5, "PER", "[PER]"), (14, 19, "LOC", "[LOC]"), (25, 30, "PER", "[PER]")]
    check_replacements(redacted, replacements)


def test_redact_only_policy_labels():
    text = "Angela Merkel visited Paris."
    spans = [span_of(text, "Angela Merkel", "PER"), span_of(text, "Paris", "LOC")]
    redacted, replacements = redact_text(text, spans, RedactionPolicy(frozenset({"LOC"})))
    assert redacted == "Angela Merkel visited [LOC]."
    assert [(r.start, r.end) for r in replacements] == [(22, 27)]


def test_redact_unsorted_spans_and_astral_offsets():
    text = "\U0001F44D\U0001F3FD Zoe\u0308 met \U0001d49cda in 東京!"
    spans = [span_of(text, "東京", "LOC"), span_of(text, "Zoe\u0308", "PER"),
             span_of(text, "\U0001d49cda", "PER")]
    redacted, replacements = redact_text(text, spans, RedactionPolicy(ALL, style="indexed"))
    assert redacted == "\U0001F44D\U0001F3FD [PER_1] met [PER_2] in [LOC_1]!"
    assert [(r.start, r.end) for r in replacements] == [(3, 10), (15, 22), (26, 33)]
    check_replacements(redacted, replacements)


def test_redact_indexed_style():
    text = ("Angela Merkel met Olaf Scholz in Berlin. angela  merkel left Berlin; "
            "Olaf Scholz stayed in Bonn.")
    spans = [span_of(text, "Angela Merkel", "PER"), span_of(text, "Olaf Scholz", "PER"),
             span_of(text, "Berlin", "LOC"), span_of(text, "angela  merkel", "PER"),
             span_of(text, "Berlin", "LOC", occurrence=1),
             span_of(text, "Olaf Scholz", "PER", occurrence=1), span_of(text, "Bonn", "LOC")]
    redacted, replacements = redact_text(text, spans, RedactionPolicy(ALL, style="indexed"))
    assert redacted == ("[PER_1] met [PER_2] in [LOC_1]. [PER_1] left [LOC_1]; "
                        "[PER_2] stayed in [LOC_2].")
    check_replacements(redacted, replacements)


def test_redact_indexed_same_surface_different_labels_numbered_separately():
    text = "Jordan visited Jordan."
    spans = [EntitySpan(0, 6, "PER", 0.9), EntitySpan(15, 21, "LOC", 0.9)]
    redacted, _ = redact_text(text, spans, RedactionPolicy(ALL, style="indexed"))
    assert redacted == "[PER_1] visited [LOC_1]."


def test_redact_indexed_numbering_restarts_per_call():
    policy = RedactionPolicy(ALL, style="indexed")
    first, _ = redact_text("Bob and Ann", [EntitySpan(0, 3, "PER", 1), EntitySpan(8, 11, "PER", 1)], policy)
    second, _ = redact_text("Ann", [EntitySpan(0, 3, "PER", 1)], policy)
    assert first == "[PER_1] and [PER_2]"
    assert second == "[PER_1]"


KEY = b"secret-key-1"


def test_pseudonym_is_hmac_of_label_and_normalized_surface():
    expected = hmac.new(KEY, b"PER\x00angela merkel", hashlib.sha256).hexdigest()[:PSEUDONYM_HEX_DIGITS]
    assert pseudonym("PER", "Angela  MERKEL", KEY) == expected
    assert len(expected) == 12
    # Not a plain (keyless) hash of the surface or of the message.
    for plain in (b"Angela  MERKEL", b"angela merkel", b"PER\x00angela merkel"):
        assert hashlib.sha256(plain).hexdigest()[:PSEUDONYM_HEX_DIGITS] != expected


def test_pseudonym_style():
    text = "Angela Merkel met Olaf Scholz; ANGELA MERKEL left."
    spans = [span_of(text, "Angela Merkel", "PER"), span_of(text, "Olaf Scholz", "PER"),
             span_of(text, "ANGELA MERKEL", "PER")]
    redacted, replacements = redact_text(text, spans, RedactionPolicy(ALL, style="pseudonym", key=KEY))
    merkel = pseudonym("PER", "Angela Merkel", KEY)
    scholz = pseudonym("PER", "Olaf Scholz", KEY)
    assert merkel != scholz
    assert redacted == f"[PER_{merkel}] met [PER_{scholz}]; [PER_{merkel}] left."
    check_replacements(redacted, replacements)
    plain = hashlib.sha256("Angela Merkel".encode()).hexdigest()
    assert plain[:PSEUDONYM_HEX_DIGITS] not in redacted


def test_pseudonym_stable_per_key_and_different_across_keys():
    text = "Xanthippe Moreau"
    spans = [EntitySpan(0, 16, "PER", 0.9)]
    one = RedactionPolicy(ALL, style="pseudonym", key=b"key-one")
    two = RedactionPolicy(ALL, style="pseudonym", key=b"key-two")
    a1, _ = redact_text(text, spans, one)
    a2, _ = redact_text(text, spans, RedactionPolicy(ALL, style="pseudonym", key=b"key-one"))
    b1, _ = redact_text(text, spans, two)
    assert a1 == a2
    assert a1 != b1
    assert a1.startswith("[PER_") and len(a1) == len("[PER_]") + PSEUDONYM_HEX_DIGITS


def test_pseudonym_depends_on_label():
    assert pseudonym("PER", "Jordan", KEY) != pseudonym("LOC", "Jordan", KEY)


def test_policy_validation():
    with pytest.raises(ValueError):
        RedactionPolicy(ALL, style="stars")
    with pytest.raises(ValueError):
        RedactionPolicy(ALL, style="pseudonym")
    with pytest.raises(ValueError):
        RedactionPolicy(ALL, style="pseudonym", key=b"")


def test_redact_rejects_overlapping_spans():
    with pytest.raises(ValueError):
        redact_text("Angela Merkel", [EntitySpan(0, 13, "PER", 1), EntitySpan(7, 13, "PER", 1)],
                    RedactionPolicy(ALL))


def test_normalize_surface():
    assert normalize_surface("  Angela \n MERKEL ") == "angela merkel"
    assert normalize_surface("Straße") == "strasse"


@given(st.text(alphabet=st.characters(max_codepoint=127)))
def test_normalize_surface_takes_a_shortcut_for_ascii_that_changes_nothing(surface):
    import unicodedata

    slow = unicodedata.normalize("NFKC", unicodedata.normalize("NFKC", surface).casefold())
    assert normalize_surface(surface) == " ".join(slow.split())


def test_redact_no_spans():
    assert redact_text("Xanthippe Moreau", [], RedactionPolicy(ALL)) == ("Xanthippe Moreau", ())


# --- property ----------------------------------------------------------------------

# Characters that can never appear in a placeholder ("[", "]", "_", digits,
# upper-case label letters, lower-case hex), so that a surface can only show up
# in the redacted text if the redaction failed to remove it.
TEXT_ALPHABET = st.one_of(
    st.sampled_from("ghijklmnopqrstuvwxyz .,;-\n\u00e9\u00fc\u0308\u200b"),
    st.characters(min_codepoint=0x100, exclude_categories=("Cs",)),
    st.sampled_from("\U0001F44D\U0001F3FD\U0001d49c\U00020000"),
)


@st.composite
def text_and_spans(draw):
    text = draw(st.text(alphabet=TEXT_ALPHABET, min_size=1, max_size=120))
    cuts = sorted(draw(st.lists(st.integers(0, len(text)), max_size=12, unique=True)))
    spans = []
    for a, b in zip(cuts[::2], cuts[1::2]):
        if b > a:
            spans.append(EntitySpan(a, b, draw(st.sampled_from(["PER", "LOC"])), 0.5))
    style = draw(st.sampled_from(["label", "indexed", "pseudonym"]))
    return text, spans, style


@settings(max_examples=150, deadline=None)
@given(text_and_spans())
def test_property_redaction_removes_surfaces_and_keeps_the_rest(case):
    text, spans, style = case
    policy = RedactionPolicy(frozenset({"PER", "LOC"}), style=style,
                             key=b"k" if style == "pseudonym" else None)
    redacted, replacements = redact_text(text, spans, policy)
    assert len(replacements) == len(spans)
    check_replacements(redacted, replacements)
    # Text outside the spans is preserved, in order, between the placeholders.
    cursor_text, cursor_redacted = 0, 0
    for span, r in zip(spans, replacements):
        assert r.label == span.label
        assert redacted[cursor_redacted:r.start] == text[cursor_text:span.start]
        cursor_text, cursor_redacted = span.end, r.end
    assert redacted[cursor_redacted:] == text[cursor_text:]
    # A surface of 3+ characters that occurs only in its span is gone.
    for span in spans:
        surface = text[span.start:span.end]
        if len(surface) >= 3 and text.find(surface) == span.start and text.find(surface, span.start + 1) == -1:
            assert surface not in redacted


@given(st.lists(st.tuples(st.integers(0, 60), st.integers(1, 12), st.integers(0, 9)), max_size=30))
@settings(max_examples=150, deadline=None)
def test_resolve_overlaps_matches_the_quadratic_definition(raw):
    spans = [EntitySpan(a, a + n, "PER", score / 10) for a, n, score in raw]
    expected: list[EntitySpan] = []
    for span in sorted(spans, key=lambda s: (-len(s), -s.score, s.start)):
        if not any(span.intersects(other) for other in expected):
            expected.append(span)
    assert list(resolve_overlaps(spans)) == sorted(expected, key=lambda s: s.start)


def test_firm_names_listed_with_commas_and_and_become_one_span():
    text = "Associate, Hoffman, Anderson and Hartman, Manchester. I met Anna and Bob."
    spans = [EntitySpan(text.index(w), text.index(w) + len(w), label, 0.9) for w, label in (
        ("Hoffman", "PER"), ("Anderson", "PER"), ("Hartman", "ORG"), ("Manchester", "LOC"),
        ("Anna", "PER"), ("Bob", "PER"))]
    joined = join_name_lists(text, spans, frozenset({"PER", "LOC", "ORG"}))
    assert [(s.label, text[s.start:s.end]) for s in joined] == [
        ("ORG", "Hoffman, Anderson and Hartman"), ("LOC", "Manchester"), ("PER", "Anna"),
        ("PER", "Bob")]


def test_lists_with_an_unredacted_or_lowercase_part_are_not_joined():
    text = "Smith, Jones and Brown; Smith, jones and Brown"
    spans = [EntitySpan(m.start(), m.end(), "PER", 0.9) for m in re.finditer(r"\w+", text)
             if m.group() != "and"]
    spans[1] = dataclasses.replace(spans[1], label="DATE")  # a pattern label never joins
    joined = join_name_lists(text, spans, frozenset({"PER"}))
    assert len(joined) == len(spans)


# --- surnames ----------------------------------------------------------------------
@pytest.mark.parametrize("text, name, language, mention", [
    ("Frau Annegret Lange wohnt hier. Lange sagt nichts.", "Annegret Lange", "de", "Lange"),
    ("Michael Ende wurde 1929 geboren. Ende lebte in Rom.", "Michael Ende", "de", "Ende"),
    ("Dr. Emily Nurse joined. Nurse said it was calm.", "Emily Nurse", "en", "Nurse"),
    ("Margaret Court won. Court stayed on the tour.", "Margaret Court", "en", "Court"),
])
def test_a_surname_hidden_once_is_hidden_at_every_capitalised_mention(text, name, language,
                                                                      mention):
    spans = (span_of(text, name, "PER", 0.95),)
    _, redacted, _ = redact(seg(text), spans, RedactionPolicy(labels=ALL), language)
    assert mention not in redacted and redacted.count("[PER]") == 2, redacted


def test_a_surname_that_is_a_word_is_kept_in_lowercase_and_alone_without_a_full_name():
    text = "Margaret Court won. The court stayed. A court is not Court."
    spans = (span_of(text, "Margaret Court", "PER", 0.95),)
    _, redacted, _ = redact(seg(text), spans, RedactionPolicy(labels=ALL), "en")
    assert redacted == "[PER] won. The court stayed. A court is not [PER]."
    text = "The Court stayed."          # no person named: nothing to spread
    assert redact(seg(text), (), RedactionPolicy(labels=ALL), "en")[1] == text


def test_a_name_after_an_honorific_read_as_another_type_gives_its_surname_as_a_person():
    text = "Frau Annegret Lange wohnt hier. Lange sagt nichts."
    spans = (span_of(text, "Frau Annegret", "ORG", 0.9),)
    entities, redacted, _ = redact(seg(text), spans, RedactionPolicy(labels=ALL), "de")
    assert "Lange" not in redacted
    assert [text[s.start:s.end] for s in entities if s.label == "PER"] == ["Lange", "Lange"]
