"""Unit tests for transforms/read.py: raw records to Documents or DeadLetters."""
from __future__ import annotations

import json

import pytest

from larvatus.transforms.read import parse_json_line, parse_row, parse_text_file
from larvatus.transforms.records import DEAD_LETTER_REASONS, DeadLetter, Document

NAME = "Xanthippe Moreau"
SOURCE = "input.jsonl:7"


def parse(line: bytes, max_chars: int = 2_000_000):
    return parse_json_line(line, SOURCE, "id", "text", max_chars=max_chars)


def assert_dead(result, reason: str, doc_id=None, source: str = SOURCE) -> DeadLetter:
    assert isinstance(result, DeadLetter), result
    assert result.reason == reason
    assert reason in DEAD_LETTER_REASONS
    assert result.source == source
    assert result.doc_id == doc_id
    # The detail never carries the document's text (nor any part of the name).
    assert "Xanthippe" not in result.detail
    assert "Moreau" not in result.detail
    assert NAME not in repr(result)
    return result


# --- parse_json_line ----------------------------------------------------------

def test_valid_line():
    result = parse(json.dumps({"id": "doc-1", "text": f"{NAME} lives in Lyon."}).encode())
    assert result == Document(doc_id="doc-1", text=f"{NAME} lives in Lyon.", source=SOURCE)


def test_valid_line_keeps_non_ascii_and_astral_text():
    text = "Zoe\u0308 \U0001F44D\U0001F3FD met \U0001d49c in 東京"
    result = parse(json.dumps({"id": "d", "text": text}, ensure_ascii=False).encode("utf-8"))
    assert isinstance(result, Document)
    assert result.text == text
    # A properly paired surrogate escape is one astral character, not invalid unicode.
    result = parse(b'{"id": "d", "text": "ok \\ud83d\\ude00"}')
    assert isinstance(result, Document)
    assert result.text == "ok \U0001F600"


def test_other_fields_ignored_and_custom_field_names():
    line = json.dumps({"key": "k9", "body": NAME, "id": "ignored", "text": 3}).encode()
    result = parse_json_line(line, SOURCE, "key", "body")
    assert result == Document(doc_id="k9", text=NAME, source=SOURCE)


def test_invalid_utf8():
    line = b'{"id": "a", "text": "' + NAME.encode() + b' \xff\xfe"}'
    bad_byte = line.index(b"\xff")
    dead = assert_dead(parse(line), "invalid_utf8")
    assert dead.detail == f"invalid UTF-8 at byte {bad_byte}"


def test_truncated_json():
    line = json.dumps({"id": "a", "text": NAME}).encode()[:-3]
    assert_dead(parse(line), "invalid_json")


def test_raw_control_character_in_string_is_invalid_json():
    assert_dead(parse(b'{"id": "a", "text": "Xanthippe\x01 Moreau"}'), "invalid_json")


def test_deeply_nested_json_is_invalid_json_not_a_crash():
    line = b"[" * 100_000 + b"]" * 100_000
    dead = assert_dead(parse(line), "invalid_json")
    assert dead.detail == "nesting too deep"


@pytest.mark.parametrize("line, kind", [
    (b'["Xanthippe Moreau"]', "an array"),
    (b"42", "a number"),
    (b"4.5", "a number"),
    (b'"Xanthippe Moreau"', "a string"),
    (b"null", "null"),
    (b"true", "a boolean"),
])
def test_not_an_object(line, kind):
    dead = assert_dead(parse(line), "not_an_object")
    assert dead.detail == f"line holds {kind}, not an object"


def test_missing_text():
    assert_dead(parse(b'{"id": "a"}'), "missing_text", doc_id="a")
    # An explicit null is the same as a missing field.
    assert_dead(parse(b'{"id": "a", "text": null}'), "missing_text", doc_id="a")


@pytest.mark.parametrize("value, kind", [
    ('["Xanthippe Moreau"]', "an array"),
    ('{"name": "Xanthippe Moreau"}', "an object"),
    ("12", "a number"),
    ("true", "a boolean"),
])
def test_text_not_a_string(value, kind):
    dead = assert_dead(parse(f'{{"id": "a", "text": {value}}}'.encode()), "text_not_string", doc_id="a")
    assert dead.detail == f"text is {kind}"


@pytest.mark.parametrize("text", ["", " ", "\n\t \u3000", "\u00a0"])
def test_empty_or_whitespace_text_is_a_document(text):
    assert parse(json.dumps({"id": "a", "text": text}).encode()) == Document("a", text, SOURCE)


def test_lone_surrogate_in_text_is_invalid_unicode():
    line = b'{"id": "a", "text": "Xanthippe Moreau \\ud800 was here"}'
    dead = assert_dead(parse(line), "invalid_unicode", doc_id="a")
    assert dead.detail == "unpaired surrogate at character 17"


def test_lone_low_surrogate_in_text_is_invalid_unicode():
    assert_dead(parse(b'{"id": "a", "text": "\\udc00Xanthippe Moreau"}'), "invalid_unicode", doc_id="a")


def test_lone_surrogate_in_id_is_id_not_string():
    assert_dead(parse(b'{"id": "\\ud800", "text": "Xanthippe Moreau"}'), "id_not_string")


def test_int_id_becomes_string():
    result = parse(json.dumps({"id": 5, "text": NAME}).encode())
    assert result == Document(doc_id="5", text=NAME, source=SOURCE)
    result = parse(json.dumps({"id": 0, "text": NAME}).encode())
    assert isinstance(result, Document) and result.doc_id == "0"


