"""Read and check a model directory: ONNX file(s), fast tokenizer, label map, window length."""
from __future__ import annotations

import hashlib
import json
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Optional

from transforms.labels import LabelScheme, LabelSchemeError, read_scheme
from transforms.encode import TYPE_ID_MODES, TYPE_IDS_ZEROS, EncodeSettings

CONFIG_NAME = "larvatus_model.json"
TOKENIZER_NAME = "tokenizer.json"
DEFAULT_MODEL_DIR = Path(__file__).resolve().parent / "default"
DEVICES = ("cpu", "cuda")


class ModelError(RuntimeError):
    """The model directory is missing, broken or unusable; the message says what to do."""


@dataclass(frozen=True)
class ModelSpec:
    """Everything the pipeline needs to know about a model, read once at start.

    `onnx_files` maps a device ("cpu", "cuda") to the ONNX file to run there.
    """

    path: str
    name: str
    labels: tuple[str, ...]
    max_length: int
    type_ids: str
    cls_token: str
    sep_token: str
    onnx_files: dict[str, str] = field(hash=False)
    sha256: str = ""

    @property
    def scheme(self) -> LabelScheme:
        return read_scheme(self.labels)

    def onnx_path(self, device: str) -> str:
        return os.path.join(self.path, self.onnx_files[device])

    def load_tokenizer(self):
        """The fast tokenizer with truncation and padding off (windows do that job)."""
        from tokenizers import Tokenizer

        tokenizer = Tokenizer.from_file(os.path.join(self.path, TOKENIZER_NAME))
        tokenizer.no_truncation()
        tokenizer.no_padding()
        return tokenizer

    def encode_settings(self, tokenizer, overlap: int, max_length: Optional[int] = None) -> EncodeSettings:
        length = self.max_length if max_length is None else max_length
        if length > self.max_length:
            raise ValueError(
                f"window length {length} exceeds the model's max_length {self.max_length}")
        ids = [tokenizer.token_to_id(t) for t in (self.cls_token, self.sep_token)]
        if None in ids:
            raise ModelError(
                f"{self.path}: tokenizer has no {self.cls_token!r} or {self.sep_token!r} token")
        return EncodeSettings(
            max_length=length, overlap=overlap, cls_id=ids[0], sep_id=ids[1],
            type_ids=self.type_ids)


def _hash_files(paths: list[Path]) -> str:
    digest = hashlib.sha256()
    for path in sorted(set(paths)):
        digest.update(path.name.encode())
        with open(path, "rb") as handle:
            for block in iter(lambda: handle.read(1 << 20), b""):
                digest.update(block)
    return digest.hexdigest()


def _read_hf_config(path: Path) -> dict:
    """A plain Hugging Face/Optimum export: config.json with id2label, model.onnx, tokenizer.json."""
    with open(path / "config.json", encoding="utf-8") as handle:
        hf = json.load(handle)
    id2label = hf.get("id2label") or {}
    labels = [id2label[k] for k in sorted(id2label, key=int)]
    return {
        "name": hf.get("_name_or_path") or path.name,
        "labels": labels,
        "max_length": hf.get("max_position_embeddings", 512),
        "onnx": {"cpu": "model.onnx", "cuda": "model.onnx"},
    }


def load_model_spec(model_dir: str | os.PathLike) -> ModelSpec:
    """Reads and checks a model directory, failing loudly with what to do.

    Accepts a Larvatus model directory (`larvatus_model.json`, made by
    `python -m models.export`) or a plain ONNX token-classification export
    (`config.json` with `id2label`, `model.onnx`, `tokenizer.json`).
    """
    path = Path(model_dir).expanduser().resolve()
    hint = "Point --model at a directory made by `python -m models.export`."
    if not path.is_dir():
        raise ModelError(f"model directory {path} does not exist. {hint}")
    try:
        if (path / CONFIG_NAME).exists():
            with open(path / CONFIG_NAME, encoding="utf-8") as handle:
                config = json.load(handle)
        elif (path / "config.json").exists():
            config = _read_hf_config(path)
        else:
            raise ModelError(f"{path} has neither {CONFIG_NAME} nor config.json. {hint}")
    except (OSError, ValueError, KeyError, TypeError) as error:
        raise ModelError(f"cannot read the model config in {path}: {error}. {hint}") from error
    if not (path / TOKENIZER_NAME).exists():
        raise ModelError(
            f"{path} has no {TOKENIZER_NAME} (a Hugging Face fast tokenizer). "
            f"Save one with tokenizer.save_pretrained(); {hint}")
    try:
        labels = tuple(config["labels"])
        read_scheme(labels)
    except KeyError as error:
        raise ModelError(f"{path}: the config lists no labels. {hint}") from error
    except LabelSchemeError as error:
        raise ModelError(
            f"{path}: the label set cannot be decoded ({error}). Larvatus reads BIO, "
            f"IOB1, IO and BIOES/BILOU label names such as B-PER, I-PER, S-PER, O.") from error
    type_ids = config.get("type_ids", TYPE_IDS_ZEROS)
    if type_ids not in TYPE_ID_MODES:
        raise ModelError(f"{path}: type_ids must be one of {TYPE_ID_MODES}, not {type_ids!r}")
    onnx = dict(config.get("onnx") or {})
    for device in DEVICES:
        other = [d for d in DEVICES if d != device][0]
        onnx.setdefault(device, onnx.get(other))
    if not onnx.get("cpu"):
        raise ModelError(f"{path}: the config names no ONNX file. {hint}")
    missing = sorted({f for f in onnx.values() if not (path / f).is_file()})
    if missing:
        raise ModelError(f"{path}: ONNX file(s) missing: {', '.join(missing)}. {hint}")
    max_length = int(config.get("max_length", 512))
    if max_length < 8:
        raise ModelError(f"{path}: max_length {max_length} is too small")
    special = config.get("special_tokens", {})
    files = [path / TOKENIZER_NAME] + [path / f for f in onnx.values()]
    files += [path / n for n in (CONFIG_NAME, "config.json") if (path / n).exists()]
    return ModelSpec(
        path=str(path), name=str(config.get("name", path.name)), labels=labels,
        max_length=max_length, type_ids=type_ids,
        cls_token=special.get("cls", "[CLS]"), sep_token=special.get("sep", "[SEP]"),
        onnx_files=onnx, sha256=_hash_files(files))
