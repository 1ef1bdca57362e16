"""Read and check a model directory (local, embedded or on any Beam filesystem) and find it on each worker."""
from __future__ import annotations

import hashlib
import json
import os
import shutil
import socket
import tempfile
import threading
import uuid
from dataclasses import dataclass, field
from pathlib import Path
from typing import Optional

from larvatus.models.onnx_shapes import position_embedding_rows
from larvatus.transforms.labels import LabelScheme, LabelSchemeError, read_scheme
from larvatus.transforms.encode import TYPE_ID_MODES, TYPE_IDS_ZEROS, EncodeSettings

CONFIG_NAME = "larvatus_model.json"
HF_CONFIG_NAME = "config.json"
TOKENIZER_NAME = "tokenizer.json"
# The embedded default model: each process finds it inside its own installed Larvatus
# (this module's package), never at a path copied from the launcher.
EMBEDDED_DEFAULT = "embedded:default"
DEFAULT_MODEL_DIR = Path(__file__).resolve().parent / "default"
DEVICES = ("cpu", "cuda")
CACHE_ENV = "LARVATUS_CACHE"
HINT = "Point --model at a directory made by `python -m larvatus.models.export`."


class ModelError(RuntimeError):
    """The model directory is missing, broken or unusable; the message says what to do."""


def where() -> str:
    """This process, for error messages that must say which machine failed."""
    return f"{socket.gethostname()} (pid {os.getpid()})"


def embedded_model_dir() -> Path:
    """The embedded default model inside this process's installed Larvatus package."""
    return DEFAULT_MODEL_DIR


def location_kind(location: str) -> str:
    """`embedded`, `local` (a path on this machine) or `remote` (a Beam filesystem URI)."""
    if location == EMBEDDED_DEFAULT:
        return "embedded"
    if "://" in location:
        return "remote"
    return "local"


@dataclass(frozen=True)
class ModelSpec:
    """Everything the pipeline needs to know about a model, read once at start by the launcher.

    `location` is the model as the user gave it: `embedded:default`, an absolute
    local directory, or a Beam filesystem URI (gs://, s3://, hdfs://...). It is
    what travels to workers, which find the files themselves (`local_dir`): the
    embedded model inside their own installed package, a remote one copied once
    per process into a local cache. `files` are the names hashed into `sha256`,
    which every worker checks before it uses the model. `onnx_files` maps a
    device ("cpu", "cuda") to the ONNX file to run there.
    """

    location: str
    name: str
    labels: tuple[str, ...]
    max_length: int
    type_ids: str
    cls_token: str
    sep_token: str
    onnx_files: dict[str, str] = field(hash=False)
    sha256: str = ""
    files: tuple[str, ...] = ()
    # ONNX files whose outputs depend on their batch mates (dynamic int8 quantization): the
    # handler runs them one window a call, so that a document's rows never depend on batching.
    batch_dependent_files: tuple[str, ...] = ()
    # Graph outputs holding hidden states, by layer choice (`larvatus.models.export.HIDDEN_OUTPUTS`),
    # for --emit-embeddings; empty for a model exported without them.
    hidden_outputs: dict[str, str] = field(default_factory=dict, hash=False)

    @property
    def path(self) -> str:
        """The location as given (kept under its old name for messages and the summary)."""
        return self.location

    @property
    def scheme(self) -> LabelScheme:
        return read_scheme(self.labels)

    def local_dir(self) -> str:
        """A local directory holding exactly the files the launcher checked (see `resolve_model_dir`)."""
        return resolve_model_dir(self)

    def onnx_path(self, device: str) -> str:
        return os.path.join(self.local_dir(), self.onnx_files[device])

    def load_tokenizer(self):
        """The fast tokenizer with truncation and padding off (windows do that job)."""
        from tokenizers import Tokenizer

        tokenizer = Tokenizer.from_file(os.path.join(self.local_dir(), TOKENIZER_NAME))
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
                f"{self.location}: tokenizer has no {self.cls_token!r} or {self.sep_token!r} token")
        return EncodeSettings(
            max_length=length, overlap=overlap, cls_id=ids[0], sep_id=ids[1],
            type_ids=self.type_ids)


def is_plain_name(name) -> bool:
    """Whether `name` is a plain file name inside its folder: no folder part, no `..`, not absolute."""
    return (isinstance(name, str) and name not in ("", ".", "..") and "\0" not in name
            and not any(sep in name for sep in ("/", "\\", ":"))
            and os.path.basename(name) == name and not os.path.isabs(name))


