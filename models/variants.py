"""GPU variant of a dynamically quantized model: its int8 graph dequantized to float, in fp16, derived once and cached."""
from __future__ import annotations

import hashlib
import json
import logging
import os
import uuid
from dataclasses import dataclass
from pathlib import Path
from typing import Optional

import numpy as np

from larvatus.models.model_dir import ModelError

LOG = logging.getLogger(__name__)
MS_DOMAIN = "com.microsoft"
# Bumped whenever the derivation changes, so that a cached variant is never reused across versions.
DERIVATION_VERSION = "1"
VARIANTS_DIR = "variants"
FP16_NAME = "model.fp16.onnx"
MANIFEST_NAME = "variant.json"


class VariantError(RuntimeError):
    """The graph holds a quantized construct this module cannot turn back into float."""


@dataclass(frozen=True)
class CudaGraph:
    """The ONNX file to run on CUDA, whether its rows depend on batch mates, and why it was chosen."""

    path: str
    batch_dependent: bool
    note: str = ""


# --- pure graph rewriting (onnx.ModelProto in, onnx.ModelProto out)


def _dequantize(quantized: np.ndarray, scale: np.ndarray, zero_point: Optional[np.ndarray],
                axis: int = -1) -> np.ndarray:
    """(q - zero_point) * scale in float32; a 1-d scale or zero point runs along `axis`."""
    values = quantized.astype(np.float32)
    shape = [1] * values.ndim
    if scale.ndim == 1 and values.ndim > 1:
        shape[axis] = scale.shape[0]
    zero = 0.0 if zero_point is None else zero_point.astype(np.float32).reshape(
        shape if zero_point.ndim == 1 and values.ndim > 1 else zero_point.shape)
    return ((values - zero) * scale.astype(np.float32).reshape(
        shape if scale.ndim == 1 and values.ndim > 1 else scale.shape)).astype(np.float32)


class _Graph:
    """Index of one graph: producers, consumers and initializers by name."""

    def __init__(self, model):
        from onnx import numpy_helper

        self.graph = model.graph
        self.inits = {i.name: i for i in model.graph.initializer}
        self.producer = {out: node for node in model.graph.node for out in node.output}
        self.consumers: dict[str, list] = {}
        for node in model.graph.node:
            for name in node.input:
                self.consumers.setdefault(name, []).append(node)
        self._to_array = numpy_helper.to_array

    def array(self, name: str) -> np.ndarray:
        if name not in self.inits:
            raise VariantError(f"{name!r} is not a constant weight")
        return self._to_array(self.inits[name])

    def only_consumer(self, name: str, op_type: str):
        users = self.consumers.get(name, [])
        if len(users) != 1 or users[0].op_type != op_type:
            raise VariantError(f"{name!r} feeds {[u.op_type for u in users]}, not one {op_type}")
        return users[0]

    def float_source(self, quantized_name: str) -> str:
        """The float tensor a DynamicQuantizeLinear turned into `quantized_name`."""
        node = self.producer.get(quantized_name)
        if node is None or node.op_type != "DynamicQuantizeLinear":
            raise VariantError(f"{quantized_name!r} does not come from DynamicQuantizeLinear")
        return node.input[0]


def _float_initializer(name: str, values: np.ndarray):
    from onnx import numpy_helper

    return numpy_helper.from_array(values.astype(np.float32), name)


def _matmul_integer(index: _Graph, node, new_inits: list):
    """MatMulInteger -> Cast -> Mul(scales) as one float MatMul on the dequantized weight."""
    from onnx import helper

    cast = index.only_consumer(node.output[0], "Cast")
    scaled = index.only_consumer(cast.output[0], "Mul")
    scales = index.producer[[n for n in scaled.input if n != cast.output[0]][0]]
    weight_scale = [n for n in scales.input if n in index.inits][0]
    zero_point = index.array(node.input[3]) if len(node.input) > 3 and node.input[3] else None
    weight = _dequantize(index.array(node.input[1]), index.array(weight_scale), zero_point)
    name = node.input[1] + "_dequantized"
    new_inits.append(_float_initializer(name, weight))
    return {node.output[0], cast.output[0], scaled.output[0]}, helper.make_node(
        "MatMul", [index.float_source(node.input[0]), name], [scaled.output[0]],
        name=node.name + "_float")


def _qattention(index: _Graph, node, new_inits: list):
    """QAttention -> Attention on the dequantized QKV weight (attributes kept)."""
    from onnx import helper

    inputs = list(node.input) + [""] * (9 - len(node.input))
    zero_point = index.array(inputs[7]) if inputs[7] else None
    weight = _dequantize(index.array(inputs[1]), index.array(inputs[4]), zero_point)
    name = inputs[1] + "_dequantized"
    new_inits.append(_float_initializer(name, weight))
    attention_inputs = [index.float_source(inputs[0]), name, inputs[2], inputs[5], inputs[8]]
    while attention_inputs and not attention_inputs[-1]:
        attention_inputs.pop()
    replacement = helper.make_node("Attention", attention_inputs, list(node.output),
                                   name=node.name + "_float", domain=MS_DOMAIN)
    replacement.attribute.extend(node.attribute)
    return {node.output[0]}, replacement


