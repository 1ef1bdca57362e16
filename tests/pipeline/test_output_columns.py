"""The annotations' column table: one table gives the schema and the rows, switched by the job's options."""
from __future__ import annotations

import itertools
import re
from pathlib import Path

import numpy as np
import pyarrow as pa
import pytest

from larvatus import schemas
from larvatus.options import OptionsError, resolve_keep_fields
from larvatus.schemas import ANNOTATION_COLUMNS, ENTITY_FIELDS, Column, OutputColumns
from larvatus.transforms.mlout import EmbeddingSettings, MlSettings
from tests.paths import ROOT
from larvatus.transforms.records import (
    AnnotatedDocument, Audit, AuditFinding, Document, EntitySpan, MlOutputs, Replacement,
)

USAGE = ROOT / "docs" / "usage.md"
MODEL = {"name": "tiny", "sha256": "0" * 64}
EVERY_CHOICE = [OutputColumns(*switches, kept=kept)
                for switches in itertools.product([False, True], repeat=3)
                for kept in [(), ("lang", "n")]]


def _document(with_vectors: bool = True) -> AnnotatedDocument:
    document = Document("d1", "Ada Lovelace met Bob in Paris.", "f.jsonl:1",
                        fields=(("lang", "en"), ("n", None)))
    entities = (EntitySpan(0, 12, "PER", 0.9, redacted=True, decision_score=0.7),
                EntitySpan(24, 29, "LOC", 0.8, redacted=True))
    ml = MlOutputs(np.array([101, 7, 102], dtype=np.int32),
                   np.array([0.5, 0.25], dtype=np.float32) if with_vectors else None,
                   (np.array([1.0, 2.0], dtype=np.float32), None) if with_vectors else None)
    return AnnotatedDocument(document, entities, "[PER] met Bob in [LOC].",
                             (Replacement(0, 5, "PER", "[PER]"),),
                             audit=Audit((AuditFinding(10, 13, "capitalized"),)), ml=ml,
                             language="en")


@pytest.mark.parametrize("column", ANNOTATION_COLUMNS + ENTITY_FIELDS, ids=lambda c: c.name)
def test_every_column_is_switched_by_an_output_switch_or_always_there(column):
    assert column.when in ("",) + schemas.SWITCHES
    assert callable(column.value)
    assert isinstance(column.arrow_type(OutputColumns(True, True, True)), pa.DataType)


@pytest.mark.parametrize("columns", EVERY_CHOICE, ids=repr)
@pytest.mark.parametrize("with_vectors", [True, False])
def test_the_rows_fit_the_schema_column_for_column(columns, with_vectors):
    schema = columns.schema()
    row = columns.row(_document(with_vectors), MODEL)
    assert list(row) == schema.names
    table = pa.Table.from_pylist([row], schema=schema)   # raises on a type that does not fit
    assert table.schema.equals(schema)
    entity_names = [f.name for f in schema.field("entities").type.value_type]
    assert all(list(entity) == entity_names for entity in row["entities"])
    for name in columns.kept:
        assert schema.field(name).nullable and schema.field(name).type == pa.string()


def test_a_switched_off_column_is_in_neither_the_schema_nor_the_row():
    plain, full = OutputColumns(), OutputColumns(True, True, True, ("lang",))
    optional = {c.name for c in ANNOTATION_COLUMNS if c.when}
    assert optional == {"text", "redacted_input_ids", "embedding"}
    assert not optional & set(plain.schema().names)
    assert not optional & set(plain.row(_document(), MODEL))
    row = full.row(_document(), MODEL)
    assert (row["text"], row["entities"][0]["text"], row["lang"]) == (
        "Ada Lovelace met Bob in Paris.", "Ada Lovelace", "en")
    assert row["redacted_input_ids"] == [101, 7, 102]
    assert [e["vector"] for e in row["entities"]] == [[1.0, 2.0], None]


def test_one_row_of_the_table_gives_both_the_schema_and_the_value(monkeypatch):
    words = Column("num_words", pa.int32(), lambda row: row.doc.num_words)
    monkeypatch.setattr(schemas, "ANNOTATION_COLUMNS", ANNOTATION_COLUMNS + (words,))
    columns = OutputColumns()
    assert columns.schema().field("num_words").type == pa.int32()
    assert columns.row(_document(), MODEL)["num_words"] == 0
    assert "num_words" in schemas.column_names()


def test_the_switches_follow_the_job_options():
    assert OutputColumns.of(False, None) == OutputColumns()
    assert OutputColumns.of(True, MlSettings(placeholder_ids=(("PER", 5),)), ("a",)) == \
        OutputColumns(keep_text=True, token_ids=True, kept=("a",))
    assert OutputColumns.of(False, MlSettings(embeddings=EmbeddingSettings())).embeddings


@pytest.mark.parametrize("name", schemas.column_names())
def test_keep_fields_cannot_take_a_column_name(name):
    with pytest.raises(OptionsError, match="columns of that name"):
        resolve_keep_fields(name, "body")


def _documented_columns() -> list[str]:
    section = USAGE.read_text(encoding="utf-8").split("### Annotations", 1)[1].split("###", 1)[0]
    return [re.match(r"\| `([^`]+)`", line).group(1) for line in section.splitlines()
            if re.match(r"\| `[^`]+` \|", line)]


def test_the_usage_guide_lists_the_columns_in_the_table_order():
    documented = _documented_columns()
    assert [name for name in documented if "[]" not in name] == list(schemas.column_names())
    section = USAGE.read_text(encoding="utf-8").split("### Annotations", 1)[1]
    entities_row = next(line for line in section.splitlines() if line.startswith("| `entities` |"))
    for field in ENTITY_FIELDS:
        assert f"`{field.name}`" in entities_row or f"entities[].{field.name}" in documented


def test_only_the_document_vector_and_the_kept_fields_may_be_null():
    schema = OutputColumns(True, True, True, ("lang",)).schema()
    assert [field.name for field in schema if field.nullable] == ["embedding", "lang"]
    entity = schema.field("entities").type.value_type
    assert all(field.nullable for field in entity)   # struct fields, as pyarrow makes them


@pytest.mark.parametrize("columns", EVERY_CHOICE, ids=repr)
def test_rows_hold_what_each_column_reads_field_by_field(columns):
    """The row's shortcuts (one attribute getter per entity, the columns built once per
    options) give what each column's own `value` gives."""
    doc = _document()
    source = schemas.RowSource(doc, MODEL, columns)
    present = [c for c in ANNOTATION_COLUMNS if c.present(columns)]
    expected = {c.name: c.value(source) for c in present}
    expected["entities"] = [{f.name: f.value(source, i) for f in ENTITY_FIELDS if f.present(columns)}
                            for i in range(len(doc.entities))]
    expected.update((name, dict(doc.document.fields).get(name)) for name in columns.kept)
    row = columns.row(doc, MODEL)
    assert repr(row) == repr(expected)
    assert columns.row(doc, MODEL) == row   # and again, from the remembered columns