def check_plain_names(names, label: str) -> None:
    """Refuses any model file name that is not a plain name inside the model folder: a config
    naming `../x.pth` or `/abs/x.onnx` must never read or write files outside that folder."""
    bad = sorted({repr(n) for n in names if not is_plain_name(n)})
    if bad:
        raise ModelError(
            f"{label}: the model config names file(s) outside the model folder: "
            f"{', '.join(bad)[:300]}; every file must be a plain name inside the folder, "
            f"such as \"model.onnx\". {HINT}")


def hash_model_files(directory: str | os.PathLike, names) -> str:
    """sha256 over the named files of a directory: each file's name, then its bytes, by name."""
    check_plain_names(names, str(directory))
    digest = hashlib.sha256()
    for name in sorted(set(names)):
        digest.update(Path(name).name.encode())
        with open(Path(directory) / name, "rb") as handle:
            for block in iter(lambda: handle.read(1 << 20), b""):
                digest.update(block)
    return digest.hexdigest()


def _read_hf_config(path: Path) -> dict:
    """A plain Hugging Face/Optimum export: config.json with id2label, model.onnx, tokenizer.json."""
    with open(path / HF_CONFIG_NAME, encoding="utf-8") as handle:
        hf = json.load(handle)
    id2label = hf.get("id2label") or {}
    labels = [id2label[k] for k in sorted(id2label, key=int)]
    return {
        "name": hf.get("_name_or_path") or path.name,
        "labels": labels,
        "max_length": hf.get("max_position_embeddings", 512),
        "onnx": {"cpu": "model.onnx", "cuda": "model.onnx"},
    }


def _onnx_names(config: dict) -> dict[str, str]:
    onnx = dict(config.get("onnx") or {})
    for device in DEVICES:
        other = [d for d in DEVICES if d != device][0]
        onnx.setdefault(device, onnx.get(other))
    return onnx


def _check_directory(path: Path, label: str) -> dict:
    """Reads and checks a local model directory; `label` names it in messages."""
    if not path.is_dir():
        raise ModelError(f"model directory {label} does not exist. {HINT}")
    try:
        if (path / CONFIG_NAME).exists():
            config_name = CONFIG_NAME
            with open(path / CONFIG_NAME, encoding="utf-8") as handle:
                config = json.load(handle)
        elif (path / HF_CONFIG_NAME).exists():
            config_name = HF_CONFIG_NAME
            config = _read_hf_config(path)
        else:
            raise ModelError(f"{label} has neither {CONFIG_NAME} nor {HF_CONFIG_NAME}. {HINT}")
    except (OSError, ValueError, KeyError, TypeError) as error:
        raise ModelError(f"cannot read the model config in {label}: {error}. {HINT}") from error
    if not isinstance(config, dict):
        raise ModelError(f"{label}: the model config must be a JSON object, not "
                         f"{type(config).__name__}. {HINT}")
    if not (path / TOKENIZER_NAME).exists():
        raise ModelError(
            f"{label} has no {TOKENIZER_NAME} (a Hugging Face fast tokenizer). "
            f"Save one with tokenizer.save_pretrained(); {HINT}")
    tokenizer = _load_tokenizer(path, label)
    labels = _check_labels(config, label)
    type_ids = config.get("type_ids", TYPE_IDS_ZEROS)
    if type_ids not in TYPE_ID_MODES:
        raise ModelError(f"{label}: type_ids must be one of {TYPE_ID_MODES}, not {type_ids!r}")
    raw_onnx = config.get("onnx") or {}
    if not isinstance(raw_onnx, dict) or not all(isinstance(f, str) for f in raw_onnx.values()):
        raise ModelError(f"{label}: onnx must map devices to file names, such as "
                         f'{{"cpu": "model.int8.onnx", "cuda": "model.fp16.onnx"}}. {HINT}')
    onnx = _onnx_names(config)
    if not onnx.get("cpu"):
        raise ModelError(f"{label}: the config names no ONNX file. {HINT}")
    check_plain_names(onnx.values(), label)
    missing = sorted({f for f in onnx.values() if not (path / f).is_file()})
    if missing:
        raise ModelError(f"{label}: ONNX file(s) missing: {', '.join(missing)}. {HINT}")
    max_length = config.get("max_length", 512)
    if isinstance(max_length, bool) or not isinstance(max_length, int):
        raise ModelError(
            f"{label}: max_length must be a whole number of wordpieces such as 512 (the "
            f"longest window the model was trained on), not {_short(max_length)}")
    if max_length < 8:
        raise ModelError(f"{label}: max_length {max_length} is too small (at least 8)")
    for onnx_file in sorted(set(onnx.values())):
        positions = position_embedding_rows(path / onnx_file)
        if positions is not None and max_length > positions:
            raise ModelError(
                f"{label}: max_length {max_length} is larger than the {positions} positions "
                f"of {onnx_file}'s position embeddings; longer windows would fail inference. "
                f"Set max_length to at most {positions}.")
    special = config.get("special_tokens") or {}
    if not isinstance(special, dict):
        raise ModelError(f'{label}: special_tokens must be an object such as '
                         f'{{"cls": "[CLS]", "sep": "[SEP]"}}, not {_short(special)}')
    cls_token, sep_token = special.get("cls", "[CLS]"), special.get("sep", "[SEP]")
    for role, token in (("cls", cls_token), ("sep", sep_token)):
        if not isinstance(token, str) or tokenizer.token_to_id(token) is None:
            known = sorted(t.content for t in tokenizer.get_added_tokens_decoder().values()
                           if t.special)
            raise ModelError(
                f"{label}: the tokenizer has no {_short(token)} token (special_tokens.{role}); "
                f"set special_tokens to the tokenizer's own, one of {known}.")
    files = tuple(sorted({TOKENIZER_NAME, config_name, *onnx.values()}))
    return dict(
        name=str(config.get("name", path.name)), labels=labels, max_length=max_length,
        type_ids=type_ids, cls_token=cls_token, sep_token=sep_token, onnx_files=onnx,
        files=files, sha256=hash_model_files(path, files),
        batch_dependent_files=_batch_dependent_files(config, onnx),
        hidden_outputs=_hidden_outputs(config, label))