def _qembed_layer_norm(index: _Graph, node, new_inits: list):
    """QEmbedLayerNormalization -> EmbedLayerNormalization on dequantized tables and norms."""
    from onnx import helper

    # inputs: ids, segment ids, 5 quantized tensors, mask, 5 scales, 5 zero points
    floats = []
    for k in range(5):
        quantized, scale, zero = node.input[2 + k], node.input[8 + k], node.input[13 + k]
        name = quantized + "_dequantized"
        new_inits.append(_float_initializer(name, _dequantize(
            index.array(quantized), index.array(scale), index.array(zero))))
        floats.append(name)
    replacement = helper.make_node(
        "EmbedLayerNormalization", [node.input[0], node.input[1], *floats, node.input[7]],
        list(node.output), name=node.name + "_float", domain=MS_DOMAIN)
    replacement.attribute.extend(node.attribute)
    return {node.output[0]}, replacement


def _dequantize_linear(index: _Graph, node, new_inits: list):
    """DequantizeLinear of a constant, or of a Gather from a constant table: the float constant or table."""
    from onnx import helper

    axis = next((helper.get_attribute_value(a) for a in node.attribute if a.name == "axis"), 1)
    zero_point = index.array(node.input[2]) if len(node.input) > 2 and node.input[2] else None
    scale = index.array(node.input[1])
    if node.input[0] in index.inits:
        new_inits.append(_float_initializer(node.output[0], _dequantize(
            index.array(node.input[0]), scale, zero_point, axis)))
        return {node.output[0]}, None
    gather = index.producer.get(node.input[0])
    if gather is None or gather.op_type != "Gather" or gather.input[0] not in index.inits \
            or scale.ndim != 0:
        raise VariantError(f"DequantizeLinear {node.name!r} reads neither a constant nor a "
                           f"per-tensor quantized table")
    name = gather.input[0] + "_dequantized"
    new_inits.append(_float_initializer(name, _dequantize(
        index.array(gather.input[0]), scale, zero_point)))
    replacement = helper.make_node("Gather", [name, gather.input[1]], list(node.output),
                                   name=gather.name + "_float")
    replacement.attribute.extend(gather.attribute)
    return {node.output[0]}, replacement


REWRITES = {"DequantizeLinear": _dequantize_linear, "MatMulInteger": _matmul_integer, "QAttention": _qattention,
            "QEmbedLayerNormalization": _qembed_layer_norm}
QUANTIZED_OPS = frozenset(REWRITES) | {"DynamicQuantizeLinear", "QuantizeLinear",
                                       "QLinearMatMul", "QGemm",
                                       "DynamicQuantizeMatMul", "MatMulIntegerToFloat"}


def is_dynamic_int8(model) -> bool:
    """Whether the graph quantizes its activations at run time (ONNX Runtime's quantize_dynamic)."""
    return any(node.op_type == "DynamicQuantizeLinear" for node in model.graph.node)


def dequantize_model(model):
    """The float32 graph that a dynamically quantized model approximates.

    Each MatMulInteger (with its Cast and scale Mul), QAttention and
    QEmbedLayerNormalization becomes MatMul, Attention and EmbedLayerNormalization,
    and a DequantizeLinear of a constant (or of a Gather from a quantized table) a
    float constant (or a Gather from the float table), on weights dequantized exactly as the int8 kernels read them ((q - zero point) x
    scale); activations stay float, the DynamicQuantizeLinear nodes go. Raises
    VariantError for any other quantized construct. The input model is not modified.
    """
    from onnx import ModelProto

    result = ModelProto()
    result.CopyFrom(model)
    index = _Graph(result)
    replaced: set[str] = set()   # nodes by their first output's name
    replacements: dict[str, object] = {}
    new_inits: list = []
    for node in result.graph.node:
        rewrite = REWRITES.get(node.op_type)
        if rewrite is not None:
            gone, new = rewrite(index, node, new_inits)
            replaced |= gone
            if new is not None:
                replacements[node.output[0]] = new
    nodes = [replacements.get(n.output[0], n) for n in result.graph.node
             if n.output[0] not in replaced or n.output[0] in replacements]
    del result.graph.node[:]
    result.graph.node.extend(_live_nodes(nodes, {o.name for o in result.graph.output}))
    left = sorted({n.op_type for n in result.graph.node} & QUANTIZED_OPS)
    if left:
        raise VariantError(f"quantized nodes left that cannot be turned back into float: {left}")
    used = {name for node in result.graph.node for name in node.input}
    kept = [i for i in result.graph.initializer if i.name in used] + new_inits
    del result.graph.initializer[:]
    result.graph.initializer.extend(kept)
    return result


