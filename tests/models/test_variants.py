"""The fp16 GPU variant derived from a dynamic-int8 model: the graph, its tags, the cache and the handler's choice."""
from __future__ import annotations

import logging
import os
from pathlib import Path

import numpy as np
import pytest

from tests.paths import ROOT

onnx = pytest.importorskip("onnx")
import onnxruntime as ort  # noqa: E402

from larvatus.models import variants  # noqa: E402
from larvatus.models.handler import CUDA, CPU, OnnxTokenClassifierHandler  # noqa: E402
from larvatus.models.model_dir import EMBEDDED_DEFAULT, ModelError, load_model_spec  # noqa: E402
from larvatus.models.variant_check import tag_agreement, word_labels, cpu_runner  # noqa: E402
from larvatus.transforms.encode import default_overlap  # noqa: E402

VALID = ROOT.parent / "shared" / "data" / "conll2003" / "valid.txt"
FLOAT, FLOAT16 = 1, 10   # onnx.TensorProto.FLOAT, FLOAT16


@pytest.fixture(scope="module")
def int8_only_dir(rigged_model_dir, tmp_path_factory):
    """The rigged model with only its dynamic int8 graph, for CPU and CUDA alike (as shipped)."""
    import json
    import shutil

    target = tmp_path_factory.mktemp("models") / "rigged-int8"
    shutil.copytree(rigged_model_dir, target)
    config = json.loads((target / "larvatus_model.json").read_text())
    config["onnx"] = {"cpu": "model.int8.onnx", "cuda": "model.int8.onnx"}
    (target / "larvatus_model.json").write_text(json.dumps(config, indent=2))
    (target / "model.fp32.onnx").unlink()
    return target


def _feeds(seed: int = 0, batch: int = 2, length: int = 30) -> dict[str, np.ndarray]:
    rng = np.random.default_rng(seed)
    ids = rng.integers(1000, 20000, size=(batch, length)).astype(np.int64)
    return {"input_ids": ids, "attention_mask": np.ones_like(ids),
            "token_type_ids": rng.integers(0, 3, size=ids.shape).astype(np.int64)}


def _logits(model_or_path, feeds) -> np.ndarray:
    source = model_or_path if isinstance(model_or_path, str) else \
        model_or_path.SerializeToString()
    session = ort.InferenceSession(source, providers=[CPU])
    return session.run(["logits"], feeds)[0]


def test_dequantized_tiny_graph_has_no_quantized_nodes_and_matches_int8(rigged_model_dir):
    int8 = str(rigged_model_dir / "model.int8.onnx")
    model = onnx.load(int8)
    assert variants.is_dynamic_int8(model)
    floated = variants.dequantize_model(model)
    ops = {n.op_type for n in floated.graph.node}
    assert not ops & variants.QUANTIZED_OPS and "MatMul" in ops
    assert not variants.is_dynamic_int8(floated)
    assert variants.is_dynamic_int8(model)   # the input graph is left as it was
    feeds = _feeds()
    expected, got = _logits(int8, feeds), _logits(floated, feeds)
    assert got.shape == expected.shape
    assert np.abs(got - expected).max() < 0.05
    assert (got.argmax(-1) == expected.argmax(-1)).all()


def test_fp16_variant_keeps_float32_inputs_and_outputs_and_stores_fp16_weights(rigged_model_dir):
    half = variants.fp16_from_dynamic_int8(onnx.load(str(rigged_model_dir / "model.int8.onnx")))
    assert all(o.type.tensor_type.elem_type == FLOAT for o in half.graph.output)
    kinds = {i.data_type for i in half.graph.initializer if i.data_type in (FLOAT, FLOAT16)}
    assert kinds == {FLOAT16}
    feeds = _feeds(1)
    expected = _logits(str(rigged_model_dir / "model.int8.onnx"), feeds)
    assert (_logits(half, feeds).argmax(-1) == expected.argmax(-1)).all()


def test_unknown_quantized_construct_is_refused(rigged_model_dir):
    model = onnx.load(str(rigged_model_dir / "model.int8.onnx"))
    integer = next(n for n in model.graph.node if n.op_type == "MatMulInteger")
    integer.op_type = "QLinearMatMul"   # a quantized op the derivation does not know
    with pytest.raises(variants.VariantError, match="QLinearMatMul"):
        variants.dequantize_model(model)


def test_variant_is_derived_once_then_read_from_the_cache(rigged_model_dir, tmp_path, monkeypatch):
    int8 = str(rigged_model_dir / "model.int8.onnx")
    first = variants.cached_fp16(int8, tmp_path)
    assert first.parent == variants.variant_dir(tmp_path, variants.file_sha256(int8))
    made = first.stat().st_mtime_ns

    def refuse(model):
        raise AssertionError("derived again although cached")

    monkeypatch.setattr(variants, "fp16_from_dynamic_int8", refuse)
    assert variants.cached_fp16(int8, tmp_path) == first
    assert first.stat().st_mtime_ns == made
    assert not [p for p in first.parent.iterdir() if p.name.startswith(".")]