def _hidden_outputs(config: dict, label: str) -> dict[str, str]:
    """The hidden-state outputs `larvatus.models.export` lists under `hidden_states.outputs` (none: {})."""
    listed = (config.get("hidden_states") or {})
    outputs = listed.get("outputs") if isinstance(listed, dict) else None
    if outputs is None:
        return {}
    if not isinstance(outputs, dict) or not all(
            isinstance(k, str) and isinstance(v, str) for k, v in outputs.items()):
        raise ModelError(f"{label}: hidden_states.outputs must map layer choices to graph "
                         f"output names, not {_short(outputs)}. {HINT}")
    return dict(outputs)


def _batch_dependent_files(config: dict, onnx: dict[str, str]) -> tuple[str, ...]:
    """Files exported with dynamic quantization: listed by `larvatus.models.export`, or, for older
    model directories that do not say, any `int8` file not marked static."""
    listed = config.get("dynamic_quantization")
    if listed is not None:
        return tuple(sorted(str(name) for name in listed))
    return tuple(sorted({f for f in onnx.values() if "int8" in f and "static" not in f}))


def _short(value) -> str:
    text = json.dumps(value, ensure_ascii=False) if not isinstance(value, str) else repr(value)
    return text if len(text) <= 80 else text[:77] + "..."


def _load_tokenizer(path: Path, label: str):
    from tokenizers import Tokenizer

    try:
        return Tokenizer.from_file(str(path / TOKENIZER_NAME))
    except Exception as error:  # tokenizers raises its own Exception type for bad JSON
        raise ModelError(
            f"{label}/{TOKENIZER_NAME} cannot be read as a Hugging Face fast tokenizer "
            f"({str(error)[:200]}); it may be truncated. Save it again with "
            f"tokenizer.save_pretrained(). {HINT}") from error


def _check_labels(config: dict, label: str) -> tuple[str, ...]:
    example = 'such as ["O", "B-PER", "I-PER", "B-LOC", "I-LOC"]'
    if "labels" not in config:
        raise ModelError(f"{label}: the config lists no labels. {HINT}")
    labels = config["labels"]
    if not isinstance(labels, list) or not labels:
        raise ModelError(f"{label}: labels must be a list of label names in the model's "
                         f"output order, {example}, not {_short(labels)}")
    for index, name in enumerate(labels):
        if not isinstance(name, str) or not name:
            raise ModelError(f"{label}: labels[{index}] is {_short(name)}; every label must "
                             f"be a name, {example}")
    try:
        read_scheme(tuple(labels))
    except LabelSchemeError as error:
        raise ModelError(
            f"{label}: the label set cannot be decoded ({error}). Larvatus reads BIO, "
            f"IOB1, IO and BIOES/BILOU label names such as B-PER, I-PER, S-PER, O.") from error
    return tuple(labels)


