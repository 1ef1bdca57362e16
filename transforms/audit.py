"""Audit of redacted text: what still looks personal after redaction, as kinds and offsets, never strings."""
from __future__ import annotations

import re
from functools import lru_cache
from typing import Sequence

from larvatus.transforms.records import Audit, AuditFinding, AuditKind, Replacement


_WORD = re.compile(r"[^\W\d_][\w'’\-.]*", re.UNICODE)
_DIGITS = re.compile(r"(?<![\w])\d(?:[ \-./]?\d){4,}(?![\w])")
_EMAIL = re.compile(r"(?<![\w.+\-])[\w.+\-]+@\w[\w\-]*(?:\.\w[\w\-]*)*")
_HANDLE = re.compile(r"(?<![\w@])@\w+(?:[.\-]\w+)*")
_SENTENCE_OPENERS = set('.!?:;"“”‘«»()[]{}-–—•*>#|')
_EXTRA_COMMON = (
    "i january february march april may june july august september october november december "
    "monday tuesday wednesday thursday friday saturday sunday mr mrs ms dr prof sir madam dear "
    "hi hello regards thanks thank best kind yours sincerely ok yes no re fw fwd subject from to "
    "cc date sent"
)


@lru_cache(maxsize=1)
def common_words() -> frozenset[str]:
    """spaCy's English stop words plus months, days, honorifics and letter furniture, lowercased."""
    from spacy.lang.en.stop_words import STOP_WORDS

    return frozenset(w.lower() for w in STOP_WORDS) | frozenset(_EXTRA_COMMON.split())


def _sentence_initial(text: str, start: int) -> bool:
    i = start - 1
    while i >= 0 and text[i] in " \t":
        i -= 1
    return i < 0 or text[i] in "\n\r\u2028\u2029" or text[i] in _SENTENCE_OPENERS


def audit(redacted_text: str, replacements: Sequence[Replacement] = ()) -> Audit:
    """Finds what still looks like personal data in a redacted text.

    Placeholders (the `replacements`) are skipped. Heuristic on purpose: it
    over-reports (a capitalised "Court" mid-sentence counts) so that a reviewer
    looks at the documents with the most findings first.
    """
    taken = bytearray(len(redacted_text))   # 1 where a placeholder or a finding already is
    for replacement in replacements:
        taken[replacement.start:replacement.end] = b"\x01" * (replacement.end - replacement.start)

    def free(start: int, end: int) -> bool:
        return taken.find(1, start, end) == -1

    findings: list[AuditFinding] = []
    for kind, pattern in ((AuditKind.EMAIL, _EMAIL), (AuditKind.HANDLE, _HANDLE),
                          (AuditKind.DIGITS, _DIGITS)):
        for match in pattern.finditer(redacted_text):
            start, end = match.span()
            if free(start, end):
                findings.append(AuditFinding(start, end, kind.value))
                taken[start:end] = b"\x01" * (end - start)
    common = common_words()
    for match in _WORD.finditer(redacted_text):
        start = match.start()
        if not redacted_text[start].isupper():   # a word opens with a letter, never stripped
            continue
        word = match.group().rstrip(".-'’")
        end = start + len(word)
        if word.lower() in common:
            continue
        if len(word) == 1 or _sentence_initial(redacted_text, start):
            continue
        if free(start, end):
            findings.append(AuditFinding(start, end, AuditKind.CAPITALIZED.value))
    return Audit(tuple(sorted(findings, key=lambda f: (f.start, f.end))))