def test_damaged_cached_variant_is_derived_again(rigged_model_dir, tmp_path):
    int8 = str(rigged_model_dir / "model.int8.onnx")
    path = variants.cached_fp16(int8, tmp_path)
    good = path.read_bytes()
    path.write_bytes(good[: len(good) // 2])
    assert variants.cached_fp16(int8, tmp_path).read_bytes() == good


def test_cuda_graph_refuses_loudly_when_the_variant_cannot_be_derived(
        rigged_model_dir, tmp_path, monkeypatch):
    int8 = str(rigged_model_dir / "model.int8.onnx")

    def no_sympy(source, cache):
        raise ImportError("No module named 'sympy'")

    monkeypatch.setattr(variants, "cached_fp16", no_sympy)
    with pytest.raises(variants.VariantUnavailable) as refused:
        variants.cuda_graph(int8, True, lambda: tmp_path)
    message = str(refused.value)
    assert "dynamically quantized int8" in message and "No module named 'sympy'" in message
    assert "--device cpu" in message and "--precision fp16,int8" in message


def test_cuda_graph_leaves_a_float_file_alone(rigged_fp32_model_dir):
    fp32 = str(rigged_fp32_model_dir / "model.fp32.onnx")

    def no_cache():
        raise AssertionError("the cache is not needed for a float graph")

    assert variants.cuda_graph(fp32, False, no_cache) == variants.CudaGraph(fp32, False)


class _CudaLooking:
    """A CPU session that reports CUDA, so that the handler's choice of graph can be seen."""

    def __init__(self, path: str):
        self.path = path
        self._session = ort.InferenceSession(path, providers=[CPU])

    def get_providers(self):
        return [CUDA, CPU]

    def __getattr__(self, name):
        return getattr(self._session, name)


def _pretend_cuda(monkeypatch, opened: list):
    monkeypatch.setattr(ort, "get_available_providers", lambda: [CUDA, CPU])

    def session(self, path, providers):
        opened.append(path)
        return _CudaLooking(path)

    monkeypatch.setattr(OnnxTokenClassifierHandler, "_session", session)


def test_handler_runs_the_fp16_variant_of_a_dynamic_int8_model_on_cuda(
        int8_only_dir, tmp_path, monkeypatch, caplog):
    monkeypatch.setenv("LARVATUS_CACHE", str(tmp_path))
    spec = load_model_spec(str(int8_only_dir))
    assert spec.onnx_files["cuda"] == "model.int8.onnx"   # the directory offers no float file
    opened: list = []
    _pretend_cuda(monkeypatch, opened)
    with caplog.at_level(logging.WARNING):
        loaded = OnnxTokenClassifierHandler(spec, device="cuda").load_model()
    assert loaded.device == "cuda" and loaded.windows_per_call is None
    assert opened == [str(variants.cached_fp16(spec.onnx_path("cuda"), tmp_path))]
    assert Path(opened[0]).is_relative_to(tmp_path / variants.VARIANTS_DIR)
    assert loaded.graph_file == opened[0]   # what the benches report as the file that ran
    assert "dynamically quantized" not in caplog.text


def test_handler_refuses_cuda_rather_than_run_the_int8_graph_there(
        int8_only_dir, tmp_path, monkeypatch):
    monkeypatch.setenv("LARVATUS_CACHE", str(tmp_path))
    spec = load_model_spec(str(int8_only_dir))
    opened: list = []
    _pretend_cuda(monkeypatch, opened)

    def no_onnx(source, cache):
        raise ImportError("No module named 'onnx'")

    monkeypatch.setattr(variants, "cached_fp16", no_onnx)
    for device in ("cuda", "auto"):
        monkeypatch.setattr("larvatus.models.handler.cuda_present", lambda: True)
        with pytest.raises(ModelError, match="fp16 GPU variant could not be derived"):
            OnnxTokenClassifierHandler(spec, device=device).load_model()
    assert opened == []          # the int8 graph was not quietly put on the GPU


def test_cpu_keeps_running_the_int8_file(int8_only_dir, tmp_path, monkeypatch):
    monkeypatch.setenv("LARVATUS_CACHE", str(tmp_path))
    spec = load_model_spec(str(int8_only_dir))
    loaded = OnnxTokenClassifierHandler(spec, device="cpu").load_model()
    assert loaded.device == "cpu" and loaded.windows_per_call == 1
    assert loaded.graph_file == spec.onnx_path("cpu")
    assert not (tmp_path / variants.VARIANTS_DIR).exists()


@pytest.mark.slow
@pytest.mark.skipif(not VALID.is_file(), reason="CoNLL-2003 validation data not present")
def test_embedded_model_fp16_variant_tags_words_like_int8(tmp_path):
    """The shipped model: the derived fp16 graph (run on the CPU) agrees with int8 on real text."""
    from larvatus.models.conll import read_documents

    spec = load_model_spec(EMBEDDED_DEFAULT)
    int8 = spec.onnx_path("cuda")
    half = variants.cached_fp16(int8, tmp_path)
    graph = onnx.load(str(half)).graph
    assert not {n.op_type for n in graph.node} & variants.QUANTIZED_OPS
    assert {"Attention", "EmbedLayerNormalization"} <= {n.op_type for n in graph.node}
    assert os.path.getsize(half) < 2.2 * os.path.getsize(int8)   # fp16, not fp32
    tokenizer = spec.load_tokenizer()
    settings = spec.encode_settings(tokenizer, overlap=default_overlap(spec.max_length))
    golds = read_documents(str(VALID))[:6]
    expected = word_labels(golds, tokenizer, settings, cpu_runner(spec, int8, per_window=True))
    got = word_labels(golds, tokenizer, settings, cpu_runner(spec, str(half), per_window=False))
    agreement = tag_agreement(expected, got)
    assert agreement.words > 1000
    assert agreement.rate >= 0.99
