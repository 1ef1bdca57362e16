"""Unit tests for models/metrics.py and models/conll.py (and scheme equivalence in transforms/labels.py)."""
from __future__ import annotations

import pytest

from larvatus.models.conll import build_document, read_documents, read_sentences, word_labels
from larvatus.transforms.labels import decode_spans, parse_tag
from larvatus.models.metrics import Counts, document_counts, paired_bootstrap, score, total
from larvatus.transforms.records import Document, EntitySpan, SegmentedDocument


def E(start, end, label, score=1.0):
    return EntitySpan(start, end, label, score)


# --- Counts -------------------------------------------------------------------------

def test_counts_arithmetic_and_zero_division():
    assert Counts(1, 2, 3) + Counts(4, 5, 6) == Counts(5, 7, 9)
    assert Counts().precision == 0.0 and Counts().recall == 0.0 and Counts().f1 == 0.0
    assert Counts(0, 3, 0).f1 == 0.0
    c = Counts(3, 1, 2)
    assert c.precision == pytest.approx(0.75)
    assert c.recall == pytest.approx(0.6)
    assert c.f1 == pytest.approx(2 * 0.75 * 0.6 / 1.35)


# --- document_counts / score ----------------------------------------------------------

GOLD_1 = [E(0, 5, "PER"), E(10, 15, "LOC"), E(20, 25, "ORG")]
PRED_1 = [E(0, 5, "PER", 0.3),     # exact: tp (score does not matter)
          E(10, 14, "LOC"),        # boundary error: LOC fp + LOC fn
          E(20, 25, "PER")]        # label error: PER fp + ORG fn
GOLD_2 = [E(0, 4, "PER")]
PRED_2 = [E(0, 4, "PER"), E(6, 9, "LOC")]


def test_document_counts_exact_match_only():
    assert document_counts(GOLD_1, PRED_1) == {
        "PER": Counts(1, 1, 0), "LOC": Counts(0, 1, 1), "ORG": Counts(0, 0, 1)}


def test_document_counts_boundary_error_either_side():
    assert document_counts([E(3, 9, "PER")], [E(2, 9, "PER")]) == {"PER": Counts(0, 1, 1)}
    assert document_counts([E(3, 9, "PER")], [E(3, 10, "PER")]) == {"PER": Counts(0, 1, 1)}


def test_document_counts_duplicates_and_empty():
    assert document_counts([E(0, 3, "PER")], [E(0, 3, "PER"), E(0, 3, "PER")]) == {"PER": Counts(1, 1, 0)}
    assert document_counts([], []) == {}
    assert document_counts([E(0, 3, "PER")], []) == {"PER": Counts(0, 0, 1)}
    assert document_counts([], [E(0, 3, "PER")]) == {"PER": Counts(0, 1, 0)}


def test_score_per_label_and_micro():
    result = score([GOLD_1, GOLD_2], [PRED_1, PRED_2])
    assert list(result) == ["LOC", "ORG", "PER", "micro"]
    assert result["PER"] == Counts(2, 1, 0)
    assert result["LOC"] == Counts(0, 2, 1)
    assert result["ORG"] == Counts(0, 0, 1)
    assert result["micro"] == Counts(2, 3, 2)
    # by hand: PER P = 2/3, R = 1, F1 = 0.8
    assert result["PER"].precision == pytest.approx(2 / 3)
    assert result["PER"].recall == pytest.approx(1.0)
    assert result["PER"].f1 == pytest.approx(0.8)
    assert (result["LOC"].precision, result["LOC"].recall, result["LOC"].f1) == (0.0, 0.0, 0.0)
    assert (result["ORG"].precision, result["ORG"].recall, result["ORG"].f1) == (0.0, 0.0, 0.0)
    # micro P = 2/5, R = 2/4, F1 = 2 * 0.4 * 0.5 / 0.9 = 4/9
    assert result["micro"].precision == pytest.approx(0.4)
    assert result["micro"].recall == pytest.approx(0.5)
    assert result["micro"].f1 == pytest.approx(4 / 9)


def test_score_perfect_and_mismatched_lengths():
    assert score([GOLD_1], [GOLD_1])["micro"] == Counts(3, 0, 0)
    assert score([GOLD_1], [GOLD_1])["micro"].f1 == 1.0
    with pytest.raises(ValueError):
        score([GOLD_1, GOLD_2], [PRED_1])


