"""Known personal items planted into copies of a user's documents, and how many a redaction hid."""
from __future__ import annotations

import datetime
import functools
import math
import random
import re
from dataclasses import dataclass
from typing import Callable, Iterable, Optional, Sequence

# Kinds planted, in the order tables list them.
KINDS = ("PER", "EMAIL", "PHONE", "IBAN", "CARD", "ID", "DATE", "ADDRESS")
# Where an item sits: on a line of its own after a cue a form or letter would have ("cue":
# "Dear ...", "Tel: ...", "IBAN: ...", a signature), or inside a sentence ("running").
CONTEXTS = ("cue", "running")
# Faker's locale for a document's language; other languages plant as English does.
LOCALES = {"en": "en_GB", "de": "de_DE", "fr": "fr_FR", "es": "es_ES", "it": "it_IT",
           "nl": "nl_NL"}
REGION = {"en_GB": "GB", "de_DE": "DE", "fr_FR": "FR", "es_ES": "ES", "it_IT": "IT",
          "nl_NL": "NL"}
Z_95 = 1.959963984540054

# Per language: the cue line of each kind ({v} is the item) and a running sentence with it.
# Names have two cue positions: a greeting opening the document and a signature closing it.
TEMPLATES: dict[str, dict[str, tuple[str, ...]]] = {
    "en": {
        "greeting": ("Dear {v},",), "signature": ("Kind regards,\n{v}",),
        "PER": ("I spoke with {v} about it yesterday.",),
        "EMAIL": ("Email: {v}", "Please write to {v} if anything changes."),
        "PHONE": ("Tel: {v}", "You can call me on {v} after six."),
        "IBAN": ("IBAN: {v}", "The refund goes to {v} as agreed."),
        "CARD": ("Card number: {v}", "It was paid with {v} last week."),
        "ID": ("{label}: {v}", "My {label} is {v}, as on the form."),
        "DATE": ("Date of birth: {v}", "She was born on {v} in the old hospital."),
        "ADDRESS": ("Address: {v}", "The letter was sent to {v} by mistake."),
    },
    "de": {
        "greeting": ("Sehr geehrte/r {v},",), "signature": ("Mit freundlichen Grüßen\n{v}",),
        "PER": ("Ich habe gestern mit {v} darüber gesprochen.",),
        "EMAIL": ("E-Mail: {v}", "Bitte schreiben Sie an {v}, wenn sich etwas ändert."),
        "PHONE": ("Tel.: {v}", "Sie erreichen mich unter {v} ab 18 Uhr."),
        "IBAN": ("IBAN: {v}", "Die Erstattung geht wie vereinbart an {v}."),
        "CARD": ("Kartennummer: {v}", "Bezahlt wurde letzte Woche mit {v}."),
        "ID": ("{label}: {v}", "Meine {label} ist {v}, wie im Formular."),
        "DATE": ("Geburtsdatum: {v}", "Sie wurde am {v} im alten Krankenhaus geboren."),
        "ADDRESS": ("Anschrift: {v}", "Der Brief ging versehentlich an {v}."),
    },
    "fr": {
        "greeting": ("Bonjour {v},",), "signature": ("Cordialement,\n{v}",),
        "PER": ("J'en ai parlé hier avec {v}.",),
        "EMAIL": ("Courriel : {v}", "Merci d'écrire à {v} en cas de changement."),
        "PHONE": ("Tél. : {v}", "Vous pouvez m'appeler au {v} après 18 heures."),
        "IBAN": ("IBAN : {v}", "Le remboursement sera versé sur {v} comme convenu."),
        "CARD": ("Numéro de carte : {v}", "Le paiement a été fait avec la carte {v}."),
        "ID": ("{label} : {v}", "Mon {label} est le {v}, comme sur le formulaire."),
        "DATE": ("Date de naissance : {v}", "Elle est née le {v} à l'ancien hôpital."),
        "ADDRESS": ("Adresse : {v}", "La lettre a été envoyée par erreur au {v}."),
    },
    "es": {
        "greeting": ("Estimado/a {v}:",), "signature": ("Saludos cordiales,\n{v}",),
        "PER": ("Ayer hablé de ello con {v}.",),
        "EMAIL": ("Correo: {v}", "Escriba a {v} si algo cambia."),
        "PHONE": ("Tel.: {v}", "Puede llamarme al {v} después de las seis."),
        "IBAN": ("IBAN: {v}", "El reembolso irá a {v} como acordamos."),
        "CARD": ("Número de tarjeta: {v}", "Se pagó con la tarjeta {v} la semana pasada."),
        "ID": ("{label}: {v}", "Mi {label} es {v}, como en el formulario."),
        "DATE": ("Fecha de nacimiento: {v}", "Nació el {v} en el antiguo hospital."),
        "ADDRESS": ("Dirección: {v}", "La carta se envió por error a {v}."),
    },
    "it": {
        "greeting": ("Gentile {v},",), "signature": ("Cordiali saluti,\n{v}",),
        "PER": ("Ne ho parlato ieri con {v}.",),
        "EMAIL": ("Email: {v}", "Scriva a {v} se qualcosa cambia."),
        "PHONE": ("Tel.: {v}", "Può chiamarmi al {v} dopo le sei."),
        "IBAN": ("IBAN: {v}", "Il rimborso andrà su {v} come concordato."),
        "CARD": ("Numero di carta: {v}", "È stato pagato con la carta {v} la settimana scorsa."),
        "ID": ("{label}: {v}", "Il mio {label} è {v}, come nel modulo."),
        "DATE": ("Data di nascita: {v}", "È nata il {v} nel vecchio ospedale."),
        "ADDRESS": ("Indirizzo: {v}", "La lettera è stata spedita per errore a {v}."),
    },
    "nl": {
        "greeting": ("Beste {v},",), "signature": ("Met vriendelijke groet,\n{v}",),
        "PER": ("Ik heb er gisteren met {v} over gesproken.",),
        "EMAIL": ("E-mail: {v}", "Schrijf naar {v} als er iets verandert."),
        "PHONE": ("Tel.: {v}", "U kunt me na zessen bellen op {v}."),
        "IBAN": ("IBAN: {v}", "De terugbetaling gaat zoals afgesproken naar {v}."),
        "CARD": ("Kaartnummer: {v}", "Er is vorige week betaald met {v}."),
        "ID": ("{label}: {v}", "Mijn {label} is {v}, zoals op het formulier."),
        "DATE": ("Geboortedatum: {v}", "Ze is op {v} in het oude ziekenhuis geboren."),
        "ADDRESS": ("Adres: {v}", "De brief is per ongeluk naar {v} gestuurd."),
    },
}
# The national identifier planted per locale: (its cue label, a generator of valid values).
ID_LABELS = {"en_GB": "National Insurance number", "de_DE": "Steuer-ID", "fr_FR": "NIR",
             "es_ES": "DNI", "it_IT": "codice fiscale", "nl_NL": "BSN"}
