"""spaCy's small-pipeline NER architecture, trained here on CoNLL-2003 `train.txt`."""
# No pretrained spaCy English pipeline (en_core_web_sm...) can be installed on the machines
# this project runs on (they are not on PyPI), so `bench/peers.py` compares against the
# closest honest substitute: the architecture `spacy init config --lang en --pipeline ner
# --optimize efficiency` writes (the CNN tok2vec of the small English pipelines: MultiHashEmbed
# of NORM/PREFIX/SUFFIX/SHAPE with rows 5000/1000/2500/2500, a 4-layer maxout window encoder
# of width 96, and the transition-based `ner` with a hidden width of 64), trained from scratch
# here on CoNLL-2003 `train.txt`, with a fixed seed, for a capped time. It is NOT
# en_core_web_sm: that pipeline is trained on OntoNotes 5 (18 labels) with a tagger, parser
# and lemmatizer; this one knows CoNLL's PER/LOC/ORG/MISC and has only a tokenizer and `ner`.
#
# Training data: each CoNLL document rebuilt as the raw text the pipeline meets
# (`larvatus.models.conll`: tokens joined by spaces, sentences by newlines), stored as spaCy Docs with
# the gold tokens as words (the newlines are whitespace tokens, as spaCy's tokenizer makes
# them) and the gold entities as `doc.ents`. spaCy's training aligns its own tokenizer's
# output to these gold words, so the model trains on the tokenization it will see at
# inference.
#
# Training loop: spaCy's own pieces (`init_nlp` from the config, `create_train_batches` with
# the config's batcher, `nlp.update` with the config's dropout, `finish_update` with its
# Adam optimizer) stepped until the time cap (or `max_steps`); no model selection on the
# validation set: the model saved is the last one. The figures it reports on `valid.txt`
# come from spaCy's scorer after training (`nlp.evaluate`: gold tokens aligned to spaCy's).
#
#     python -m bench.spacy_conll --minutes 10 --seed 0   # train (or reuse) and print scores
#
# The result is cached under bench/.cache/spacy-conll/seed{S}-{M}min[-steps{N}]/ with
# `training.json` (command, steps, epochs, seconds, scores); `model/` is a spaCy pipeline
# directory (`spacy.load(path)`).
from __future__ import annotations

import argparse
import hashlib
import json
import os
import sys
import time
from pathlib import Path
from typing import Optional, Sequence

if __package__ in (None, ""):  # `python bench/spacy_conll.py`
    sys.path[0] = str(Path(__file__).resolve().parents[1])

from bench.corpus import CACHE, CONLL_VALID  # noqa: E402

CONLL_TRAIN = CONLL_VALID.with_name("train.txt")
SPACY_CACHE = CACHE / "spacy-conll"
TITLE = "spaCy small architecture (CNN, trained here on CoNLL-2003 train)"
INIT_CONFIG_COMMAND = "spacy init config --lang en --pipeline ner --optimize efficiency"


# --------------------------------------------------------------------------- conversion

def reference_doc(vocab, gold):
    """A `larvatus.models.conll.GoldDocument` as a spaCy Doc: gold tokens as words, entities set.

    The text of the Doc is exactly `gold.text`. A single space between tokens becomes the
    token's trailing whitespace; any other separator (the newline between sentences)
    becomes a whitespace token of its own, as spaCy's tokenizer makes it.
    """
    from spacy.tokens import Doc

    text = gold.text
    words: list[str] = []
    spaces: list[bool] = []
    for i, (start, end) in enumerate(zip(gold.token_starts, gold.token_ends)):
        words.append(text[start:end])
        following = gold.token_starts[i + 1] if i + 1 < len(gold.token_starts) else len(text)
        gap = text[end:following]
        if gap.startswith(" "):
            spaces.append(True)
            gap = gap[1:]
        else:
            spaces.append(False)
        if gap:
            if not gap.isspace():
                raise ValueError(f"{gold.doc_id}: text between tokens is not whitespace: {gap!r}")
            words.append(gap)
            spaces.append(False)
    if gold.token_starts and gold.token_starts[0] > 0:
        raise ValueError(f"{gold.doc_id}: text before the first token")
    doc = Doc(vocab, words=words, spaces=spaces)
    if doc.text != text:
        raise ValueError(f"{gold.doc_id}: rebuilt text differs from the document's")
    entities = []
    for span in gold.spans:
        found = doc.char_span(span.start, span.end, label=span.label)
        if found is None:
            raise ValueError(f"{gold.doc_id}: entity {span} does not fall on token boundaries")
        entities.append(found)
    doc.ents = entities
    return doc


