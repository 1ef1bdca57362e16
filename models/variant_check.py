"""Measure how often a model's derived fp16 GPU variant gives each word the same tag as its int8 file."""
from __future__ import annotations

import json
import time
from dataclasses import dataclass
from typing import Optional, Sequence

import numpy as np

from larvatus.models.command_line import ArgumentParser, existing_file, parse_or_report
from larvatus.models.conll import read_documents
from larvatus.models.evaluate import RunWindows, predict_windows
from larvatus.transforms.realign import word_predictions

EXAMPLES = """example:
  python -m larvatus.models.variant_check --data ../shared/data/conll2003/valid.txt"""


@dataclass(frozen=True)
class Agreement:
    """Words tagged alike by two graphs (argmax of each word's first piece, as realign reads it)."""

    words: int
    same: int

    @property
    def rate(self) -> float:
        return self.same / self.words if self.words else 1.0


def tag_agreement(first: Sequence[np.ndarray], second: Sequence[np.ndarray]) -> Agreement:
    """Agreement of two lists of per-document word labels (words without a piece skipped)."""
    words = same = 0
    for a, b in zip(first, second, strict=True):
        tagged = (a >= 0) & (b >= 0)
        words += int(tagged.sum())
        same += int((a[tagged] == b[tagged]).sum())
    return Agreement(words, same)


def word_labels(golds, tokenizer, settings, run_windows: RunWindows) -> list[np.ndarray]:
    """Each document's argmax label per word, through the pipeline's segmentation and windows."""
    return [word_predictions(p.encoded, p.probs)[0]
            for p in predict_windows(golds, tokenizer, settings, run_windows)]


def cpu_runner(spec, onnx_path: str, per_window: bool) -> RunWindows:
    """Windows -> probabilities for one ONNX file on the CPU, batched as the handler batches."""
    import onnxruntime as ort

    from larvatus.models.handler import CPU, CPU_BATCH_TOKENS, LoadedModel

    session = ort.InferenceSession(onnx_path, providers=[CPU])
    loaded = LoadedModel(
        session, "cpu", tuple(i.name for i in session.get_inputs()), len(spec.labels),
        CPU_BATCH_TOKENS, windows_per_call=1 if per_window else None,
        output_names=(session.get_outputs()[0].name,))
    return loaded.predict


def measure(model: str, data: str, limit: Optional[int] = None) -> dict:
    """Int8 against the derived fp16 variant (both on the CPU) on a CoNLL file's raw text."""
    from larvatus.transforms.encode import default_overlap
    from larvatus.models.model_dir import cache_root, load_model_spec
    from larvatus.models.variants import cached_fp16

    spec = load_model_spec(model)
    source = spec.onnx_path("cuda")
    started = time.perf_counter()
    fp16 = cached_fp16(source, cache_root())
    derived = time.perf_counter() - started
    tokenizer = spec.load_tokenizer()
    settings = spec.encode_settings(tokenizer, overlap=default_overlap(spec.max_length))
    golds = read_documents(data)[:limit]
    int8 = word_labels(golds, tokenizer, settings, cpu_runner(spec, source, per_window=True))
    half = word_labels(golds, tokenizer, settings, cpu_runner(spec, str(fp16), per_window=False))
    agreement = tag_agreement(int8, half)
    return {"model": spec.name, "data": data, "documents": len(golds), "words": agreement.words,
            "same_tag": agreement.same, "agreement": round(agreement.rate, 5),
            "derive_seconds": round(derived, 1), "variant": str(fp16)}


def main(argv: Sequence[str] | None = None, prog: str = "python -m larvatus.models.variant_check") -> int:
    parser = ArgumentParser(prog=prog, description=__doc__, epilog=EXAMPLES)
    parser.add_argument("--model", default="embedded:default", help="Model directory.")
    parser.add_argument("--data", required=True, type=existing_file, help="CoNLL-format file.")
    parser.add_argument("--limit", type=int, default=None, help="Only the first N documents.")
    parser.add_argument("--json", default=None, help="Also write the figures to this file.")
    args, status = parse_or_report(parser, argv)
    if args is None:
        return status
    result = measure(args.model, args.data, args.limit)
    print(f"{result['model']}: fp16 variant and int8 give the same tag to {result['same_tag']:,} "
          f"of {result['words']:,} words ({100 * result['agreement']:.2f}%) in "
          f"{result['documents']} documents of {result['data']}")
    if args.json:
        with open(args.json, "w", encoding="utf-8") as handle:
            json.dump(result, handle, indent=2)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