MONTHS = {
    "en": ("January", "February", "March", "April", "May", "June", "July", "August",
           "September", "October", "November", "December"),
    "de": ("Januar", "Februar", "März", "April", "Mai", "Juni", "Juli", "August", "September",
           "Oktober", "November", "Dezember"),
    "fr": ("janvier", "février", "mars", "avril", "mai", "juin", "juillet", "août", "septembre",
           "octobre", "novembre", "décembre"),
}
# Titles before a surname planted alone (a third of the names).
TITLES = {"en": ("Mr", "Ms", "Dr"), "de": ("Herr", "Frau", "Dr."), "fr": ("M.", "Mme"),
          "es": ("Sr.", "Sra."), "it": ("Sig.", "Sig.ra"), "nl": ("dhr.", "mevr.")}
_SENTENCE_END = re.compile(r"(?<=[.!?])\s+(?=[A-ZÀ-Ý])")
_WORD = re.compile(r"\w+")


@dataclass(frozen=True, slots=True)
class PlantedItem:
    """One planted value: `copy_text[start:end] == value` (code points, end-exclusive)."""

    kind: str
    context: str       # "cue" or "running"
    position: str      # greeting, signature, header, footer or sentence
    value: str
    start: int
    end: int


@dataclass(frozen=True, slots=True)
class PlantedCopy:
    """A copy of one user document with items planted; `original` maps each original
    character's position in the copy (the rest is planted: items and their template words)."""

    copy_id: str
    doc_id: str
    language: str
    text: str
    items: tuple[PlantedItem, ...]
    original_spans: tuple[tuple[int, int], ...]   # runs of the copy that are the user's text


@dataclass(frozen=True, slots=True)
class ItemOutcome:
    """What a redaction did to one planted item: hidden whole, partly or missed."""

    copy_id: str
    item: PlantedItem
    outcome: str       # "hidden", "partly" or "missed"


