"""Recognizers across separators of any script, postcodes and P.O. boxes, dates without a year, references, '+' phones."""
from __future__ import annotations

import random

import pytest

from larvatus.transforms.recognizers import PatternSettings, base, find_patterns, postal, references


def found(text):
    """The (label, surface) pairs find_patterns reports, surfaces cut from the original text."""
    return {(s.label, text[s.start:s.end]) for s in find_patterns(text, PatternSettings())}


def labels_found(text):
    return {label for label, _ in found(text)}


# ----------------------------------------------------------------------------- separators inside numbers

@pytest.mark.parametrize("text, label, surface", [
    ("Card 4111\u00a01111\u00a01111\u00a01111 on file", "CARD", "4111\u00a01111\u00a01111\u00a01111"),
    ("Card 4111\u20091111\u20091111\u20091111.", "CARD", "4111\u20091111\u20091111\u20091111"),
    ("Card 4111 - 1111 - 1111 - 1111.", "CARD", "4111 - 1111 - 1111 - 1111"),
    ("Card 4111 \u2013 1111 \u2013 1111 \u2013 1111.", "CARD", "4111 \u2013 1111 \u2013 1111 \u2013 1111"),
    ("IBAN DE89\u00a03704\u00a00044\u00a00532\u00a00130\u00a000.", "IBAN",
     "DE89\u00a03704\u00a00044\u00a00532\u00a00130\u00a000"),
    ("Tél. +33\u202f6\u202f12\u202f34\u202f56\u202f78", "PHONE",
     "+33\u202f6\u202f12\u202f34\u202f56\u202f78"),
    ("né le 12\u202faoût\u202f1956 à Lyon", "DATE", "12\u202faoût\u202f1956"),
    ("Card \u0664\u0661\u0661\u0661\u0661\u0661\u0661\u0661\u0661\u0661\u0661\u0661\u0661\u0661"
     "\u0661\u0661", "CARD", "\u0664\u0661\u0661\u0661\u0661\u0661\u0661\u0661\u0661\u0661\u0661"
     "\u0661\u0661\u0661\u0661\u0661"),
])
def test_digit_groups_split_by_any_unicode_space_or_dash_are_found(text, label, surface):
    assert (label, surface) in found(text)


def test_spaced_dashes_between_ordinary_numbers_stay():
    assert found("pages 1234 - 5678 and 2019 \u2013 2020") == set()


# ----------------------------------------------------------------------------- phones with "+"

@pytest.mark.parametrize("number", ["+1 (555) 123-4567", "+44 7700 900456"])
def test_possible_numbers_written_with_plus_are_phones(number):
    assert found(f"Call {number} today.") == {("PHONE", number)}


@pytest.mark.parametrize("text", ["+49 123", "score +1234567 points", "(555) 123-45"])
def test_short_or_impossible_numbers_with_plus_are_not_phones(text):
    assert "PHONE" not in labels_found(text)


# ----------------------------------------------------------------------------- postcodes

@pytest.mark.parametrize("text, postcode", [
    ("Flat 2, 14 Wilmslow Road, Manchester M20 6RT", "M20 6RT"),
    ("Clerkenwell, London EC1A 1BB.", "EC1A 1BB"),
    ("postcode: M20 6RT", "M20 6RT"),
    ("Springfield, IL 62704", "62704"),
    ("New York, NY 10001-2345", "10001-2345"),
    ("ZIP 02110-1301", "02110-1301"),
    ("Hauptstraße 5, 80331 München", "80331"),
    ("Hauptstraße 5\n80331 München", "80331"),
    ("80331 München", "80331"),
    ("Anschrift: Lindenweg 5, D-80331 München", "D-80331"),
    ("12 rue Bouvet, 75008 Paris", "75008"),
    ("Calle Mayor 3, 28013 Madrid", "28013"),
    ("via Roma 12, 00184 Roma", "00184"),
    ("Mellestraat 87, 1012 AB Amsterdam", "1012 AB"),
    ("P.O. Box 1234, Anchorage", "P.O. Box 1234"),
    ("PO Box 12", "PO Box 12"),
    ("Postfach 10 02 03, 80331 München", "Postfach 10 02 03"),
])
def test_postcodes_and_po_boxes_are_addresses(text, postcode):
    assert ("ADDRESS", postcode) in found(text)


def test_a_uk_postcode_is_hidden_whole():
    text = "She lives at M20 6RT now."
    [span] = find_patterns(text)
    assert text[span.start:span.end] == "M20 6RT"


@pytest.mark.parametrize("text", [
    "We sold 50000 Euros worth in 2019 to 12000 People",
    "The M20 motorway was closed",
    "BP 120/80, pulse 72",
    "costs 12 euros, page 12345 of the record",
    "In 1982 AD Rome",
    "Article 6 § 1 of the Convention",
    "He paid 12500 to the bank in 2003",
    "in 10115 cases the Court",
])
def test_numbers_that_are_not_postcodes_stay(text):
    assert "ADDRESS" not in labels_found(text)


# ----------------------------------------------------------------------------- dates

