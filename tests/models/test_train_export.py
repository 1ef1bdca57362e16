"""Training, export and evaluation tools on a few dozen sentences and a tiny base model."""
from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from larvatus.models import evaluate, export, train
from larvatus.models.conll import read_documents
from larvatus.models.handler import OnnxTokenClassifierHandler
from larvatus.models.model_dir import load_model_spec
from tests.tiny_model import build_checkpoint

SENTENCES = [
    [("Angela", "B-PER"), ("Merkel", "I-PER"), ("visited", "O"), ("Paris", "B-LOC"), (".", "O")],
    [("Reuters", "B-ORG"), ("reported", "O"), ("from", "O"), ("New", "B-LOC"), ("York", "I-LOC")],
    [("SOCCER", "O"), ("-", "O"), ("JAPAN", "B-LOC"), ("BEAT", "O"), ("SYRIA", "B-LOC")],
    [("The", "O"), ("European", "B-ORG"), ("Commission", "I-ORG"), ("met", "O"),
     ("German", "B-MISC"), ("farmers", "O"), (".", "O")],
]


def write_conll(path: Path, documents: int) -> Path:
    lines = []
    for d in range(documents):
        lines += ["-DOCSTART- O", ""]
        for s in range(6):
            for token, tag in SENTENCES[(d + s) % len(SENTENCES)]:
                lines.append(f"{token} {tag}")
            lines.append("")
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


@pytest.fixture(scope="module")
def tiny_base(tmp_path_factory):
    return build_checkpoint(tmp_path_factory.mktemp("base") / "tiny", rigged=False)


def train_args(tmp_path, base, output, seed=3):
    data = write_conll(tmp_path / "train.txt", 8)
    return ["--train", str(data), "--valid", str(data), "--output", str(output),
            "--base", str(base), "--epochs", "2", "--batch-size", "4", "--max-length", "32",
            "--overlap", "8", "--seed", str(seed), "--lr", "1e-3", "--log-every", "1"]


@pytest.mark.slow
def test_train_export_evaluate_round_trip(tmp_path, tiny_base, capsys):
    checkpoint = tmp_path / "ckpt"
    assert train.main(train_args(tmp_path, tiny_base, checkpoint)) == 0
    out = capsys.readouterr().out
    assert "step" in out and "left ~" in out and "validation micro-F1" in out
    meta = json.loads((checkpoint / "training.json").read_text())
    assert meta["labels"] == ["O", "B-LOC", "I-LOC", "B-MISC", "I-MISC", "B-ORG", "I-ORG",
                              "B-PER", "I-PER"]
    assert meta["best_epoch"] in (1, 2) and meta["casing_type_ids"] is True

    model_dir = tmp_path / "model"
    # A model trained for a few steps has near-tied logits: int8 may flip a few argmaxes.
    meta = export.export(str(checkpoint), str(model_dir), ["fp32", "int8"], optimize=True,
                         max_disagreement=0.05)
    assert meta["max_length"] == 32 and meta["type_ids"] == "casing"
    assert meta["parity"]["fp32"]["max_logit_diff"] < 1e-3
    assert meta["parity"]["fp32"]["argmax_disagreement"] == 0
    spec = load_model_spec(model_dir)
    assert spec.onnx_files == {"cpu": "model.int8.onnx", "cuda": "model.fp32.onnx"}
    assert (model_dir / "README.md").exists()

    report = tmp_path / "eval.json"
    assert evaluate.main(["--model", str(model_dir), "--data", str(tmp_path / "train.txt"),
                          "--text-level", "--json", str(report), "--compare", str(model_dir),
                          "--samples", "50"]) == 0
    result = json.loads(report.read_text())
    assert set(result["scores"]) >= {"micro"}
    assert result["f1_difference"] == 0.0


