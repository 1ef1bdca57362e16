"""Export a Hugging Face token-classification checkpoint to a Larvatus ONNX model directory."""
from __future__ import annotations

import json
import shutil
import sys
import tempfile
from pathlib import Path
from typing import Sequence

import numpy as np

from larvatus.models.command_line import ArgumentParser, existing_dir, existing_file, parse_or_report
from larvatus.models.model_dir import CONFIG_NAME, TOKENIZER_NAME, ModelError, load_model_spec
from larvatus.transforms.labels import read_scheme
from larvatus.transforms.encode import TYPE_IDS_ZEROS

# int8: dynamic quantization (activation scales computed per batch: a window's tags can
# depend on its batch mates); int8-static: calibrated QDQ quantization (fixed scales:
# a window's tags depend on the window alone).
PRECISIONS = ("fp32", "fp16", "int8", "int8-static")
# Which shipped precision each device prefers, best first.
DEVICE_PREFERENCE = {"cpu": ("int8-static", "int8", "fp32", "fp16"),
                     "cuda": ("fp16", "fp32", "int8-static", "int8")}
CALIBRATION_DOCUMENTS = 64
# Extra graph outputs holding hidden states for --emit-embeddings, by layer choice: fetched
# only when asked (ONNX Runtime runs only the nodes a fetched output needs).
HIDDEN_OUTPUTS = {"last": "hidden_last", "second_to_last": "hidden_second_to_last",
                  "sum_last_four": "hidden_sum_last_four"}
PARITY_SENTENCES = [
    "Angela Merkel met Emmanuel Macron in Paris on Tuesday .",
    "SOCCER - JAPAN GET LUCKY WIN , CHINA IN SURPRISE DEFEAT .",
    "Shares of Apple Inc. fell 3 percent after the report from Reuters in New York .",
    "The European Commission said on Thursday it disagreed with German advice .",
    "Zoë Ødegård flew from São Paulo to Zürich with Lufthansa .",
    "Peter Blackburn BRUSSELS 1996-08-22 The European Commission said on Thursday .",
    "Germany 's representative to the European Union 's veterinary committee Werner Zwingmann said .",
    "The International Monetary Fund ( IMF ) approved a loan to Zambia on Monday .",
    "Manchester United beat Arsenal 2-1 at Old Trafford in the Premier League .",
    "Microsoft and Google said the European Court of Justice would rule next year .",
    "Prime Minister Kenji Watanabe told NHK that Tokyo would not change course .",
    "Results of the Wimbledon tennis championships : Pete Sampras ( U.S. ) beat Tim Henman ( Britain ) .",
    "He said the United Nations Security Council would meet in Geneva on Friday .",
    "Dr. Amina Okafor of the University of Lagos led the study , published in Nature .",
    "Police in Nairobi arrested two men after a robbery at a Barclays branch .",
    "BASEBALL - MAJOR LEAGUE RESULTS THURSDAY NEW YORK 1996-08-29",
    "The Dow Jones industrial average rose 40 points as Exxon and General Motors gained .",
    "Chancellor Helmut Kohl met French President Jacques Chirac in Bonn .",
    "Shares in Siemens AG fell in Frankfurt after the company cut its forecast .",
    "Ingrid Solberg-Lie , a fisheries scientist in Tromsø , said the quota was too high .",
]


def onnx_file_name(precision: str) -> str:
    return f"model.{precision}.onnx"