@pytest.mark.parametrize("value, kind", [
    ("true", "a boolean"), ("false", "a boolean"), ('["a"]', "an array"), ("1.5", "a number"),
    ('{"x": 1}', "an object"),
])
def test_id_of_wrong_type(value, kind):
    dead = assert_dead(parse(f'{{"id": {value}, "text": "Xanthippe Moreau"}}'.encode()), "id_not_string")
    assert dead.detail == f"id is {kind}"


def test_record_without_id_takes_source():
    result = parse(json.dumps({"text": NAME}).encode())
    assert result == Document(doc_id=SOURCE, text=NAME, source=SOURCE)
    result = parse(json.dumps({"id": None, "text": NAME}).encode())
    assert isinstance(result, Document) and result.doc_id == SOURCE


def test_too_large():
    text = NAME + " " + "x" * 10   # 27 characters
    dead = assert_dead(parse(json.dumps({"id": "a", "text": text}).encode(), max_chars=20),
                       "too_large", doc_id="a")
    assert dead.detail == "27 characters > --max-chars 20"


def test_max_chars_counts_code_points_not_bytes():
    text = "\U0001F44D" * 5  # 5 code points, 20 UTF-8 bytes
    assert isinstance(parse(json.dumps({"id": "a", "text": text}).encode(), max_chars=5), Document)
    assert_dead(parse(json.dumps({"id": "a", "text": text + "!"}).encode(), max_chars=5),
                "too_large", doc_id="a")


def test_huge_integer_id_is_a_dead_letter_not_an_exception():
    line = b'{"id": ' + b"1" * 5000 + b', "text": "Xanthippe Moreau"}'
    result = parse(line)
    assert isinstance(result, DeadLetter)
    assert result.reason in ("invalid_json", "id_not_string")


def test_huge_integer_text_is_a_dead_letter_not_an_exception():
    result = parse(b'{"id": "a", "text": ' + b"9" * 5000 + b"}")
    assert isinstance(result, DeadLetter)
    assert result.reason in ("invalid_json", "text_not_string")


# --- parse_text_file ----------------------------------------------------------

def test_text_file():
    result = parse_text_file(f"{NAME} wrote this.\n".encode(), "/data/a.txt")
    assert result == Document(doc_id="/data/a.txt", text=f"{NAME} wrote this.\n", source="/data/a.txt")


def test_text_file_bom_stripped():
    result = parse_text_file(b"\xef\xbb\xbf" + NAME.encode(), "/data/b.txt")
    assert isinstance(result, Document)
    assert result.text == NAME
    # Only the leading BOM goes; a later U+FEFF is content.
    result = parse_text_file(b"\xef\xbb\xbfa\xef\xbb\xbfb", "/data/b.txt")
    assert result.text == "a\ufeffb"


def test_text_file_only_bom_is_an_empty_document():
    assert parse_text_file(b"\xef\xbb\xbf", "/data/c.txt") == Document(
        "/data/c.txt", "", "/data/c.txt")


def test_text_file_invalid_utf8():
    content = NAME.encode() + b"\xc3\x28 end"
    dead = assert_dead(parse_text_file(content, "/data/d.txt"), "invalid_utf8",
                       doc_id="/data/d.txt", source="/data/d.txt")
    assert dead.detail == f"invalid UTF-8 at byte {len(NAME)}"


def test_text_file_too_large():
    dead = assert_dead(parse_text_file((NAME * 3).encode(), "/e.txt", max_chars=10), "too_large",
                       doc_id="/e.txt", source="/e.txt")
    assert dead.detail == f"{len(NAME) * 3} characters > --max-chars 10"


# --- parse_row ----------------------------------------------------------------

def test_row_valid():
    result = parse_row({"id": "r1", "text": NAME}, "t.parquet:3", "id", "text")
    assert result == Document(doc_id="r1", text=NAME, source="t.parquet:3")


def test_row_int_id_and_missing_id():
    assert parse_row({"id": 12, "text": NAME}, "s", "id", "text").doc_id == "12"
    assert parse_row({"text": NAME}, "s", "id", "text").doc_id == "s"


def test_row_bytes_text_decoded():
    result = parse_row({"id": "r", "text": NAME.encode("utf-8")}, "s", "id", "text")
    assert result == Document(doc_id="r", text=NAME, source="s")


def test_row_bytes_text_invalid_utf8():
    dead = assert_dead(parse_row({"id": "r", "text": NAME.encode() + b"\xff"}, "s", "id", "text"),
                       "invalid_utf8", doc_id="r", source="s")
    assert dead.detail == f"invalid UTF-8 at byte {len(NAME)}"


@pytest.mark.parametrize("row, reason, doc_id", [
    ({"id": "r"}, "missing_text", "r"),
    ({"id": "r", "text": None}, "missing_text", "r"),
    ({"id": "r", "text": 3.5}, "text_not_string", "r"),
    ({"id": "r", "text": "Xanthippe Moreau \ud800"}, "invalid_unicode", "r"),
    ({"id": True, "text": NAME}, "id_not_string", None),
    ({"id": b"r", "text": NAME}, "id_not_string", None),
    ({"id": ["r"], "text": NAME}, "id_not_string", None),
])
def test_row_dead_letters(row, reason, doc_id):
    assert_dead(parse_row(row, "s", "id", "text"), reason, doc_id=doc_id, source="s")


def test_row_too_large():
    dead = assert_dead(parse_row({"id": "r", "text": NAME}, "s", "id", "text", max_chars=4),
                       "too_large", doc_id="r", source="s")
    assert dead.detail == f"{len(NAME)} characters > --max-chars 4"


def test_document_repr_hides_text():
    document = parse(json.dumps({"id": "a", "text": NAME}).encode())
    assert NAME not in repr(document)
    assert repr(document) == f"Document(doc_id='a', source='{SOURCE}', text=<{len(NAME)} chars>)"