@pytest.mark.parametrize("text, date", [
    ("on 1 March we met", "1 March"),
    ("On 11 September he left", "11 September"),
    ("from March 1 until Sept. 11th", "March 1"),
    ("from March 1 until Sept. 11th", "Sept. 11th"),
    ("le 1er mars 1956", "1er mars 1956"),
    ("am 12. März 1956", "12. März 1956"),
    ("el 12 de marzo de 1956", "12 de marzo de 1956"),
    ("il 3 maggio 1956", "3 maggio 1956"),
    ("op 8 mei 1956", "8 mei 1956"),
    ("le 12 août", "12 août"),
    ("DOB: 19560812", "19560812"),
    ("date of birth 12081956", "12081956"),
    ("The applicant was born in 1929 and lives in Vienna.", "1929"),
    ("He was born in Vienna in 1929.", "1929"),
    ("year of birth: 1956", "1956"),
    ("She died 1984 in Graz.", "1984"),
])
def test_dates_without_a_year_compact_dates_and_life_years(text, date):
    assert ("DATE", date) in found(text)


@pytest.mark.parametrize("text", [
    "the 2 mars rovers", "on 30 February", "on 12 august", "ref 19560812", "born 19561312",
    "between 1982 and 1984", "in 1956 the law changed", "Article 6 § 1", "It costs 12 euros",
    "page 11", "you may 5", "3 of 12 items", "12345678 units",
])
def test_ordinary_numbers_and_bare_years_stay(text):
    assert "DATE" not in labels_found(text)


# ----------------------------------------------------------------------------- references

@pytest.mark.parametrize("text, code", [
    ("Sort code: 60-16-13", "60-16-13"),
    ("Account 31926819, sort code 60 16 13", "60 16 13"),
    ("(Case no. 31/1993/426/505)", "31/1993/426/505"),
    ("judgment in no. 31/1993/426/505 of", "31/1993/426/505"),
    ("the house on plot 288/3", "288/3"),
    ("sheet 11/15W.2 of the land register", "11/15W.2"),
    ("Flurstück 1234", "1234"),
])
def test_sort_codes_and_case_and_plot_numbers_are_codes(text, code):
    assert ("CODE", code) in found(text)


@pytest.mark.parametrize("text,number", [
    ("Routing number: 021000021", "021000021"),
    ("ABA 111000025, account 12345678", "111000025"),
])
def test_routing_numbers_are_bank_numbers(text, number):
    assert ("BANK", number) in found(text)


@pytest.mark.parametrize("text", [
    "plot 5 of the story", "sheet 2", "no. 5", "Article 6 § 1", "nos. 3 and 4", "no. 1/2",
    "scores 60-16-13 in the final", "Article 8 § 2, page 12, 3 children, EUR 1,500",
    "routing 111000026", "population 021000021",
])
def test_ordinary_numbers_are_not_codes(text):
    assert "CODE" not in labels_found(text)


# ----------------------------------------------------------------------------- line hints
_FRAGMENTS = ["M20 6RT", "EC1A", " 1BB", "IL ", "62704", "-2345", "ZIP ", "PLZ: ", "80331",
              " München", "1012 AB", " Amsterdam", "P.O. Box ", "Postfach ", "10 02 03", ",",
              "\n", " ", "no. ", "31/1993", "/426", "plot ", "288/3", "sheet ", "11/15W.2",
              "sort code ", "60-16-13", "x", "Flurstück ", "1234", "B.P. ", "rue",
              # other cases, and letters `re` matches case-insensitively with ASCII ones
              "PLOT ", "Parcel No. ", "SHEET ", "Kadastrale ", "Folio ", "ZIP ", "Code postal ",
              "C.P. ", "POSTLEITZAHL ", "BOX ", "Apartado ", "POSTBUS ", "\u017fheet ",
              "\u212aadastraal ", "\u0130", "\u0131"]


@pytest.mark.parametrize("pattern, hint", [
    (postal._UK_POSTCODE_RE, postal._UK_HINT_RE),
    (postal._US_ZIP_AFTER_STATE_RE, postal._FIVE_DIGITS_RE),
    (postal._POSTCODE_CUE_RE, postal._POSTCODE_CUE_HINT_RE),
    (postal._POSTCODE_TOWN_RE, postal._FOUR_DIGITS_RE),
    (postal._PO_BOX_RE, postal._PO_BOX_HINT_RE),
    (references._NUMBER_SLASHED_RE, references._SLASH_HINT_RE),
    (references._LAND_REFERENCE_RE, references._LAND_HINT_RE),
    (references._LAND_BARE_RE, references._LAND_HINT_RE),
], ids=lambda p: getattr(p, "pattern", "")[:20])
def test_searching_only_hinted_lines_finds_every_candidate(pattern, hint):
    rng = random.Random(7)
    texts = ["".join(rng.choice(_FRAGMENTS) for _ in range(rng.randint(1, 10)))
             for _ in range(3000)]
    total = 0
    for text in texts:
        everywhere = [m.span() for m in pattern.finditer(text)]
        assert [m.span() for m in base.finditer_on_lines(pattern, hint, text)] == everywhere, text
        total += len(everywhere)
    assert total > 0     # the fragments do make candidates
