"""The registry of pattern kinds: one record per label, and the settings that choose among them."""
from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Callable, Iterable

import phonenumbers

from larvatus.transforms.recognizers.base import DEFAULT_PHONE_REGIONS
from larvatus.transforms.records import EntitySpan

_LABEL_RE = re.compile(r"[A-Z][A-Z0-9_]{0,31}")
# Placeholder tokens of these labels (`--emit-token-ids`) keep these positions whatever
# is registered: the model labels and the pattern labels in the order their ids were
# first given. Labels registered later are appended, in registration order.
FIXED_PLACEHOLDER_LABELS = (
    "ADDRESS", "CARD", "CODE", "DATE", "EMAIL", "HANDLE", "IBAN", "ID", "IP", "LOC", "MISC",
    "ORG", "PER", "PHONE", "URL", "MAC", "BANK", "CRYPTO", "VEHICLE", "QUASI")
MAX_TIER = 9
# Redaction profiles: "default" hides names and identifiers; "strict" adds every MISC span
# and the quasi-identifiers of the kinds registered with profile "strict".
PROFILES = ("default", "strict")


@dataclass(frozen=True)
class PatternSettings:
    """Which recognizers run, and how.

    Args:
      labels: the pattern labels to look for (registered labels; by default those of the
        default profile: every kind but the strict profile's quasi-identifiers).
      phone_regions: ISO 3166 region codes whose national number formats are accepted,
        in `phonenumbers`' metadata; empty finds only numbers written with a leading "+".

    Raises:
      ValueError: an unknown label or region. Regions are upper-cased and deduplicated.
    """

    labels: frozenset[str] = field(default_factory=lambda: frozenset(profile_pattern_labels()))
    phone_regions: tuple[str, ...] = DEFAULT_PHONE_REGIONS

    def __post_init__(self):
        labels = frozenset(self.labels)
        unknown = sorted(labels - set(pattern_labels()))
        if unknown:
            raise ValueError(f"unknown pattern labels {unknown}; choose from {pattern_labels()}")
        regions = tuple(dict.fromkeys(r.upper() for r in self.phone_regions))
        unsupported = [r for r in regions if r not in phonenumbers.SUPPORTED_REGIONS]
        if unsupported:
            raise ValueError(f"phone regions {unsupported} are not regions phonenumbers knows")
        object.__setattr__(self, "labels", labels)
        object.__setattr__(self, "phone_regions", regions)


Finder = Callable[[str, PatternSettings], list[EntitySpan]]


@dataclass(frozen=True)
class Kind:
    """One kind of personal data found by a pattern, and everything the pipeline needs of it.

    Attributes:
      label: the span label, upper case (`EMAIL`); selectable with `--redact-labels`.
      find: (text, settings) -> spans, every span labelled `label`, offsets in code points;
        `text` has its separators folded (`separators.fold_separators`), same length.
      tier: 0-9; where pattern spans overlap, the lower tier wins (then the longer span,
        then the higher score): 0 for checksummed or unambiguous kinds, higher for kinds
        more often found inside others.
      matches: what it matches, one line (documentation).
      validation: what confirms a candidate (a checksum, a library), "" for shape only.
      context: the cue words a candidate needs nearby, "" when it needs none.
      profile: "default" (hidden by `--redact-labels default`) or "strict" (only under
        `--profile strict`, or when its label is named).
    """

    label: str
    find: Finder
    tier: int
    matches: str
    validation: str = ""
    context: str = ""
    profile: str = "default"

    def problems(self) -> list[str]:
        """What is missing or malformed in this record (empty when it is complete)."""
        found = []
        if not isinstance(self.label, str) or not _LABEL_RE.fullmatch(self.label):
            found.append(f"label {self.label!r} is not upper-case letters, digits and '_'")
        if not callable(self.find):
            found.append(f"{self.label}: find is not callable")
        if not isinstance(self.tier, int) or isinstance(self.tier, bool) \
                or not 0 <= self.tier <= MAX_TIER:
            found.append(f"{self.label}: tier {self.tier!r} is not an integer in 0-{MAX_TIER}")
        if not isinstance(self.matches, str) or not self.matches.strip():
            found.append(f"{self.label}: matches (what it finds) is empty")
        if self.profile not in PROFILES:
            found.append(f"{self.label}: profile {self.profile!r} is not one of {PROFILES}")
        return found


_KINDS: dict[str, Kind] = {}


def register(kind: Kind, replace: bool = False) -> Kind:
    """Adds a kind to the registry, so every later `PatternSettings` and run can use it.

    Args:
      kind: the complete record.
      replace: allow replacing the kind already registered under the same label.

    Returns:
      `kind`, so that `register` can be used on a module-level constant.

    Raises:
      ValueError: the record is incomplete, or its label is taken and `replace` is false.
    """
    problems = kind.problems()
    if problems:
        raise ValueError("; ".join(problems))
    if kind.label in _KINDS and not replace:
        raise ValueError(f"pattern label {kind.label} is already registered")
    _KINDS[kind.label] = kind
    return kind


def unregister(label: str) -> None:
    """Removes a registered kind (tests and user code that registered one)."""
    _KINDS.pop(label, None)


def kinds() -> tuple[Kind, ...]:
    """The registered kinds, in registration order (the order recognizers run in)."""
    return tuple(_KINDS.values())


def kind(label: str) -> Kind:
    """The kind registered under `label` (KeyError if none)."""
    return _KINDS[label]


def pattern_labels() -> tuple[str, ...]:
    """The registered labels, in registration order."""
    return tuple(_KINDS)


def profile_pattern_labels(profile: str = "default") -> tuple[str, ...]:
    """The registered labels a profile hides: "default" those of default kinds, "strict" all."""
    if profile not in PROFILES:
        raise ValueError(f"unknown profile {profile!r}; choose from {PROFILES}")
    return tuple(label for label, kind in _KINDS.items()
                 if profile == "strict" or kind.profile == "default")


def placeholder_order(labels: Iterable[str]) -> list[str]:
    """`labels` in the order their placeholder tokens are added to a tokenizer.

    The labels of `FIXED_PLACEHOLDER_LABELS` first, in that order, then labels no kind
    registers (a model's own types) sorted, then the other registered labels in registration
    order: registering a label never moves the token id of a label already there.
    """
    wanted = set(labels)
    order = [label for label in FIXED_PLACEHOLDER_LABELS if label in wanted]
    order += sorted(wanted - set(order) - set(_KINDS))
    order += [label for label in _KINDS if label in wanted and label not in order]
    return order
