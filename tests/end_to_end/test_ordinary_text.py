"""Ordinary text beyond English news through the embedded model: what is personal is hidden, the rest is kept."""
from __future__ import annotations

import pytest

from larvatus import Redactor


@pytest.fixture(scope="module")
def redactor():
    return Redactor(model="embedded:default", redact_labels="default")


def _one(redactor, text: str) -> dict:
    [row] = redactor.annotate([text])
    return row


# (text, what must stay as written, what must be hidden): each is a new user's example.
ENGLISH = [
    ("Apple unveiled the iPhone 16 in Cupertino on Monday.",
     ["the iPhone 16 in"], ["Apple", "Cupertino"]),
    ("The laptop ships with Windows 11 preinstalled.", ["ships with Windows 11 preinstalled"], []),
    ("The patient was started on metoprolol 25 mg twice daily.",
     ["started on metoprolol 25 mg"], []),
    ("Stir well, then add the Parmesan and season to taste.", ["add the Parmesan and"], []),
    ('This Agreement is made between Acme Corp ("Supplier") and Beta Ltd ("Buyer").',
     ['("Supplier")', '("Buyer")'], ["Acme", "Beta"]),
    ("Contact Maria Garcia at maria.garcia@example.com for details.",
     ["Contact [PER] at [EMAIL] for details."], ["Maria", "Garcia"]),
    ("Please review the report before Friday. Ask Maria Garcia.",
     ["Ask [PER]."], ["Maria", "Garcia"]),
    ("DM me if you need the files.", ["DM me if you need the files."], []),
    ("Badge EMP-004211 was issued to the contractor.", ["Badge [CODE] was"], ["004211"]),
    ("Aadhaar 2341 2341 2346 is on file.", ["Aadhaar [ID] is on file."], ["2346"]),
    ("Mobile: +44 7700 900123", ["Mobile: [PHONE]"], ["7700"]),
    ("Great panel at #SXSW this year!", ["#SXSW"], []),
    ("BUENOS AIRES, July 8 (Reuters) - Argentina's central bank cut rates on Tuesday.",
     ["[LOC], [DATE]"], ["BUENOS", "AIRES"]),
]


@pytest.mark.parametrize("text,kept,hidden", ENGLISH, ids=[t[:24] for t, _, _ in ENGLISH])
def test_english_examples(redactor, text, kept, hidden):
    redacted = _one(redactor, text)["redacted_text"]
    for part in kept:
        assert part in redacted, redacted
    for part in hidden:
        assert part not in redacted, redacted


def test_misc_is_kept_by_default_and_hidden_with_all():
    text = "Apple unveiled the iPhone 16 and Windows 11 ships on it."
    assert "[MISC]" not in _one(Redactor(redact_labels="default"), text)["redacted_text"]
    assert "[MISC]" in _one(Redactor(redact_labels="all"), text)["redacted_text"]


GERMAN_LETTER = (
    "Sehr geehrte Frau Schneider,\n\nvielen Dank für Ihr Schreiben vom 12. Mai 2025. Hiermit "
    "teile ich Ihnen mit, dass mein Vertrag wird zum 30.06.2025 gekündigt. Meine Steuer-ID "
    "lautet 36574261809. Bitte bestätigen Sie mir den Eingang dieser Kündigung schriftlich."
    "\n\nMit freundlichen Grüßen\nThomas Becker\nKennzeichen B AB 1234")


def test_german_letter(redactor):
    row = _one(redactor, GERMAN_LETTER)
    redacted = row["redacted_text"]
    assert row["language"] == "de"
    for part in ("vielen Dank für Ihr Schreiben vom", "Hiermit teile ich Ihnen mit",
                 "wird zum [DATE] gekündigt", "Meine Steuer-ID lautet [ID]",
                 "Mit freundlichen Grüßen\n[PER]\n", "Kennzeichen [VEHICLE]"):
        assert part in redacted, redacted
    for part in ("Schneider", "Thomas", "Becker", "36574261809", "AB 1234"):
        assert part not in redacted, redacted
    # One PER for the signature, not an ORG and a PER.
    signature = GERMAN_LETTER.index("Thomas")
    [entity] = [e for e in row["entities"] if e["start"] == signature]
    assert (entity["label"], entity["end"]) == ("PER", signature + len("Thomas Becker"))
    # The audit does not flag the letter's ordinary nouns (Frau, Dank, Vertrag, Grüßen).
    assert row["audit"]["capitalized"] == 0, row["audit"]


FRENCH = ("Bonjour, je m'appelle Marie-Claire Dubois et je suis ingénieure chez Capgemini à "
          "Lyon depuis trois ans. Vous pouvez me joindre au bureau.")


def test_french_hyphenated_name_is_one_person(redactor):
    row = _one(redactor, FRENCH)
    redacted = row["redacted_text"]
    assert "je m'appelle [PER] et je suis ingénieure chez [" in redacted, redacted
    assert "Capgemini" not in redacted and "Claire" not in redacted
    start = FRENCH.index("Marie")
    [entity] = [e for e in row["entities"] if e["start"] == start]
    assert (entity["label"], entity["end"]) == ("PER", start + len("Marie-Claire Dubois"))


def test_kept_nationalities_are_no_audit_findings(redactor):
    row = _one(redactor, "The German and Brazilian delegations met in Geneva on Tuesday, and "
                         "Argentine officials joined them.")
    assert "German and Brazilian" in row["redacted_text"]
    assert row["audit"]["findings"] == 0, row["audit"]
