"""References after their cue word: UK sort codes, case numbers after "no.", plot and sheet numbers."""
from __future__ import annotations

import re

from larvatus.transforms.recognizers.base import (
    DIGIT_RE, H, SCORE_FORMAT, cue_pattern, finditer_on_lines, line_window)
from larvatus.transforms.recognizers.line_hints import lines_holding, with_line_stems
from larvatus.transforms.records import EntitySpan

# "60-16-13", "60 16 13", "601613" on the line of "sort code" (before it, or after it in
# "account 31926819, sort code 60-16-13").
_SORT_CODE_RE = re.compile(
    r"(?=[0-9])(?<![\w.,/+-])[0-9]{2}(?P<sep>[- ]?)[0-9]{2}(?P=sep)[0-9]{2}(?![\w-])(?![.,/][0-9])")
_SORT_CODE_CUE = with_line_stems(cue_pattern(r"sort{H}?code|sorting{H}code|s/c".replace("{H}", H)),
                            "sort|s/c")
_SORT_CODE_CUE_BEFORE = 40
# Case and registration numbers after "no." / "nos." / "n°" / "Nr." with at least one "/"
# ("no. 31/1993/426/505"); plot, parcel, sheet and lot numbers after their word
# ("plot 288/3", "sheet 11/15W.2", "parcel no. 1234/5", "Flurstück 12/3").
_SLASHED = r"(?P<code>[0-9]+[A-Z]?(?:/[0-9A-Z]+(?:[.-][0-9A-Z]+)*)+)(?![\w/])"
_NUMBER_SLASHED_RE = re.compile(
    rf"(?=[Nn])(?<![\w-])(?i:nos?\.|n[°º]s?|nr\.?|num\.|number){H}*{_SLASHED}")
_LAND_REFERENCE_RE = re.compile(
    rf"(?=[FKLPSfklps])(?<![\w-])(?i:plots?|parcels?|sheets?|lots?|flurst[üu]cke?|parcelles?|"
    rf"kadastra(?:al|le)|folio)(?:{H}+(?i:no\.?|nr\.?|n[°º]|number))?{H}*[:#]?{H}*{_SLASHED}")
_SLASH_HINT_RE = re.compile(r"[0-9A-Z]/[0-9A-Z]")
# The patterns' opening class, then their words' stems (`re` scans for the class).
_LAND_HINT_RE = with_line_stems(re.compile(r"(?=[FKLPSfklps])(?i:plot|parcel|sheet|lot|flurst|kadastra|folio)"),
                           "plot|parcel|sheet|lot|flurst|kadastra|folio")
_LAND_BARE_RE = re.compile(   # "plot 288", "Flurstück 1234": three or more digits, no slash
    rf"(?=[FKPfkp])(?<![\w-])(?i:plots?|parcels?|flurst[üu]cke?|parcelles?)"
    rf"(?:{H}+(?i:no\.?|nr\.?|n[°º]|number))?{H}*[:#]?{H}*(?P<code>[0-9]{{3,}}[A-Z]?)(?![\w/])")


def recognize_references(text: str) -> list[EntitySpan]:
    """UK sort codes next to "sort code" (US routing numbers are BANK, see `finance`), slashed case numbers after "no.", and plot, parcel and sheet numbers, as CODE
    spans (the code alone).

    "no. 5", "Article 6 § 1", "nos. 3 and 4", a sort-code-shaped "12-08-56" without its
    cue word and "sheet 2" are kept.
    """
    spans = []
    # Every pattern needs a digit: its hint is searched on the digit lines alone.
    for m in finditer_on_lines(_SORT_CODE_RE, _SORT_CODE_CUE, text,
                               lines_holding(text, DIGIT_RE, _SORT_CODE_CUE)):
        ws, we = line_window(text, m.start(), m.end(), _SORT_CODE_CUE_BEFORE, 0)
        if _SORT_CODE_CUE.search(text, ws, m.start()):
            spans.append(EntitySpan(m.start(), m.end(), "CODE", SCORE_FORMAT))
    for pattern, hint in ((_NUMBER_SLASHED_RE, _SLASH_HINT_RE), (_LAND_REFERENCE_RE, _LAND_HINT_RE),
                          (_LAND_BARE_RE, _LAND_HINT_RE)):
        spans += [EntitySpan(m.start("code"), m.end("code"), "CODE", SCORE_FORMAT)
                  for m in finditer_on_lines(pattern, hint, text,
                                             lines_holding(text, DIGIT_RE, hint))
                  if sum(ch.isdigit() for ch in m.group("code")) >= 3]
    return spans
