"""Unit tests for transforms/labels.py: tag schemes and span decoding."""
from __future__ import annotations

import pytest

from larvatus.transforms.labels import LabelSchemeError, Tag, decode_spans, parse_tag, read_scheme


def tags(*names):
    return [None if name is None else parse_tag(name) for name in names]


# --- parse_tag -----------------------------------------------------------------

@pytest.mark.parametrize("name, expected", [
    ("O", Tag("O", None)),
    ("B-PER", Tag("B", "PER")),
    ("I-PER", Tag("I", "PER")),
    ("I_LOC", Tag("I", "LOC")),
    ("B_MISC", Tag("B", "MISC")),
    ("E-ORG", Tag("E", "ORG")),
    ("S-ORG", Tag("S", "ORG")),
    ("L-ORG", Tag("E", "ORG")),    # BILOU's L is BIOES's E
    ("U-ORG", Tag("S", "ORG")),    # BILOU's U is BIOES's S
    ("PER", Tag("I", "PER")),      # IO-style bare type
    ("B-DATE_TIME", Tag("B", "DATE_TIME")),
    ("I-GPE2", Tag("I", "GPE2")),
])
def test_parse_tag(name, expected):
    assert parse_tag(name) == expected


@pytest.mark.parametrize("name", [
    "", "B-", "X-PER-!", "B-PER-X", "B-PER!", "I-P ER", "PER!", "-PER", "B--PER", "O-", "B-é-",
])
def test_parse_tag_unreadable(name):
    with pytest.raises(LabelSchemeError):
        parse_tag(name)


@pytest.mark.parametrize("name", ["B_", "I_"])
def test_parse_tag_prefix_with_underscore_and_no_type(name):
    with pytest.raises(LabelSchemeError):
        parse_tag(name)


def test_label_scheme_error_is_value_error():
    assert issubclass(LabelSchemeError, ValueError)


# --- read_scheme -----------------------------------------------------------------

def test_read_scheme_bio():
    labels = ["O", "B-PER", "I-PER", "B-LOC", "I-LOC"]
    scheme = read_scheme(labels)
    assert scheme.scheme == "BIO"
    assert scheme.labels == tuple(labels)
    assert scheme.tags == (Tag("O", None), Tag("B", "PER"), Tag("I", "PER"),
                           Tag("B", "LOC"), Tag("I", "LOC"))
    assert scheme.entity_types == ("LOC", "PER")


def test_read_scheme_iob1_reads_as_bio():
    # IOB1 uses the same label names as BIO.
    scheme = read_scheme(["I-ORG", "O", "B-ORG", "I-MISC", "B-MISC"])
    assert scheme.scheme == "BIO"
    assert scheme.entity_types == ("MISC", "ORG")
    assert scheme.tags[0] == Tag("I", "ORG")


def test_read_scheme_io_bare():
    scheme = read_scheme(["O", "PER", "LOC"])
    assert scheme.scheme == "IO"
    assert scheme.tags == (Tag("O", None), Tag("I", "PER"), Tag("I", "LOC"))
    assert scheme.entity_types == ("LOC", "PER")


def test_read_scheme_io_prefixed():
    scheme = read_scheme(["O", "I-PER", "I-LOC"])
    assert scheme.scheme == "IO"
    assert scheme.entity_types == ("LOC", "PER")


def test_read_scheme_bioes():
    scheme = read_scheme(["O", "B-PER", "I-PER", "E-PER", "S-PER"])
    assert scheme.scheme == "BIOES"
    assert scheme.entity_types == ("PER",)


def test_read_scheme_bilou():
    scheme = read_scheme(["O", "B-LOC", "I-LOC", "L-LOC", "U-LOC"])
    assert scheme.scheme == "BIOES"
    assert [t.role for t in scheme.tags] == ["O", "B", "I", "E", "S"]