def wilson_interval(successes: int, trials: int, z: float = Z_95) -> tuple[float, float]:
    """The Wilson score interval of a binomial proportion (95% by default); (0, 1) for none."""
    if trials <= 0:
        return 0.0, 1.0
    p = successes / trials
    denominator = 1 + z * z / trials
    centre = (p + z * z / (2 * trials)) / denominator
    half = z * math.sqrt(p * (1 - p) / trials + z * z / (4 * trials * trials)) / denominator
    low = 0.0 if successes == 0 else max(0.0, centre - half)
    high = 1.0 if successes == trials else min(1.0, centre + half)
    return low, high


# --- values ---------------------------------------------------------------------------

@functools.lru_cache(maxsize=None)
def _faker_of(locale: str):
    from faker import Faker   # imported on first use: only estimates need it

    return Faker(locale)


def _faker(locale: str, seed: int):
    fake = _faker_of(locale)
    fake.seed_instance(seed)
    return fake


def _valid_phone(fake, rng: random.Random, region: str) -> str:
    import phonenumbers

    for _ in range(100):
        value = fake.phone_number()
        if "x" in value.lower():
            continue
        try:
            number = phonenumbers.parse(value, region)
        except phonenumbers.NumberParseException:
            continue
        if phonenumbers.is_valid_number(number):
            return value
    number = phonenumbers.example_number_for_type(region, phonenumbers.PhoneNumberType.MOBILE)
    return phonenumbers.format_number(number, phonenumbers.PhoneNumberFormat.INTERNATIONAL)


def _valid_iban(fake, rng: random.Random) -> str:
    from stdnum import iban

    for _ in range(100):
        value = fake.iban()
        if iban.is_valid(value):
            break
    if rng.random() < 0.5:
        value = " ".join(value[i:i + 4] for i in range(0, len(value), 4))
    return value


def _valid_card(fake, rng: random.Random) -> str:
    from stdnum import luhn

    for _ in range(100):
        value = fake.credit_card_number(card_type=rng.choice(("visa16", "mastercard")))
        if luhn.is_valid(value) and len(value) == 16:
            break
    return rng.choice((value, " ".join(value[i:i + 4] for i in range(0, 16, 4)),
                       "-".join(value[i:i + 4] for i in range(0, 16, 4))))


def _nino(rng: random.Random) -> str:
    first = "ABCEGHJKLMNOPRSTWXYZ"
    second = "ABCEGHJKLMNPRSTWXYZ"
    while True:
        prefix = rng.choice(first) + rng.choice(second)
        if prefix not in {"BG", "GB", "KN", "NK", "NT", "TN", "ZZ"}:
            break
    digits = "".join(rng.choice("0123456789") for _ in range(6))
    return f"{prefix} {digits[:2]} {digits[2:4]} {digits[4:]} {rng.choice('ABCD')}"


def _national_id(fake, rng: random.Random, locale: str) -> str:
    from stdnum.de import idnr
    from stdnum.es import dni
    from stdnum.fr import nir
    from stdnum.iso7064 import mod_11_10
    from stdnum.it import codicefiscale
    from stdnum.nl import bsn

    for _ in range(200):
        if locale == "en_GB":
            return _nino(rng)
        if locale == "de_DE":
            body = "".join(rng.choice("123456789") for _ in range(1)) + "".join(
                rng.choice("0123456789") for _ in range(9))
            value = body + mod_11_10.calc_check_digit(body)
            if idnr.is_valid(value):
                return value
        elif locale == "es_ES":
            body = "".join(rng.choice("0123456789") for _ in range(8))
            return body + dni.calc_check_digit(body)
        elif locale == "fr_FR":
            value = fake.ssn()
            if nir.is_valid(value):
                return value
        elif locale == "it_IT":
            value = fake.ssn()
            if codicefiscale.is_valid(value):
                return value
        elif locale == "nl_NL":
            value = fake.ssn()
            if bsn.is_valid(value):
                return value
        else:
            return _nino(rng)
    raise RuntimeError(f"no valid national identifier generated for {locale}")


def _date(rng: random.Random, language: str) -> str:
    day = datetime.date(1940, 1, 1) + datetime.timedelta(days=rng.randrange(60 * 365))
    months = MONTHS.get(language)
    styles = ["numeric"] + (["written"] if months else [])
    if rng.choice(styles) == "written":
        return f"{day.day} {months[day.month - 1]} {day.year}"
    separator = "." if language in ("de", "nl") else "/"
    return f"{day.day:02d}{separator}{day.month:02d}{separator}{day.year}"


