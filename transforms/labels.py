"""Tag schemes (BIO, IOB1, IO, BIOES/BILOU) and the roles of entity types: parse label names, decode word tags into spans."""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Optional, Sequence

from larvatus.transforms.records import EntitySource, EntitySpan, Vocabulary

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


class EntityRole(Vocabulary):
    """What a model's entity type names, whatever the model calls it: the name rules read roles."""

    PERSON = "person"
    PLACE = "place"
    ORGANISATION = "organisation"
    MISC = "misc"


# The declared correspondence of entity type names to roles, compared in capitals: CoNLL-2003
# (PER, LOC, ORG, MISC), OntoNotes/spaCy (PERSON, GPE, FAC, NORP, ...), WNUT-17 and other
# common schemes. A type not listed (DATE, MONEY, DISEASE, ...) has no role: its spans are
# the model's but no name rule touches them.
ROLE_OF_TYPE: dict[str, EntityRole] = {
    **dict.fromkeys(("PER", "PERS", "PERSON", "PEOPLE", "NAME"), EntityRole.PERSON),
    **dict.fromkeys(("LOC", "LOCATION", "GPE", "FAC", "FACILITY", "PLACE", "CITY", "COUNTRY"),
                    EntityRole.PLACE),
    **dict.fromkeys(("ORG", "ORGANIZATION", "ORGANISATION", "CORPORATION", "COMPANY", "GROUP"),
                    EntityRole.ORGANISATION),
    **dict.fromkeys(("MISC", "NORP", "EVENT", "PRODUCT", "WORK_OF_ART", "CREATIVE_WORK", "LAW",
                     "LANGUAGE"), EntityRole.MISC),
}
# The sources of spans the name rules read as the model's names.
_NAME_SOURCES = frozenset({EntitySource.MODEL.value, EntitySource.RULE.value})
# What a rule calls a firm it finds where the model has no organisation type of its own.
FALLBACK_ORGANISATION_LABEL = "ORG"


@dataclass(frozen=True)
class NameRoles:
    """The entity types of one model that name people, places, organisations or other things,
    each with its role: what the name rules and span refinement ask of a label.

    Built from the model's `LabelScheme` (`name_roles`); `types` are exactly the scheme's
    entity types that have a role in `ROLE_OF_TYPE`.
    """

    roles: tuple[tuple[str, EntityRole], ...]
    types: frozenset[str] = field(init=False, repr=False, compare=False)
    _role_of: dict = field(init=False, repr=False, compare=False, hash=False)

    def __post_init__(self):
        object.__setattr__(self, "types", frozenset(t for t, _ in self.roles))
        object.__setattr__(self, "_role_of", {t: EntityRole(r) for t, r in self.roles})

    def role(self, label: str) -> Optional[EntityRole]:
        """The role of a label, None when it is not one of the model's name types."""
        return self._role_of.get(label)

    def is_role(self, label: str, role: EntityRole) -> bool:
        """Whether a label is the model's type for `role`."""
        return self._role_of.get(label) is role

    def covers(self, span: EntitySpan) -> bool:
        """Whether a span is a name of the model's: its label is one of the model's name types
        and the model found it or a name rule made it from the model's (a term-list or pattern
        span is never one, whatever its label)."""
        return span.label in self.types and span.source in _NAME_SOURCES

    def label_for(self, role: EntityRole, fallback: Optional[str] = None) -> Optional[str]:
        """The model's type for a role (the first in scheme order), else `fallback`."""
        return next((t for t, r in self.roles if r is role), fallback)

    @property
    def organisation_label(self) -> str:
        """The label a rule gives a firm it finds or extends: the model's organisation type."""
        return self.label_for(EntityRole.ORGANISATION, FALLBACK_ORGANISATION_LABEL)


def roles_of_types(types: Sequence[str]) -> NameRoles:
    """The `NameRoles` of entity types named as a model names them, by `ROLE_OF_TYPE`."""
    return NameRoles(tuple((t, ROLE_OF_TYPE[t.upper()]) for t in dict.fromkeys(types)
                           if t.upper() in ROLE_OF_TYPE))


def name_roles(scheme: LabelScheme) -> NameRoles:
    """The roles of a model's entity types, read from its label scheme."""
    return roles_of_types([t.entity for t in scheme.tags if t.entity])


# The roles of every type the correspondence declares: what the pure name rules assume when
# no model's scheme is given to them (the pipeline always gives the model's own).
DECLARED_ROLES = roles_of_types(tuple(ROLE_OF_TYPE))