def conll_docbin(path: Path, vocab=None):
    """Every document of a CoNLL file as a DocBin of reference Docs (and the count)."""
    import spacy
    from spacy.tokens import DocBin

    from larvatus.models.conll import read_documents

    vocab = vocab if vocab is not None else spacy.blank("en").vocab
    docs = [reference_doc(vocab, gold) for gold in read_documents(path)]
    return DocBin(docs=docs, store_user_data=False), len(docs)


def file_digest(path: Path) -> str:
    return hashlib.sha256(Path(path).read_bytes()).hexdigest()[:12]


# --------------------------------------------------------------------------- config, training

def small_config(train_spacy: Path, dev_spacy: Path, seed: int):
    """The efficiency (small) English NER config, with the corpora and the seed filled in."""
    from spacy.cli.init_config import init_config

    config = init_config(lang="en", pipeline=["ner"], optimize="efficiency", gpu=False,
                         silent=True)
    config["paths"]["train"] = str(train_spacy)
    config["paths"]["dev"] = str(dev_spacy)
    config["system"]["seed"] = seed
    return config


def cache_dir(seed: int, minutes: float, max_steps: Optional[int] = None,
              root: Path = SPACY_CACHE) -> Path:
    name = f"seed{seed}-{minutes:g}min" + (f"-steps{max_steps}" if max_steps else "")
    return Path(root) / name


def train(out: Path, minutes: float, seed: int = 0, threads: int = 2,
          max_steps: Optional[int] = None, train_path: str = str(CONLL_TRAIN),
          valid_path: str = str(CONLL_VALID)) -> dict:
    """Trains the small NER architecture for `minutes` (or `max_steps`); saves `out/model`.

    Returns (and writes to `out/training.json`) what was done and spaCy's scores on the
    validation file.
    """
    for variable in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
        os.environ.setdefault(variable, str(threads))
    import spacy
    from spacy.training.initialize import init_nlp
    from spacy.training.loop import create_train_batches
    from spacy.util import fix_random_seed, registry, resolve_dot_names
    from spacy.schemas import ConfigSchemaTraining
    from thinc.api import constant

    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    started = time.perf_counter()
    vocab = spacy.blank("en").vocab
    train_bin, train_docs = conll_docbin(Path(train_path), vocab)
    dev_bin, dev_docs = conll_docbin(Path(valid_path), vocab)
    train_bin.to_disk(out / "train.spacy")
    dev_bin.to_disk(out / "valid.spacy")
    config = small_config(out / "train.spacy", out / "valid.spacy", seed)
    config.to_disk(out / "config.cfg")
    convert_seconds = time.perf_counter() - started

    fix_random_seed(seed)
    nlp = init_nlp(config)
    resolved = nlp.config.interpolate()
    settings = registry.resolve(resolved["training"], schema=ConfigSchemaTraining)
    train_corpus, dev_corpus = resolve_dot_names(
        resolved, [settings["train_corpus"], settings["dev_corpus"]])
    optimizer, batcher = settings["optimizer"], settings["batcher"]
    dropout = settings["dropout"]
    dropouts = constant(dropout) if isinstance(dropout, float) else dropout
    limit = minutes * 60.0
    losses: dict[str, float] = {}
    steps = words = 0
    epoch = 0
    trainable = [proc for _, proc in nlp.pipeline
                 if getattr(proc, "is_trainable", False) and proc.model not in (True, False, None)]
    train_started = time.perf_counter()
    history = []
    for epoch, batch in create_train_batches(nlp, train_corpus, batcher, max_epochs=0):
        nlp.update(batch, drop=next(dropouts), losses=losses, sgd=False)
        for proc in trainable:
            proc.finish_update(optimizer)
        optimizer.step_schedules()
        steps += 1
        words += sum(len(eg) for eg in batch)
        elapsed = time.perf_counter() - train_started
        if steps % 100 == 0:
            loss = float(losses.pop("ner", 0.0))  # summed over the last 100 updates
            history.append({"step": steps, "epoch": epoch, "seconds": round(elapsed, 1),
                            "ner_loss": round(loss, 1)})
            print(f"step {steps} epoch {epoch} {elapsed:.0f} s ner loss {loss:.1f}", flush=True)
        if elapsed >= limit or (max_steps and steps >= max_steps):
            break
    train_seconds = time.perf_counter() - train_started

    def save_and_score():
        nlp.to_disk(out / "model")
        return nlp.evaluate(list(dev_corpus(nlp)))

    if optimizer.averages:
        with nlp.use_params(optimizer.averages):
            scores = save_and_score()
    else:
        scores = save_and_score()
    per_type = {label: {k: round(float(v), 4) for k, v in values.items()}
                for label, values in (scores.get("ents_per_type") or {}).items()}
    meta = {
        "title": TITLE, "config_from": INIT_CONFIG_COMMAND, "seed": seed, "minutes": minutes,
        "max_steps": max_steps, "threads": threads, "steps": steps,
        "epochs_completed": epoch, "words_seen": words, "train_seconds": round(train_seconds, 1),
        "convert_seconds": round(convert_seconds, 1),
        "train_file": str(train_path), "train_sha256": file_digest(Path(train_path)),
        "train_documents": train_docs, "valid_file": str(valid_path),
        "valid_documents": dev_docs, "spacy_version": spacy.__version__,
        "labels": list(nlp.get_pipe("ner").labels),
        "valid_spacy_scorer": {key: round(float(scores[key]), 4)
                               for key in ("ents_p", "ents_r", "ents_f")} | {"per_type": per_type},
        "history": history,
        "command": (f"python -m bench.spacy_conll --minutes {minutes:g} --seed {seed} "
                    f"--threads {threads}" + (f" --max-steps {max_steps}" if max_steps else "")),
    }
    (out / "training.json").write_text(json.dumps(meta, indent=2), encoding="utf-8")
    for name in ("train.spacy", "valid.spacy"):
        (out / name).unlink(missing_ok=True)  # derived from the CoNLL files: not kept
    return meta