def test_total_sums_over_documents():
    per_doc = [{"PER": Counts(1, 0, 0)}, {"PER": Counts(0, 1, 0), "LOC": Counts(2, 0, 1)}]
    assert total(per_doc) == {"LOC": Counts(2, 0, 1), "PER": Counts(1, 1, 0), "micro": Counts(3, 1, 1)}
    assert total([]) == {"micro": Counts()}


# --- paired_bootstrap -------------------------------------------------------------

def bootstrap_corpus(n):
    """System A gets every entity; B gets docs right only one time in three."""
    gold, a, b = [], [], []
    for i in range(n):
        g = [E(0, 5, "PER"), E(10, 15, "LOC")]
        gold.append(g)
        a.append(list(g))
        b.append(list(g) if i % 3 == 0 else [E(0, 4, "PER"), E(10, 15, "ORG")])
    counts_a = [document_counts(g, p) for g, p in zip(gold, a)]
    counts_b = [document_counts(g, p) for g, p in zip(gold, b)]
    return counts_a, counts_b


def test_paired_bootstrap_clearly_better_system_has_small_p():
    counts_a, counts_b = bootstrap_corpus(60)
    observed, p = paired_bootstrap(counts_a, counts_b, samples=500, seed=1)
    # A: F1 = 1; B: tp = 2 * 20 = 40, fp = fn = 2 * 40 = 80 -> P = R = F1 = 1/3
    assert observed == pytest.approx(1 - 1 / 3)
    assert p < 0.01


def test_paired_bootstrap_worse_system_has_large_p():
    counts_a, counts_b = bootstrap_corpus(60)
    observed, p = paired_bootstrap(counts_b, counts_a, samples=500, seed=1)
    assert observed == pytest.approx(1 / 3 - 1)
    assert p > 0.99


def test_paired_bootstrap_is_deterministic_for_a_seed():
    counts_a, counts_b = bootstrap_corpus(30)
    # a noisy case so the p-value is not 0 or 1
    noisy_b = list(counts_a[:20]) + list(counts_b[20:])
    assert paired_bootstrap(counts_a, noisy_b, samples=200, seed=5) == \
        paired_bootstrap(counts_a, noisy_b, samples=200, seed=5)


def test_paired_bootstrap_length_mismatch():
    counts_a, counts_b = bootstrap_corpus(6)
    with pytest.raises(ValueError):
        paired_bootstrap(counts_a, counts_b[:5])


def test_paired_bootstrap_identical_systems_have_large_p():
    counts_a, counts_b = bootstrap_corpus(60)
    noisy = list(counts_a[:30]) + list(counts_b[30:])
    observed, p = paired_bootstrap(noisy, noisy, samples=300, seed=0)
    assert observed == 0.0
    assert p > 0.5


# --- conll.build_document ---------------------------------------------------------

SENTENCES = [
    [("Angela", "B-PER"), ("Merkel", "I-PER"), ("visited", "O"), ("Paris", "B-LOC")],
    [("Berlin", "I-LOC"), ("is", "O"), ("big", "B-MISC")],
]


def test_build_document_text_and_spans():
    doc = build_document("doc-0", SENTENCES)
    assert doc.doc_id == "doc-0"
    assert doc.text == "Angela Merkel visited Paris\nBerlin is big"
    assert doc.token_starts == (0, 7, 14, 22, 28, 35, 38)
    assert doc.token_ends == (6, 13, 21, 27, 34, 37, 41)
    # the I-LOC opening sentence 2 does not continue "Paris" across the break
    assert [(s.start, s.end, s.label) for s in doc.spans] == [
        (0, 13, "PER"), (22, 27, "LOC"), (28, 34, "LOC"), (38, 41, "MISC")]
    assert [doc.text[s.start:s.end] for s in doc.spans] == ["Angela Merkel", "Paris", "Berlin", "big"]
    assert all(s.score == 1.0 for s in doc.spans)


def test_build_document_entity_ending_a_sentence_then_same_type():
    doc = build_document("d", [[("A", "B-PER"), ("B", "I-PER")], [("C", "I-PER")], [("D", "O")]])
    assert doc.text == "A B\nC\nD"
    assert [(s.start, s.end, s.label) for s in doc.spans] == [(0, 3, "PER"), (4, 5, "PER")]