def item_value(kind: str, fake, rng: random.Random, locale: str, language: str) -> str:
    """A realistic value of `kind` for `locale`, valid where a checksum or numbering plan
    applies (python-stdnum, phonenumbers)."""
    if kind == "PER":   # the surname alone where a title stands before it (see plan_inserts)
        return f"{fake.first_name()} {fake.last_name()}"
    if kind == "EMAIL":
        return fake.email()
    if kind == "PHONE":
        return _valid_phone(fake, rng, REGION.get(locale, "GB"))
    if kind == "IBAN":
        return _valid_iban(fake, rng)
    if kind == "CARD":
        return _valid_card(fake, rng)
    if kind == "ID":
        return _national_id(fake, rng, locale)
    if kind == "DATE":
        return _date(rng, language)
    if kind == "ADDRESS":
        return ", ".join(line.strip() for line in fake.address().splitlines() if line.strip())
    raise ValueError(f"unknown kind {kind!r}; kinds are {', '.join(KINDS)}")


# --- planting ---------------------------------------------------------------------------

@dataclass(frozen=True, slots=True)
class _Insert:
    at: int             # position in the original text
    before: str         # template text before the value
    value: str
    after: str
    kind: str
    context: str
    position: str


def _split_template(template: str, label: str) -> tuple[str, str]:
    before, _, after = template.replace("{label}", label).partition("{v}")
    return before, after


def _sentence_ends(text: str) -> list[int]:
    return [match.start() for match in _SENTENCE_END.finditer(text)]


def plan_inserts(text: str, language: str, kinds: Sequence[str], rng: random.Random,
                 fake, locale: str) -> list[_Insert]:
    """Where each kind's item goes in `text`, and in which words."""
    templates = TEMPLATES.get(language, TEMPLATES["en"])
    label = ID_LABELS.get(locale, ID_LABELS["en_GB"])
    ends = _sentence_ends(text)
    inserts: list[_Insert] = []
    used_running: set[int] = set()
    for kind in kinds:
        value = item_value(kind, fake, rng, locale, language)
        context = rng.choice(CONTEXTS)
        title = ""
        if kind == "PER" and rng.random() < 1 / 3:
            title = rng.choice(TITLES.get(language, TITLES["en"])) + " "
            value = value.split()[-1]
        if context == "running" and ends:
            free = [end for end in ends if end not in used_running] or ends
            at = rng.choice(free)
            used_running.add(at)
            template = templates[kind][-1]
            before, after = _split_template(template, label)
            inserts.append(_Insert(at, " " + before + title, value, after, kind, "running",
                                   "sentence"))
            continue
        if context == "running":   # no sentence break: a sentence of its own at the end
            template = templates[kind][-1]
            before, after = _split_template(template, label)
            inserts.append(_Insert(len(text), "\n\n" + before + title, value, after, kind,
                                   "running", "sentence"))
            continue
        if kind == "PER":
            if rng.random() < 0.5:
                before, after = _split_template(templates["greeting"][0], label)
                inserts.append(_Insert(0, before + title, value, after + "\n\n", kind, "cue",
                                       "greeting"))
            else:
                before, after = _split_template(templates["signature"][0], label)
                inserts.append(_Insert(len(text), "\n\n" + before + title, value, after, kind,
                                       "cue", "signature"))
            continue
        before, after = _split_template(templates[kind][0], label)
        if rng.random() < 0.5:
            inserts.append(_Insert(0, before, value, after + "\n", kind, "cue", "header"))
        else:
            inserts.append(_Insert(len(text), "\n" + before, value, after, kind, "cue", "footer"))
    return inserts


def apply_inserts(copy_id: str, doc_id: str, language: str, text: str,
                  inserts: Iterable[_Insert]) -> PlantedCopy:
    """The copy of `text` with `inserts` in place, its items' offsets and its original runs."""
    # Greetings first at the top, signatures last at the bottom; stable otherwise.
    rank = {"greeting": 0, "header": 1, "sentence": 2, "footer": 3, "signature": 4}
    ordered = sorted(inserts, key=lambda insert: (insert.at, rank[insert.position]))
    pieces: list[str] = []
    items: list[PlantedItem] = []
    originals: list[tuple[int, int]] = []
    length = 0
    done = 0
    for insert in ordered:
        if insert.at > done:
            pieces.append(text[done:insert.at])
            originals.append((length, length + insert.at - done))
            length += insert.at - done
            done = insert.at
        start = length + len(insert.before)
        pieces.append(insert.before + insert.value + insert.after)
        items.append(PlantedItem(insert.kind, insert.context, insert.position, insert.value,
                                 start, start + len(insert.value)))
        length += len(insert.before) + len(insert.value) + len(insert.after)
    if done < len(text):
        pieces.append(text[done:])
        originals.append((length, length + len(text) - done))
    planted = "".join(pieces)
    return PlantedCopy(copy_id, doc_id, language, planted, tuple(items), tuple(originals))


