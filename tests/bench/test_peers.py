"""bench/peers.py and bench/spacy_conll.py: label mapping, F1, casing ids, CoNLL -> spaCy Docs, the driver.

The unit tests need no model; the slow ones train a spaCy NER for a few steps and run
the whole driver on two CoNLL documents with the tiny rigged BERT (tests/tiny_model.py).
"""
from __future__ import annotations

import json
import subprocess
import sys

import pytest
import spacy
from spacy.training import Example

from bench import peers
from bench.corpus import REPO
from bench.runners import run_child
from bench.spacy_conll import cache_dir, reference_doc
from larvatus.models.conll import read_documents

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
    nlp = spacy.blank("en")
    for gold in golds:
        example = Example(nlp.make_doc(gold.text), reference_doc(nlp.vocab, gold))
        spans = example.reference.ents
        assert [(e.start_char, e.end_char) for e in spans] == [(s.start, s.end) for s in gold.spans]
        assert "-" not in example.get_aligned_ner()


def test_cache_directory_names_the_settings(tmp_path):
    assert cache_dir(0, 10, root=tmp_path).name == "seed0-10min"
    assert cache_dir(3, 1.5, 200, root=tmp_path).name == "seed3-1.5min-steps200"


# --------------------------------------------------------------------------- CLI

def test_cli_defaults_and_choices():
    args = peers.parse_args([])
    assert args.corpus == ["conll", "news"] and args.model == [peers.DEFAULT_MODEL]
    assert args.systems == list(peers.SYSTEMS)
    # The HF row's weights: the checkpoint the embedded model was exported from.
    recorded = json.loads((REPO / "models" / "default" / "larvatus_model.json").read_text())
    assert args.hf_checkpoint == recorded["checkpoint"]
    assert peers.parse_args(["--model", "elsewhere"]).hf_checkpoint == peers.DEFAULT_CHECKPOINT
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


def test_text_between_tokens_that_is_not_whitespace_is_refused(golds):
    from dataclasses import replace

    broken = replace(golds[1], text="U.S.x( Reuters )")
    with pytest.raises(ValueError, match="not whitespace"):
        reference_doc(spacy.blank("en").vocab, broken)