def load_model_spec(model_dir: str | os.PathLike = EMBEDDED_DEFAULT) -> ModelSpec:
    """Reads and checks a model on the launcher, failing loudly with what to do.

    Accepts `embedded:default`, a local directory, or a directory on any Beam
    filesystem (gs://, s3://, hdfs://...; read through `FileSystems` and copied
    into the local model cache). The directory is a Larvatus model directory
    (`larvatus_model.json`, made by `python -m larvatus.models.export`) or a plain ONNX
    token-classification export (`config.json` with `id2label`, `model.onnx`,
    `tokenizer.json`). The spec carries the location as given (a local path
    made absolute), never a path that only the launcher can read.
    """
    location = str(model_dir)
    kind = location_kind(location)
    if kind == "remote":
        local = _fetch_remote_for_launcher(location)
    elif kind == "embedded":
        local = embedded_model_dir()
    else:
        local = Path(location).expanduser().resolve()
        location = str(local)
    label = location if kind != "embedded" else f"{location} ({local})"
    info = _check_directory(local, label)
    spec = ModelSpec(location=location, **info)
    with _LOCK:
        _RESOLVED[(spec.location, spec.sha256)] = str(local)
    return spec


# --- the worker side: find the model's files on this machine, check them, once per process

_LOCK = threading.RLock()
_RESOLVED: dict[tuple[str, str], str] = {}


def cache_root() -> Path:
    """Where remote models are copied: $LARVATUS_CACHE, else ~/.cache/larvatus, else a temp dir."""
    configured = os.environ.get(CACHE_ENV)
    candidates = [Path(configured)] if configured else [
        Path.home() / ".cache" / "larvatus",
        Path(tempfile.gettempdir()) / f"larvatus-cache-{os.getuid() if hasattr(os, 'getuid') else 0}"]
    for candidate in candidates:
        try:
            candidate.mkdir(parents=True, exist_ok=True)
            if os.access(candidate, os.W_OK):
                return candidate
        except OSError:
            continue
    raise ModelError(
        f"on {where()}: no writable model cache ({', '.join(map(str, candidates))}); "
        f"set {CACHE_ENV} to a writable local directory.")


def resolve_model_dir(spec: ModelSpec) -> str:
    """A local directory with the spec's files, their sha256 checked against the launcher's.

    Runs once per process and model (later calls are a dictionary lookup). The
    embedded model is taken from this process's installed package, a local
    path is used where it is, a remote one is copied into the cache under its
    sha256 (several processes may race: each copies into a private folder and
    renames it into place). Raises a ModelError that names this machine and
    says what to change.
    """
    key = (spec.location, spec.sha256)
    with _LOCK:
        if key in _RESOLVED:
            return _RESOLVED[key]
        kind = location_kind(spec.location)
        if kind == "embedded":
            local = embedded_model_dir()
            if not local.is_dir():
                raise ModelError(
                    f"on worker {where()}: the installed Larvatus has no embedded model at "
                    f"{local}; install Larvatus with its package data on the workers (the "
                    f"same --setup_file or container image as the launcher's).")
            _check_sha(spec, local, (
                "this worker's installed Larvatus carries a different embedded model than the "
                "launcher's: install the same Larvatus version on the workers (the same "
                "--setup_file or container image)"))
        elif kind == "local":
            local = Path(spec.location)
            if not local.is_dir():
                raise ModelError(
                    f"on worker {where()}: the model directory {spec.location} (a path on the "
                    f"launcher's disk) does not exist on this worker. Workers on other machines "
                    f"cannot see the launcher's disk: put the model where they can read it "
                    f"(--model gs://bucket/model, s3://..., hdfs://..., or a shared mount at the "
                    f"same path), or use the embedded default model.")
            _check_sha(spec, local, (
                "the files changed after the launcher checked them, or this worker's "
                f"{spec.location} is a different copy: use an immutable, versioned location"))
        else:
            local = _fetch_into_cache(spec.location, spec.files, spec.sha256, side="worker")
        _RESOLVED[key] = str(local)
        return str(local)


def _check_sha(spec: ModelSpec, local: Path, why: str) -> None:
    check_plain_names(spec.files, f"on worker {where()}: model {spec.location}")
    missing = [name for name in spec.files if not (local / name).is_file()]
    if missing:
        raise ModelError(
            f"on worker {where()}: model {spec.location} ({local}) lacks {', '.join(missing)}, "
            f"which the launcher read; {why}.")
    actual = hash_model_files(local, spec.files)
    if actual != spec.sha256:
        raise ModelError(
            f"on worker {where()}: model {spec.location} ({local}) has sha256 {actual[:16]}..., "
            f"but the launcher checked {spec.sha256[:16]}...: {why}.")


