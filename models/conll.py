"""Read CoNLL-format NER data and rebuild each document as raw text with gold character spans."""
from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Iterator

from larvatus.transforms.labels import decode_spans, parse_tag
from larvatus.transforms.records import Document, EntitySpan, SegmentedDocument

DOCSTART = "-DOCSTART-"


@dataclass(frozen=True)
class GoldDocument:
    """A CoNLL document as the pipeline would meet it.

    `text` joins tokens with spaces and sentences with newlines; `token_starts`
    and `token_ends` are the gold tokens' offsets in it; `spans` are the gold
    entities as character spans.
    """

    doc_id: str
    text: str
    token_starts: tuple[int, ...]
    token_ends: tuple[int, ...]
    spans: tuple[EntitySpan, ...]

    def gold_tokens(self) -> SegmentedDocument:
        """The document segmented exactly as its gold tokens."""
        return SegmentedDocument(
            Document(self.doc_id, self.text, self.doc_id), self.token_starts, self.token_ends)

    def document(self) -> Document:
        return Document(self.doc_id, self.text, self.doc_id)


def read_sentences(path: str | Path) -> Iterator[list[tuple[str, str]] | None]:
    """Yields sentences as (token, tag) lists, and None at each -DOCSTART-."""
    sentence: list[tuple[str, str]] = []
    with open(path, encoding="utf-8") as handle:
        for line in handle:
            parts = line.split()
            if not parts:
                if sentence:
                    yield sentence
                    sentence = []
                continue
            if parts[0] == DOCSTART:
                if sentence:
                    yield sentence
                    sentence = []
                yield None
                continue
            yield_token = (parts[0], parts[-1])
            sentence.append(yield_token)
    if sentence:
        yield sentence


def read_documents(path: str | Path, sentences_per_document: int = 0) -> list[GoldDocument]:
    """Groups sentences into documents (by -DOCSTART-, or every N sentences when N > 0)."""
    documents: list[list[list[tuple[str, str]]]] = [[]]
    for sentence in read_sentences(path):
        if sentence is None:
            if documents[-1]:
                documents.append([])
            continue
        if sentences_per_document and len(documents[-1]) >= sentences_per_document:
            documents.append([])
        documents[-1].append(sentence)
    name = Path(path).stem
    return [build_document(f"{name}-{i}", sents) for i, sents in enumerate(documents) if sents]


def build_document(doc_id: str, sentences: list[list[tuple[str, str]]]) -> GoldDocument:
    """Joins tokens with spaces and sentences with newlines; BIO tags become character spans."""
    parts: list[str] = []
    starts: list[int] = []
    ends: list[int] = []
    tags = []
    offset = 0
    for s, sentence in enumerate(sentences):
        if s:
            parts.append("\n")
            offset += 1
        for t, (token, tag) in enumerate(sentence):
            if t:
                parts.append(" ")
                offset += 1
            parts.append(token)
            starts.append(offset)
            offset += len(token)
            ends.append(offset)
            tags.append(parse_tag(tag))
        tags.append(None)  # an entity never crosses a sentence break
        starts.append(offset)
        ends.append(offset)
    spans = tuple(
        EntitySpan(starts[a], ends[b - 1], label, 1.0) for a, b, label in decode_spans(tags))
    keep = [i for i, tag in enumerate(tags) if tag is not None]
    return GoldDocument(doc_id, "".join(parts), tuple(starts[i] for i in keep),
                        tuple(ends[i] for i in keep), spans)


def word_labels(segmented: SegmentedDocument, spans: tuple[EntitySpan, ...]) -> list[str]:
    """BIO label per word from gold character spans (a word inside a span takes its type)."""
    labels = ["O"] * segmented.num_words
    span_index = 0
    ordered = sorted(spans, key=lambda s: s.start)
    for i, (start, end) in enumerate(zip(segmented.word_starts, segmented.word_ends)):
        while span_index < len(ordered) and ordered[span_index].end <= start:
            span_index += 1
        if span_index < len(ordered):
            span = ordered[span_index]
            if span.start <= start and end <= span.end:
                labels[i] = ("B-" if start == span.start else "I-") + span.label
    return labels
