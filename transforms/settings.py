"""The one typed, frozen settings record of the annotation stages, made by the command line and the Redactor alike."""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Optional, Protocol

from larvatus.transforms.budget import DEFAULT_RECORD_TIMEOUT
from larvatus.transforms.encode import EncodeSettings
from larvatus.transforms.labels import LabelScheme
from larvatus.transforms.mlout import MlSettings
from larvatus.transforms.read import DEFAULT_MAX_CHARS
from larvatus.transforms.realign import RedactionDecision
from larvatus.transforms.recognizers import PatternSettings
from larvatus.transforms.redact import RedactionPolicy



class ModelDescription(Protocol):
    """What the stages read of a model (`larvatus.models.model_dir.ModelSpec`; transforms/
    never imports models/): its identity, label scheme and tokenizer."""

    name: str
    sha256: str
    scheme: LabelScheme

    def load_tokenizer(self) -> Any: ...


@dataclass(frozen=True)
class AnnotationSettings:
    """Every setting that shapes an annotations row, checked, with the model it runs.

    `larvatus.settings.settings_from_options` makes it from `larvatus run`'s options
    and `larvatus.Redactor`'s keyword arguments (the same names, defaults and checks);
    `larvatus.transforms.stages.declare` builds the stage list from it. It holds where
    the pseudonym key is (`policy.key_source`), never the key.
    """

    spec: ModelDescription
    encode_settings: EncodeSettings
    policy: RedactionPolicy
    aggregation: str = "first"
    decision: Optional[RedactionDecision] = None
    patterns: PatternSettings = PatternSettings(labels=frozenset())
    ml: Optional[MlSettings] = None   # --emit-token-ids / --emit-embeddings; None: neither
    keep_text: bool = False
    max_chars: int = DEFAULT_MAX_CHARS
    record_timeout: Optional[float] = DEFAULT_RECORD_TIMEOUT   # per document and stage; None: no limit
    device: str = "auto"
    batch_tokens: Optional[int] = None
    intra_op_threads: int = 0

    @property
    def model_info(self) -> dict:
        """The `model` column of every row: the model's name and sha256."""
        return {"name": self.spec.name, "sha256": self.spec.sha256}

    @property
    def embedding_layer(self) -> Optional[str]:
        """The hidden states the model must also return (--emit-embeddings), else None."""
        return self.ml.embeddings.layer if self.ml and self.ml.embeddings else None