def _filesystems():
    from apache_beam.io.filesystems import FileSystems

    return FileSystems


def _uncompressed():
    from apache_beam.io.filesystem import CompressionTypes

    return CompressionTypes.UNCOMPRESSED


def _copy_remote_file(location: str, name: str, target: Path) -> None:
    filesystems = _filesystems()
    with filesystems.open(filesystems.join(location, name),
                          compression_type=_uncompressed()) as source, \
            open(target / name, "wb") as sink:
        shutil.copyfileobj(source, sink, 1 << 20)


def _fetch_into_cache(location: str, names, expected_sha: Optional[str], side: str) -> Path:
    """Copies `names` from a Beam filesystem directory into the cache; returns the folder.

    With `expected_sha` (workers), a complete cached copy is reused and the copy
    must hash to it. Without (the launcher, which does not know the files' hash
    yet), the copy is hashed and filed under its own sha256.
    """
    check_plain_names(names, f"on {side} {where()}: model {location}")
    root = cache_root() / "models"
    root.mkdir(parents=True, exist_ok=True)
    if expected_sha:
        cached = root / expected_sha
        if cached.is_dir() and all((cached / n).is_file() for n in names) and \
                hash_model_files(cached, names) == expected_sha:
            return cached
    staging = root / f".partial-{os.getpid()}-{uuid.uuid4().hex[:8]}"
    staging.mkdir()
    try:
        for name in names:
            try:
                _copy_remote_file(location, name, staging)
            except Exception as error:
                raise ModelError(
                    f"on {side} {where()}: cannot copy {name} from model {location}: "
                    f"{type(error).__name__}: {str(error)[:300]}. "
                    + ("The launcher read it, so this worker lacks access: check the workers' "
                       "credentials, network and filesystem extras (e.g. apache-beam[gcp]) "
                       "or use a location they can read."
                       if side == "worker" else
                       "Check the path, your credentials and that Beam has the filesystem "
                       "(e.g. pip install 'apache-beam[gcp]' for gs://).")) from error
        actual = hash_model_files(staging, names)
        if expected_sha and actual != expected_sha:
            raise ModelError(
                f"on {side} {where()}: model {location} has sha256 {actual[:16]}... now, but "
                f"the launcher checked {expected_sha[:16]}...: the files changed after the job "
                f"started. Rerun it, and keep models at immutable, versioned locations.")
        final = root / actual
        try:
            os.rename(staging, final)
        except OSError:  # another process filed the same files first
            if not (final.is_dir() and hash_model_files(final, names) == actual):
                shutil.rmtree(final, ignore_errors=True)
                os.rename(staging, final)
        return final
    finally:
        shutil.rmtree(staging, ignore_errors=True)


def _fetch_remote_for_launcher(location: str) -> Path:
    """Reads a remote model's config, then copies the files it names into the cache."""
    filesystems = _filesystems()
    try:
        filesystems.get_filesystem(location)
        if filesystems.exists(filesystems.join(location, CONFIG_NAME)):
            config_name = CONFIG_NAME
        elif filesystems.exists(filesystems.join(location, HF_CONFIG_NAME)):
            config_name = HF_CONFIG_NAME
        else:
            raise ModelError(
                f"on the launcher: model directory {location} does not exist or has neither "
                f"{CONFIG_NAME} nor {HF_CONFIG_NAME}. {HINT}")
    except ModelError:
        raise
    except Exception as error:
        raise ModelError(
            f"on the launcher: cannot read model {location}: {type(error).__name__}: "
            f"{str(error)[:300]}. Check the path, your credentials and that Beam has the "
            f"filesystem (e.g. pip install 'apache-beam[gcp]' for gs://).") from error
    try:
        with filesystems.open(filesystems.join(location, config_name),
                              compression_type=_uncompressed()) as handle:
            config = json.loads(handle.read().decode("utf-8"))
    except Exception as error:
        raise ModelError(f"cannot read the model config in {location}: {error}. {HINT}") from error
    onnx = _onnx_names(config) if config_name == CONFIG_NAME else {"cpu": "model.onnx"}
    names = sorted({config_name, TOKENIZER_NAME, *[n for n in onnx.values() if n]})
    check_plain_names(names, f"on the launcher: model {location}")
    missing = [n for n in names if not filesystems.exists(filesystems.join(location, n))]
    if missing:
        raise ModelError(f"{location}: missing {', '.join(missing)}. {HINT}")
    return _fetch_into_cache(location, names, None, side="launcher")