def _with_hidden_states(model):
    """Wraps a token classifier so that its graph also returns the hidden states of `HIDDEN_OUTPUTS`.

    `sum_last_four` sums the last four layers' outputs (for a model of fewer layers, every
    hidden state it has, the embeddings' output included).
    """
    import torch

    class WithHiddenStates(torch.nn.Module):
        def __init__(self, inner):
            super().__init__()
            self.inner = inner

        def forward(self, input_ids, attention_mask, token_type_ids=None):
            kwargs = {"input_ids": input_ids, "attention_mask": attention_mask}
            if token_type_ids is not None:
                kwargs["token_type_ids"] = token_type_ids
            out = self.inner(**kwargs, output_hidden_states=True)
            hidden = out.hidden_states
            last_four = hidden[-4:]
            summed = last_four[0]
            for layer in last_four[1:]:
                summed = summed + layer
            return out.logits, hidden[-1], hidden[-2], summed

    # In eval mode: torch.onnx.export restores the wrapper's mode afterwards, and a wrapper
    # left in training mode would put the checkpoint into it too (dropout in the parity check).
    return WithHiddenStates(model).eval()


def _export_fp32(model, path: Path, with_type_ids: bool, hidden_states: bool = True) -> None:
    import torch

    example = {
        "input_ids": torch.ones(2, 16, dtype=torch.long),
        "attention_mask": torch.ones(2, 16, dtype=torch.long),
    }
    if with_type_ids:
        example["token_type_ids"] = torch.zeros(2, 16, dtype=torch.long)
    names = list(example)
    axes = {name: {0: "batch", 1: "sequence"} for name in names}
    outputs = ["logits"] + (list(HIDDEN_OUTPUTS.values()) if hidden_states else [])
    for output in outputs:
        axes[output] = {0: "batch", 1: "sequence"}
    model.eval()
    module = _with_hidden_states(model) if hidden_states else model
    with torch.no_grad():
        torch.onnx.export(
            module, tuple(example.values()), str(path), input_names=names,
            output_names=outputs, dynamic_axes=axes, opset_version=17, dynamo=False,
            do_constant_folding=True)


def _optimize(source: Path, target: Path, config, fp16: bool, fuse: bool) -> None:
    from onnxruntime.transformers.optimizer import optimize_model

    optimized = optimize_model(
        str(source), model_type="bert", num_heads=config.num_attention_heads,
        hidden_size=config.hidden_size, opt_level=1 if fuse else 0, use_gpu=fp16)
    if fp16:
        optimized.convert_float_to_float16(keep_io_types=True)
    optimized.save_model_to_file(str(target))


def _quantize_int8(source: Path, target: Path) -> None:
    import onnx
    from onnxruntime.quantization import QuantType, quantize_dynamic

    # Fused ops (com.microsoft domain) defeat shape inference; their outputs are float.
    quantize_dynamic(str(source), str(target), weight_type=QuantType.QInt8, per_channel=True,
                     extra_options={"DefaultTensorType": onnx.TensorProto.FLOAT})


def calibration_feeds(conll_path: str, tokenizer_json: str, type_ids: str, max_length: int,
                      documents: int = CALIBRATION_DOCUMENTS, cls_token: str = "[CLS]",
                      sep_token: str = "[SEP]") -> list[dict[str, np.ndarray]]:
    """Model inputs for calibration: CoNLL documents as the pipeline feeds them (raw text,
    pipeline segmentation and windows), one window a feed so that no padding skews the ranges."""
    from tokenizers import Tokenizer

    from larvatus.models.batching import pad_batch
    from larvatus.models.conll import read_documents
    from larvatus.transforms.encode import EncodeSettings, default_overlap, encode_many
    from larvatus.transforms.segment import segment

    tokenizer = Tokenizer.from_file(tokenizer_json)
    tokenizer.no_truncation()
    tokenizer.no_padding()
    settings = EncodeSettings(max_length, default_overlap(max_length),
                              tokenizer.token_to_id(cls_token), tokenizer.token_to_id(sep_token),
                              type_ids)
    golds = read_documents(conll_path)[:documents]
    encoded = encode_many([segment(g.document()) for g in golds], tokenizer, settings)
    return [pad_batch([window]) for doc in encoded for window in doc.windows]


