"""Language resources: common words per language from wordfreq, verbs from lemminflect, all loaded at the redact stage's setup."""
from __future__ import annotations

import sys

import pytest

from larvatus.transforms import lexicon


@pytest.mark.parametrize("word,language,common", [
    ("Schreiben", "de", True), ("Vertrag", "de", True), ("gekündigt", "de", True),
    ("Steuer-ID", "de", True), ("Thomas", "de", False), ("Becker", "de", False),
    ("Müller", "de", False), ("Berlin", "de", False), ("Paris", "fr", False),
    ("Facture", "fr", True), ("Dubois", "fr", False), ("Madrid", "es", False),
    ("Rossi", "it", False), ("Jansen", "nl", False),
])
def test_common_words_of_a_language(word, language, common):
    assert lexicon.is_common_in(word, language) is common


@pytest.mark.parametrize("word,verb", [("Contact", True), ("Ask", True), ("call", True),
                                       ("Maria", False), ("DM", False), ("Garcia", False)])
def test_base_verbs(word, verb):
    assert lexicon.is_base_verb(word) is verb


def test_stop_words_are_read_without_importing_spacys_language_package():
    import importlib

    before = "spacy.lang.fr" in sys.modules
    words = lexicon.stop_words_of("fr")
    assert "chez" in words and "le" in words
    assert ("spacy.lang.fr" in sys.modules) is before
    module = importlib.import_module("spacy.lang.fr.stop_words")
    assert words == {w.lower() for w in module.STOP_WORDS}


FIRST_RECORDS = {
    "fr": "Bonjour, je m'appelle Marie-Claire Dubois et je suis ingénieure chez Capgemini à "
          "Lyon depuis trois ans. Vous pouvez me joindre au bureau.",
    "de": "Sehr geehrte Frau Schneider, vielen Dank für Ihr Schreiben. Hiermit teile ich Ihnen "
          "mit, dass mein Vertrag gekündigt wird. Mit freundlichen Grüßen, Thomas Becker",
    "es": "Estimado señor García, le escribo para confirmar la reunión del próximo lunes en "
          "la oficina de Madrid. Atentamente, Lucía Fernández",
    "it": "Gentile dottor Rossi, le scrivo per confermare l'appuntamento di lunedì presso lo "
          "studio di Milano. Cordiali saluti, Giulia Bianchi",
    "nl": "Beste meneer Jansen, hierbij bevestig ik onze afspraak van maandag op het kantoor "
          "in Utrecht. Met vriendelijke groet, Sanne de Vries",
}


def _tagged(text: str):
    from larvatus.transforms.records import Document, EntitySpan, SegmentedDocument, TaggedDocument

    words = [(m.start(), m.end()) for m in __import__("re").finditer(r"\S+", text)]
    segmented = SegmentedDocument(Document("d", text, "s"), tuple(a for a, _ in words),
                                  tuple(b for _, b in words))
    first = words[3]
    spans = (EntitySpan(first[0], first[1], "ORG", 0.6, redacted=True, decision_score=0.9),)
    return TaggedDocument(segmented, spans, len(words), 1)


def test_the_first_record_of_each_language_triggers_no_load(monkeypatch):
    """After the redact stage's setup, no resource is read inside a record: every file reader
    the language decisions use fails if called, and no module is imported."""
    import wordfreq

    from larvatus.transforms import stages
    from larvatus.transforms.redact import RedactionPolicy

    stage = stages.Redact(RedactionPolicy(labels=frozenset({"PER", "LOC", "ORG"})))
    stage.setup()
    assert {"en", *lexicon.DECISION_LANGUAGES} <= lexicon.loaded()

    def no_load(*args, **kwargs):
        raise AssertionError("a language resource was loaded inside a record")

    monkeypatch.setattr(wordfreq, "read_cBpack", no_load)
    monkeypatch.setattr(lexicon, "stop_words_of", no_load)
    monkeypatch.setattr(lexicon, "_package_file", no_load)
    modules = set(sys.modules)
    for code, text in FIRST_RECORDS.items():
        annotated = stage.step(_tagged(text))
        assert annotated.language == code
    assert set(sys.modules) - modules == set()
