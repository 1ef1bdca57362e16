"""Audit of redacted text: what still looks personal after redaction, as kinds and offsets, never strings."""
from __future__ import annotations

import bisect
import re
from functools import lru_cache
from typing import Iterable, Sequence

from larvatus.transforms.records import Audit, AuditFinding, AuditKind, Replacement
from larvatus.transforms.separators import fold_separators


_WORD = re.compile(r"[^\W\d_][\w'’\-.]*", re.UNICODE)
_WORD_CHARS = r"\w'’\-."      # a run of these holds at most one _WORD match: from its first
_NOT_LETTERS = r"\d_'’\-."    # [^\W\d_] character (a "letter") to the run's end
# Five or more digits joined by at most one space, dash, dot or slash, or a spaced dash,
# matched on the text with its separators folded (U+00A0, U+202F, en dash, ... count too).
# (The lookbehind follows the first digit, so that re scans for a digit before trying a match.)
_DIGITS = re.compile(r"\d(?<!\w\d)(?:(?:[ \-./]| - )?\d){4,}(?![\w])")
# Broader than the EMAIL and HANDLE recognizers on purpose (an address without an alphabetic
# top-level domain, a handle with dots): the audit must see what the recognizers let through.
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
    from larvatus.transforms.lexicon import stop_words_of

    return stop_words_of("en") | frozenset(_EXTRA_COMMON.split())


_DIGIT = re.compile(r"\d")   # folding keeps digits digits and makes no other character one


# A _WORD match, in group "word", unless its first letter is an ASCII lowercase one: a match
# opens at the first [^\W\d_] character (a "letter") of a run of _WORD_CHARS and ends with it.
_CANDIDATE = re.compile(rf"(?<![{_WORD_CHARS}])[{_NOT_LETTERS}]*(?P<word>[^\W\d_a-z][{_WORD_CHARS}]*)")
_LETTER = re.compile(r"[^\W\d_]")
_RUN_PREFIX = frozenset("_'’-.")   # with the decimal digits (\d), what precedes a run's first letter
_NOT_LETTER_CHARS = re.compile(rf"[{_NOT_LETTERS}]")


# The _CANDIDATE words whose first letter is upper case, found faster: an ASCII capital or
# a non-ASCII letter after no letter opens one (re scans for those characters); the caller
# keeps a non-ASCII one only when it is upper case, and drops those with a letter before
# them in their run of _WORD_CHARS (`_opens_run`).
_CAPITAL_OR_WIDE = r"[^\W\d_\x00-@\[-\x7f]"   # a letter, A-Z or beyond ASCII
_CAPITALIZED = re.compile(
    rf"{_CAPITAL_OR_WIDE}(?<![^\W\d_]{_CAPITAL_OR_WIDE})[{_WORD_CHARS}]*")


def _capitalized(text: str, start: int) -> bool:
    """Whether a _CAPITALIZED match at `start` opens a _CANDIDATE word with an upper-case letter."""
    first = text[start]
    if first >= "\x80" and (not first.isupper() or _LETTER.match(first) is None):
        return False
    return not (start and _NOT_LETTER_CHARS.match(text, start - 1)) or _opens_run(text, start)


def _opens_run(text: str, start: int) -> bool:
    """Whether the letter at `start` is the first letter of its run of _WORD_CHARS (what
    stands before it in the run, if anything, is digits, "_", apostrophes, "-" or ".")."""
    i = start - 1
    while i >= 0 and _NOT_LETTER_CHARS.match(text, i):
        i -= 1
    return i < 0 or _LETTER.match(text, i) is None


def flagged_length(match: str) -> int:
    """The length of a _CAPITALIZED match with trailing ".-'’" stripped, or 0 when that word
    is never flagged: one letter long, or a common word."""
    word = match.rstrip(".-'’")
    return 0 if len(word) == 1 or word.lower() in common_words() else len(word)


class _Lengths(dict):
    """`flagged_length` of each match met, remembered (at most `MAX_LENGTHS` of them)."""

    def __missing__(self, match: str) -> int:
        value = flagged_length(match)
        if len(self) >= MAX_LENGTHS:
            self.clear()
        self[match] = value
        return value


MAX_LENGTHS = 100_000
_LENGTHS = _Lengths()


def _sentence_initial(text: str, start: int) -> bool:
    i = start - 1
    while i >= 0 and text[i] in " \t":
        i -= 1
    return i < 0 or text[i] in "\n\r\u2028\u2029" or text[i] in _SENTENCE_OPENERS


# Placeholders of names, places and organisations: a capitalised word glued to one may be
# the part of the name the span missed ("BUENOS [LOC]").
_NAME_PLACEHOLDER_RE = re.compile(r"[ \t]?\[(?:PER|LOC|ORG|MISC)(?:_[0-9a-f]+)?\]")


