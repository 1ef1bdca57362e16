"""Users tune the decision: keep and always-redact terms, per-label thresholds, decision_score, language."""
from __future__ import annotations

import json

import numpy as np
import pyarrow.parquet as pq
import pytest

from larvatus.options import OptionsError
from larvatus.run import parse_label_thresholds, run
from larvatus.transforms.labels import read_scheme
from larvatus.transforms.language import LANGUAGES, detect_language
from larvatus.transforms.realign import RedactionDecision, realign
from larvatus.transforms.records import Document, EntitySpan
from larvatus.transforms.redact import RedactionPolicy, redact, term_spans, without_kept_terms
from larvatus.transforms.segment import segment
from tests.documents import encoded_document

SCHEME = read_scheme(["O", "B-PER", "I-PER", "B-ORG", "I-ORG"])




# "Ann" PER-ish (0.4 PER), "Acme" ORG-ish (0.4 ORG): the same mass, two labels.
TEXT = "Ann Acme"
ENCODED = encoded_document(TEXT, [(0, 3), (4, 8)])
PROBS = [np.array([[0.6, 0.4, 0.0, 0.0, 0.0], [0.6, 0.0, 0.0, 0.4, 0.0]], dtype=np.float32)]


def test_decision_score_is_the_quantity_the_threshold_compares():
    decision = RedactionDecision(frozenset({"PER", "ORG"}), 0.3)
    spans = realign(ENCODED, PROBS, SCHEME, decision=decision)
    assert [(s.label, s.redacted) for s in spans] == [("PER", True), ("ORG", True)]
    assert [s.decision_score for s in spans] == pytest.approx([0.4, 0.4])
    assert all(s.redacted == (s.decision_score >= decision.threshold_for(s.label)) for s in spans)


def test_a_label_threshold_overrides_the_default_for_that_label_only():
    decision = RedactionDecision(frozenset({"PER", "ORG"}), 0.3, (("ORG", 0.5),))
    spans = realign(ENCODED, PROBS, SCHEME, decision=decision)
    assert [(s.label, s.redacted) for s in spans] == [("PER", True), ("ORG", False)]


@pytest.mark.parametrize("value", ["ORG", "XYZ=0.3", "ORG=high", "ORG=0"])
def test_bad_label_thresholds_are_refused(value):
    with pytest.raises(ValueError):
        RedactionDecision(frozenset({"ORG"}), 0.3, parse_label_thresholds(value, {"ORG"}))


def test_always_redact_terms_match_whole_words_in_any_case():
    text = "Globex paid. GLOBEX again; Globexian is not it."
    spans = term_spans(text, (("globex", "CLIENT"),))
    assert [(text[s.start:s.end], s.label, s.redacted) for s in spans] == [
        ("Globex", "CLIENT", True), ("GLOBEX", "CLIENT", True)]


def test_keep_terms_are_cut_out_of_any_span():
    text = "Acme Bank London and Acme"
    spans = (EntitySpan(0, 16, "ORG", 0.9, redacted=True), EntitySpan(21, 25, "ORG", 0.9))
    kept = without_kept_terms(text, spans, ("london", "Acme"))
    assert [text[s.start:s.end] for s in kept] == ["Bank"]


def test_keep_and_always_terms_through_redact():
    text = "Smith from Initech met Globex."
    policy = RedactionPolicy(frozenset({"PER", "ORG"}), keep_terms=("Initech",),
                             always_redact=(("Globex", "CLIENT"),))
    spans = (EntitySpan(0, 5, "PER", 0.9), EntitySpan(11, 18, "ORG", 0.9))
    assert redact(segment(Document("d", text, "s")), spans, policy)[1] == \
        "[PER] from Initech met [CLIENT]."


@pytest.mark.parametrize("text, code", [
    ("Sehr geehrte Frau Müller, bitte überweisen Sie den Betrag bis Freitag.", "de"),
    ("Bonjour Madame, veuillez trouver ci-joint la facture du mois dernier.", "fr"),
    ("Hi team, please see the invoice attached to this email.", "en"),
    ("ok", "und"),
    # English full of foreign names: the names do not decide the language.
    ("Wilhelmina Braithwaite met Ngozi Okonjo-Iweala in Leeds and then flew to Lagos with her.",
     "en"),
    ("Dear Mr Kowalczyk, Jan Nowak and Piotr Zielinski will visit Krakow and Gdansk next week.",
     "en"),
])
def test_detect_language(text, code):
    assert detect_language(text) == code


def test_detected_languages_are_the_listed_ones():
    """A short sentence of names never comes out as a creole or regional language."""
    assert detect_language("Angela Merkel met Barack Obama in Berlin on 3 March 2021.") \
        in LANGUAGES


def _write(path, records):
    path.write_text("".join(json.dumps(r) + "\n" for r in records), encoding="utf-8")


def test_term_files_thresholds_language_and_decision_score_through_the_pipeline(
        rigged_model_dir, tmp_path):
    source = tmp_path / "in.jsonl"
    _write(source, [
        {"id": "en", "text": "so Dulcinea met Quixote and the Globex people today."},
        {"id": "de", "text": "Bitte überweisen Sie den Betrag bis Freitag auf unser Konto, danke."},
    ])
    keep = tmp_path / "keep.txt"
    keep.write_text("# kept\nQuixote\n", encoding="utf-8")
    always = tmp_path / "always.txt"
    always.write_text("CLIENT\tglobex\n", encoding="utf-8")
    summary = run(["--input", str(source), "--output", str(tmp_path / "out"), "--model",
                   str(rigged_model_dir), "--device", "cpu", "--keep-terms", str(keep),
                   "--always-redact", str(always), "--label-thresholds", "PER=0.5"])
    [path] = (tmp_path / "out").glob("**/annotations*.parquet")
    rows = {r["id"]: r for r in pq.read_table(path).to_pylist()}
    text = rows["en"]["redacted_text"]
    assert "Quixote" in text and "Globex" not in text and "[CLIENT]" in text
    assert "Dulcinea" not in text
    assert {rows["en"]["language"], rows["de"]["language"]} == {"en", "de"}
    assert summary["documents_by_language"] == {"de": 1, "en": 1}
    assert summary["options"]["label_thresholds"] == {"PER": 0.5}
    model_spans = [e for e in rows["en"]["entities"] if e["label"] in ("PER", "ORG")]
    assert model_spans and all(e["decision_score"] is not None for e in model_spans)
    assert all(e["redacted"] == (e["decision_score"] >= 0.5) for e in model_spans
               if e["label"] == "PER")
    term = [e for e in rows["en"]["entities"] if e["label"] == "CLIENT"]
    assert term and term[0]["decision_score"] is None


def test_an_unreadable_term_file_fails_at_start(rigged_model_dir, tmp_path):
    source = tmp_path / "in.jsonl"
    _write(source, [{"id": "a", "text": "x"}])
    with pytest.raises(OptionsError, match="--keep-terms"):
        run(["--input", str(source), "--output", str(tmp_path / "out"), "--model",
             str(rigged_model_dir), "--device", "cpu", "--keep-terms", str(tmp_path / "none")])