def _live_nodes(nodes: list, outputs: set[str]) -> list:
    """The nodes whose results reach a graph output (in their original order)."""
    needed, live = set(outputs), set()
    for node in reversed(nodes):
        if any(out in needed for out in node.output):
            live.add(id(node))
            needed.update(name for name in node.input if name)
    return [n for n in nodes if id(n) in live]


def to_fp16(model):
    """The float32 graph in fp16, inputs and outputs kept in their types (ONNX Runtime's converter)."""
    from onnxruntime.transformers.onnx_model import OnnxModel

    wrapped = OnnxModel(model)
    wrapped.convert_float_to_float16(keep_io_types=True)
    return wrapped.model


def fp16_from_dynamic_int8(model):
    """The fp16 GPU graph of a dynamically quantized model (dequantize, then fp16)."""
    return to_fp16(dequantize_model(model))


# --- the cache: derived once per source file, shared by every process on the machine


def file_sha256(path: str | os.PathLike) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def variant_dir(cache: Path, source_sha256: str) -> Path:
    """Where the variant of the source file with this sha256 lives in the cache."""
    return cache / VARIANTS_DIR / f"{source_sha256}-v{DERIVATION_VERSION}"


def cached_fp16(source: str | os.PathLike, cache: Path) -> Path:
    """The fp16 variant of a dynamic-int8 ONNX file, derived on first use and cached.

    The cache folder is named after the source's sha256 and the derivation
    version; its manifest records the variant's own sha256, checked on every
    use (a damaged file is derived again). Processes racing to derive it each
    write a private file and rename it into place.
    """
    folder = variant_dir(cache, file_sha256(source))
    target, manifest = folder / FP16_NAME, folder / MANIFEST_NAME
    if target.is_file() and manifest.is_file():
        try:
            recorded = json.loads(manifest.read_text(encoding="utf-8")).get("sha256")
        except (OSError, ValueError):
            recorded = None
        if recorded == file_sha256(target):
            return target
        LOG.warning("the cached GPU variant in %s is damaged; deriving it again", folder)
    import onnx

    LOG.info("deriving the fp16 GPU variant of %s into %s (once per machine)",
             os.path.basename(source), folder)
    derived = fp16_from_dynamic_int8(onnx.load(str(source)))
    folder.mkdir(parents=True, exist_ok=True)
    private = folder / f".{uuid.uuid4().hex}.tmp"
    onnx.save(derived, str(private))
    note = {"sha256": file_sha256(private), "source_sha256": folder.name.rsplit("-v", 1)[0],
            "derivation": DERIVATION_VERSION, "precision": "fp16",
            "from": "dynamic int8, dequantized"}
    private_manifest = folder / f".{uuid.uuid4().hex}.json"
    private_manifest.write_text(json.dumps(note, indent=2), encoding="utf-8")
    os.replace(private, target)
    os.replace(private_manifest, manifest)
    return target


class VariantUnavailable(ModelError):
    """A dynamic-int8 file meant for CUDA whose fp16 variant cannot be derived on this machine."""


def cuda_graph(onnx_path: str, batch_dependent: bool, cache_dir) -> CudaGraph:
    """The graph to run on CUDA for a model's CUDA file.

    A dynamically quantized file (its quantization runs on the CPU, with a copy
    to and from the GPU around every layer) is replaced by its cached fp16
    variant; when that cannot be derived here, VariantUnavailable says why and
    what to do (never a quiet fall-back to the int8 graph, many times slower on
    a GPU). `cache_dir` is called only when needed.
    """
    if not batch_dependent:
        return CudaGraph(onnx_path, False)
    try:
        path = cached_fp16(onnx_path, cache_dir())
    except ImportError as error:
        why = (f"a package it needs is missing ({error}); reinstall Larvatus with its "
               f"dependencies (onnx and sympy are among them)")
    except Exception as error:  # VariantError, a foreign graph, a full disk
        why = f"{type(error).__name__}: {str(error)[:300]}"
    else:
        return CudaGraph(str(path), False, f"fp16 variant derived from {os.path.basename(onnx_path)}")
    raise VariantUnavailable(
        f"{os.path.basename(onnx_path)} is a dynamically quantized int8 graph, which ONNX "
        f"Runtime runs on the CPU even under CUDA (with copies to and from the GPU around "
        f"every layer), and its fp16 GPU variant could not be derived: {why}. Export an "
        f"fp16 file for CUDA (`python -m larvatus.models.export --precision fp16,int8`) or "
        f"run with --device cpu.")
