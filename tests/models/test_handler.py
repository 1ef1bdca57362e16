"""The ONNX ModelHandler and model directory checks, on tiny exported models."""
from __future__ import annotations

import json
import shutil

import numpy as np
import pytest

from larvatus.models import handler as handler_lib
from larvatus.models.batching import pad_batch, plan_batches
from larvatus.models.handler import OnnxTokenClassifierHandler
from larvatus.models.model_dir import ModelError, load_model_spec
from larvatus.transforms.encode import encode
from larvatus.transforms.records import Document, InferenceFailure
from larvatus.transforms.segment import segment


def encode_text(spec, text, overlap=4, max_length=None):
    tokenizer = spec.load_tokenizer()
    settings = spec.encode_settings(tokenizer, overlap=overlap, max_length=max_length)
    return encode(segment(Document("d", text, "d")), tokenizer, settings)


def test_plan_batches_respects_padded_budget_and_covers_everything():
    lengths = [5, 100, 37, 64, 64, 3, 250, 12, 90]
    batches = plan_batches(lengths, 256)
    assert sorted(i for b in batches for i in b) == list(range(len(lengths)))
    for batch in batches:
        padded = max(lengths[i] for i in batch) * len(batch)
        assert padded <= 256 or len(batch) == 1


def test_plan_batches_gives_an_oversized_window_its_own_batch():
    assert plan_batches([300, 10], 256) == [[0], [1]]


def test_pad_batch_pads_to_longest_with_mask(rigged_model_dir):
    spec = load_model_spec(rigged_model_dir)
    a = encode_text(spec, "Hello there").windows[0]
    b = encode_text(spec, "A much longer sentence with several more words in it").windows[0]
    feeds = pad_batch([a, b])
    assert feeds["input_ids"].shape == (2, len(b))
    assert feeds["attention_mask"][0].tolist() == [1] * len(a) + [0] * (len(b) - len(a))
    assert feeds["input_ids"][0, len(a):].tolist() == [0] * (len(b) - len(a))


def test_handler_tags_every_window_of_a_long_document(rigged_model_dir):
    spec = load_model_spec(rigged_model_dir)
    text = " ".join(["the cat sat on the mat"] * 60 + ["Angela Merkel"])
    encoded = encode_text(spec, text)
    assert len(encoded.windows) > 5
    handler = OnnxTokenClassifierHandler(spec, device="cpu", batch_tokens=128)
    model = handler.load_model()
    assert model.device == "cpu"
    (result,) = list(handler.run_inference([encoded], model))
    assert result.example is encoded
    assert len(result.inference) == len(encoded.windows)
    for window, probs in zip(encoded.windows, result.inference):
        assert probs.shape == (len(window) - 2, len(spec.labels))
        np.testing.assert_allclose(probs.sum(axis=1), 1.0, rtol=1e-5)
    last = result.inference[-1]
    labels = [spec.labels[i] for i in last.argmax(axis=1)]
    assert labels[-3:] == ["I-PER"] * 3 or labels[-2:] == ["I-PER"] * 2


def test_batching_does_not_change_predictions(rigged_model_dir):
    spec = load_model_spec(rigged_model_dir)
    docs = [encode_text(spec, t) for t in (
        "Short one.", "Paris and London are cities in EUROPE " * 20, "Zoë went 👍🏽 home.")]
    handler = OnnxTokenClassifierHandler(spec, device="cpu", batch_tokens=64)
    model = handler.load_model()
    together = list(handler.run_inference(docs, model))
    for doc, joint in zip(docs, together):
        (alone,) = list(handler.run_inference([doc], model))
        for a, b in zip(alone.inference, joint.inference):
            np.testing.assert_allclose(a, b, atol=1e-5)


def test_a_failing_document_does_not_take_its_batch_down(rigged_model_dir, monkeypatch):
    spec = load_model_spec(rigged_model_dir)
    good = encode_text(spec, "Angela Merkel spoke.")
    bad = encode_text(spec, "Another text here.")
    handler = OnnxTokenClassifierHandler(spec, device="cpu")
    model = handler.load_model()
    real_run = handler.run_windows

    def flaky(loaded, windows):
        if any(w is bad.windows[0] for w in windows):
            raise RuntimeError("boom")
        return real_run(loaded, windows)

    monkeypatch.setattr(handler, "run_windows", flaky)
    results = list(handler.run_inference([good, bad], model))
    assert isinstance(results[1].inference, InferenceFailure)
    assert isinstance(results[0].inference, list)


def test_cuda_requested_without_cuda_fails_loudly(rigged_model_dir, monkeypatch):
    import onnxruntime as ort

    monkeypatch.setattr(ort, "get_available_providers", lambda: ["CPUExecutionProvider"])
    spec = load_model_spec(rigged_model_dir)
    with pytest.raises(ModelError, match="--device cpu"):
        OnnxTokenClassifierHandler(spec, device="cuda").load_model()


def test_auto_falls_back_to_cpu_when_cuda_cannot_start(rigged_model_dir, monkeypatch):
    """The CUDA path is tried (as on a GPU machine) and the CPU takes over when it fails."""
    import onnxruntime as ort

    tried = []
    real_session = OnnxTokenClassifierHandler._session

    def session(self, path, providers):
        tried.append(providers)
        if handler_lib.CUDA in providers:
            return real_session(self, path, [handler_lib.CPU])  # CUDA silently unavailable
        return real_session(self, path, providers)

    monkeypatch.setattr(handler_lib, "cuda_present", lambda: True)
    monkeypatch.setattr(ort, "get_available_providers",
                        lambda: [handler_lib.CUDA, handler_lib.CPU])
    monkeypatch.setattr(OnnxTokenClassifierHandler, "_session", session)
    spec = load_model_spec(rigged_model_dir)
    model = OnnxTokenClassifierHandler(spec, device="auto").load_model()
    assert model.device == "cpu"
    assert tried == [[handler_lib.CUDA, handler_lib.CPU], [handler_lib.CPU]]
    assert model.batch_tokens == handler_lib.CPU_BATCH_TOKENS


