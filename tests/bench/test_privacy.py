"""The privacy benchmark's corpus and scores (bench/privacy_corpus.py, bench/privacy.py).

Fast and offline: no subprocess, no model, no Presidio engine.
"""
from __future__ import annotations

import json
import re
import sys

import pytest

import faker  # noqa: F401  (in the test extra: a missing one fails, never skips)
import stdnum.iban as stdnum_iban

from tests.paths import ROOT as REPO

if str(REPO) not in sys.path:
    sys.path.insert(0, str(REPO))

from bench import privacy  # noqa: E402
from bench import privacy_corpus as pc  # noqa: E402
from bench.privacy_corpus import Document, Gold, Prediction  # noqa: E402
from stdnum import luhn  # noqa: E402
from stdnum.gb import nhs  # noqa: E402
from stdnum.us import ssn  # noqa: E402

DOCS = 42  # six of each genre


@pytest.fixture(scope="module")
def dev():
    return pc.make_split("dev", DOCS)


@pytest.fixture(scope="module")
def test_split():
    return pc.make_split("test", DOCS)


# --------------------------------------------------------------------------- corpus

def test_generator_is_deterministic_per_seed(dev):
    again = pc.make_split("dev", DOCS)
    assert [d.to_json() for d in again] == [d.to_json() for d in dev]
    # a shorter run is a prefix of a longer one
    assert [d.to_json() for d in pc.make_split("dev", 5)] == [d.to_json() for d in dev[:5]]
    assert pc.make_split("dev", 3, seed=1) != pc.make_split("dev", 3, seed=2)


def test_dev_and_test_splits_differ(dev, test_split):
    assert not {d.text for d in dev} & {d.text for d in test_split}
    assert not {d.id for d in dev} & {d.id for d in test_split}
    assert pc.SPLIT_SEEDS["dev"] != pc.SPLIT_SEEDS["test"]


def test_gold_spans_are_the_planted_values_and_do_not_overlap(dev, test_split):
    for document in dev + test_split:
        previous_end = 0
        for gold in document.gold:
            assert document.text[gold.start:gold.end] == gold.value
            assert gold.start >= previous_end, (document.id, gold)
            assert gold.value == gold.value.strip() and any(c.isalnum() for c in gold.value)
            assert gold.casing == pc.casing_of(gold.value)
            previous_end = gold.end
        gold_mask = pc.coverage_mask(len(document.text), [(g.start, g.end) for g in document.gold])
        for start, end in document.neutral:
            assert not any(gold_mask[start:end]), document.id


def test_every_kind_genre_and_per_casing_appears(dev, test_split):
    for split in (dev, test_split):
        assert {g.kind for d in split for g in d.gold} == set(pc.KINDS)
        assert {d.genre for d in split} == set(pc.GENRES)
        assert {g.casing for d in split for g in d.gold if g.kind == "PER"} == set(pc.CASINGS)
        assert {"en_US", "en_GB"} <= {d.locale for d in split}
        assert len({d.locale for d in split}) >= 4


def test_structured_values_are_valid(dev, test_split):
    golds = [g for d in dev + test_split for g in d.gold]
    cards = [g for g in golds if g.kind == "CARD"]
    ibans = [g for g in golds if g.kind == "IBAN"]
    assert cards and ibans
    for card in cards:
        assert luhn.is_valid(re.sub(r"[\s-]", "", card.value)), card
    for iban in ibans:
        assert stdnum_iban.is_valid(iban.value), iban
    assert {i.fmt for i in ibans} == {"compact", "spaced"}
    for gold in golds:
        if gold.fmt == "nhs":
            assert nhs.is_valid(gold.value)
        elif gold.fmt == "ssn":
            assert ssn.is_valid(gold.value)
            assert not gold.value.startswith(("000", "666", "9"))
        elif gold.fmt == "nino":
            assert re.fullmatch(r"[A-Z]{2} ?\d\d ?\d\d ?\d\d ?[A-D]", gold.value)
            assert gold.value[:2] not in {"BG", "GB", "KN", "NK", "NT", "TN", "ZZ"}


def test_phone_and_date_formats():
    import datetime
    import random

    import phonenumbers

    rng = random.Random(0)
    for style, shape in [("us_paren", r"\(\d{3}\) \d{3}-\d{4}"), ("gb_intl", r"\+44 [\d ]+"),
                         ("gb_mobile", r"07\d{3} \d{6}"), ("fr_intl", r"\+33 \d( \d\d){4}")]:
        number = pc.make_phone(rng, style)
        assert re.fullmatch(shape, number), number
        assert phonenumbers.is_valid_number(phonenumbers.parse(number, "US" if "us" in style else "GB"))
    day = datetime.date(1956, 8, 12)
    assert [pc.format_date(day, s) for s in ("dmy_slash", "iso", "d_month_y", "month_d_y")] == [
        "12/08/1956", "1956-08-12", "12 August 1956", "August 12, 1956"]


