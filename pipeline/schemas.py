"""The annotation and dead-letter Parquet files: one column table gives both the pyarrow schema and the rows."""
from __future__ import annotations

from dataclasses import dataclass, fields as dataclass_fields
from operator import attrgetter
from typing import Any, Callable, Mapping, Optional, Union

import pyarrow as pa

from larvatus.transforms.records import AnnotatedDocument, AuditKind, DeadLetter

MODEL_TYPE = pa.struct([("name", pa.string()), ("sha256", pa.string())])
REPLACEMENT_TYPE = pa.struct([
    ("start", pa.int32()), ("end", pa.int32()), ("label", pa.string()),
    ("placeholder", pa.string()),
])


AUDIT_FINDING_TYPE = pa.struct([("start", pa.int32()), ("end", pa.int32()), ("kind", pa.string())])
AUDIT_TYPE = pa.struct(
    [("findings", pa.int32())]
    + [(kind, pa.int32()) for kind in AuditKind.names()]
    + [("spans", pa.list_(AUDIT_FINDING_TYPE))])


@dataclass(frozen=True)
class OutputColumns:
    """Which optional columns a job's annotations have: `text` and `entities.text`
    (--keep-text), `redacted_input_ids` (--emit-token-ids), `embedding` and
    `entities.vector` (--emit-embeddings), and the kept input fields (--keep-fields)."""

    keep_text: bool = False
    token_ids: bool = False
    embeddings: bool = False
    kept: tuple[str, ...] = ()

    @classmethod
    def of(cls, keep_text: bool, ml=None, kept: tuple[str, ...] = ()) -> "OutputColumns":
        """The columns of a job with these options (`ml`: its `MlSettings`, or None)."""
        return cls(keep_text, token_ids=bool(ml and ml.token_ids),
                   embeddings=bool(ml and ml.embeddings is not None), kept=tuple(kept))

    def schema(self) -> pa.Schema:
        return pa.schema([pa.field(c.name, c.arrow_type(self), nullable=c.nullable)
                          for c in self.columns()])

    def row(self, doc: AnnotatedDocument, model: Mapping[str, str]) -> dict:
        """An AnnotatedDocument as a row of `schema()`, its keys in the schema's order."""
        source = RowSource(doc, model, self)
        return {column.name: column.value(source) for column in self.columns()}

    def columns(self) -> tuple["Column", ...]:
        """The table's columns present here, then one string column per kept field."""
        return _columns(self)


@dataclass(frozen=True)
class RowSource:
    """What a row is made from: the annotated document, the model's name and sha256, the columns."""

    doc: AnnotatedDocument
    model: Mapping[str, str]
    columns: OutputColumns


@dataclass(frozen=True)
class Column:
    """One column of the annotations, or one field of an entity.

    `type`: its arrow type, or a function of the job's `OutputColumns` when that depends
    on them (`entities`); `value`: how it is taken from a `RowSource` (for an entity
    field, from the `RowSource` and the entity's index); `when`: the `OutputColumns`
    switch that adds it (empty: always there).
    """

    name: str
    type: Union[pa.DataType, Callable[[OutputColumns], pa.DataType]]
    value: Callable[..., Any]
    nullable: bool = False
    when: str = ""
    attribute: str = ""   # an entity field read straight from this EntitySpan attribute

    def arrow_type(self, columns: OutputColumns) -> pa.DataType:
        return self.type if isinstance(self.type, pa.DataType) else self.type(columns)

    def present(self, columns: OutputColumns) -> bool:
        return not self.when or bool(getattr(columns, self.when))


SWITCHES = tuple(f.name for f in dataclass_fields(OutputColumns) if f.type in ("bool", bool))


def _vector(array) -> Optional[list]:
    return None if array is None else array.tolist()


def _entity_vector(row: RowSource, index: int) -> Optional[list]:
    vectors = row.doc.ml.entity_vectors if row.doc.ml else None
    return _vector(vectors[index]) if vectors is not None else None


def _entity_text(row: RowSource, index: int) -> str:
    entity = row.doc.entities[index]
    return row.doc.document.text[entity.start:entity.end]


def _field(name: str, arrow_type: pa.DataType, attribute: str = "", value=None,
           when: str = "") -> Column:
    """An entity field, read from the EntitySpan's `attribute` (its name by default) unless
    `value` says otherwise; struct fields are nullable, as pyarrow makes them."""
    read = value or (lambda row, index, a=attribute or name: getattr(row.doc.entities[index], a))
    return Column(name, arrow_type, read, nullable=True, when=when,
                  attribute="" if value else attribute or name)


# The fields of an `entities` item, in their order. Offsets are Python string indices
# (code points) into the original text, end-exclusive; `decision_score` is what the
# redaction threshold compared (null for pattern, term-list spans and the firms a rule
# found alone; a rule that reshapes a model span keeps it); `source` says what found the
# entity (`EntitySource`: model, pattern, rule, term_list) and `recognizer` which one (the
# model's entity type, the pattern kind, the rule, "always_redact"); `vector` is null for
# an entity without any WordPiece.
ENTITY_FIELDS: tuple[Column, ...] = (
    _field("start", pa.int32()),
    _field("end", pa.int32()),
    _field("label", pa.string()),
    _field("score", pa.float32()),
    _field("propagated", pa.bool_()),
    _field("redacted", pa.bool_()),
    _field("decision_score", pa.float32()),
    _field("source", pa.string()),
    _field("recognizer", pa.string()),
    _field("text", pa.string(), value=_entity_text, when="keep_text"),
    _field("vector", pa.list_(pa.float32()), value=_entity_vector, when="embeddings"),
)


