"""Beam's RunInference adapter of the ONNX token classifier: batching by tokens, model sharing across processes."""
from __future__ import annotations

from typing import Any, Iterable, Optional, Sequence

from apache_beam.ml.inference.base import ModelHandler, PredictionResult

from larvatus.models.handler import (
    CPU_BATCH_TOKENS, MIN_DOCUMENT_BATCH_TOKENS, LoadedModel, OnnxTokenClassifier, document_tokens,
)
from larvatus.models.model_dir import ModelSpec
from larvatus.models.runners import sessions_sharing_cores
from larvatus.transforms.records import EncodedDocument


class OnnxTokenClassifierHandler(OnnxTokenClassifier,
                                 ModelHandler[EncodedDocument, Any, LoadedModel]):
    """The classifier as a RunInference ModelHandler: documents batched by their token count,
    one model per process, or `model_copies` / `large_model` shared by a machine's processes."""

    def __init__(
        self, spec: ModelSpec, device: str = "auto", batch_tokens: Optional[int] = None,
        intra_op_threads: int = 0, processes_per_machine: int = 1,
        model_copies: Optional[int] = None, large_model: bool = False,
        embedding_layer: Optional[str] = None,
    ):
        OnnxTokenClassifier.__init__(
            self, spec, device=device, batch_tokens=batch_tokens,
            intra_op_threads=intra_op_threads, processes_per_machine=processes_per_machine,
            model_copies=model_copies, large_model=large_model, embedding_layer=embedding_layer)
        budget = max(MIN_DOCUMENT_BATCH_TOKENS, 4 * (batch_tokens or CPU_BATCH_TOKENS))
        ModelHandler.__init__(
            self, min_batch_size=budget, max_batch_size=budget,
            element_size_fn=document_tokens, model_copies=model_copies,
            large_model=large_model)

    def sessions_per_machine(self, cores: int) -> int:
        """How many ONNX Runtime sessions compete for this machine's cores."""
        shared = self.model_copies() if self.share_model_across_processes() else None
        return sessions_sharing_cores(cores, self._processes_per_machine, shared)

    def run_inference(
        self, batch: Sequence[EncodedDocument], model: LoadedModel,
        inference_args: Optional[dict[str, Any]] = None,
    ) -> Iterable[PredictionResult]:
        return [PredictionResult(doc, inference, self._spec.name)
                for doc, inference in zip(batch, self.predict_documents(batch, model))]

    def get_metrics_namespace(self) -> str:
        return "larvatus_inference"
