"""bench/peers.py and bench/spacy_conll.py: label mapping, F1, casing ids, CoNLL -> spaCy Docs.

Fast: no training, no model, no subprocess.
"""
from __future__ import annotations

import pytest

from bench import peers
from models.conll import read_documents

CONLL = """-DOCSTART- O

EU B-ORG
rejects O
German B-MISC
call O
. O

Peter B-PER
Blackburn I-PER
in O
New B-LOC
York I-LOC

-DOCSTART- O

U.S. B-LOC
( O
Reuters B-ORG
) O
"""


@pytest.fixture()
def golds(tmp_path):
    path = tmp_path / "mini.txt"
    path.write_text(CONLL, encoding="utf-8")
    return read_documents(path)


# --------------------------------------------------------------------------- labels

@pytest.mark.parametrize("label, expected", [
    ("PER", "PER"), ("PERSON", "PER"), ("GPE", "LOC"), ("LOC", "LOC"), ("FAC", "LOC"),
    ("LOCATION", "LOC"), ("ORG", "ORG"), ("ORGANIZATION", "ORG"), ("NORP", "MISC"),
    ("EVENT", "MISC"), ("PRODUCT", "MISC"), ("WORK_OF_ART", "MISC"), ("LAW", "MISC"),
    ("LANGUAGE", "MISC"), ("MISC", "MISC"), ("DATE", None), ("CARDINAL", None),
    ("EMAIL", None), ("MONEY", None),
])
def test_label_map_for_larvatus_hf_and_spacy(label, expected):
    for system in ("larvatus", "hf", "spacy"):
        assert peers.map_label(label, system) == expected


@pytest.mark.parametrize("label, expected", [
    ("PERSON", "PER"), ("LOCATION", "LOC"), ("ORGANIZATION", "ORG"), ("NRP", None),
    ("DATE_TIME", None), ("PHONE_NUMBER", None), ("EMAIL_ADDRESS", None),
])
def test_presidio_counts_only_person_location_organization(label, expected):
    assert peers.map_label(label, "presidio") == expected


def test_system_of_leg_names():
    assert [peers.system_of(n) for n in ("larvatus-default", "hf-pipeline", "spacy-small",
                                         "presidio-analyzer")] == list(peers.SYSTEMS)


def test_presidio_configuration_maps_conll_labels_and_keeps_organization():
    mapping = peers.PRESIDIO_NER_CONFIGURATION["model_to_presidio_entity_mapping"]
    ignored = peers.PRESIDIO_NER_CONFIGURATION["labels_to_ignore"]
    assert {mapping[k] for k in ("PER", "LOC", "ORG")} == {"PERSON", "LOCATION", "ORGANIZATION"}
    assert "MISC" in ignored and "ORGANIZATION" not in ignored and "ORG" not in ignored


# --------------------------------------------------------------------------- F1

def test_gold_spans_score_perfectly(golds):
    predictions = {g.doc_id: [[s.start, s.end, s.label] for s in g.spans] for g in golds}
    scores = peers.score_predictions(golds, predictions, "hf")
    assert scores["micro"]["f1"] == 1.0 and scores["micro"]["support"] == 6
    assert scores[peers.PER_LOC_ORG] == {"precision": 1.0, "recall": 1.0, "f1": 1.0,
                                         "support": 5, "predicted": 5}


def test_hand_made_spans(golds):
    doc0, doc1 = golds
    text = doc0.text
    eu = text.index("EU")
    peter = text.index("Peter Blackburn")
    york = text.index("New York")
    predictions = {
        doc0.doc_id: [
            [eu, eu + 2, "ORGANIZATION"],              # right, mapped from Presidio's label
            [peter, peter + len("Peter"), "PERSON"],   # boundary wrong: FP + FN
            [york, york + len("New York"), "LOCATION"],  # right
            [york, york + len("New"), "GPE"],        # not a Presidio type: not scored
            [0, 2, "DATE_TIME"],                       # not scored
        ],
        # doc1 has no predictions: its two gold entities are missed
    }
    scores = peers.score_predictions(golds, predictions, "presidio")
    # Gold: ORG EU, MISC German, PER Peter Blackburn, LOC New York, LOC U.S., ORG Reuters.
    assert scores["ORG"] == {"precision": 1.0, "recall": 0.5, "f1": round(2 / 3, 4),
                             "support": 2, "predicted": 1}
    assert scores["PER"]["precision"] == 0.0 and scores["PER"]["recall"] == 0.0
    assert scores["LOC"]["recall"] == 0.5 and scores["LOC"]["precision"] == 1.0
    assert scores["MISC"]["support"] == 1 and scores["MISC"]["predicted"] == 0
    three = scores[peers.PER_LOC_ORG]
    assert (three["support"], three["predicted"]) == (5, 3)
    assert three["precision"] == round(2 / 3, 4) and three["recall"] == round(2 / 5, 4)
    micro = scores["micro"]
    assert (micro["support"], micro["predicted"]) == (6, 3)  # MISC counts as missed in micro
    assert micro["recall"] == round(2 / 6, 4)


