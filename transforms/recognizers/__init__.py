"""Pattern recognizers for structured personal data: one registered kind per label, grouped by family.

Each family module (contact, finance, dates, identifiers, addresses) holds its finders and a
`KINDS` tuple of `Kind` records; importing this package registers them. User code adds a kind
with `register(Kind(...))` before building `PatternSettings` or starting a run.
"""
from __future__ import annotations

from larvatus.transforms.recognizers import addresses, contact, dates, finance, identifiers, quasi
from larvatus.transforms.recognizers.base import (
    DEFAULT_PHONE_REGIONS, LINE_BREAKS, SCORE_CHECKSUM, SCORE_FORMAT, SCORE_UNVALIDATED,
    SCORE_VALIDATED, finditer_on_lines)
from larvatus.transforms.recognizers.merge import find_patterns, merge_spans, recognize
from larvatus.transforms.recognizers.registry import (
    FIXED_PLACEHOLDER_LABELS, PROFILES, Finder, Kind, PatternSettings, kind, kinds, pattern_labels,
    placeholder_order, profile_pattern_labels, register, unregister)

__all__ = [
    "BUILTIN_LABELS", "DEFAULT_PHONE_REGIONS", "FIXED_PLACEHOLDER_LABELS", "Finder", "Kind",
    "LINE_BREAKS", "PatternSettings", "SCORE_CHECKSUM", "SCORE_FORMAT", "SCORE_UNVALIDATED", "SCORE_VALIDATED",
    "PROFILES", "find_patterns", "finditer_on_lines", "kind", "kinds", "merge_spans",
    "pattern_labels", "placeholder_order", "profile_pattern_labels", "recognize", "register",
    "unregister",
]

# Built-in kinds run in this order (it breaks ties between equal spans of the same tier).
_BUILTIN_ORDER = ("EMAIL", "PHONE", "CARD", "IBAN", "IP", "URL", "DATE", "ID", "HANDLE", "CODE",
                  "ADDRESS")
_BUILTINS = {k.label: k for family in (contact, finance, dates, identifiers, addresses, quasi)
             for k in family.KINDS}
for _label in sorted(_BUILTINS, key=lambda label: _BUILTIN_ORDER.index(label)
                     if label in _BUILTIN_ORDER else len(_BUILTIN_ORDER)):
    register(_BUILTINS[_label])
BUILTIN_LABELS = pattern_labels()