def test_build_document_gold_tokens_and_document():
    doc = build_document("doc-1", SENTENCES)
    segmented = doc.gold_tokens()
    assert segmented.num_words == 7
    assert [segmented.word_text(i) for i in range(7)] == [
        "Angela", "Merkel", "visited", "Paris", "Berlin", "is", "big"]
    assert doc.document() == Document("doc-1", doc.text, "doc-1")


def test_build_document_non_ascii_tokens():
    doc = build_document("d", [[("Zoe\u0308", "B-PER"), ("\U0001F44D", "O"), ("東京", "B-LOC")]])
    assert doc.text == "Zoe\u0308 \U0001F44D 東京"
    assert [doc.text[s.start:s.end] for s in doc.spans] == ["Zoe\u0308", "東京"]


def test_read_documents_from_file(tmp_path):
    path = tmp_path / "train.txt"
    path.write_text(
        "-DOCSTART- -X- -X- O\n\n"
        "Angela NNP B-NP B-PER\nMerkel NNP I-NP I-PER\nspoke VBD B-VP O\n\n"
        "Paris NNP B-NP B-LOC\n\n"
        "-DOCSTART- -X- -X- O\n\n"
        "Xanthippe NNP B-NP B-PER\n", encoding="utf-8")
    assert list(read_sentences(path)) == [
        None, [("Angela", "B-PER"), ("Merkel", "I-PER"), ("spoke", "O")], [("Paris", "B-LOC")],
        None, [("Xanthippe", "B-PER")]]
    docs = read_documents(path)
    assert [d.doc_id for d in docs] == ["train-0", "train-1"]
    assert docs[0].text == "Angela Merkel spoke\nParis"
    assert [(s.start, s.end, s.label) for s in docs[0].spans] == [(0, 13, "PER"), (20, 25, "LOC")]
    assert docs[1].text == "Xanthippe"
    by_sentence = read_documents(path, sentences_per_document=1)
    assert [d.text for d in by_sentence] == ["Angela Merkel spoke", "Paris", "Xanthippe"]


# --- conll.word_labels ------------------------------------------------------------

def test_word_labels_round_trip():
    doc = build_document("d", SENTENCES)
    assert word_labels(doc.gold_tokens(), doc.spans) == [
        "B-PER", "I-PER", "O", "B-LOC", "B-LOC", "O", "B-MISC"]


def test_word_labels_other_segmentation():
    text = "Mr. Angela Merkel's trip to New York."
    # words: Mr. | Angela | Merkel | 's | trip | to | New | York | .
    starts = (0, 4, 11, 17, 20, 25, 28, 32, 36)
    ends = (3, 10, 17, 19, 24, 27, 31, 36, 37)
    segmented = SegmentedDocument(Document("d", text, "d"), starts, ends)
    spans = (E(28, 36, "LOC"), E(4, 17, "PER"))   # unsorted on purpose
    assert word_labels(segmented, spans) == ["O", "B-PER", "I-PER", "O", "O", "O", "B-LOC", "I-LOC", "O"]


def test_word_labels_word_only_partly_in_span_is_o():
    text = "Merkelism rules"
    segmented = SegmentedDocument(Document("d", text, "d"), (0, 10), (9, 15))
    assert word_labels(segmented, (E(0, 6, "PER"),)) == ["O", "O"]
    assert word_labels(segmented, (E(3, 12, "PER"),)) == ["O", "O"]


# --- one entity set, several schemes -----------------------------------------------

ENCODINGS = {
    "BIO":   ["B-PER", "I-PER", "B-PER", "O", "B-LOC", "B-ORG", "I-ORG", "O", "B-MISC"],
    "IOB1":  ["I-PER", "I-PER", "B-PER", "O", "I-LOC", "I-ORG", "I-ORG", "O", "I-MISC"],
    "BIOES": ["B-PER", "E-PER", "S-PER", "O", "S-LOC", "B-ORG", "E-ORG", "O", "S-MISC"],
    "BILOU": ["B-PER", "L-PER", "U-PER", "O", "U-LOC", "B-ORG", "L-ORG", "O", "U-MISC"],
}
EXPECTED_SPANS = [(0, 2, "PER"), (2, 3, "PER"), (4, 5, "LOC"), (5, 7, "ORG"), (8, 9, "MISC")]


@pytest.mark.parametrize("scheme", sorted(ENCODINGS))
def test_schemes_decode_to_same_spans(scheme):
    assert decode_spans([parse_tag(name) for name in ENCODINGS[scheme]]) == EXPECTED_SPANS