def audit(redacted_text: str, replacements: Sequence[Replacement] = (), language: str = "en",
          kept: Sequence[tuple[int, int]] = ()) -> Audit:
    """Finds what still looks like personal data in a redacted text.

    Placeholders (the `replacements`) are skipped. Heuristic on purpose: it
    over-reports (a capitalised "Court" mid-sentence counts) so that a reviewer
    looks at the documents with the most findings first. Digit runs are read with their
    separators folded ("4111\u00a01111\u00a01111\u00a01111" is one run); names in scripts
    without letter case are flagged next to a title or form label (`uncased_names`).
    A capitalised word glued to a name's placeholder is a finding even where it opens a
    sentence ("BUENOS [LOC]": half a name left); in German, French, Spanish, Italian and
    Dutch documents (`language`) the language's common words are not ("Vertrag", "Grüßen");
    nor are the words of `kept` ([start, end) in `redacted_text`: the one-word model entities
    the options keep, such as nationalities), so that real risks rank first.
    """
    from larvatus.transforms import lexicon

    other_language = language in lexicon.DECISION_LANGUAGES
    kept_starts = sorted(kept)
    taken = bytearray(len(redacted_text))   # 1 where a placeholder or a finding already is
    for replacement in replacements:
        taken[replacement.start:replacement.end] = b"\x01" * (replacement.end - replacement.start)

    def free(start: int, end: int) -> bool:
        return taken.find(1, start, end) == -1

    findings: list[AuditFinding] = []
    at_sign, digit = "@" in redacted_text, _DIGIT.search(redacted_text) is not None
    # One character for one: the same offsets (the text itself when nothing in it folds).
    folded = fold_separators(redacted_text) if at_sign or digit else redacted_text
    for kind, pattern, present in ((AuditKind.EMAIL, _EMAIL, at_sign),
                                   (AuditKind.HANDLE, _HANDLE, at_sign),
                                   (AuditKind.DIGITS, _DIGITS, digit)):
        for match in pattern.finditer(folded) if present else ():
            start, end = match.span()
            if free(start, end):
                findings.append(AuditFinding(start, end, kind.value))
                taken[start:end] = b"\x01" * (end - start)
    for match in _CAPITALIZED.finditer(redacted_text):
        start = match.start()   # a word opens with a letter, never stripped
        if taken[start]:   # inside a placeholder or a finding: never free
            continue
        length = _LENGTHS[match.group()]
        if not length:
            continue
        if (redacted_text[start] >= "\x80" or start and redacted_text[start - 1] in _RUN_PREFIX
                or start and redacted_text[start - 1].isdecimal()) \
                and not _capitalized(redacted_text, start):
            continue
        if _sentence_initial(redacted_text, start) \
                and not _NAME_PLACEHOLDER_RE.match(redacted_text, start + length):
            continue
        if other_language and lexicon.is_common_in(redacted_text[start:start + length], language):
            continue
        if kept_starts and _inside(kept_starts, start, start + length):
            continue
        if free(start, start + length):
            findings.append(AuditFinding(start, start + length, AuditKind.CAPITALIZED.value))
    for start, end in uncased_names(redacted_text):
        if free(start, end):
            findings.append(AuditFinding(start, end, AuditKind.UNCASED_NAME.value))
            taken[start:end] = b"\x01" * (end - start)
    return Audit(tuple(sorted(findings, key=lambda f: (f.start, f.end))))


def _inside(spans: Sequence[tuple[int, int]], start: int, end: int) -> bool:
    """Whether [start, end) lies inside one of sorted, disjoint `spans`."""
    i = bisect.bisect_right(spans, (start, float("inf"))) - 1
    return i >= 0 and spans[i][0] <= start and end <= spans[i][1]


def kept_word_spans(entities: Sequence, replacements: Sequence[Replacement],
                    text: str) -> list[tuple[int, int]]:
    """[start, end) in the redacted text of each one-word entity the options left visible (a
    kept MISC: "German", "Brazilian"), from the entities' offsets in `text` and the replacements."""
    rewritten = sorted((e for e in entities if e.redacted), key=lambda e: e.start)
    shifts: list[tuple[int, int]] = []   # (original end, shift after it)
    shift = 0
    for entity, replacement in zip(rewritten, sorted(replacements, key=lambda r: r.start)):
        shift += (replacement.end - replacement.start) - (entity.end - entity.start)
        shifts.append((entity.end, shift))
    ends = [end for end, _ in shifts]
    out = []
    for entity in entities:
        if entity.redacted or entity.propagated:
            continue
        surface = text[entity.start:entity.end]
        if not surface.isalpha():
            continue
        i = bisect.bisect_right(ends, entity.start) - 1
        moved = shifts[i][1] if i >= 0 else 0
        out.append((entity.start + moved, entity.end + moved))
    return sorted(out)