def trained(directory: Path) -> Optional[dict]:
    """The training record of a finished cache directory, or None."""
    record = Path(directory) / "training.json"
    if record.is_file() and (Path(directory) / "model" / "meta.json").is_file():
        return json.loads(record.read_text(encoding="utf-8"))
    return None


def train_cached(minutes: float, seed: int = 0, threads: int = 2,
                 max_steps: Optional[int] = None, retrain: bool = False,
                 root: str = str(SPACY_CACHE), train_path: str = str(CONLL_TRAIN),
                 valid_path: str = str(CONLL_VALID)) -> dict:
    """The cached model for these settings, trained first when absent (or `retrain`).

    Returns its training record with `model` (the pipeline directory) and `reused`.
    """
    directory = cache_dir(seed, minutes, max_steps, Path(root))
    record = None if retrain else trained(directory)
    if record is not None and record.get("train_sha256") != file_digest(Path(train_path)):
        record = None  # another train.txt: train again
    reused = record is not None
    if record is None:
        record = train(directory, minutes, seed, threads, max_steps, train_path, valid_path)
    return {**record, "model": str(directory / "model"), "reused": reused}


def main(argv: Optional[Sequence[str]] = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.spacy_conll",
                                     description=__doc__.split("\n\n")[0])
    parser.add_argument("--minutes", type=float, default=10.0,
                        help="Training time cap in minutes (default 10).")
    parser.add_argument("--max-steps", type=int, default=None,
                        help="Also stop after this many updates (reproduces a run exactly).")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--threads", type=int, default=2,
                        help="BLAS/OpenMP threads (default 2).")
    parser.add_argument("--retrain", action="store_true", help="Ignore the cached model.")
    parser.add_argument("--train", default=str(CONLL_TRAIN))
    parser.add_argument("--valid", default=str(CONLL_VALID))
    args = parser.parse_args(argv)
    record = train_cached(args.minutes, args.seed, args.threads, args.max_steps, args.retrain,
                          train_path=args.train, valid_path=args.valid)
    print(json.dumps({k: v for k, v in record.items() if k != "history"}, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