def _quantize_static(source: Path, target: Path, feeds: list[dict[str, np.ndarray]]) -> None:
    import onnx
    from onnxruntime.quantization import (
        CalibrationDataReader, CalibrationMethod, QuantFormat, QuantType, quantize_static,
    )

    names = {i.name for i in onnx.load(str(source), load_external_data=False).graph.input}

    class Reader(CalibrationDataReader):
        def __init__(self):
            self._feeds = iter(feeds)

        def get_next(self):
            feed = next(self._feeds, None)
            return None if feed is None else {k: v for k, v in feed.items() if k in names}

    quantize_static(
        str(source), str(target), Reader(), quant_format=QuantFormat.QDQ,
        op_types_to_quantize=["MatMul", "Gemm"], per_channel=True,
        activation_type=QuantType.QUInt8, weight_type=QuantType.QInt8,
        calibrate_method=CalibrationMethod.MinMax,
        extra_options={"DefaultTensorType": onnx.TensorProto.FLOAT,
                       "ActivationSymmetric": False, "WeightSymmetric": True})


def parity_check(model, tokenizer, onnx_path: Path, type_ids: str, labels: Sequence[str],
                 sentences: Sequence[str] = PARITY_SENTENCES) -> tuple[float, float]:
    """Runs PyTorch and ONNX Runtime on the same sentences.

    Returns (largest absolute logit difference, fraction of tokens whose argmax differs).
    """
    import onnxruntime as ort
    import torch

    from larvatus.transforms.encode import casing_type

    session = ort.InferenceSession(str(onnx_path), providers=["CPUExecutionProvider"])
    feeds_names = {i.name for i in session.get_inputs()}
    largest, disagree, total = 0.0, 0, 0
    for sentence in sentences:
        words = sentence.split()
        encoding = tokenizer(words, is_split_into_words=True, return_tensors="np")
        feeds = {"input_ids": encoding["input_ids"], "attention_mask": encoding["attention_mask"]}
        types = np.zeros_like(encoding["input_ids"])
        if type_ids != TYPE_IDS_ZEROS:
            for pos, word in enumerate(encoding.word_ids(0)):
                if word is not None:
                    types[0, pos] = casing_type(words[word])
        feeds["token_type_ids"] = types
        with torch.no_grad():
            reference = model(**{k: torch.from_numpy(v) for k, v in feeds.items()}).logits.numpy()
        got = session.run(["logits"], {k: v for k, v in feeds.items() if k in feeds_names})[0]
        largest = max(largest, float(np.abs(reference - got.astype(np.float32)).max()))
        disagree += int((reference.argmax(-1) != got.argmax(-1)).sum())
        total += reference.shape[1]
    return largest, disagree / max(total, 1)


def write_model_card(output: Path, meta: dict) -> None:
    """A minimal model card; the embedded model's card adds evaluation figures by hand."""
    if (output / "README.md").exists():
        return
    lines = [
        f"# {meta['name']}", "",
        f"- Exported from: `{meta['checkpoint']}`",
        f"- Labels ({read_scheme(meta['labels']).scheme}): {', '.join(meta['labels'])}",
        f"- Window length: {meta['max_length']} wordpieces; type ids: {meta['type_ids']}",
        f"- Files: {json.dumps(meta['files'])}",
        f"- Parity with PyTorch: {json.dumps(meta['parity'])}",
        "",
    ]
    (output / "README.md").write_text("\n".join(lines), encoding="utf-8")


def _load_checkpoint(checkpoint: str):
    """The checkpoint's model (eval mode), its fast tokenizer and its labels, whose tag scheme must decode."""
    from transformers import AutoModelForTokenClassification, AutoTokenizer

    model = AutoModelForTokenClassification.from_pretrained(checkpoint, attn_implementation="eager")
    model.eval()
    tokenizer = AutoTokenizer.from_pretrained(checkpoint)
    if not tokenizer.is_fast:
        raise ModelError(f"{checkpoint} has no fast tokenizer (tokenizer.json); Larvatus needs one")
    labels = [model.config.id2label[i] for i in range(model.config.num_labels)]
    read_scheme(labels)
    return model, tokenizer, labels