# ------------------------------------------------------------------ scripts without case

# Letters of scripts without letter case (Hebrew, Arabic and Persian, the Indic scripts,
# Thai, Hangul, Ethiopic, kana, CJK ideographs), their punctuation excepted.
_UNCASED_RANGES = ("\u0590-\u05ff\u0600-\u06ff\u0750-\u077f\u08a0-\u08ff\u0900-\u0dff"
                   "\u0e00-\u0e7f\u1100-\u11ff\u1200-\u137f\u3041-\u30ff\u3131-\u318e"
                   "\u3400-\u4dbf\u4e00-\u9fff\uac00-\ud7af\uf900-\ufaff\ufb1d-\ufdff"
                   "\ufe70-\ufefc")
_UNCASED_PUNCTUATION = ("\u05be\u05c0\u05c3\u05c6\u05f3\u05f4\u060c\u060d\u061b\u061e\u061f"
                        "\u066a-\u066d\u06d4\u06dd\u06de\u06e9\u0964\u0965\u0970\u0e3f\u0e4f"
                        "\u0e5a\u0e5b\u1360-\u1368\u30fb\ufd3e\ufd3f")
_UNCASED = f"(?:(?![{_UNCASED_PUNCTUATION}])[{_UNCASED_RANGES}])"
# Titles and form labels written before a name: English ("Name:", "Mr", "Dr."), Arabic
# (السيد Mr, السيدة Mrs, الدكتور Dr, الاسم name, عزيزي dear), Persian (آقای, خانم, نام),
# Hebrew (מר, גברת, שם), Hindi (श्री, श्रीमती, नाम), Chinese (姓名, 名字), Japanese (氏名,
# 名前) and Korean (이름, 성명).
_LABEL_BEFORE = re.compile(
    r"(?:(?<![\w])(?i:(?:full |first |last |given |family )?name|surname|patient|client|"
    r"customer|applicant|employee|witness|contact|signed|from|to|author)[ \t]*[:：]"
    r"|(?<![\w])(?:Mr|Mrs|Ms|Miss|Mx|Dr|Prof|Sir|Madam|Dear)\.?"
    r"|(?<!" + _UNCASED + r")(?:السيد|السيدة|الدكتور|الدكتورة|الأستاذ|الأستاذة|الشيخ|عزيزي|"
    r"عزيزتي|الاسم|اسم|آقای|خانم|نام|מר|גברת|שם|श्री|श्रीमती|नाम|姓名|名字|氏名|名前|이름|성명)"
    r"[ \t]*[:：.]?)[ \t]*(?P<run>" + _UNCASED + r"+(?:[ \u200c]" + _UNCASED + r"+){0,2})")
# Titles written after a name: Chinese (先生 Mr, 女士 Ms, 小姐 Miss), Japanese (様, さん,
# 殿, 君) and Korean (씨, 님); the name is the (up to three) letters before the title.
_TITLE_AFTER = re.compile(r"先生|女士|小姐|様|さん|殿|씨|님")
_UNCASED_LETTER = re.compile(_UNCASED)
_UNCASED_RANGE = re.compile(f"[{_UNCASED_RANGES}]")
_NAME_BEFORE_TITLE = 3


def uncased_names(text: str) -> Iterable[tuple[int, int]]:
    """[start, end) of runs of letters of a script without letter case (Arabic, Hebrew,
    Indic, CJK, Hangul, ...) right after a title or form label ("Name: محمد", "السيد محمد
    علي", "姓名：王小明") or right before a title written after the name ("王小明先生",
    "田中様", "김민수 씨"): up to three words after, up to three letters before."""
    if _UNCASED_RANGE.search(text) is None:   # every match holds such a letter
        return
    position = 0     # searched line by line, only on the lines holding such a letter
    while (letter := _UNCASED_LETTER.search(text, position)) is not None:
        line_start = text.rfind("\n", 0, letter.start()) + 1
        line_end = text.find("\n", letter.end())
        line_end = len(text) if line_end < 0 else line_end
        for m in _LABEL_BEFORE.finditer(text, line_start, line_end):
            yield m.start("run"), m.end("run")
        position = line_end
    for m in _TITLE_AFTER.finditer(text):
        end = m.start() - (1 if m.start() and text[m.start() - 1] == " " else 0)
        start = end
        while start > 0 and end - start < _NAME_BEFORE_TITLE \
                and _UNCASED_LETTER.match(text, start - 1):
            start -= 1
        if start < end:
            yield start, end