def test_larvatus_propagated_mentions_are_not_scored():
    found = {"d": [[0, 4, "PER", False], [10, 14, "PER", True]]}
    assert peers.scored_predictions(found, "larvatus") == {"d": [[0, 4, "PER", False]]}
    assert peers.scored_predictions(found, "hf") is found


# --------------------------------------------------------------------------- HF casing ids

def test_bert_words_split_punctuation_like_bert():
    text = "John's U.S. trip — “Paris”."
    starts, ends = peers.bert_words(text)
    assert [text[a:b] for a, b in zip(starts, ends)] == [
        "John", "'", "s", "U", ".", "S", ".", "trip", "—", "“", "Paris", "”", "."]


def test_casing_type_ids_follow_each_pieces_word():
    text = "IBM hired McDonald here"
    # [CLS] ibm hired mc ##don ##ald here [SEP], offsets as a fast tokenizer gives them
    offsets = [(0, 0), (0, 3), (4, 9), (10, 12), (12, 15), (15, 18), (19, 23), (0, 0)]
    special = [1, 0, 0, 0, 0, 0, 0, 1]
    assert peers.casing_type_ids(text, offsets, special) == [0, 2, 0, 1, 1, 1, 0, 0]


# --------------------------------------------------------------------------- CoNLL -> spaCy

def test_conll_documents_become_spacy_docs_with_gold_entities(golds):
    spacy = pytest.importorskip("spacy")
    from bench.spacy_conll import reference_doc

    vocab = spacy.blank("en").vocab
    doc = reference_doc(vocab, golds[0])
    assert doc.text == golds[0].text == "EU rejects German call .\nPeter Blackburn in New York"
    assert [t.text for t in doc] == ["EU", "rejects", "German", "call", ".", "\n", "Peter",
                                     "Blackburn", "in", "New", "York"]
    assert [(e.text, e.label_) for e in doc.ents] == [
        ("EU", "ORG"), ("German", "MISC"), ("Peter Blackburn", "PER"), ("New York", "LOC")]
    assert [(e.start_char, e.end_char, e.label_) for e in doc.ents] == [
        (s.start, s.end, s.label) for s in golds[0].spans]
    second = reference_doc(vocab, golds[1])
    assert [(e.text, e.label_) for e in second.ents] == [("U.S.", "LOC"), ("Reuters", "ORG")]


def test_spacy_tokenizer_aligns_with_the_gold_words(golds):
    spacy = pytest.importorskip("spacy")
    from spacy.training import Example

    from bench.spacy_conll import reference_doc

    nlp = spacy.blank("en")
    for gold in golds:
        example = Example(nlp.make_doc(gold.text), reference_doc(nlp.vocab, gold))
        spans = example.reference.ents
        assert [(e.start_char, e.end_char) for e in spans] == [(s.start, s.end) for s in gold.spans]
        assert "-" not in example.get_aligned_ner()


def test_cache_directory_names_the_settings(tmp_path):
    from bench.spacy_conll import cache_dir

    assert cache_dir(0, 10, root=tmp_path).name == "seed0-10min"
    assert cache_dir(3, 1.5, 200, root=tmp_path).name == "seed3-1.5min-steps200"


# --------------------------------------------------------------------------- CLI

def test_cli_defaults_and_choices():
    args = peers.parse_args([])
    assert args.corpus == ["conll", "news"] and args.model == [peers.DEFAULT_MODEL]
    assert args.systems == list(peers.SYSTEMS) and args.hf_checkpoint == peers.DEFAULT_CHECKPOINT
    assert args.spacy_train_minutes == 10.0 and args.repeats == 3
    args = peers.parse_args(["--corpus", "news", "--systems", "larvatus,spacy",
                             "--model", "a", "--model", "b"])
    assert args.corpus == ["news"] and args.systems == ["larvatus", "spacy"]
    assert args.model == ["a", "b"]
    assert args.larvatus_thresholds == ["default", "1"]
    with pytest.raises(SystemExit):
        peers.parse_args(["--systems", "larvatus,stanza"])
    with pytest.raises(SystemExit):
        peers.parse_args(["--larvatus-thresholds", "default,2"])


def test_larvatus_rows_by_threshold():
    args = peers.parse_args(["--larvatus-thresholds", "default,1", "--model", "models/default"])
    prepared = {"corpora": {"conll": {"path": "docs.jsonl"}}, "window": 256, "overlap": 64}
    planned = peers.legs(args, prepared, "spacy-dir", "conll")
    names = [name for name, _, _ in planned]
    assert names == ["larvatus-default", "larvatus-default-t1", "hf-pipeline", "spacy-small",
                     "presidio-analyzer"]
    extras = [params["extra"] for name, _, params in planned if name.startswith("larvatus")]
    assert extras == [[], ["--redact-threshold", "1"]]
    assert {peers.system_of(n) for n in names} == set(peers.SYSTEMS)
