"""The utility bench's corpus: items at their offsets, every language and genre, and the scoring."""
from __future__ import annotations

from bench.utility_corpus import GENRES, LOCALES, TEMPLATES, make_documents, render, score


def test_render_places_items_at_their_offsets():
    text, items = render("Dear {PER}, the [[Contract]] from {ORG}.",
                         {"PER": "Ana Diaz", "ORG": "Acme Ltd"})
    assert text == "Dear Ana Diaz, the Contract from Acme Ltd."
    assert [(text[i.start:i.end], i.kind) for i in items] == [
        ("Ana Diaz", "PER"), ("Contract", "ordinary"), ("Acme Ltd", "ORG")]


def test_every_language_has_every_genre_with_words_and_names():
    assert set(TEMPLATES) == set(LOCALES)
    documents = make_documents(1)
    assert len(documents) == len(LOCALES) * len(GENRES)
    for doc in documents:
        kinds = {i.kind for i in doc.items}
        assert "ordinary" in kinds and "PER" in kinds, doc.doc_id
        assert "[[" not in doc.text and "{" not in doc.text
    assert [d.text for d in make_documents(1)] == [d.text for d in documents]   # seeded


def test_score_counts_kept_words_and_whole_names():
    [doc] = [d for d in make_documents(1) if d.doc_id == "en-letter-0"]
    names = [i for i in doc.items if i.kind != "ordinary"]
    words = [i for i in doc.items if i.kind == "ordinary"]
    entities = [{"start": i.start, "end": i.end, "redacted": True} for i in names]
    entities.append({"start": words[0].start, "end": words[0].end, "redacted": True})
    tally = score([doc], {doc.doc_id: {"entities": entities}})["en"]
    assert (tally["kept"], tally["words"]) == (len(words) - 1, len(words))
    assert (tally["names_hidden"], tally["names"], tally["lost"]) == (len(names), len(names), [])
    half = [{"start": names[0].start, "end": names[0].start + 2, "redacted": True}]
    tally = score([doc], {doc.doc_id: {"entities": half}})["en"]
    assert tally["names_hidden"] == 0 and len(tally["lost"]) == len(names)