def test_training_is_deterministic_for_a_seed(tmp_path, tiny_base):
    first, second = tmp_path / "a", tmp_path / "b"
    (tmp_path / "x").mkdir()
    train.main(train_args(tmp_path / "x", tiny_base, first, seed=5))
    train.main(train_args(tmp_path / "x", tiny_base, second, seed=5))
    from safetensors.numpy import load_file

    a = load_file(str(first / "model.safetensors"))
    b = load_file(str(second / "model.safetensors"))
    assert a.keys() == b.keys()
    for key in a:
        np.testing.assert_array_equal(a[key], b[key])


def test_training_windows_label_first_pieces_only(tmp_path, tiny_base):
    from transformers import AutoTokenizer
    from tokenizers import Tokenizer
    from larvatus.transforms.encode import EncodeSettings

    docs = read_documents(write_conll(tmp_path / "t.txt", 2))
    hf = AutoTokenizer.from_pretrained(str(tiny_base))
    tokenizer = Tokenizer.from_str(hf.backend_tokenizer.to_str())
    tokenizer.no_truncation()
    tokenizer.no_padding()
    settings = EncodeSettings(16, 4, hf.cls_token_id, hf.sep_token_id, "casing")
    labels = train.label_set(docs)
    windows = train.training_windows(docs, tokenizer, settings, {l: i for i, l in enumerate(labels)})
    assert len(windows) > 2
    for tw in windows:
        labelled = tw.labels != train.IGNORE
        assert (labelled == tw.window.first_piece).all()
    first = windows[0]
    names = [labels[i] for i in first.labels[first.window.first_piece]]
    assert names[:5] == ["B-PER", "I-PER", "O", "B-LOC", "O"]


def test_export_refuses_a_checkpoint_whose_onnx_disagrees(tmp_path, tiny_base, monkeypatch):
    from larvatus.models.model_dir import ModelError

    monkeypatch.setattr(export, "parity_check", lambda *a, **k: (5.0, 0.5))
    with pytest.raises(ModelError, match="disagrees with PyTorch"):
        export.export(str(tiny_base), str(tmp_path / "m"), ["fp32"], optimize=False)


def test_default_base_is_the_packaged_minilm():
    base = Path(train.default_base())
    config = json.loads((base / "config.json").read_text())
    assert config["hidden_size"] == 384 and config["num_hidden_layers"] == 6
    assert config["vocab_size"] == 30522


@pytest.mark.slow
def test_static_int8_gives_each_window_the_same_logits_whatever_its_batch(tmp_path):
    """Calibrated (QDQ) int8 fixes activation scales: a window's output does not depend on
    the other windows of its batch, which dynamic int8 cannot promise."""
    import onnxruntime as ort

    from larvatus.models.batching import pad_batch
    from larvatus.transforms.records import Window

    checkpoint = build_checkpoint(tmp_path / "ck", rigged=False)
    data = str(write_conll(tmp_path / "calibration.txt", 6))
    export.export(str(checkpoint), str(tmp_path / "m"), ["int8-static"], optimize=False,
           calibration_data=data, calibration_documents=3, max_disagreement=1.0)
    session = ort.InferenceSession(str(tmp_path / "m" / "model.int8-static.onnx"),
                                   providers=["CPUExecutionProvider"])
    names = {i.name for i in session.get_inputs()}
    feeds = export.calibration_feeds(data, str(tmp_path / "m" / "tokenizer.json"), "casing", 64, 2)
    windows = feeds[:6]
    assert len(windows) >= 2
    alone = [session.run(None, {k: v for k, v in f.items() if k in names})[0][0] for f in windows]

    def unpad(feed):
        n = int(feed["attention_mask"].sum())
        return {k: v[0, :n] for k, v in feed.items()}

    as_windows = [Window(f["input_ids"], f["token_type_ids"], np.zeros_like(f["input_ids"]),
                         np.ones_like(f["input_ids"], dtype=bool), 0)
                  for f in map(unpad, windows)]
    batch = pad_batch(as_windows)
    together = session.run(None, {k: v for k, v in batch.items() if k in names})[0]
    for row, logits in enumerate(alone):
        np.testing.assert_array_equal(together[row, :logits.shape[0]], logits)
