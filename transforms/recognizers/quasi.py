"""Quasi-identifiers for the strict profile: bare years, ages, durations, numbers after "no.", plot and sheet numbers."""
from __future__ import annotations

import re

from larvatus.transforms.recognizers.base import DIGIT_RE, H, SCORE_FORMAT, finditer_on_lines
from larvatus.transforms.recognizers.registry import Kind, PatternSettings
from larvatus.transforms.records import EntitySpan

# Number words a duration or an age is written with (English, German, French, Spanish).
_NUMBER_WORDS = (
    r"one|two|three|four|five|six|seven|eight|nine|ten|eleven|twelve|fifteen|twenty|thirty|"
    r"forty|fifty|a few|several|ein(?:e|en|em)?|zwei|drei|vier|fünf|sechs|sieben|acht|neun|"
    r"zehn|zwölf|un|une|deux|trois|quatre|cinq|six|dix|uno|una|dos|tres|cuatro|cinco|seis|diez")
_UNITS = (r"years?|months?|weeks?|days?|hours?|decades?|Jahren?|Monaten?|Wochen|Tagen?|"
          r"Stunden|ans|années|mois|semaines|jours|años|meses|semanas|días")
_AMOUNT = rf"(?:[0-9]+(?:[.,][0-9]+)?|(?i:{_NUMBER_WORDS}))"
_DURATION_RE = re.compile(
    rf"(?=[0-9a-zA-Zü])(?<![\w-]){_AMOUNT}(?:{H}|-)(?i:{_UNITS})(?![\w-])(?!{H}+(?i:old|alt)\b)")
_AGE_RE = re.compile(
    rf"(?=[0-9aAiIâÂeE])(?<![\w-])(?:(?i:aged|age(?:{H}+of)?|im{H}+Alter{H}+von|Alter|âgée?{H}+de|edad{H}+de)"
    rf"{H}+[0-9]{{1,3}}(?![\w.,][0-9])"
    rf"|[0-9]{{1,3}}(?:{H}|-)(?i:years?|yrs?|Jahre?)(?:{H}|-)(?i:old|alt)"
    rf"|[0-9]{{1,3}}-(?i:jährige[nrms]?|year-old))(?![\w-])")
_YEAR_RE = re.compile(r"(?=[12])(?<![\w.,/:-])(?:1[89][0-9]{2}|20[0-9]{2})(?![\w]|[.,/:-][0-9])")
_NUMBER_AFTER_RE = re.compile(
    rf"(?=[nNpPsSlLfFbBhH])(?<![\w])(?i:no\.|nr\.|n[°º]\.?|number|nummer|plot|sheet|parcel|lot|Flurst[üu]ck|Flur|"
    rf"Blatt|parcelle|feuille|parcela|hoja|folio)s?{H}*(?:(?i:no\.|nr\.){H}*)?"
    rf"(?P<number>[0-9][\w]*(?:[/.-][\w]+)*)(?![\w])")
# Every duration holds one of its units: searched only on the lines holding one.
_UNIT_HINT_RE = re.compile(r"(?i:year|month|week|day|hour|decade|jahr|monat|woche|tag|stunde|"
                           r"ans\b|année|mois|semaine|jour|año|mes|semana|día)")
# Plot and sheet numbers written on their own: "11/15W.2" (with a letter and a sub-number).
_PLOT_RE = re.compile(r"(?<![\w/.-])[0-9]{1,4}/[0-9]{1,4}[A-Z]{1,2}(?:\.[0-9]{1,3})?(?![\w/]|\.[0-9])")


def recognize_quasi_identifiers(text: str, settings: PatternSettings) -> list[EntitySpan]:
    """Bare years (1800-2099), ages ("age of 65", "aged 65", "65-year-old", "im Alter von
    65"), durations ("two years", "12 months", "drei Jahre"), the number after "no.", "nr.",
    "plot", "sheet", "Flurstück" ("no. 511", "plot 22/1") and plot numbers such as
    "11/15W.2": quasi-identifiers a court or a hospital hides, kept by default."""
    spans = []
    for pattern, hint in ((_DURATION_RE, _UNIT_HINT_RE), (_AGE_RE, DIGIT_RE),
                          (_YEAR_RE, DIGIT_RE), (_PLOT_RE, DIGIT_RE)):
        spans += [EntitySpan(m.start(), m.end(), "QUASI", SCORE_FORMAT)
                  for m in finditer_on_lines(pattern, hint, text)]
    spans += [EntitySpan(m.start("number"), m.end("number"), "QUASI", SCORE_FORMAT)
              for m in finditer_on_lines(_NUMBER_AFTER_RE, DIGIT_RE, text)]
    return spans


KINDS = (
    Kind("QUASI", recognize_quasi_identifiers, 4,
         "quasi-identifiers (strict profile only): bare years, ages, durations, the number "
         "after no./plot/sheet, plot numbers such as 11/15W.2",
         context="ages and numbers: a cue (age, aged, no., plot, sheet, Flurstück)",
         profile="strict"),
)
