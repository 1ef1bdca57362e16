"""The one batched inference loop: token-budget batches of length-sorted windows, padded, any model call."""
from __future__ import annotations

from typing import Callable, Optional, Sequence, TypeVar, Union

import numpy as np

from larvatus.transforms.records import EncodedDocument, Window

# A model call: padded feeds (input_ids, attention_mask, token_type_ids) -> logits (batch, seq,
# labels), or (logits, hidden states (batch, seq, hidden)) when hidden states are fetched too.
ModelCall = Callable[[dict[str, np.ndarray]], Union[np.ndarray, tuple[np.ndarray, np.ndarray]]]
T = TypeVar("T")


def plan_batches(lengths: Sequence[int], batch_tokens: int,
                 max_windows: Optional[int] = None) -> list[list[int]]:
    """Groups window indices into batches whose padded size stays within a token budget.

    Windows are sorted by length so each batch pads to a near-equal length; a
    window longer than the budget gets a batch of its own; `max_windows` caps
    the windows of a batch (1: every window alone).
    """
    order = sorted(range(len(lengths)), key=lambda i: lengths[i], reverse=True)
    batches: list[list[int]] = []
    current: list[int] = []
    longest = 0
    for i in order:
        longest_if_added = max(longest, lengths[i])
        full = max_windows is not None and len(current) >= max_windows
        if current and (full or longest_if_added * (len(current) + 1) > batch_tokens):
            batches.append(current)
            current, longest_if_added = [], lengths[i]
        current.append(i)
        longest = longest_if_added
    if current:
        batches.append(current)
    return batches


def pad_batch(windows: Sequence[Window], pad_id: int = 0) -> dict[str, np.ndarray]:
    """Right-pads windows to the longest in the batch."""
    width = max(len(w) for w in windows)
    input_ids = np.full((len(windows), width), pad_id, dtype=np.int64)
    type_ids = np.zeros((len(windows), width), dtype=np.int64)
    mask = np.zeros((len(windows), width), dtype=np.int64)
    for row, window in enumerate(windows):
        n = len(window)
        input_ids[row, :n] = window.input_ids
        type_ids[row, :n] = window.type_ids
        mask[row, :n] = 1
    return {"input_ids": input_ids, "attention_mask": mask, "token_type_ids": type_ids}


class NonFiniteOutput(ValueError):
    """The model gave NaN or infinite values for a window (fp16 overflow, a broken export):
    its tags cannot be read, and reading them as "no entity" would leave names visible."""


def softmax(logits: np.ndarray) -> np.ndarray:
    shifted = logits - logits.max(axis=-1, keepdims=True)
    exp = np.exp(shifted)
    return exp / exp.sum(axis=-1, keepdims=True)


def run_in_batches(
    windows: Sequence[Window], batch_tokens: int, model_call: ModelCall,
    max_windows: Optional[int] = None,
) -> list[np.ndarray]:
    """Label probabilities for each window's content pieces ([CLS] and [SEP] stripped).

    Args:
      windows: model inputs, in any order and of any lengths.
      batch_tokens: the most padded tokens one call may see.
      model_call: runs one padded batch and returns its logits (ONNX Runtime,
        PyTorch, ...), as Beam's ONNX handler takes an `inference_fn`; or (logits,
        hidden states), and then each window's result is (probabilities, hidden states
        of all its pieces, [CLS] and [SEP] included, float32).
      max_windows: at most this many windows a call; 1 for models whose output
        depends on their batch mates (dynamic int8 quantization computes its
        activation scales per call), so that a window's tags depend on it alone.
    """
    results: list = [None] * len(windows)
    lengths = [len(w) for w in windows]
    for batch in plan_batches(lengths, batch_tokens, max_windows):
        output = model_call(pad_batch([windows[i] for i in batch]))
        hidden = None
        if isinstance(output, tuple):
            output, hidden = output
        output = np.asarray(output)
        for row, i in enumerate(batch):
            if not np.isfinite(output[row, :lengths[i]]).all() or (
                    hidden is not None and not np.isfinite(hidden[row, :lengths[i]]).all()):
                raise NonFiniteOutput(
                    "the model's outputs are not finite (NaN or inf) for a window of "
                    f"{lengths[i]} wordpieces")
        probs = softmax(output.astype(np.float32, copy=False))
        for row, i in enumerate(batch):
            results[i] = probs[row, 1:lengths[i] - 1]
            if hidden is not None:
                results[i] = (results[i], np.array(hidden[row, :lengths[i]], dtype=np.float32))
    return results


def flatten_windows(documents: Sequence[EncodedDocument]) -> list[Window]:
    """Every window of every document, in document order."""
    return [w for doc in documents for w in doc.windows]


def split_per_document(documents: Sequence[EncodedDocument], flat: Sequence[T]) -> list[list[T]]:
    """Hands each document back the results of its own windows (the inverse of `flatten_windows`)."""
    out, cursor = [], 0
    for doc in documents:
        out.append(list(flat[cursor:cursor + len(doc.windows)]))
        cursor += len(doc.windows)
    if cursor != len(flat):
        raise ValueError(f"{len(flat)} results for {cursor} windows")
    return out