@pytest.mark.parametrize("labels", [
    [],
    ["B-PER", "I-PER"],                       # no O
    ["O", "B-PER", "I-PER", "B-PER"],         # duplicate
    ["O", "O", "B-PER"],                      # duplicate O
    ["O"],                                    # no entity labels
    ["O", "B-"],                              # unreadable
    ["O", "X-PER-!"],
    ["O", "B-PER", "I-PER!"],
])
def test_read_scheme_errors(labels):
    with pytest.raises(LabelSchemeError):
        read_scheme(labels)


# --- decode_spans ----------------------------------------------------------------

def test_decode_empty():
    assert decode_spans([]) == []
    assert decode_spans(tags("O", "O", None)) == []


def test_decode_bio():
    assert decode_spans(tags("B-PER", "I-PER", "O", "B-LOC", "O")) == [(0, 2, "PER"), (3, 4, "LOC")]


def test_decode_bio_entity_at_end():
    assert decode_spans(tags("O", "B-PER", "I-PER", "I-PER")) == [(1, 4, "PER")]


def test_decode_bio_adjacent_same_type_split_by_b():
    assert decode_spans(tags("B-PER", "B-PER", "I-PER")) == [(0, 1, "PER"), (1, 3, "PER")]


def test_decode_bio_lenient_i_after_o_starts_entity():
    assert decode_spans(tags("O", "I-PER", "I-PER", "O", "I-LOC")) == [(1, 3, "PER"), (4, 5, "LOC")]


def test_decode_i_of_other_type_starts_new_entity():
    assert decode_spans(tags("B-PER", "I-LOC", "I-LOC")) == [(0, 1, "PER"), (1, 3, "LOC")]


def test_decode_adjacent_different_types():
    assert decode_spans(tags("B-PER", "B-LOC", "B-ORG", "I-ORG")) == [
        (0, 1, "PER"), (1, 2, "LOC"), (2, 4, "ORG")]


def test_decode_iob1():
    # IOB1: I everywhere, B only between two adjacent entities of the same type.
    assert decode_spans(tags("I-PER", "I-PER", "B-PER", "O", "I-LOC", "I-LOC")) == [
        (0, 2, "PER"), (2, 3, "PER"), (4, 6, "LOC")]


def test_decode_io():
    assert decode_spans(tags("PER", "PER", "O", "LOC", "ORG", "ORG")) == [
        (0, 2, "PER"), (3, 4, "LOC"), (4, 6, "ORG")]
    assert decode_spans(tags("I-PER", "I-PER", "I-LOC")) == [(0, 2, "PER"), (2, 3, "LOC")]


def test_decode_bioes():
    assert decode_spans(tags("S-PER", "B-LOC", "I-LOC", "E-LOC", "O", "S-PER", "S-PER")) == [
        (0, 1, "PER"), (1, 4, "LOC"), (5, 6, "PER"), (6, 7, "PER")]


def test_decode_bioes_e_closes():
    # After E the entity is closed: a following I starts a new one.
    assert decode_spans(tags("B-PER", "E-PER", "I-PER", "E-PER")) == [(0, 2, "PER"), (2, 4, "PER")]
    # A lone E (after O) is a one-word entity.
    assert decode_spans(tags("O", "E-PER", "O")) == [(1, 2, "PER")]


def test_decode_bilou():
    assert decode_spans(tags("U-PER", "B-LOC", "L-LOC", "U-LOC")) == [
        (0, 1, "PER"), (1, 3, "LOC"), (3, 4, "LOC")]


def test_decode_none_counts_as_o():
    assert decode_spans(tags("B-PER", None, "I-PER")) == [(0, 1, "PER"), (2, 3, "PER")]
    assert decode_spans(tags(None, "B-PER", "I-PER", None)) == [(1, 3, "PER")]


def test_decode_over_scheme_tags():
    scheme = read_scheme(["O", "B-PER", "I-PER", "B-LOC", "I-LOC"])
    indices = [1, 2, 0, 3, 4, 4, 1]
    assert decode_spans([scheme.tags[i] for i in indices]) == [(0, 2, "PER"), (3, 6, "LOC"), (6, 7, "PER")]