def entity_type(columns: OutputColumns) -> pa.DataType:
    return pa.struct([pa.field(f.name, f.arrow_type(columns), nullable=f.nullable)
                      for f in ENTITY_FIELDS if f.present(columns)])


def _entities(row: RowSource) -> list[dict]:
    present, names, read = _entity_reader(row.columns)
    if read is not None:   # every field an attribute: one attrgetter call per entity
        return [dict(zip(names, read(entity))) for entity in row.doc.entities]
    return [{f.name: f.value(row, index) for f in present}
            for index in range(len(row.doc.entities))]


def _entity_reader(columns: OutputColumns) -> tuple[tuple[Column, ...], tuple[str, ...],
                                                    Optional[Callable[[Any], tuple]]]:
    """`_read_entities` of these columns and the current ENTITY_FIELDS, built once."""
    built = _ENTITY_READERS.get(columns)
    if built is None or built[0] is not ENTITY_FIELDS:
        if len(_ENTITY_READERS) >= 64:
            _ENTITY_READERS.clear()
        built = _ENTITY_READERS[columns] = (ENTITY_FIELDS, _read_entities(columns, ENTITY_FIELDS))
    return built[1]


_ENTITY_READERS: dict[OutputColumns, tuple] = {}


def _read_entities(columns: OutputColumns, fields: tuple[Column, ...]) -> tuple[
        tuple[Column, ...], tuple[str, ...], Optional[Callable[[Any], tuple]]]:
    """The entity fields present with these columns, their names, and one getter of all
    their values as a tuple where each is an attribute of the EntitySpan (else None)."""
    present = tuple(f for f in fields if f.present(columns))
    names = tuple(f.name for f in present)
    if len(present) < 2 or not all(f.attribute for f in present):
        return present, names, None
    return present, names, attrgetter(*(f.attribute for f in present))


def _replacements(row: RowSource) -> list[dict]:
    return [{"start": r.start, "end": r.end, "label": r.label, "placeholder": r.placeholder}
            for r in row.doc.replacements]


def _audit(row: RowSource) -> dict:
    audit = row.doc.audit
    return {"findings": audit.total, **audit.counts,
            "spans": [{"start": f.start, "end": f.end, "kind": f.kind} for f in audit.findings]}


def _kept_value(name: str) -> Callable[[RowSource], Optional[str]]:
    return lambda row: dict(row.doc.document.fields).get(name)


def _columns(columns: OutputColumns) -> tuple[Column, ...]:
    """`OutputColumns.columns`, built once per set of options (and of ANNOTATION_COLUMNS)."""
    built = _BUILT_COLUMNS.get(columns)
    if built is None or built[0] is not ANNOTATION_COLUMNS:
        kept = tuple(Column(name, pa.string(), _kept_value(name), nullable=True)
                     for name in columns.kept)
        if len(_BUILT_COLUMNS) >= 64:
            _BUILT_COLUMNS.clear()
        built = _BUILT_COLUMNS[columns] = (
            ANNOTATION_COLUMNS, tuple(c for c in ANNOTATION_COLUMNS if c.present(columns)) + kept)
    return built[1]


_BUILT_COLUMNS: dict[OutputColumns, tuple[tuple[Column, ...], tuple[Column, ...]]] = {}


# One row per annotated document, its columns in this order (kept fields last). Offsets
# in `replacements` index `redacted_text`; `language` is the document's detected language
# (ISO 639-1, "und" when too short to tell); `embedding` is null for a document without
# any WordPiece.
ANNOTATION_COLUMNS: tuple[Column, ...] = (
    Column("id", pa.string(), lambda row: row.doc.document.doc_id),
    Column("source", pa.string(), lambda row: row.doc.document.source),
    Column("redacted_text", pa.string(), lambda row: row.doc.redacted_text),
    Column("text", pa.string(), lambda row: row.doc.document.text, when="keep_text"),
    Column("language", pa.string(), lambda row: row.doc.language),
    Column("entities", lambda columns: pa.list_(entity_type(columns)), _entities),
    Column("replacements", pa.list_(REPLACEMENT_TYPE), _replacements),
    Column("audit", AUDIT_TYPE, _audit),
    Column("model", MODEL_TYPE, lambda row: row.model),
    Column("redacted_input_ids", pa.list_(pa.int32()),
           lambda row: row.doc.ml.redacted_input_ids.tolist(), when="token_ids"),
    Column("embedding", pa.list_(pa.float32()), lambda row: _vector(row.doc.ml.embedding),
           nullable=True, when="embeddings"),
)


def column_names() -> tuple[str, ...]:
    """Every column the annotations can have, whatever the options (kept fields aside)."""
    return tuple(column.name for column in ANNOTATION_COLUMNS)


def annotation_schema(keep_text: bool = False, token_ids: bool = False,
                      embeddings: bool = False, kept: tuple[str, ...] = ()) -> pa.Schema:
    """The annotations' schema with these optional columns (`OutputColumns(...).schema()`)."""
    return OutputColumns(keep_text, token_ids, embeddings, tuple(kept)).schema()


DEAD_LETTER_SCHEMA = pa.schema([
    pa.field("id", pa.string(), nullable=True),
    pa.field("source", pa.string(), nullable=False),
    pa.field("reason", pa.string(), nullable=False),
    pa.field("detail", pa.string(), nullable=False),
])


def dead_letter_row(letter: DeadLetter) -> dict:
    return {"id": letter.doc_id, "source": letter.source, "reason": letter.reason,
            "detail": letter.detail}
