"""The in-process API: a Redactor annotates and redacts texts in this process, with no Beam job."""
from __future__ import annotations

import threading
from typing import Any, Iterable, Iterator, Optional, Sequence

from larvatus.models.handler import OnnxTokenClassifierHandler
from larvatus.models.model_dir import EMBEDDED_DEFAULT
from larvatus.options import job_parser
from larvatus.run import annotation_settings
from larvatus import schemas
from larvatus.transforms import annotate as annotate_lib
from larvatus.transforms import encode as encode_lib
from larvatus.transforms import mlout as mlout_lib
from larvatus.transforms import segment as segment_lib
from larvatus.transforms.read import validate_text
from larvatus.transforms.records import (
    AnnotatedDocument, DeadLetter, DeadLetterReason as Reason, Document,
)
from larvatus.transforms.stages import read_secret_file

# The `larvatus run` options a Redactor takes, as keyword arguments of the same names
# (underscores for dashes); input, output and runner options have no meaning here.
OPTIONS = (
    "profile", "placeholder", "pseudonym_key_env", "pseudonym_key_file", "propagate", "redact_threshold",
    "phone_regions", "aggregation", "window_length", "window_overlap", "batch_tokens",
    "device", "intra_op_threads", "keep_text", "max_chars", "emit_token_ids",
    "emit_embeddings", "embedding_layer", "embedding_pooling",
)
CHUNK_DOCUMENTS = 64   # documents segmented, encoded and inferred together


class DocumentError(ValueError):
    """A text the Redactor could not annotate: its index, the reason and detail a dead letter
    of `larvatus run` would carry (never the text itself)."""

    def __init__(self, index: int, doc_id: Optional[str], reason: str, detail: str):
        super().__init__(f"text {index} (id {doc_id!r}): {reason}: {detail}")
        self.index, self.doc_id, self.reason, self.detail = index, doc_id, reason, detail


def _options(model: str, redact_labels: str, chosen: dict[str, Any]):
    """`larvatus run`'s option namespace: its defaults, with this Redactor's choices."""
    unknown = sorted(set(chosen) - set(OPTIONS))
    if unknown:
        raise TypeError(f"Redactor() got unknown options {unknown}; it takes {list(OPTIONS)}")
    options = job_parser("larvatus.Redactor").parse_args([])
    options.model, options.redact_labels = model, redact_labels
    for name, value in chosen.items():
        setattr(options, name, value)
    return options


