"""Explicit pyarrow schemas for the annotation and dead-letter Parquet files, and row builders."""
from __future__ import annotations

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


def entity_type(keep_text: bool, embeddings: bool = False) -> pa.DataType:
    fields = [
        ("start", pa.int32()), ("end", pa.int32()), ("label", pa.string()),
        ("score", pa.float32()), ("propagated", pa.bool_()), ("redacted", pa.bool_()),
        pa.field("decision_score", pa.float32(), nullable=True),
    ]
    if keep_text:
        fields.append(("text", pa.string()))
    if embeddings:
        fields.append(pa.field("vector", pa.list_(pa.float32()), nullable=True))
    return pa.struct(fields)


def ml_columns(ml) -> dict:
    """The optional-column flags of `annotation_schema`/`annotation_row` for an `MlSettings` (or None)."""
    return {"token_ids": bool(ml and ml.token_ids),
            "embeddings": bool(ml and ml.embeddings is not None)}


def annotation_schema(keep_text: bool, token_ids: bool = False,
                      embeddings: bool = False, kept: tuple[str, ...] = ()) -> pa.Schema:
    """One row per annotated document.

    Offsets in `entities` are Python string indices (Unicode code points) into the
    original text, end-exclusive; offsets in `replacements` index `redacted_text`.
    `language` is the document's detected language (ISO 639-1, "und" when too short to
    tell); `entities.decision_score` is what the redaction threshold compared (null for
    pattern, rule and term spans). `text` and `entities.text` exist only with --keep-text; `redacted_input_ids` only
    with --emit-token-ids; `embedding` and `entities.vector` only with --emit-embeddings
    (null for a document or entity without any WordPiece). `kept` names the input fields
    carried as string columns (--keep-fields; null where a record lacks one).
    """
    fields = [
        pa.field("id", pa.string(), nullable=False),
        pa.field("source", pa.string(), nullable=False),
        pa.field("redacted_text", pa.string(), nullable=False),
        pa.field("language", pa.string(), nullable=False),
        pa.field("entities", pa.list_(entity_type(keep_text, embeddings)), nullable=False),
        pa.field("replacements", pa.list_(REPLACEMENT_TYPE), nullable=False),
        pa.field("audit", AUDIT_TYPE, nullable=False),
        pa.field("model", MODEL_TYPE, nullable=False),
    ]
    if keep_text:
        fields.insert(3, pa.field("text", pa.string(), nullable=False))
    if token_ids:
        fields.append(pa.field("redacted_input_ids", pa.list_(pa.int32()), nullable=False))
    if embeddings:
        fields.append(pa.field("embedding", pa.list_(pa.float32()), nullable=True))
    fields += [pa.field(name, pa.string(), nullable=True) for name in kept]
    return pa.schema(fields)


DEAD_LETTER_SCHEMA = pa.schema([
    pa.field("id", pa.string(), nullable=True),
    pa.field("source", pa.string(), nullable=False),
    pa.field("reason", pa.string(), nullable=False),
    pa.field("detail", pa.string(), nullable=False),
])


def _vector(array) -> list | None:
    return None if array is None else array.tolist()


def annotation_row(doc: AnnotatedDocument, model: dict, keep_text: bool,
                   token_ids: bool = False, embeddings: bool = False) -> dict:
    """An AnnotatedDocument as a row of `annotation_schema(keep_text, token_ids, embeddings)`."""
    text = doc.document.text
    entities = []
    vectors = doc.ml.entity_vectors if embeddings and doc.ml else None
    for index, e in enumerate(doc.entities):
        entity = {"start": e.start, "end": e.end, "label": e.label, "score": e.score,
                  "propagated": e.propagated, "redacted": e.redacted,
                  "decision_score": e.decision_score}
        if keep_text:
            entity["text"] = text[e.start:e.end]
        if embeddings:
            entity["vector"] = _vector(vectors[index]) if vectors is not None else None
        entities.append(entity)
    row = {
        "id": doc.document.doc_id,
        "source": doc.document.source,
        "redacted_text": doc.redacted_text,
        "language": doc.language,
        "entities": entities,
        "replacements": [
            {"start": r.start, "end": r.end, "label": r.label, "placeholder": r.placeholder}
            for r in doc.replacements],
        "audit": {"findings": doc.audit.total, **doc.audit.counts,
                  "spans": [{"start": f.start, "end": f.end, "kind": f.kind}
                            for f in doc.audit.findings]},
        "model": model,
    }
    if keep_text:
        row["text"] = text
    if token_ids:
        row["redacted_input_ids"] = doc.ml.redacted_input_ids.tolist()
    if embeddings:
        row["embedding"] = _vector(doc.ml.embedding)
    row.update(doc.document.fields)   # --keep-fields
    return row


def dead_letter_row(letter: DeadLetter) -> dict:
    return {"id": letter.doc_id, "source": letter.source, "reason": letter.reason,
            "detail": letter.detail}