def _checked_parity(precision: str, model, tokenizer, target: Path, type_ids: str,
                    labels: list[str], max_disagreement: float) -> dict:
    """The parity entry of one exported graph; raises ModelError when it disagrees too often."""
    try:
        diff, fraction = parity_check(model, tokenizer, target, type_ids, labels)
    except Exception as error:  # fp16 graphs may not load on a CPU-only machine
        print(f"{precision}: parity not checked here ({type(error).__name__})")
        return {"checked": False}
    print(f"{precision}: largest logit difference {diff:.4g}, "
          f"argmax disagreement {fraction:.2%}")
    if fraction > max_disagreement:
        raise ModelError(
            f"{precision} export disagrees with PyTorch on {fraction:.2%} of tokens "
            f"(limit {max_disagreement:.2%}); not a faithful export")
    return {"max_logit_diff": round(diff, 6), "argmax_disagreement": round(fraction, 6)}


def export(checkpoint: str, output: str, precisions: Sequence[str], optimize: bool,
           max_length: int | None = None, max_disagreement: float = 0.02,
           name: str | None = None, calibration_data: str | None = None,
           calibration_documents: int = CALIBRATION_DOCUMENTS, hidden_states: bool = True) -> dict:
    """Exports `checkpoint` into `output`, checks parity, writes the Larvatus config.

    With `hidden_states` (the default) the graphs also output the hidden states that
    `--emit-embeddings` reads (`HIDDEN_OUTPUTS`, listed under `hidden_states` in the config).

    Returns the config written to `larvatus_model.json`.
    """
    for precision in precisions:
        if precision not in PRECISIONS:
            raise ModelError(f"unknown precision {precision!r}; choose from {PRECISIONS}")
    model, tokenizer, labels = _load_checkpoint(checkpoint)
    config = model.config
    type_ids = getattr(config, "larvatus_type_ids", TYPE_IDS_ZEROS)
    length = min(max_length or getattr(config, "larvatus_max_length", None)
                 or config.max_position_embeddings, config.max_position_embeddings)
    out = Path(output)
    out.mkdir(parents=True, exist_ok=True)
    files: dict[str, str] = {}
    parity: dict[str, dict] = {}
    with_type_ids = getattr(config, "type_vocab_size", 0) > 0 and config.model_type in (
        "bert", "electra", "mobilebert")
    with tempfile.TemporaryDirectory() as tmp:
        raw = Path(tmp) / "raw.onnx"
        _export_fp32(model, raw, with_type_ids, hidden_states)
        fp32 = Path(tmp) / "fp32.onnx"
        if optimize or "fp16" in precisions:
            _optimize(raw, fp32, config, fp16=False, fuse=optimize)
        else:
            shutil.copy(raw, fp32)
        for precision in precisions:
            target = out / onnx_file_name(precision)
            if precision == "fp32":
                shutil.copy(fp32, target)
            elif precision == "fp16":
                _optimize(raw, target, config, fp16=True, fuse=optimize)
            elif precision == "int8-static":
                if not calibration_data:
                    raise ModelError("int8-static needs --calibration-data (a CoNLL file, e.g. "
                                     "the training split) to fix its activation ranges")
                tokenizer.backend_tokenizer.save(str(Path(tmp) / TOKENIZER_NAME))
                feeds = calibration_feeds(calibration_data, str(Path(tmp) / TOKENIZER_NAME),
                                          type_ids, int(length), calibration_documents,
                                          tokenizer.cls_token or "[CLS]",
                                          tokenizer.sep_token or "[SEP]")
                _quantize_static(raw, target, feeds)
            else:
                _quantize_int8(fp32, target)
            files[precision] = target.name
            parity[precision] = _checked_parity(precision, model, tokenizer, target, type_ids,
                                                labels, max_disagreement)
    tokenizer.backend_tokenizer.save(str(out / TOKENIZER_NAME))
    onnx = {device: next(files[p] for p in DEVICE_PREFERENCE[device] if p in files)
            for device in DEVICE_PREFERENCE}
    meta = {
        "name": name or Path(checkpoint).name,
        "labels": labels,
        "max_length": int(length),
        "type_ids": type_ids,
        "special_tokens": {"cls": tokenizer.cls_token or "[CLS]",
                           "sep": tokenizer.sep_token or "[SEP]"},
        "onnx": onnx,
        "files": files,
        "dynamic_quantization": sorted(name for precision, name in files.items()
                                       if precision == "int8"),
        "parity": parity,
        "checkpoint": str(checkpoint),
    }
    if hidden_states:
        meta["hidden_states"] = {"outputs": dict(HIDDEN_OUTPUTS), "size": int(config.hidden_size)}
    (out / CONFIG_NAME).write_text(json.dumps(meta, indent=2), encoding="utf-8")
    write_model_card(out, meta)
    load_model_spec(out)  # the directory must satisfy the pipeline
    return meta