class Redactor:
    """Annotates and redacts texts in this process, as `larvatus run` does with the same options.

    The model loads once, in the constructor. Options are those of `larvatus run`
    (`OPTIONS`, underscores for dashes) and are checked the same way: a bad one
    raises `larvatus.options.OptionsError` (a ValueError), a bad model
    `larvatus.models.model_dir.ModelError`. There is no per-document time limit
    (`--record-timeout`). Thread-safe: calls from several threads take turns on
    one lock; for parallel work give each process its own Redactor.
    """

    def __init__(self, model: str = EMBEDDED_DEFAULT, redact_labels: str = "default",
                 **options: Any):
        chosen = _options(model, redact_labels, options)
        settings = annotation_settings(chosen)
        self._spec = settings["spec"]
        self._encode = settings["encode_settings"]
        self._aggregation = settings["aggregation"]
        self._decision = settings["decision"]
        self._patterns = settings["patterns"]
        self._ml: Optional[mlout_lib.MlSettings] = settings["ml"]
        self._columns = schemas.OutputColumns.of(settings["keep_text"], self._ml)
        self._max_chars = chosen.max_chars
        self._policy = settings["policy"].with_key(read_secret_file)
        self._handler = OnnxTokenClassifierHandler(
            self._spec, device=settings["device"], batch_tokens=settings["batch_tokens"],
            intra_op_threads=settings["intra_op_threads"],
            embedding_layer=self._ml.embeddings.layer if self._ml and self._ml.embeddings
            else None)
        self._model = self._handler.load_model()
        self._tokenizer = encode_lib.WordPieces(self._spec.load_tokenizer())
        segment_lib.english_tokenizer()
        self._lock = threading.Lock()

    @property
    def device(self) -> str:
        """Where the model runs: cpu or cuda."""
        return self._model.device

    @property
    def model_info(self) -> dict:
        """The `model` column of every row: the model's name and sha256."""
        return {"name": self._spec.name, "sha256": self._spec.sha256}

    def redact(self, text: str) -> str:
        """The text with its redacted entities replaced by placeholders."""
        return self.annotate([text])[0]["redacted_text"]

    def annotate(self, texts: Iterable[str], ids: Optional[Sequence[str]] = None,
                 sources: Optional[Sequence[str]] = None) -> list[dict]:
        """One dict per text with the columns of an annotations row, in the schema's order
        (`id`, `source`, `redacted_text`, `language`, `entities`, `replacements`, `audit`,
        `model`; `text` with keep_text, the ML columns with emit_token_ids/emit_embeddings).

        `ids` default to the texts' indices ("0", "1", ...), `sources` to `texts[N]`. A text
        that cannot be annotated (too long, not a string, ...) raises DocumentError.
        """
        texts = list(texts)
        ids = [str(i) for i in range(len(texts))] if ids is None else list(ids)
        sources = [f"texts[{i}]" for i in range(len(texts))] if sources is None else list(sources)
        if not len(texts) == len(ids) == len(sources):
            raise ValueError(f"{len(texts)} texts but {len(ids)} ids and {len(sources)} sources")
        documents = [self._document(i, *item) for i, item in enumerate(zip(texts, ids, sources))]
        rows: list[dict] = []
        with self._lock:
            for start in range(0, len(documents), CHUNK_DOCUMENTS):
                chunk = documents[start:start + CHUNK_DOCUMENTS]
                for annotated in self._annotate_chunk(chunk, start):
                    rows.append(self._columns.row(annotated, self.model_info))
        return rows

    def annotate_frame(self, frame, text_column: str = "text", id_column: Optional[str] = None):
        """A pandas DataFrame of annotation rows, one per row of `frame` and on its index.

        Ids come from `id_column`, else from the frame's index labels.
        """
        import pandas as pd

        ids = frame[id_column] if id_column is not None else frame.index
        rows = self.annotate(list(frame[text_column]), ids=[str(i) for i in ids])
        return pd.DataFrame(rows, index=frame.index)

    def _document(self, index: int, text: Any, doc_id: str, source: str) -> Document:
        result = validate_text(doc_id, text, source, self._max_chars)
        if isinstance(result, DeadLetter):
            raise DocumentError(index, doc_id, result.reason, result.detail)
        return result

    def _annotate_chunk(self, documents: list[Document], first: int) -> Iterator[AnnotatedDocument]:
        """The stages of the Beam graph (larvatus.graph.AnnotateDocuments), in its order."""
        encoded = []
        for index, document in enumerate(documents, first):
            segmented = self._step(index, document, Reason.SEGMENT_ERROR, segment_lib.segment,
                                   document)
            encoded.append(self._step(index, document, Reason.ENCODE_ERROR, encode_lib.encode,
                                      segmented, self._tokenizer, self._encode))
        results = self._handler.run_inference(encoded, self._model)
        for index, (document, result) in enumerate(zip(documents, results), first):
            tagged = self._step(index, document, Reason.REALIGN_ERROR, annotate_lib.tag,
                                result.example, result.inference, self._spec.scheme,
                                self._aggregation, self._decision, self._ml)
            tagged = self._step(index, document, Reason.PATTERN_ERROR, annotate_lib.add_patterns,
                                tagged, self._patterns)
            annotated = self._step(index, document, Reason.REDACT_ERROR,
                                   annotate_lib.redact_document, tagged, self._policy)
            annotated = self._step(index, document, Reason.AUDIT_ERROR, annotate_lib.audit_document,
                                   annotated)
            if self._ml is not None:
                annotated = self._step(index, document, Reason.ML_OUTPUT_ERROR,
                                       mlout_lib.ml_outputs, annotated, self._ml)
            yield annotated

    @staticmethod
    def _step(index: int, document: Document, reason: str, function, *args):
        """One stage's pure call; a failure or a dead letter raises DocumentError (the
        exception's type as detail, never its message: messages can quote text)."""
        try:
            result = function(*args)
        except Exception as error:
            raise DocumentError(index, document.doc_id, reason, type(error).__name__) from None
        if isinstance(result, DeadLetter):
            raise DocumentError(index, document.doc_id, result.reason, result.detail)
        return result