def plant(doc_id: str, text: str, language: str, copy_index: int, seed: int,
          items_per_copy: int, kinds: Sequence[str] = KINDS) -> PlantedCopy:
    """One copy of a document with `items_per_copy` items of distinct kinds planted; the same
    arguments give the same copy on every machine with the same faker version."""
    rng = random.Random(f"{seed}\x1f{doc_id}\x1f{copy_index}")
    locale = LOCALES.get(language, LOCALES["en"])
    fake = _faker(locale, rng.randrange(1 << 30))
    chosen = rng.sample(list(kinds), min(items_per_copy, len(kinds)))
    inserts = plan_inserts(text, language, chosen, rng, fake, locale)
    return apply_inserts(f"{doc_id}#planted-{copy_index}", doc_id, language, text, inserts)


# --- scoring ----------------------------------------------------------------------------

def coverage(length: int, spans: Iterable[tuple[int, int]]) -> bytearray:
    """One byte per character: 1 where some span covers it."""
    mask = bytearray(length)
    for start, end in spans:
        mask[max(0, start):min(length, end)] = b"\x01" * (min(length, end) - max(0, start))
    return mask


def item_outcome(text: str, item: PlantedItem, mask: bytearray) -> str:
    """hidden (every letter and digit of the item covered), partly, or missed."""
    positions = [i for i in range(item.start, item.end) if text[i].isalnum()]
    covered = sum(mask[i] for i in positions)
    if positions and covered == len(positions):
        return "hidden"
    return "partly" if covered else "missed"


def original_words(copy: PlantedCopy, mask: bytearray) -> tuple[int, int]:
    """(words of the user's own text in the copy, those with no character redacted)."""
    words = kept = 0
    for start, end in copy.original_spans:
        for match in _WORD.finditer(copy.text, start, end):
            words += 1
            kept += not any(mask[match.start():match.end()])
    return words, kept


@dataclass(frozen=True, slots=True)
class EstimateRow:
    """One line of the estimate table: a kind (or "all") in a context (or "all")."""

    kind: str
    context: str
    planted: int
    hidden: int
    partly: int
    missed: int

    @property
    def recall(self) -> Optional[float]:
        return self.hidden / self.planted if self.planted else None

    @property
    def interval(self) -> tuple[float, float]:
        return wilson_interval(self.hidden, self.planted)

    def as_dict(self) -> dict:
        low, high = self.interval
        return {"kind": self.kind, "context": self.context, "planted": self.planted,
                "hidden": self.hidden, "partly": self.partly, "missed": self.missed,
                "recall": self.recall, "interval_95": [low, high]}


def table(outcomes: Sequence[ItemOutcome]) -> list[EstimateRow]:
    """Rows per kind and context, per kind over both contexts, and all items together."""
    rows = []
    kinds = [kind for kind in KINDS if any(o.item.kind == kind for o in outcomes)]
    for kind in kinds + ["all"]:
        for context in CONTEXTS + ("all",):
            chosen = [o for o in outcomes if (kind == "all" or o.item.kind == kind)
                      and (context == "all" or o.item.context == context)]
            if not chosen and context != "all":
                continue
            counts = {name: sum(o.outcome == name for o in chosen)
                      for name in ("hidden", "partly", "missed")}
            rows.append(EstimateRow(kind, context, len(chosen), counts["hidden"],
                                    counts["partly"], counts["missed"]))
    return rows


def score_copy(copy: PlantedCopy, redacted_spans: Iterable[tuple[int, int]]
               ) -> tuple[list[ItemOutcome], tuple[int, int]]:
    """Each item's outcome and the copy's (original words, kept) under the redacted spans."""
    mask = coverage(len(copy.text), redacted_spans)
    outcomes = [ItemOutcome(copy.copy_id, item, item_outcome(copy.text, item, mask))
                for item in copy.items]
    return outcomes, original_words(copy, mask)


def choose_sample(count: int, sample: Optional[int], seed: int) -> list[int]:
    """Indices of a seeded sample of `sample` of `count` documents (all when None or more)."""
    if sample is None or sample >= count:
        return list(range(count))
    return sorted(random.Random(f"sample\x1f{seed}").sample(range(count), sample))


Redact = Callable[[Sequence[PlantedCopy]], Sequence[Sequence[tuple[int, int]]]]
