"""Planting known items into copies of documents: valid values, exact offsets, the user's text untouched, honest intervals."""
from __future__ import annotations

import phonenumbers
import pytest
from stdnum import iban, luhn
from stdnum.de import idnr
from stdnum.es import dni
from stdnum.nl import bsn

from larvatus.transforms import planting

NEWS = ("The council met on Tuesday. Members approved the budget after a long debate. "
        "The mayor said the vote was close.\n\nA second paragraph follows here.")
GERMAN = ("Der Vertrag wurde am Montag unterschrieben. Die Firma zahlt die Miete pünktlich. "
          "Wir danken für Ihr Schreiben.")


def _copies(text: str, language: str, count: int = 40, seed: int = 0):
    return [planting.plant("doc-1", text, language, i, seed, 3) for i in range(count)]


def test_items_sit_at_their_offsets_and_the_users_text_is_kept_whole():
    for copy in _copies(NEWS, "en") + _copies(GERMAN + " 🙂 Ende.", "de"):
        for item in copy.items:
            assert copy.text[item.start:item.end] == item.value
        original = "".join(copy.text[start:end] for start, end in copy.original_spans)
        assert original in (NEWS, GERMAN + " 🙂 Ende.")
        assert len({item.kind for item in copy.items}) == len(copy.items) == 3


def test_offsets_are_code_points_past_astral_characters():
    text = "🙂🙂 The council met. 🎉 Members approved it. Done."
    for copy in _copies(text, "en", 30):
        for item in copy.items:
            assert copy.text[item.start:item.end] == item.value
        assert copy.text.count("🙂") == 2 and copy.text.count("🎉") == 1


def test_the_same_seed_plants_the_same_items_and_another_seed_others():
    first = _copies(NEWS, "en", 5, seed=7)
    assert first == _copies(NEWS, "en", 5, seed=7)
    assert [c.text for c in first] != [c.text for c in _copies(NEWS, "en", 5, seed=8)]


def test_checked_kinds_are_planted_valid():
    seen = set()
    for language, region in (("en", "GB"), ("de", "DE"), ("es", "ES"), ("nl", "NL")):
        for copy in _copies(NEWS, language, 60):
            for item in copy.items:
                seen.add((language, item.kind))
                if item.kind == "IBAN":
                    assert iban.is_valid(item.value), item.value
                elif item.kind == "CARD":
                    assert luhn.is_valid(item.value.replace(" ", "").replace("-", "")), item.value
                elif item.kind == "PHONE":
                    number = phonenumbers.parse(item.value, region)
                    assert phonenumbers.is_valid_number(number), item.value
                elif item.kind == "ID" and language == "de":
                    assert idnr.is_valid(item.value), item.value
                elif item.kind == "ID" and language == "es":
                    assert dni.is_valid(item.value), item.value
                elif item.kind == "ID" and language == "nl":
                    assert bsn.is_valid(item.value), item.value
    assert {kind for _, kind in seen} == set(planting.KINDS)


def test_items_go_into_cue_positions_and_running_text_in_the_documents_language():
    copies = _copies(GERMAN, "de", 80)
    items = [(copy, item) for copy in copies for item in copy.items]
    assert {item.context for _, item in items} == set(planting.CONTEXTS)
    assert {item.position for _, item in items} >= {"greeting", "signature", "header",
                                                     "footer", "sentence"}
    for copy, item in items:
        if item.kind == "PHONE" and item.context == "cue":
            assert copy.text[:item.start].endswith("Tel.: ")
        if item.position == "signature":
            assert "Mit freundlichen Grüßen\n" in copy.text[:item.start]
        if item.position == "sentence":   # a sentence of its own after a sentence break
            befores = {t[-1].split("{v}")[0].replace("{label}", planting.ID_LABELS["de_DE"])
                       for k, t in planting.TEMPLATES["de"].items() if k in planting.KINDS}
            titles = ("",) + tuple(t + " " for t in planting.TITLES["de"])
            head = copy.text[:item.start]
            assert any(head.endswith(". " + b + t) for b in befores for t in titles), head[-60:]


@pytest.mark.parametrize("successes,trials,low,high", [
    (8, 10, 0.4902, 0.9433),     # textbook values of the Wilson score interval
    (0, 10, 0.0, 0.2775),
    (10, 10, 0.7225, 1.0),
    (50, 100, 0.4038, 0.5962),
])
def test_wilson_interval_matches_known_values(successes, trials, low, high):
    got = planting.wilson_interval(successes, trials)
    assert got == pytest.approx((low, high), abs=5e-4)


def test_wilson_interval_of_no_trials_says_nothing():
    assert planting.wilson_interval(0, 0) == (0.0, 1.0)


def test_outcomes_hidden_partly_missed_and_words_kept():
    copy = planting.apply_inserts("c", "d", "en", "Hello there. Bye now.", [
        planting._Insert(12, " Call ", "0161 496 0631", " today.", "PHONE", "running", "sentence")])
    phone = copy.items[0]
    assert copy.text[phone.start:phone.end] == "0161 496 0631"
    outcomes, (words, kept) = planting.score_copy(copy, [(phone.start, phone.end)])
    assert [o.outcome for o in outcomes] == ["hidden"] and (words, kept) == (4, 4)
    outcomes, _ = planting.score_copy(copy, [(phone.start, phone.start + 4)])
    assert [o.outcome for o in outcomes] == ["partly"]
    outcomes, (words, kept) = planting.score_copy(copy, [(0, 5)])
    assert [o.outcome for o in outcomes] == ["missed"] and (words, kept) == (4, 3)


def test_table_counts_add_up_per_kind_context_and_overall():
    copies = _copies(NEWS, "en", 30)
    outcomes = []
    for number, copy in enumerate(copies):
        spans = [(i.start, i.end) for i in copy.items if number % 3]   # every third copy missed
        outcomes += planting.score_copy(copy, spans)[0]
    rows = planting.table(outcomes)
    overall = next(r for r in rows if r.kind == "all" and r.context == "all")
    assert overall.planted == 90 and overall.hidden == 60 and overall.missed == 30
    for row in rows:
        assert row.hidden + row.partly + row.missed == row.planted
    per_kind = [r for r in rows if r.kind != "all" and r.context == "all"]
    assert sum(r.planted for r in per_kind) == overall.planted


def test_sample_is_seeded_and_never_larger_than_the_corpus():
    assert planting.choose_sample(5, 10, 0) == [0, 1, 2, 3, 4]
    assert planting.choose_sample(100, 10, 3) == planting.choose_sample(100, 10, 3)
    assert planting.choose_sample(100, 10, 3) != planting.choose_sample(100, 10, 4)
    assert len(set(planting.choose_sample(100, 10, 3))) == 10