def test_records_are_the_pipeline_input(dev, tmp_path):
    path = tmp_path / "docs.jsonl"
    privacy.write_jsonl(dev[:3], path)
    lines = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]
    assert lines == [{"id": d.id, "text": d.text} for d in dev[:3]]


# --------------------------------------------------------------------------- scoring

def _doc(text: str, *items: tuple[str, str], neutral: tuple = ()) -> Document:
    golds = []
    for kind, value in items:
        start = text.index(value)
        golds.append(Gold(start, start + len(value), kind, value, "", pc.casing_of(value)))
    return Document("d", "email", "en_GB", text, tuple(golds), neutral)


TEXT = "Call Anna Smith on +44 20 7946 0958 today."


def test_full_coverage_is_caught_partial_is_not():
    doc = _doc(TEXT, ("PER", "Anna Smith"), ("PHONE", "+44 20 7946 0958"))
    per, phone = doc.gold
    full = pc.coverage_mask(len(TEXT), [(per.start, per.end), (phone.start + 1, phone.end)])
    assert pc.item_caught(TEXT, per, full)
    assert pc.item_caught(TEXT, phone, full)  # the "+" is not alphanumeric
    partial = pc.coverage_mask(len(TEXT), [(per.start, per.start + 4), (phone.start, phone.end - 1)])
    assert not pc.item_caught(TEXT, per, partial)
    assert not pc.item_caught(TEXT, phone, partial)
    # two adjacent spans together cover a name
    halves = pc.coverage_mask(len(TEXT), [(per.start, per.start + 4), (per.start + 5, per.end)])
    assert pc.item_caught(TEXT, per, halves)


def test_label_mismatch_is_still_caught():
    doc = _doc(TEXT, ("PER", "Anna Smith"), ("PHONE", "+44 20 7946 0958"))
    per, phone = doc.gold
    prediction = Prediction(((per.start, per.end, "ORG"), (phone.start, phone.end, "DATE")))
    result = pc.score([doc], {"d": prediction})
    assert result["kinds"]["PER"] == {"items": 1, "caught": 1, "leaked": 0, "recall": 1.0}
    assert result["kinds"]["PHONE"]["recall"] == 1.0
    assert result["overall"]["all"]["recall"] == 1.0
    assert result["precision"]["precision"] == 1.0


def test_score_rows_precision_and_leaks():
    doc = _doc(TEXT, ("PER", "Anna Smith"), ("PHONE", "+44 20 7946 0958"))
    per, phone = doc.gold
    # "Call" (4) and "Anna Smith" (9) redacted, the phone not: 9 of 13 redacted alnum in gold
    prediction = Prediction(((0, 4, "ORG"), (per.start, per.end, "PER")))
    result = pc.score([doc], {"d": prediction})
    assert result["kinds"]["PER"]["caught"] == 1
    assert result["kinds"]["PHONE"]["caught"] == 0 and result["kinds"]["PHONE"]["leaked"] == 1
    assert result["overall"]["names"]["recall"] == 1.0
    assert result["overall"]["structured"]["recall"] == 0.0
    assert result["overall"]["all"]["recall"] == 0.5
    assert result["precision"] == {"redacted_alnum": 13, "inside_gold": 9, "precision": 9 / 13}
    assert result["per_casing"]["title"]["items"] == 1
    assert result["leaked"] == 1
    assert result["misses"] == [{"id": "d", "kind": "PHONE", "fmt": "", "value": phone.value}]
    # a missing prediction is nothing redacted; precision then has no denominator
    empty = pc.score([doc], {})
    assert empty["documents_missing"] == 1 and empty["overall"]["all"]["caught"] == 0
    assert empty["precision"]["precision"] is None


def test_neutral_spans_leave_precision_alone():
    text = "Seen 2023-04-05T10:00Z by Anna Smith."
    doc = _doc(text, ("PER", "Anna Smith"), neutral=((5, 22),))
    per = doc.gold[0]
    mask = pc.coverage_mask(len(text), [(5, 22), (per.start, per.end)])
    assert pc.precision_counts(doc, mask) == (9, 9)


def test_leak_check_uses_the_redacted_text():
    assert pc.item_leaked("Anna Smith", "Dear Anna Smith, ...")
    assert not pc.item_leaked("Anna Smith", "Dear [PER], ...")
    assert not pc.item_leaked("Ann", "Annual report")      # not inside a longer word
    assert pc.item_leaked("jdoe", "<jdoe> hi")
    # a name redacted once but written again in full still leaks
    doc = _doc("Anna Smith met Anna Smith.", ("PER", "Anna Smith"))
    prediction = Prediction(((0, 10, "PER"),))
    result = pc.score([doc], {"d": prediction})
    assert result["kinds"]["PER"]["caught"] == 1 and result["kinds"]["PER"]["leaked"] == 1
    assert pc.redact_with(doc.text, [(0, 10), (4, 8)]) == "[REDACTED] met Anna Smith."