def test_model_spec_prefers_int8_on_cpu(rigged_model_dir):
    spec = load_model_spec(rigged_model_dir)
    assert spec.onnx_files["cpu"] == "model.int8.onnx"
    assert spec.onnx_files["cuda"] == "model.fp32.onnx"
    assert spec.type_ids == "casing"
    assert spec.scheme.scheme == "BIO"
    assert len(spec.sha256) == 64


def copy_model(src, tmp_path):
    dst = tmp_path / "model"
    shutil.copytree(src, dst)
    return dst


def test_missing_model_directory_says_what_to_do(tmp_path):
    with pytest.raises(ModelError, match="does not exist.*larvatus.models.export"):
        load_model_spec(tmp_path / "nope")


def test_missing_tokenizer_fails(rigged_model_dir, tmp_path):
    model = copy_model(rigged_model_dir, tmp_path)
    (model / "tokenizer.json").unlink()
    with pytest.raises(ModelError, match="tokenizer.json"):
        load_model_spec(model)


def test_undecodable_label_set_fails(rigged_model_dir, tmp_path):
    model = copy_model(rigged_model_dir, tmp_path)
    config = json.loads((model / "larvatus_model.json").read_text())
    config["labels"] = ["O", "X-PER-?", "B-LOC"] + config["labels"][3:]
    (model / "larvatus_model.json").write_text(json.dumps(config))
    with pytest.raises(ModelError, match="label set cannot be decoded"):
        load_model_spec(model)


def test_corrupt_onnx_file_fails_at_load(rigged_model_dir, tmp_path):
    model = copy_model(rigged_model_dir, tmp_path)
    (model / "model.int8.onnx").write_bytes(b"not a model")
    spec = load_model_spec(model)
    with pytest.raises(ModelError, match="cannot load"):
        OnnxTokenClassifierHandler(spec, device="cpu").load_model()


def test_label_count_mismatch_fails(rigged_model_dir, tmp_path):
    model = copy_model(rigged_model_dir, tmp_path)
    config = json.loads((model / "larvatus_model.json").read_text())
    config["labels"] = config["labels"][:5]
    (model / "larvatus_model.json").write_text(json.dumps(config))
    with pytest.raises(ModelError, match="predicts 9 labels"):
        OnnxTokenClassifierHandler(load_model_spec(model), device="cpu").load_model()


def test_plain_hugging_face_export_directory_is_accepted(rigged_model_dir, tmp_path):
    hf = tmp_path / "hf"
    hf.mkdir()
    shutil.copy(rigged_model_dir / "model.fp32.onnx", hf / "model.onnx")
    shutil.copy(rigged_model_dir / "tokenizer.json", hf / "tokenizer.json")
    labels = json.loads((rigged_model_dir / "larvatus_model.json").read_text())["labels"]
    (hf / "config.json").write_text(json.dumps(
        {"id2label": {str(i): l for i, l in enumerate(labels)}, "max_position_embeddings": 64}))
    spec = load_model_spec(hf)
    assert spec.labels == tuple(labels) and spec.max_length == 64
    assert spec.type_ids == "zeros"
    assert OnnxTokenClassifierHandler(spec, device="cpu").load_model().num_labels == 9


def test_io_binding_path_gives_the_same_logits(rigged_model_dir):
    """The CUDA path binds inputs and outputs; on CPU the same code must agree with run()."""
    spec = load_model_spec(rigged_model_dir)
    model = OnnxTokenClassifierHandler(spec, device="cpu").load_model()
    windows = [encode_text(spec, t).windows[0] for t in ("Ada met Bob.", "NATO is here now")]
    feeds = pad_batch(windows)
    plain = model.run(feeds)
    model.io_binding = True
    np.testing.assert_allclose(model.run(feeds), plain, rtol=1e-6)


def test_plan_batches_can_put_every_window_alone():
    assert plan_batches([10, 20, 30], 1024, max_windows=1) == [[2], [1], [0]]
    assert plan_batches([10, 20, 30], 1024, max_windows=2) == [[2, 1], [0]]


def test_dynamic_int8_runs_one_window_a_call_so_batch_mates_do_not_matter(rigged_model_dir):
    spec = load_model_spec(rigged_model_dir)
    assert spec.onnx_files["cpu"] in spec.batch_dependent_files
    loaded = OnnxTokenClassifierHandler(spec, device="cpu").load_model()
    assert loaded.windows_per_call == 1
    calls = []
    original = loaded.run
    loaded.run = lambda feeds: calls.append(feeds["input_ids"].shape[0]) or original(feeds)
    windows = [w for text in ("Ada met Bob.", "Zoë went to PARIS today.", "Hi")
               for w in encode(segment(Document("d", text, "s")), spec.load_tokenizer(),
                               spec.encode_settings(spec.load_tokenizer(), 8)).windows]
    together = loaded.predict(windows)
    assert set(calls) == {1}
    alone = [loaded.predict([w])[0] for w in windows]
    for a, b in zip(together, alone):
        np.testing.assert_array_equal(a, b)
