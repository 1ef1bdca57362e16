"""The per-document steps after inference as pure functions, shared by the Beam stages and the in-process Redactor."""
from __future__ import annotations

from dataclasses import replace
from typing import Any, Optional, Union

from larvatus.transforms import mlout as mlout_lib
from larvatus.transforms import recognizers as patterns_lib
from larvatus.transforms.audit import audit, kept_word_spans
from larvatus.transforms.labels import LabelScheme
from larvatus.transforms.language import detect_language
from larvatus.transforms.realign import RedactionDecision, realign
from larvatus.transforms.records import (
    AnnotatedDocument, DeadLetter, DeadLetterReason as Reason, EncodedDocument, InferenceFailure,
    TaggedDocument, WindowPredictions,
)
from larvatus.transforms.redact import RedactionPolicy, redact


def tag(encoded: EncodedDocument, inference: Any, scheme: LabelScheme, aggregation: str,
        decision: Optional[RedactionDecision] = None,
        ml: Optional[mlout_lib.MlSettings] = None) -> Union[TaggedDocument, DeadLetter]:
    """A document's window predictions -> its word-level entity spans (or why not)."""
    if isinstance(inference, InferenceFailure):
        document = encoded.segmented.document
        return DeadLetter(document.source, Reason.INFERENCE_ERROR, inference.detail,
                          document.doc_id)
    probs, hidden = inference, None
    if isinstance(probs, WindowPredictions):
        probs, hidden = probs.probs, probs.hidden
    spans = realign(encoded, probs, scheme, aggregation, decision)
    pieces = None if ml is None else mlout_lib.pieces_of(encoded, hidden, ml.embeddings)
    return TaggedDocument(encoded.segmented, spans, encoded.num_pieces, len(encoded.windows),
                          pieces=pieces)


def add_patterns(tagged: TaggedDocument, settings: patterns_lib.PatternSettings) -> TaggedDocument:
    """The model's spans merged with the pattern recognizers' (a pattern span wins an overlap)."""
    text = tagged.segmented.document.text
    found = patterns_lib.find_patterns(text, settings) if settings.labels else ()
    found = tuple(replace(span, redacted=True) for span in found)
    return replace(tagged, entities=patterns_lib.merge_spans(tagged.entities, found, text))


def redact_document(tagged: TaggedDocument, policy: RedactionPolicy) -> AnnotatedDocument:
    """Overlaps resolved and redacted spans replaced, with the document's language; `policy` holds its key when it needs one."""
    language = detect_language(tagged.segmented.document.text)
    entities, text, replacements = redact(tagged.segmented, tagged.entities, policy, language)
    return AnnotatedDocument(
        document=tagged.segmented.document, entities=entities, redacted_text=text,
        replacements=replacements, num_words=tagged.segmented.num_words,
        num_pieces=tagged.num_pieces, num_windows=tagged.num_windows, pieces=tagged.pieces,
        language=language)


def audit_document(annotated: AnnotatedDocument) -> AnnotatedDocument:
    """The document with the audit of its redacted text (offsets, never strings)."""
    kept = kept_word_spans(annotated.entities, annotated.replacements, annotated.document.text)
    return replace(annotated, audit=audit(annotated.redacted_text, annotated.replacements,
                                          annotated.language or "en", kept))