def test_torch_is_blocked_for_spacy_in_a_fresh_process():
    code = ("from bench.peers import block_torch; assert block_torch(); import spacy, thinc.api; "
            "import sys; assert sys.modules['torch'] is None; "
            "nlp = spacy.blank('en'); print(len(nlp('a b')))")
    done = subprocess.run([sys.executable, "-c", code], cwd=REPO, capture_output=True,
                          text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "2"


# --------------------------------------------------------------------------- end to end, tiny

@pytest.fixture(scope="module")
def mini_conll(tmp_path_factory):
    path = tmp_path_factory.mktemp("conll") / "mini.txt"
    path.write_text(CONLL, encoding="utf-8")
    return path


@pytest.fixture(scope="module")
def tiny_spacy(mini_conll, tmp_path_factory):
    """spaCy's small NER architecture trained 3 steps on the two mini documents."""
    root = tmp_path_factory.mktemp("spacy")
    return run_child("bench.spacy_conll:train_cached", {
        "minutes": 1, "max_steps": 3, "root": str(root / "spacy-conll"),
        "train_path": str(mini_conll), "valid_path": str(mini_conll)}, cache=root)


@pytest.mark.slow  # spaCy's init and 3 updates in a subprocess: about 10 CPU-s
def test_spacy_substitute_trains_and_is_cached(tiny_spacy, mini_conll, tmp_path_factory):
    assert tiny_spacy["steps"] == 3 and not tiny_spacy["reused"]
    assert sorted(tiny_spacy["labels"]) == ["LOC", "MISC", "ORG", "PER"]
    assert tiny_spacy["train_documents"] == tiny_spacy["valid_documents"] == 2
    nlp = spacy.load(tiny_spacy["model"])
    assert nlp.pipe_names == ["tok2vec", "ner"]
    assert "python -m bench.spacy_conll --minutes 1 --seed 0" in tiny_spacy["command"]
    from pathlib import Path

    from bench.spacy_conll import train_cached

    again = train_cached(1, 0, max_steps=3, root=str(Path(tiny_spacy["model"]).parents[1]),
                         train_path=str(mini_conll), valid_path=str(mini_conll))
    assert again["reused"] and again["model"] == tiny_spacy["model"]


@pytest.mark.slow  # the tiny BERT in PyTorch, in this process: a few seconds
def test_hf_row_gets_casing_type_ids(rigged_model_dir, tmp_path):
    """The rigged model tags by casing type id: plain pipeline() (zeros) finds nothing."""
    checkpoint = rigged_model_dir.parent / "rigged-checkpoint"
    docs = tmp_path / "docs.jsonl"
    text = "EU rejects German call .\nPeter Blackburn in New York"
    docs.write_text(json.dumps({"id": "d", "text": text}) + "\n", encoding="utf-8")
    found = {}
    for type_ids in ("casing", "zeros"):
        out = tmp_path / f"{type_ids}.json"
        result = peers.measure_hf_peer(str(checkpoint), str(docs), window=64, overlap=16,
                                       type_ids=type_ids if type_ids == "zeros" else "auto",
                                       predictions=str(out))
        assert result["type_ids"] == type_ids and result["model_type_ids"] == "casing"
        found[type_ids] = json.loads(out.read_text())["d"]
    assert [(text[a:b], label) for a, b, label in found["casing"]] == [
        ("EU", "ORG"), ("German", "PER"), ("Peter Blackburn", "PER"), ("New York", "PER")]
    assert found["zeros"] == []


@pytest.mark.slow  # five subprocesses (Larvatus's job, HF, spaCy, Presidio, prepare): ~1-2 min
def test_driver_scores_every_system_on_the_same_documents(
        rigged_fp32_model_dir, rigged_model_dir, tiny_spacy, mini_conll, tmp_path, capsys):
    checkpoint = rigged_model_dir.parent / "rigged-checkpoint"
    cache = tmp_path / "cache"
    figures = tmp_path / "peers.json"
    code = peers.main([
        "--corpus", "conll", "--conll-file", str(mini_conll), "--model",
        str(rigged_fp32_model_dir), "--larvatus-thresholds", "1",
        "--hf-checkpoint", str(checkpoint), "--spacy-model", tiny_spacy["model"],
        "--repeats", "1", "--idle-wait", "0", "--cache", str(cache), "--json", str(figures)])
    assert code == 0
    printed = capsys.readouterr().out
    output = json.loads(figures.read_text())
    conll = output["report"]["conll"]
    leg = f"larvatus-{rigged_fp32_model_dir.name}-t1"
    assert set(conll["figures"]) == {leg, "hf-pipeline", "spacy-small", "presidio-analyzer"}
    for name, fig in conll["figures"].items():
        assert fig["words_per_s"] > 0 and fig["peak_rss_mib"] > 0, name
        assert set(conll["scores"][name]) >= {"PER", "LOC", "ORG", "MISC", "micro", "PER/LOC/ORG"}
    assert output["prepared"]["corpora"]["conll"]["documents"] == 2
    assert output["prepared"]["corpora"]["conll"]["words"] == 14

    def predicted(name):
        return json.loads((cache / f"peers-pred-conll-{name}.json").read_text())

    # Same weights, same casing ids: Larvatus and the HF pipeline agree where their words
    # agree (the first document; "U.S." is one word to Larvatus, four to BERT's splitter).
    larvatus, hf = predicted(leg), predicted("hf-pipeline")
    assert [e[:3] for e in larvatus["mini-0"]] == hf["mini-0"] == [
        [0, 2, "ORG"], [11, 17, "PER"], [25, 40, "PER"], [44, 52, "PER"]]
    # Rigged scores, worked by hand: gold ORG EU, MISC German, PER Peter Blackburn,
    # LOC New York, LOC U.S., ORG Reuters. Larvatus: PER German, Peter Blackburn, New York,
    # Reuters (1 of 4 right); ORG EU (right) and U.S. (all caps; wrong); no LOC, no MISC.
    scores = conll["scores"][leg]
    assert (scores["PER"]["precision"], scores["PER"]["recall"]) == (0.25, 1.0)
    assert (scores["ORG"]["precision"], scores["ORG"]["recall"]) == (0.5, 0.5)
    assert (scores["LOC"]["support"], scores["LOC"]["predicted"]) == (2, 0)
    assert scores["micro"]["f1"] == round(2 / 6, 4)
    # Presidio runs the same spaCy model: its PER/LOC/ORG findings are spaCy's.
    spacy_found, presidio = predicted("spacy-small"), predicted("presidio-analyzer")
    for doc in ("mini-0", "mini-1"):
        mapped = [[a, b, peers.map_label(label, "spacy")] for a, b, label in spacy_found[doc]]
        three = [e for e in mapped if e[2] in peers.REDACTED]
        assert sorted(three) == sorted(
            [a, b, peers.map_label(label, "presidio")] for a, b, label, _ in presidio[doc]
            if peers.map_label(label, "presidio"))
    assert conll["scores"]["presidio-analyzer"]["MISC"]["predicted"] == 0
    assert "micro F1" in printed and "Per label on CoNLL validation" in printed