def test_ordinary_words_kept_and_span_edges():
    text = "Hi team, the witness Anna Smith left. Call Bob."
    doc = _doc(text, ("PER", "Anna Smith"), ("PER", "Bob"))
    witness = text.index("witness")
    prediction = Prediction(((0, 7, "ORG"), (witness, text.index(" left"), "PER"),
                             (text.index("Bob"), text.index("Bob") + 4, "PER")))
    result = pc.score([doc], {"d": prediction})
    # words outside gold: Hi team the witness left Call; Hi, team, witness redacted
    assert result["ordinary_words"] == {
        "words": 6, "kept": 3, "capitalised": 2, "capitalised_kept": 1,
        "kept_share": 0.5, "capitalised_kept_share": 0.5}
    spans = result["spans"]
    assert (spans["name_spans"], spans["name_spans_ordinary"]) == (3, 1)
    assert (spans["spans_on_gold"], spans["edge_wider"], spans["edge_punctuation"]) == (2, 1, 1)


def test_merge_spans():
    assert pc.merge_spans([(5, 8, "X"), (0, 2), (1, 3), (8, 9), (4, 4)]) == [(0, 3), (5, 9)]


# --------------------------------------------------------------------------- runner pieces

def test_redact_label_set_from_the_larvatus_arguments():
    assert privacy.redact_label_set([]) == frozenset({"PER", "LOC", "ORG"})
    assert privacy.redact_label_set(["--redact-labels", "all"]) is None
    assert privacy.redact_label_set(["--redact-labels=PER,EMAIL"]) == frozenset({"PER", "EMAIL"})


def test_larvatus_predictions_from_annotation_rows():
    doc = _doc(TEXT, ("PER", "Anna Smith"), ("PHONE", "+44 20 7946 0958"))
    per, phone = doc.gold
    redacted = TEXT.replace("Anna Smith", "[PER]")
    entity = {"start": per.start, "end": per.end, "label": "PER", "score": 0.9, "propagated": False}
    misc = {"start": 0, "end": 4, "label": "MISC", "score": 0.5, "propagated": False}
    row = {"id": "d", "redacted_text": redacted, "entities": [entity, misc],
           "replacements": [{"start": 5, "end": 10, "label": "PER", "placeholder": "[PER]"}]}
    predictions, diagnostics = privacy.larvatus_predictions(
        [doc], [row], frozenset({"PER", "LOC", "ORG"}))
    assert predictions["d"].spans == ((per.start, per.end, "PER"),)
    assert diagnostics["rebuild_mismatch"] == 0 and diagnostics["rebuild_checked"] == 1
    # all labels: MISC counts too, and the rebuilt text no longer matches
    predictions, diagnostics = privacy.larvatus_predictions([doc], [row], None)
    assert len(predictions["d"].spans) == 2 and diagnostics["rebuild_mismatch"] == 1
    # an explicit `redacted` field wins over the label rule
    flagged = [dict(entity, redacted=False), dict(misc, redacted=True)]
    predictions, diagnostics = privacy.larvatus_predictions(
        [doc], [dict(row, entities=flagged)], frozenset({"PER"}))
    assert predictions["d"].spans == ((0, 4, "MISC"),) and diagnostics["has_redacted_field"]


def test_cli_parses_passthrough_arguments():
    args = privacy.parse_args(["--split", "dev", "--docs", "7",
                               "--larvatus-args=--redact-labels PER --model runs/model"])
    assert args.split == "dev" and args.docs == 7
    assert args.larvatus_args == "--redact-labels PER --model runs/model"
    assert privacy.parse_args([]).split == "test"
    with pytest.raises(SystemExit):
        privacy.parse_args(["--no-larvatus", "--no-presidio"])


def test_closing_paragraph_plants_postcodes_sort_codes_and_dates_without_year(dev, test_split):
    fmts = {g.fmt for d in dev + test_split for g in d.gold}
    assert {"postcode_uk", "zip", "postcode_de", "postcode_nl", "po_box", "d_month", "compact",
            "birth_year", "sort_code", "plot", "case_no", "unicode_spaced"} <= fmts
    spaced = [g.value for d in dev + test_split for g in d.gold if g.fmt == "unicode_spaced"]
    assert all(re.search("[\u00a0\u2009\u202f]", value) for value in spaced)


def test_closing_paragraph_leaves_the_items_before_it_alone(monkeypatch):
    seed = pc.SPLIT_SEEDS["test"]
    with_paragraph = [pc.make_document(seed, i) for i in range(7)]
    monkeypatch.setattr(pc, "_extra_formats", lambda *args: None)
    for i, document in enumerate(with_paragraph):
        without = pc.make_document(seed, i)
        assert document.text.startswith(without.text)
        assert document.gold[:len(without.gold)] == without.gold