EXAMPLES = """examples:
  larvatus export --checkpoint path/to/hf-ner --output models/my-ner --precision int8 --optimize
  larvatus export --checkpoint runs/ckpt --output runs/model --precision int8-static \\
      --calibration-data ../shared/data/conll2003/train.txt
then: larvatus run --input 'corpus/*.jsonl' --output out/ --model models/my-ner"""


def main(argv: Sequence[str] | None = None, prog: str = "larvatus export") -> int:
    parser = ArgumentParser(prog=prog, description=__doc__, epilog=EXAMPLES)
    parser.add_argument("--checkpoint", required=True, type=existing_dir,
                        help="Hugging Face token-classification checkpoint directory.")
    parser.add_argument("--output", required=True, help="Model directory to write.")
    parser.add_argument("--precision", default="fp32",
                        help="fp32, fp16 (GPU), int8 (dynamic quantization, CPU: tags can depend "
                             "on batch mates), int8-static (calibrated QDQ quantization, CPU: "
                             "tags depend on the window alone; needs --calibration-data), or a "
                             "comma-separated list. Default: fp32.")
    parser.add_argument("--optimize", action="store_true",
                        help="Run ONNX Runtime's transformer optimizer (fused attention, "
                             "layer norm, GELU).")
    parser.add_argument("--max-length", type=int, default=None,
                        help="Window length the pipeline uses (default: the checkpoint's).")
    parser.add_argument("--max-disagreement", type=float, default=0.02,
                        help="Largest fraction of tokens whose argmax may differ from "
                             "PyTorch. Default: 0.02.")
    parser.add_argument("--name", default=None, help="Model name written to the output.")
    parser.add_argument("--calibration-data", default=None, type=existing_file,
                        help="CoNLL file whose documents calibrate int8-static (e.g. train.txt).")
    parser.add_argument("--calibration-documents", type=int, default=CALIBRATION_DOCUMENTS,
                        help=f"Documents read for calibration. Default: {CALIBRATION_DOCUMENTS}.")
    parser.add_argument("--no-hidden-states", dest="hidden_states", action="store_false",
                        default=True,
                        help="Leave out the hidden-state outputs that --emit-embeddings reads "
                             "(they cost nothing unless fetched).")
    args, status = parse_or_report(parser, argv)
    if args is None:
        return status
    try:
        export(args.checkpoint, args.output, [p.strip() for p in args.precision.split(",")],
               args.optimize, args.max_length, args.max_disagreement, args.name,
               args.calibration_data, args.calibration_documents, args.hidden_states)
    except ModelError as error:
        print(f"{prog}: error: export failed: {error}", file=sys.stderr)
        return 1
    print(f"model directory written to {args.output}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
