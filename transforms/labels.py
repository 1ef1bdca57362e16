"""Tag schemes (BIO, IOB1, IO, BIOES/BILOU): parse label names and decode word tags into spans."""
from __future__ import annotations

from dataclasses import dataclass
from typing import Optional, Sequence

OUTSIDE = "O"
# Prefix letters and what they mean; BILOU's U and L are BIOES's S and E.
_PREFIX_ROLE = {"B": "B", "I": "I", "E": "E", "L": "E", "S": "S", "U": "S"}


class LabelSchemeError(ValueError):
    """The model's label names cannot be decoded into entity spans."""


@dataclass(frozen=True)
class Tag:
    """One label name split into its role (B, I, E, S or O) and its entity type."""

    role: str
    entity: Optional[str]


def parse_tag(name: str) -> Tag:
    """Splits a label name such as "B-PER", "I_LOC", "S-ORG", "PER" or "O"."""
    if name == OUTSIDE:
        return Tag("O", None)
    if len(name) >= 2 and name[1] in "-_" and name[0] in _PREFIX_ROLE:
        entity = name[2:]
        role = _PREFIX_ROLE[name[0]]
    elif name and all(c.isalnum() or c == "_" for c in name):
        entity, role = name, "I"   # IO-style bare type name
    else:
        raise LabelSchemeError(f"cannot read label {name!r}")
    if not entity or not all(c.isalnum() or c == "_" for c in entity):
        raise LabelSchemeError(f"cannot read entity type in label {name!r}")
    return Tag(role, entity)


@dataclass(frozen=True)
class LabelScheme:
    """A model's labels, in output order, with the scheme they follow."""

    labels: tuple[str, ...]
    tags: tuple[Tag, ...]
    scheme: str

    @property
    def entity_types(self) -> tuple[str, ...]:
        return tuple(sorted({t.entity for t in self.tags if t.entity}))


def read_scheme(labels: Sequence[str]) -> LabelScheme:
    """Reads the tag scheme from label names, failing loudly on what cannot be decoded.

    BIO and IOB1 share label names; the decoder reads both (a B always opens an
    entity; an I opens one after O or another type).
    """
    if not labels:
        raise LabelSchemeError("the model has no labels")
    if len(set(labels)) != len(labels):
        raise LabelSchemeError(f"duplicate label names in {list(labels)}")
    tags = tuple(parse_tag(name) for name in labels)
    if OUTSIDE not in labels:
        raise LabelSchemeError(f"no 'O' label among {list(labels)}")
    roles = {t.role for t in tags if t.entity}
    if not roles:
        raise LabelSchemeError("the model has no entity labels")
    if roles & {"E", "S"}:
        scheme = "BIOES"
    elif "B" in roles:
        scheme = "BIO"
    else:
        scheme = "IO"
    return LabelScheme(tuple(labels), tags, scheme)


def decode_spans(tags: Sequence[Optional[Tag]]) -> list[tuple[int, int, str]]:
    """Turns one tag per word into (first_word, last_word_exclusive, entity) runs.

    Lenient like conlleval: reads BIO, IOB1, IO and BIOES; `None` (a word with
    no prediction) counts as O.
    """
    spans: list[tuple[int, int, str]] = []
    current: Optional[str] = None
    start = 0

    def close(end: int) -> None:
        nonlocal current
        if current is not None:
            spans.append((start, end, current))
        current = None

    for i, tag in enumerate(tags):
        if tag is None or tag.role == "O":
            close(i)
            continue
        if tag.role in ("B", "S") or tag.entity != current:
            close(i)
            current, start = tag.entity, i
        if tag.role in ("E", "S"):
            close(i + 1)
    close(len(tags))
    return spans
