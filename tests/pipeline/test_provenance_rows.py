"""Entity provenance in the Parquet schema and the rows, and a model whose types have other names getting the same rows."""
from __future__ import annotations

import json
import shutil

import pyarrow as pa
import pytest

from larvatus import schemas
from larvatus.options import resolve_redact_labels
from larvatus.schemas import OutputColumns
from larvatus.transforms.records import AnnotatedDocument, Document, EntitySpan

# The rigged model's types renamed as an OntoNotes-style model names them.
RENAMED = {"PER": "PERSON", "LOC": "GPE", "ORG": "ORG", "MISC": "NORP"}
TEXTS = [
    "we met Inspector Morse at ACME, morse@example.com",
    "it was paid to Ruiz Inc by cheque",
    "it was signed by Taylor, Wiggins and Mcneil in the end",
    "the court at Glasgow heard Brian Otieno and ACME GMBH",
]
# The renamed model's redacted texts: the role before a person's name kept out of the span,
# the legal form and the list of names taken in.
EXPECTED_TEXTS = [
    "we met Inspector [PERSON] at [ORG], [EMAIL]",
    "it was paid to [ORG] by cheque",
    "it was signed by [PERSON] in the end",
    "the court at [PERSON] heard [PERSON] and [ORG]",
]


def test_the_entities_struct_holds_source_and_recognizer_as_strings():
    for columns in (OutputColumns(), OutputColumns(True, True, True)):
        entity = columns.schema().field("entities").type.value_type
        names = [entity.field(i).name for i in range(entity.num_fields)]
        assert names[names.index("decision_score") + 1:][:2] == ["source", "recognizer"]
        assert entity.field("source").type == pa.string()
        assert entity.field("recognizer").type == pa.string()


def test_a_row_carries_each_entitys_source_and_recognizer_through_parquet():
    text = "Ada Lovelace wrote to ada@example.org for Ruiz Inc."
    entities = (
        EntitySpan(0, 12, "PER", 0.9, redacted=True, decision_score=0.8, source="model",
                   recognizer="PER"),
        EntitySpan(22, 37, "EMAIL", 0.9, redacted=True, source="pattern", recognizer="EMAIL"),
        EntitySpan(42, 50, "ORG", 0.9, redacted=True, source="rule", recognizer="legal_form"),
        EntitySpan(0, 3, "CLIENT", 1.0, redacted=True, source="term_list",
                   recognizer="always_redact"),
    )
    doc = AnnotatedDocument(Document("d", text, "f:1"), entities, "redacted")
    columns = OutputColumns()
    table = pa.Table.from_pylist([columns.row(doc, {"name": "m", "sha256": "0"})],
                                 schema=columns.schema())
    written = table.to_pylist()[0]["entities"]
    assert [(e["label"], e["source"], e["recognizer"]) for e in written] == [
        ("PER", "model", "PER"), ("EMAIL", "pattern", "EMAIL"), ("ORG", "rule", "legal_form"),
        ("CLIENT", "term_list", "always_redact")]


def test_default_redact_labels_follow_the_roles_of_the_models_types():
    ontonotes = ("PERSON", "GPE", "ORG", "NORP", "DATE")
    chosen = resolve_redact_labels("default", ontonotes)
    assert {"PERSON", "GPE", "ORG"} <= chosen and not {"NORP"} & chosen
    assert resolve_redact_labels("default", ("LOC", "MISC", "ORG", "PER")) & {
        "PER", "LOC", "ORG", "MISC"} == {"PER", "LOC", "ORG"}
    # no type with a role: every model type, as before
    assert {"DISEASE", "DRUG"} <= resolve_redact_labels("default", ("DISEASE", "DRUG"))


@pytest.fixture(scope="module")
def renamed_model_dir(rigged_fp32_model_dir, tmp_path_factory):
    """The rigged fp32 model with its labels renamed PER -> PERSON, LOC -> GPE, MISC -> NORP."""
    target = tmp_path_factory.mktemp("models") / "rigged-ontonotes"
    shutil.copytree(rigged_fp32_model_dir, target)
    config = json.loads((target / "larvatus_model.json").read_text())
    config["labels"] = [label if label == "O" else f"{label[:2]}{RENAMED[label[2:]]}"
                        for label in config["labels"]]
    config["name"] = "tiny-rigged-ontonotes"
    (target / "larvatus_model.json").write_text(json.dumps(config, indent=2))
    return target


def _renamed_placeholders(text: str) -> str:
    for old, new in RENAMED.items():
        text = text.replace(f"[{old}]", f"[{new}]")
    return text


def _renamed_row(row: dict) -> dict:
    """What the same row says under the renamed labels (offsets in the redacted text aside)."""
    return {"redacted_text": _renamed_placeholders(row["redacted_text"]),
            "entities": [{**e, "label": RENAMED.get(e["label"], e["label"]),
                          "recognizer": RENAMED.get(e["recognizer"], e["recognizer"])}
                         for e in row["entities"]],
            "replacements": [(RENAMED.get(r["label"], r["label"]),
                              _renamed_placeholders(r["placeholder"]))
                             for r in row["replacements"]]}


def _comparable(row: dict) -> dict:
    return {"redacted_text": row["redacted_text"], "entities": row["entities"],
            "replacements": [(r["label"], r["placeholder"]) for r in row["replacements"]]}


def test_a_model_labelled_person_gpe_gets_the_rows_of_the_same_model_labelled_per_loc(
        rigged_fp32_model_dir, renamed_model_dir):
    from larvatus import Redactor

    conll_rows = Redactor(model=str(rigged_fp32_model_dir)).annotate(TEXTS)
    renamed_rows = Redactor(model=str(renamed_model_dir)).annotate(TEXTS)
    assert [_comparable(row) for row in renamed_rows] == [_renamed_row(row) for row in conll_rows]
    # what the rows hold: the name rules ran, and each entity says where it came from
    found = {(e["label"], e["source"], e["recognizer"]) for row in renamed_rows
             for e in row["entities"]}
    assert {("PERSON", "model", "PERSON"), ("EMAIL", "pattern", "EMAIL"),
            ("ORG", "rule", "legal_form"), ("PERSON", "rule", "name_list")} <= found
    assert [row["redacted_text"] for row in renamed_rows] == EXPECTED_TEXTS
