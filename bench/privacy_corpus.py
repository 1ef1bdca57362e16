"""Privacy benchmark corpus and scoring: documents with planted personal data and gold spans."""
# Pure and importable (faker, python-stdnum and phonenumbers; no model, no file, no clock):
# `make_split("test", 140)` returns the same documents on every machine with the same faker
# version, and `score(documents, predictions)` turns a redactor's spans into the figures
# bench/privacy.py prints.
#
# **Documents.** Seven genres, written in English: `email`, `chat` (IRC-style log with
# lowercase names), `medical` (clinic note), `court` (ECHR, UK county court or US district
# court judgement, with application/case numbers and dates), `hr` (employee record), `cv`,
# `log` (web server and application log lines). Each document has a locale (`en_US`, `en_GB`,
# `de_DE`, `fr_FR`, `nl_NL`): names, streets, cities, companies, IBANs, phone and date formats
# and national ids follow it (the people in a document may come from other locales too).
# Document `i` of a split depends only on the split's seed and `i`, so a shorter run is a
# prefix of a longer one; `dev` and `test` come from different seeds (tune on `dev`, report
# on `test`).
#
# **Gold.** Every planted item is a `Gold` span: `text[start:end] == value` (Python code
# points, end-exclusive), spans never overlap, and each has a kind (`KINDS`), a format name
# (`fmt`, e.g. `gb_intl` for a phone, `d_month_y` for a date, `nino` for an id) and, from
# its letters, a casing (`title`, `lower`, `upper`). Kinds:
#
# - PER person names (Titlecase in prose, lowercase in chats, ALL CAPS in headers and court
#   headings; full names, surnames after a title, first names, "SURNAME, FIRST");
# - LOC cities and street addresses; ORG companies, hospitals, universities, courts;
# - EMAIL; PHONE (valid numbers per libphonenumber: `+44 20 7946 0958`, `(212) 555-0143`,
#   `07700 900123`-style mobiles, `+33 1 23 45 67 89`, German and Dutch forms, ...);
# - CARD (faker, Luhn-valid; plain, spaced or dashed); IBAN (valid; compact or spaced);
# - IP (v4 public, v6 full or compressed); URL; DATE (`12/08/1956`, `08/12/1956`,
#   `1956-08-12`, `12 August 1956`, `August 12, 1956`, `12.08.1956`);
# - ID (UK NINO, NHS number, US SSN, Dutch BSN, German tax id, French NIR, all valid);
# - HANDLE (`<jdoe>` at a chat line's start or after a `[09:14]` time, `@jdoe`, `user=jdoe`:
#   the gold span is the nickname alone); CODE (application, case, claim, account, MRN, employee and order
#   references after a cue word: the gold span is the code alone).
#
# Besides gold, a document has **neutral** spans: text a redactor may hide or keep without
# being right or wrong (log and chat timestamps, country names, bare years). Everything else
# is ordinary text, including deliberate distractors (doses, blood pressures, amounts,
# article numbers, HTTP status codes, request ids, version strings).
#
# **Scoring** (`score`): a redactor's prediction for a document is the list of spans it
# *redacted* (labels are ignored) and, optionally, its redacted text.
#
# - An item is **caught** when the redacted spans cover every alphanumeric character of its
#   gold span (character-level coverage: `[PHONE]` over a date still hides the date; half a
#   name hidden is a miss). Recall per kind = caught / items; PER also per casing.
# - An item **leaks** when its exact surface string still appears in the redacted text,
#   with no letter or digit right before or after it (so "Ann" does not leak through
#   "Annual"). Without a redacted text, one is made by replacing the redacted spans.
# - **Precision** = alphanumeric characters redacted inside some gold span / alphanumeric
#   characters redacted outside neutral spans: over-redaction of ordinary words shows.
# - Overall: micro recall over all items, over structured kinds (not PER/LOC/ORG) and over
#   names (PER/LOC/ORG).
# - **Ordinary words kept**: of the words outside gold and neutral spans, the share with no
#   character redacted; reported for every such word and for the capitalised ones (headings,
#   greetings, roles, months, sentence starts: the words a name model mistakes for names).
# - **Ordinary name spans**: of the redacted spans with a name label (PER, LOC, ORG, MISC,
#   PERSON, LOCATION, ORGANIZATION, NRP), the share that touch no gold item ("Hi team" as ORG).
# - **Span-edge damage**: of the redacted spans that touch a gold item, those that also take
#   a letter or digit outside every gold and neutral span (a neighbouring word: "witness
#   [PER]"), and those whose first or last character is punctuation or a space.
from __future__ import annotations

import datetime
import ipaddress
import random
import re
import unicodedata
from dataclasses import asdict, dataclass
from typing import Callable, Iterable, Mapping, Optional, Sequence

import phonenumbers
from faker import Faker
from stdnum import iban as stdnum_iban
from stdnum import luhn
from stdnum.de import idnr as de_idnr
from stdnum.fr import nir as fr_nir
from stdnum.gb import nhs as gb_nhs
from stdnum.nl import bsn as nl_bsn
from stdnum.us import ssn as us_ssn

KINDS = ("PER", "LOC", "ORG", "EMAIL", "PHONE", "CARD", "IBAN", "IP", "URL", "DATE", "ID",
         "HANDLE", "CODE")
NAME_KINDS = ("PER", "LOC", "ORG")
STRUCTURED_KINDS = tuple(k for k in KINDS if k not in NAME_KINDS)
CASINGS = ("title", "lower", "upper")
GENRES = ("email", "chat", "medical", "court", "hr", "cv", "log")
LOCALES = ("en_US", "en_GB", "de_DE", "fr_FR", "nl_NL")
LOCALE_WEIGHTS = (3, 3, 1.4, 1.3, 1.3)
SPLITS = ("dev", "test")
SPLIT_SEEDS = {"dev": 7_340_101, "test": 9_120_417}
DEFAULT_DOCS = 140  # 20 of each genre

__all__ = [
    "CASINGS", "DEFAULT_DOCS", "Document", "GENRES", "Gold", "KINDS", "LOCALES",
    "NAME_KINDS", "Prediction", "SPLITS", "SPLIT_SEEDS", "STRUCTURED_KINDS", "casing_of",
    "coverage_mask", "item_caught", "item_leaked", "make_document", "make_split",
    "merge_spans", "precision_counts", "redact_with", "score",
]


# =========================================================================== records

@dataclass(frozen=True)
class Gold:
    """One planted item: `text[start:end] == value`."""

    start: int
    end: int
    kind: str
    value: str
    fmt: str = ""
    casing: str = ""


@dataclass(frozen=True)
class Document:
    id: str
    genre: str
    locale: str
    text: str
    gold: tuple[Gold, ...]
    neutral: tuple[tuple[int, int], ...] = ()

    def record(self) -> dict:
        """The pipeline's input line: `{"id", "text"}`."""
        return {"id": self.id, "text": self.text}

    def to_json(self) -> dict:
        return {"id": self.id, "genre": self.genre, "locale": self.locale, "text": self.text,
                "gold": [asdict(g) for g in self.gold], "neutral": [list(n) for n in self.neutral]}


def casing_of(value: str) -> str:
    """"upper" if every letter is a capital, "lower" if none is, else "title"."""
    letters = [c for c in value if c.isalpha()]
    if letters and all(c.isupper() for c in letters):
        return "upper"
    if letters and all(c.islower() for c in letters):
        return "lower"
    return "title"


class _Builder:
    """Appends text pieces, recording planted items and neutral spans as it goes."""

    def __init__(self):
        self._parts: list[str] = []
        self._pos = 0
        self.gold: list[Gold] = []
        self.neutral: list[tuple[int, int]] = []

    def add(self, *pieces) -> "_Builder":
        """Pieces: plain strings, (KIND, value[, fmt]) to plant, ("NEUTRAL", value), lists of pieces."""
        for piece in pieces:
            if isinstance(piece, str):
                self._append(piece)
                continue
            if isinstance(piece, list):
                self.add(*piece)
                continue
            kind, value, *rest = piece
            if not value:
                continue
            if kind == "NEUTRAL":
                self.neutral.append((self._pos, self._pos + len(value)))
                self._append(value)
                continue
            if kind not in KINDS:
                raise ValueError(f"unknown kind {kind!r}")
            if value != value.strip() or not any(c.isalnum() for c in value):
                raise ValueError(f"bad planted value {value!r}")
            self.gold.append(Gold(self._pos, self._pos + len(value), kind, value,
                                  rest[0] if rest else "", casing_of(value)))
            self._append(value)
        return self

    def _append(self, text: str) -> None:
        self._parts.append(text)
        self._pos += len(text)

    def text(self) -> str:
        return "".join(self._parts)


# =========================================================================== value makers

_REAL_CITIES = {
    "en_GB": ("London", "Manchester", "Birmingham", "Leeds", "Glasgow", "Bristol", "Liverpool",
              "Sheffield", "Edinburgh", "Cardiff", "Leicester", "Nottingham", "Southampton",
              "Brighton", "Norwich", "York", "Oxford", "Reading", "Coventry", "Milton Keynes",
              "Newcastle upon Tyne", "Stoke-on-Trent", "Belfast", "Aberdeen"),
    "en_US": ("New York", "Chicago", "Houston", "Phoenix", "Philadelphia", "San Antonio",
              "San Diego", "Dallas", "Austin", "Seattle", "Denver", "Boston", "Portland",
              "Atlanta", "Miami", "Minneapolis", "Cleveland", "Pittsburgh", "Baltimore",
              "Tucson", "Sacramento", "Omaha", "Salt Lake City", "Raleigh"),
    "fr_FR": ("Paris", "Lyon", "Marseille", "Toulouse", "Nice", "Nantes", "Montpellier",
              "Bordeaux", "Lille", "Rennes", "Reims", "Grenoble", "Dijon", "Aix-en-Provence",
              "Saint-Étienne", "Le Havre"),
    "de_DE": ("Berlin", "Hamburg", "München", "Köln", "Frankfurt am Main", "Stuttgart",
              "Düsseldorf", "Leipzig", "Dortmund", "Bremen", "Dresden", "Hannover", "Nürnberg"),
    "nl_NL": ("Amsterdam", "Rotterdam", "Den Haag", "Utrecht", "Eindhoven", "Groningen",
              "Tilburg", "Almere", "Breda", "Nijmegen", "Haarlem", "Leiden", "Zwolle"),
}
_COUNTRIES = {"en_US": "the United States", "en_GB": "the United Kingdom", "de_DE": "Germany",
              "fr_FR": "France", "nl_NL": "the Netherlands"}
_ECHR_STATES = {"en_GB": "THE UNITED KINGDOM", "de_DE": "GERMANY", "fr_FR": "FRANCE",
                "nl_NL": "THE NETHERLANDS", "en_US": "THE UNITED KINGDOM"}
_NATIONALITY = {"en_US": "American", "en_GB": "British", "de_DE": "German", "fr_FR": "French",
                "nl_NL": "Dutch"}
_US_STATES = ("MASSACHUSETTS", "NEW JERSEY", "COLUMBIA", "MARYLAND", "OREGON", "COLORADO",
              "MINNESOTA", "ARIZONA")
_MONTHS = ("January", "February", "March", "April", "May", "June", "July", "August",
           "September", "October", "November", "December")
_DATE_STYLES = {
    "en_US": ("mdy_slash", "month_d_y", "iso"),
    "en_GB": ("dmy_slash", "d_month_y", "iso"),
    "de_DE": ("dmy_dot", "d_month_y", "iso"),
    "fr_FR": ("dmy_slash", "d_month_y", "iso"),
    "nl_NL": ("dmy_slash", "d_month_y", "iso"),
}
_PHONE_STYLES = {
    "en_US": ("us_paren", "us_dash", "us_intl"),
    "en_GB": ("gb_intl", "gb_mobile", "gb_london"),
    "fr_FR": ("fr_intl", "fr_national"),
    "de_DE": ("de_intl", "de_national", "de_mobile_intl"),
    "nl_NL": ("nl_intl", "nl_mobile"),
}
_PHONE_REGION = {"us": "US", "gb": "GB", "fr": "FR", "de": "DE", "nl": "NL"}
_NINO_FIRST = "ABCEGHJKLMNOPRSTWXYZ"
_NINO_SECOND = "ABCEGHJKLMNPRSTWXYZ"
_NINO_BAD_PREFIXES = {"BG", "GB", "KN", "NK", "NT", "TN", "ZZ"}


def _digits(rng: random.Random, n: int) -> str:
    return "".join(rng.choice("0123456789") for _ in range(n))


def _ascii(value: str) -> str:
    folded = unicodedata.normalize("NFKD", value).encode("ascii", "ignore").decode("ascii")
    return "".join(c for c in folded.lower() if c.isalnum())


def _date(rng: random.Random, first_year: int, last_year: int) -> datetime.date:
    lo = datetime.date(first_year, 1, 1).toordinal()
    hi = datetime.date(last_year, 12, 31).toordinal()
    return datetime.date.fromordinal(rng.randint(lo, hi))


def format_date(day: datetime.date, style: str) -> str:
    month = _MONTHS[day.month - 1]
    return {
        "dmy_slash": f"{day.day:02d}/{day.month:02d}/{day.year}",
        "mdy_slash": f"{day.month:02d}/{day.day:02d}/{day.year}",
        "dmy_dot": f"{day.day:02d}.{day.month:02d}.{day.year}",
        "iso": day.isoformat(),
        "d_month_y": f"{day.day} {month} {day.year}",
        "month_d_y": f"{month} {day.day}, {day.year}",
    }[style]


def _phone_candidate(rng: random.Random, style: str) -> str:
    d = lambda n: _digits(rng, n)  # noqa: E731
    if style.startswith("us_"):
        area = rng.choice(("212", "312", "415", "617", "202", "305", "713", "206", "503", "646",
                           "718", "404", "512"))
        exchange = str(rng.randint(2, 9)) + d(2)
        line = d(4)
        return {"us_paren": f"({area}) {exchange}-{line}", "us_dash": f"{area}-{exchange}-{line}",
                "us_intl": f"+1 {area} {exchange} {line}"}[style]
    if style == "gb_intl":
        return f"+44 20 {rng.choice('378')}{d(3)} {d(4)}" if rng.random() < 0.6 \
            else f"+44 {rng.choice(('7700', '7911', '7824', '7458', '7540'))} {d(6)}"
    if style == "gb_mobile":
        return f"07{rng.choice('45789')}{d(2)} {d(6)}"
    if style == "gb_london":
        return f"020 {rng.choice('378')}{d(3)} {d(4)}"
    if style == "fr_intl":
        return f"+33 {rng.choice('1234567')} {d(2)} {d(2)} {d(2)} {d(2)}"
    if style == "fr_national":
        return f"0{rng.choice('1234567')} {d(2)} {d(2)} {d(2)} {d(2)}"
    if style == "de_intl":
        return f"+49 {rng.choice(('30', '40', '89', '221', '69'))} {d(7)}"
    if style == "de_national":
        return f"0{rng.choice(('30', '40', '89'))} {d(8)}"
    if style == "de_mobile_intl":
        return f"+49 {rng.choice(('151', '160', '170', '176'))} {d(8)}"
    if style == "nl_intl":
        return f"+31 {rng.choice(('20', '10', '30', '70'))} {d(3)} {d(4)}"
    if style == "nl_mobile":
        return f"06 {d(8)}" if rng.random() < 0.5 else f"+31 6 {d(8)}"
    raise ValueError(style)


def make_phone(rng: random.Random, style: str) -> str:
    """A number in `style` that libphonenumber accepts as valid for its region."""
    region = _PHONE_REGION[style.split("_")[0]]
    for _ in range(200):
        candidate = _phone_candidate(rng, style)
        try:
            if phonenumbers.is_valid_number(phonenumbers.parse(candidate, region)):
                return candidate
        except phonenumbers.NumberParseException:
            pass
    raise RuntimeError(f"no valid {style} phone number found")


def make_nino(rng: random.Random, spaced: bool) -> str:
    while True:
        prefix = rng.choice(_NINO_FIRST) + rng.choice(_NINO_SECOND)
        if prefix not in _NINO_BAD_PREFIXES:
            break
    d = _digits(rng, 6)
    suffix = rng.choice("ABCD")
    return f"{prefix} {d[:2]} {d[2:4]} {d[4:]} {suffix}" if spaced else f"{prefix}{d}{suffix}"


def make_nhs(rng: random.Random, spaced: bool) -> str:
    while True:
        body = str(rng.randint(4, 9)) + _digits(rng, 8)
        check = 11 - sum(int(c) * w for c, w in zip(body, range(10, 1, -1))) % 11
        check = 0 if check == 11 else check
        if check != 10:
            number = body + str(check)
            assert gb_nhs.is_valid(number)
            return f"{number[:3]} {number[3:6]} {number[6:]}" if spaced else number


def make_ssn(rng: random.Random) -> str:
    while True:
        area = rng.randint(1, 899)
        if area == 666:
            continue
        number = f"{area:03d}-{rng.randint(1, 99):02d}-{rng.randint(1, 9999):04d}"
        if us_ssn.is_valid(number):
            return number


def make_bsn(rng: random.Random) -> str:
    while True:
        number = str(rng.randint(1, 9)) + _digits(rng, 8)
        if nl_bsn.is_valid(number):
            return number


def make_idnr(rng: random.Random) -> str:
    while True:
        body = str(rng.randint(1, 9)) + _digits(rng, 9)
        number = body + de_idnr.mod_11_10.calc_check_digit(body)
        if de_idnr.is_valid(number):
            return de_idnr.format(number)


def make_nir(rng: random.Random, born: datetime.date) -> str:
    body = (f"{rng.choice('12')}{born.year % 100:02d}{born.month:02d}"
            f"{rng.randint(1, 95):02d}{rng.randint(1, 990):03d}{rng.randint(1, 999):03d}")
    number = body + fr_nir.calc_check_digits(body)
    assert fr_nir.is_valid(number)
    return fr_nir.format(number)


def group(value: str, size: int = 4, sep: str = " ") -> str:
    return sep.join(value[i:i + size] for i in range(0, len(value), size))


def make_card(fake: Faker, rng: random.Random) -> tuple[str, str]:
    number = fake.credit_card_number()
    assert luhn.is_valid(number)
    style = rng.choice(("plain", "spaced", "spaced", "dashed"))
    if style == "plain":
        return number, style
    sep = " " if style == "spaced" else "-"
    if len(number) in (14, 15):  # Diners Club 4-6-4, American Express 4-6-5
        return sep.join((number[:4], number[4:10], number[10:])), style
    return group(number, 4, sep), style


def make_iban(fake: Faker, rng: random.Random) -> tuple[str, str]:
    number = fake.iban()
    assert stdnum_iban.is_valid(number)
    return (group(number), "spaced") if rng.random() < 0.55 else (number, "compact")


def make_ipv6(fake: Faker, rng: random.Random) -> tuple[str, str]:
    address = fake.ipv6()
    if rng.random() < 0.4:
        groups = address.split(":")
        groups[3:6] = ["0", "0", "0"]
        return str(ipaddress.IPv6Address(":".join(groups))), "v6_compressed"
    return address, "v6"


@dataclass
class Person:
    first: str
    last: str
    locale: str
    title: str
    email: str
    handle: str
    street: str
    city: str
    born: datetime.date
    phone: str
    phone_style: str
    female: bool = False

    @property
    def full(self) -> str:
        return f"{self.first} {self.last}"


class _Context:
    """What one document's makers share: its rng, its locale, fakers seeded for it."""

    _FAKERS: dict[str, Faker] = {}

    def __init__(self, rng: random.Random, locale: str):
        self.rng = rng
        self.locale = locale
        self._seeded: set[str] = set()

    def fake(self, locale: Optional[str] = None) -> Faker:
        locale = locale or self.locale
        fake = self._FAKERS.get(locale)
        if fake is None:
            fake = self._FAKERS[locale] = Faker(locale)
        if locale not in self._seeded:
            fake.seed_instance(self.rng.getrandbits(63))
            self._seeded.add(locale)
        return fake

    def chance(self, p: float) -> bool:
        return self.rng.random() < p

    def pick(self, options: Sequence):
        return self.rng.choice(options)

    def person_locale(self) -> str:
        return self.locale if self.chance(0.7) else self.pick(LOCALES)

    def city(self, locale: Optional[str] = None) -> str:
        locale = locale or self.locale
        if self.chance(0.55):
            return self.pick(_REAL_CITIES[locale])
        return self.fake(locale).city()

    def street(self, locale: Optional[str] = None) -> str:
        return self.fake(locale).street_address().replace("\n", ", ")

    def company(self, locale: Optional[str] = None) -> str:
        return self.fake(locale).company()

    def hospital(self) -> str:
        city = self.city()
        last = self.fake().last_name()
        return self.pick((f"{city} General Hospital", f"St {last}'s Hospital",
                          f"Royal {city} Infirmary", f"{last} Memorial Hospital",
                          f"{city} University Medical Centre"))

    def university(self) -> str:
        return self.pick((f"University of {self.city()}", f"{self.city()} Institute of Technology",
                          f"{self.fake().last_name()} College"))

    def date(self, first_year: int, last_year: int, style: Optional[str] = None) -> tuple[str, str]:
        style = style or self.pick(_DATE_STYLES[self.locale])
        return format_date(_date(self.rng, first_year, last_year), style), style

    def phone(self, locale: Optional[str] = None) -> tuple[str, str]:
        style = self.pick(_PHONE_STYLES[locale or self.locale])
        return make_phone(self.rng, style), style

    def url(self, handle: Optional[str] = None) -> str:
        base = self.fake().url().rstrip("/")
        if handle and self.chance(0.6):
            return self.pick((f"https://www.linkedin.com/in/{handle}", f"{base}/users/{handle}",
                              f"https://github.com/{handle}", f"{base}/~{handle}"))
        return self.pick((base, f"{base}/{self.fake().uri_path()}",
                          f"{base}/account?id={self.rng.randint(1000, 99999)}"))

    def person(self, locale: Optional[str] = None) -> Person:
        locale = locale or self.person_locale()
        fake = self.fake(locale)
        female = self.chance(0.5)
        first = fake.first_name_female() if female else fake.first_name_male()
        last = fake.last_name()
        title = self.pick(("Ms", "Mrs", "Dr")) if female else self.pick(("Mr", "Mr", "Dr"))
        a, b = _ascii(first) or "x", _ascii(last) or "y"
        local = self.pick((f"{a}.{b}", f"{a[0]}{b}", f"{a}{b[0]}", f"{a}_{b}",
                           f"{a}{self.rng.randint(1, 99)}"))
        domain = fake.free_email_domain() if self.chance(0.6) else fake.domain_name()
        email = f"{local}@{domain}"
        if self.chance(0.15):
            email = email[0].upper() + email[1:]
        handle = self.pick((f"{a[0]}{b}", f"{a}_{b[0]}", f"{a}{self.rng.randint(1, 99)}",
                            f"{b}{a[0]}", fake.user_name()))
        phone, phone_style = self.phone(locale)
        return Person(first, last, locale, title, email, handle, self.street(locale),
                      self.city(locale), _date(self.rng, 1940, 2003), phone, phone_style, female)

    def born(self, person: Person, style: Optional[str] = None) -> tuple[str, str]:
        style = style or self.pick(_DATE_STYLES[self.locale])
        return format_date(person.born, style), style

    def national_id(self, person: Person) -> tuple[str, str, str]:
        """(what it is called, value, fmt) for the document's locale."""
        if self.locale == "en_GB":
            if self.chance(0.5):
                return "National Insurance number", make_nino(self.rng, self.chance(0.6)), "nino"
            return "NHS number", make_nhs(self.rng, self.chance(0.6)), "nhs"
        if self.locale == "en_US":
            return "SSN", make_ssn(self.rng), "ssn"
        if self.locale == "nl_NL":
            return "BSN", make_bsn(self.rng), "nl_bsn"
        if self.locale == "de_DE":
            return "tax identification number", make_idnr(self.rng), "de_idnr"
        return "social security number", make_nir(self.rng, person.born), "fr_nir"


# =========================================================================== genres

def _name(ctx: _Context, person: Person, style: Optional[str] = None) -> tuple[str, str, str]:
    """A PER piece for prose: full name, title + surname, or first name."""
    style = style or ctx.pick(("full", "full", "surname"))
    if style == "surname":
        return ("PER", person.last, "surname")
    if style == "first":
        return ("PER", person.first, "first")
    return ("PER", person.full, "full")


def _titled(ctx: _Context, person: Person) -> list:
    """"Mr Smith" / "Dr Anna Müller": the title is not part of the name."""
    if ctx.chance(0.5):
        return [f"{person.title} ", ("PER", person.last, "surname")]
    return [f"{person.title} ", ("PER", person.full, "full")]


def genre_email(ctx: _Context, b: _Builder) -> None:
    sender, recipient, other = ctx.person(), ctx.person(), ctx.person()
    company = ctx.company(sender.locale)
    upper_header = ctx.chance(0.3)
    rname = recipient.full.upper() if upper_header else recipient.full
    b.add("From: ", ("PER", sender.full, "full"), " <", ("EMAIL", sender.email), ">\n")
    if upper_header and ctx.chance(0.5):
        b.add("To: ", ("PER", f"{recipient.last.upper()}, {recipient.first.upper()}",
                       "surname_first"), " <", ("EMAIL", recipient.email), ">\n")
    else:
        b.add("To: ", ("PER", rname, "full"), " <", ("EMAIL", recipient.email), ">\n")
    if ctx.chance(0.4):
        b.add("Cc: ", ("EMAIL", other.email), "\n")
    sent, style = ctx.date(2019, 2024)
    b.add("Date: ", ("DATE", sent, style), "\n")
    subject = ctx.pick(("claim", "invoice", "booking", "account", "order"))
    if subject == "claim":
        b.add("Subject: Re: claim ref. ", ("CODE", f"CLM-{ctx.rng.randint(2018, 2024)}-"
                                                   f"{_digits(ctx.rng, 6)}", "claim_ref"), "\n\n")
    elif subject == "invoice":
        b.add("Subject: Invoice no. ", ("CODE", f"INV{_digits(ctx.rng, 7)}", "invoice_no"),
              " overdue\n\n")
    elif subject == "account":
        b.add("Subject: Your account number ", ("CODE", _digits(ctx.rng, 8), "account_no"), "\n\n")
    elif subject == "order":
        b.add("Subject: Order #", ("CODE", f"{ctx.pick('ABCDEFGHKMNPRSTWXZ')}{_digits(ctx.rng, 6)}",
                                   "order_no"), " has shipped\n\n")
    else:
        b.add("Subject: Booking for next week\n\n")
    greeting = ctx.pick(("Hi", "Dear", "Hello"))
    if greeting == "Dear":
        b.add("Dear ", *_titled(ctx, recipient), ",\n\n")
    else:
        b.add(f"{greeting} ", ("PER", recipient.first, "first"), ",\n\n")
    sentences = []
    sentences.append(lambda: b.add(
        "Thanks for your call this morning. As discussed, please transfer the deposit of "
        f"{ctx.pick(('EUR', 'GBP', 'USD'))} {ctx.rng.randint(2, 95) * 50:,} to IBAN ",
        ("IBAN", *make_iban(ctx.fake(sender.locale), ctx.rng)), " by ",
        ("DATE", *ctx.date(2023, 2025)), ". "))
    sentences.append(lambda: b.add(
        "You can reach me on ", ("PHONE", sender.phone, sender.phone_style),
        " during office hours. "))
    sentences.append(lambda: b.add(
        "The keys can be collected from ", ("LOC", recipient.street), ", ",
        ("LOC", recipient.city), " after 5 pm. "))
    sentences.append(lambda: b.add(
        "My colleague ", _name(ctx, other, "full"), " from ", ("ORG", ctx.company(other.locale)),
        " will follow up with the signed contract (clause 4.2, page 3). "))
    sentences.append(lambda: b.add(
        "For the refund we still need the card you paid with; you wrote ",
        ("CARD", *make_card(ctx.fake(recipient.locale), ctx.rng)), " but the last digits do "
        "not match our records. "))
    sentences.append(lambda: b.add(
        "The meeting with ", _name(ctx, other), " is moved to ", ("DATE", *ctx.date(2023, 2025)),
        " at 10:30 in Room 2B. "))
    sentences.append(lambda: b.add(
        "I have attached the minutes of the last meeting and the Q3 figures (up 4.5% on last "
        "year). "))
    for write in ctx.rng.sample(sentences, ctx.rng.randint(3, 5)):
        write()
    b.add("\n\nBest regards,\n", ("PER", sender.full, "full"), "\n")
    if ctx.chance(0.7):
        b.add(ctx.pick(("Senior Manager", "Account Executive", "Office Manager", "Paralegal")),
              ", ", ("ORG", company), "\n")
    if ctx.chance(0.6):
        phone, style = ctx.phone(sender.locale)
        b.add("Tel: ", ("PHONE", phone, style), "\n")
    if ctx.chance(0.5):
        b.add(("URL", ctx.url()), "\n")


def genre_chat(ctx: _Context, b: _Builder) -> None:
    people = [ctx.person() for _ in range(ctx.rng.randint(2, 3))]
    outsider = ctx.person()
    timed = ctx.chance(0.35)
    clock = [ctx.rng.randint(7, 21), ctx.rng.randint(0, 59)]

    def line(speaker: Person, *pieces) -> None:
        if timed:
            clock[1] += ctx.rng.randint(0, 4)
            clock[0], clock[1] = clock[0] + clock[1] // 60, clock[1] % 60
            b.add("[", ("NEUTRAL", f"{clock[0] % 24:02d}:{clock[1]:02d}"), "] ")
        b.add("<", ("HANDLE", speaker.handle, "chat_line_timed" if timed else "chat_line"), "> ",
              *pieces, "\n")

    def low(value: str) -> str:
        return value.lower()

    messages = [
        lambda s, o: line(s, "hey @", ("HANDLE", o.handle, "mention"),
                          " did you see the invoice from ",
                          ("ORG", low(ctx.company(s.locale)) if ctx.chance(0.5)
                           else ctx.company(s.locale)), "?"),
        lambda s, o: line(s, "yes, ", ("PER", low(outsider.full), "full"), " sent it, his number is ",
                          ("PHONE", outsider.phone, outsider.phone_style)),
        lambda s, o: line(s, "ok just pay it with the company card ",
                          ("CARD", *make_card(ctx.fake(s.locale), ctx.rng)), " exp 04/27 lol"),
        lambda s, o: line(s, ("PER", low(outsider.first), "first"), " moved to ",
                          ("LOC", low(outsider.city)), " btw, new address is ",
                          ("LOC", low(outsider.street))),
        lambda s, o: line(s, "can you mail ", ("PER", low(outsider.full), "full"), " at ",
                          ("EMAIL", outsider.email), " pls"),
        lambda s, o: line(s, "the vpn keeps dropping, my ip is ",
                          ("IP", ctx.fake().ipv4_public(), "v4"), " if that helps"),
        lambda s, o: line(s, "@", ("HANDLE", o.handle, "mention"), " standup in 5 min"),
        lambda s, o: line(s, "lunch? the place on ", ("LOC", low(ctx.street(s.locale))),
                          " does 2 for 1 today"),
        lambda s, o: line(s, "doc is here ", ("URL", ctx.url())),
        lambda s, o: line(s, "my mobile died, use ", ("PHONE", s.phone, s.phone_style),
                          " (home) till monday"),
        lambda s, o: line(s, ("PER", low(o.first), "first"), ", ", ("PER", low(outsider.last),
                          "surname"), " wants the report by ", ("DATE", *ctx.date(2023, 2025))),
        lambda s, o: line(s, "ok 👍 will do, build 3.14.2 is green"),
        lambda s, o: line(s, "who is on call this weekend? i did the last 3"),
        lambda s, o: line(s, "refund goes to ", ("IBAN", *make_iban(ctx.fake(s.locale), ctx.rng)),
                          " right?"),
    ]
    for message in ctx.rng.sample(messages, ctx.rng.randint(6, 9)):
        speaker, other = ctx.rng.sample(people, 2)
        message(speaker, other)


def genre_medical(ctx: _Context, b: _Builder) -> None:
    patient = ctx.person(ctx.locale if ctx.chance(0.8) else None)
    doctor, relative = ctx.person(), ctx.person(patient.locale)
    relative.last = patient.last
    hospital = ctx.hospital()
    b.add("PATIENT: ", ("PER", f"{patient.last.upper()}, {patient.first.upper()}", "surname_first")
          if ctx.chance(0.6) else ("PER", patient.full.upper(), "full"),
          "    MRN: ", ("CODE", _digits(ctx.rng, 8), "mrn"),
          "    DOB: ", ("DATE", *ctx.born(patient)), "\n")
    if ctx.chance(0.7):
        what, value, fmt = ctx.national_id(patient)
        b.add(f"{what}: ", ("ID", value, fmt), "\n")
    b.add("Address: ", ("LOC", patient.street), ", ", ("LOC", patient.city), "\n")
    b.add("Attending: Dr ", ("PER", doctor.full, "full"), ", ", ("ORG", hospital), "\n")
    style = ctx.pick(_DATE_STYLES[ctx.locale])
    visit = _date(ctx.rng, 2020, 2024)
    b.add("Date of visit: ", ("DATE", format_date(visit, style), style), "\n\n")
    age = visit.year - patient.born.year - ((visit.month, visit.day) < (patient.born.month,
                                                                       patient.born.day))
    title = ctx.pick(("Ms", "Mrs")) if patient.female else "Mr"
    job = ctx.pick(("teacher", "retired engineer", "nurse", "driver"))
    complaint = ctx.pick(("chest pain radiating to the left arm",
                          "a three-day history of fever and cough", "lower back pain after a fall",
                          "shortness of breath on exertion"))
    b.add(f"{title} ", ("PER", patient.last, "surname"),
          f", a {age}-year-old {job}, presented with {complaint}. "
          f"BP {ctx.rng.randint(105, 170)}/{ctx.rng.randint(60, 100)}, "
          f"HR {ctx.rng.randint(55, 110)}, temperature 37.{ctx.rng.randint(0, 9)} C. ")
    b.add(ctx.pick(("ECG showed sinus rhythm. ", "Chest X-ray was clear. ",
                    "Bloods sent for FBC, U&E and CRP. ")))
    drug = ctx.pick(("aspirin 75 mg daily", "amoxicillin 500 mg three times a day",
                     "ibuprofen 400 mg as needed"))
    b.add(f"Started on {drug}. ")
    if ctx.chance(0.6):
        b.add(f"{'Her' if patient.female else 'His'} {'daughter' if relative.female else 'son'} ",
              ("PER", relative.full, "full"),
              " (", ("PHONE", relative.phone, relative.phone_style), ") was present and is the "
              "next of kin. ")
    if ctx.chance(0.5):
        b.add("Previously seen at ", ("ORG", ctx.hospital()), " on ", ("DATE", *ctx.date(2015, 2021)),
              " for a fracture of the left wrist. ")
    b.add("Follow-up in clinic on ", ("DATE", *ctx.date(2024, 2025)), " with Dr ",
          ("PER", doctor.last, "surname"), ".\n")
    if ctx.chance(0.4):
        b.add("Results will be emailed to ", ("EMAIL", patient.email), " as requested.\n")
    b.add("\nSigned: ", ("PER", doctor.full, "full"), ", ", ctx.pick(("MD", "MRCP", "FRCS")), "\n")


def genre_court(ctx: _Context, b: _Builder) -> None:
    applicant, lawyer, witness = ctx.person(ctx.locale), ctx.person(), ctx.person()
    judge, clerk = ctx.person(), ctx.person()
    style = "us" if ctx.locale == "en_US" else ctx.pick(("echr", "uk"))
    party = {"echr": "applicant", "uk": "Claimant", "us": "Plaintiff"}[style]
    paragraph = [0]

    def para(*pieces) -> None:
        paragraph[0] += 1
        b.add(f"{paragraph[0]}. ", *pieces, "\n\n")

    if style == "echr":
        number = f"{ctx.rng.randint(1000, 79999)}/{ctx.rng.randint(90, 124) % 100:02d}"
        b.add(("ORG", "EUROPEAN COURT OF HUMAN RIGHTS", "court"), "\n",
              ctx.pick(("FIRST", "SECOND", "THIRD", "FOURTH", "FIFTH")), " SECTION\n\n",
              "CASE OF ", ("PER", applicant.last.upper(), "surname"), " v. ",
              ("NEUTRAL", _ECHR_STATES[ctx.locale]), "\n\n(Application no. ",
              ("CODE", number, "echr_application"), ")\n\nJUDGMENT\n\n",
              ("DATE", *ctx.date(2000, 2023, "d_month_y")), "\n\nPROCEDURE\n\n")
        para("The case originated in an application (no. ", ("CODE", number, "echr_application"),
             ") against ", ("NEUTRAL", _COUNTRIES[ctx.locale]), " lodged with the Court under "
             "Article 34 of the Convention by a ", _NATIONALITY[ctx.locale], " national, ",
             *_titled(ctx, applicant), " (\"the applicant\"), on ",
             ("DATE", *ctx.date(1995, 2019, "d_month_y")), ".")
        para("The applicant was represented by ", *_titled(ctx, lawyer), ", a lawyer "
             "practising in ", ("LOC", ctx.city(lawyer.locale)), ".")
        b.add("THE FACTS\n\n")
        para("The applicant was born on ", ("DATE", format_date(applicant.born, "d_month_y"),
             "d_month_y"), " and lives in ", ("LOC", applicant.city), ".")
    elif style == "uk":
        city = ctx.city("en_GB")
        number = f"{_digits(ctx.rng, 9)} {ctx.pick('ABCDEFGH')}{ctx.rng.randint(1, 9)}" \
            if ctx.chance(0.5) else f"{ctx.pick(('HQ', 'QB', 'KB'))}{ctx.rng.randint(15, 24)}" \
            f"{ctx.pick('XCJ')}{_digits(ctx.rng, 5)}"
        defendant = ctx.company(applicant.locale)
        b.add("IN THE ", ("ORG", f"COUNTY COURT AT {city.upper()}", "court"), "\n",
              "Case No: ", ("CODE", number, "uk_case"), "\n\nBETWEEN:\n\n",
              ("PER", applicant.full.upper(), "full"), "\nClaimant\n\n- and -\n\n",
              ("ORG", defendant.upper()), "\nDefendant\n\n",
              "Date: ", ("DATE", *ctx.date(2018, 2024)), "\n\nJUDGMENT\n\n")
        para("The Claimant, ", *_titled(ctx, applicant), ", of ", ("LOC", applicant.street), ", ",
             ("LOC", applicant.city), ", brings a claim against ", ("ORG", defendant),
             " for unpaid wages of £", f"{ctx.rng.randint(12, 480) * 25:,}", ".")
        if ctx.chance(0.6):
            para("The Claimant's National Insurance number, ", ("ID", make_nino(ctx.rng, True), "nino"),
                 ", appears on every payslip in the bundle (pages 14 to 37).")
        para("The Claimant was represented by ", *_titled(ctx, lawyer), " of counsel.")
    else:
        number = f"{ctx.rng.randint(1, 3)}:{ctx.rng.randint(15, 24)}-cv-{_digits(ctx.rng, 5)}"
        defendant = ctx.company("en_US")
        b.add(("ORG", "UNITED STATES DISTRICT COURT", "court"), "\nDISTRICT OF ",
              ("NEUTRAL", ctx.pick(_US_STATES)), "\n\n",
              ("PER", applicant.full.upper(), "full"), ", Plaintiff,\n\nv.\n\n",
              ("ORG", defendant.upper()), ", Defendant.\n\n",
              "Civil Action No. ", ("CODE", number, "us_docket"), "\n\nMEMORANDUM AND ORDER\n\n",
              ("DATE", *ctx.date(2018, 2024, "month_d_y")), "\n\n")
        para("Plaintiff ", ("PER", applicant.full, "full"), ", a resident of ",
             ("LOC", applicant.city), ", alleges that ", ("ORG", defendant),
             " disclosed the Plaintiff's Social Security number, ", ("ID", make_ssn(ctx.rng), "ssn"),
             ", in violation of 15 U.S.C. § 1681. The Plaintiff was born on ",
             ("DATE", format_date(applicant.born, "month_d_y"), "month_d_y"), ".")
        para("The Plaintiff is represented by ", *_titled(ctx, lawyer), ".")
    para("On ", ("DATE", *ctx.date(2010, 2022)), " the ", party, " met ", _name(ctx, witness, "full"),
         ", who later gave evidence", ctx.pick((
             [" by telephone from ", ("LOC", ctx.city(witness.locale))],
             [" and whose statement bears case reference ",
              ("CODE", f"{ctx.rng.randint(2010, 2023)}/{_digits(ctx.rng, 4)}", "case_ref")],
             [" in person"])), ". The payments were made into the account ",
         ("IBAN", *make_iban(ctx.fake(applicant.locale), ctx.rng)), ".")
    amount = f"{ctx.rng.randint(2, 40) * 500:,}"
    if style == "echr":
        b.add("FOR THESE REASONS, THE COURT, UNANIMOUSLY,\n\n1. Declares the application "
              "admissible;\n2. Holds that there has been a violation of Article "
              f"{ctx.pick((6, 8, 10, 14))} of the Convention;\n3. Holds that the respondent State "
              f"is to pay the applicant EUR {amount} in respect of non-pecuniary damage.\n\n"
              "Done in English, and notified in writing on ",
              ("DATE", *ctx.date(2001, 2024, "d_month_y")), ", pursuant to Rule 77 §§ 2 and 3 of "
              "the Rules of Court.\n\n", ("PER", clerk.full, "full"), "\nRegistrar\n\n",
              ("PER", judge.full, "full"), "\nPresident\n")
    elif style == "uk":
        b.add(f"ORDER: judgment for the Claimant in the sum of £{amount} with costs, to be paid "
              "by 4 pm on ", ("DATE", *ctx.date(2019, 2025)), ".\n\n",
              f"{ctx.pick(('His Honour Judge', 'Her Honour Judge', 'District Judge'))} ",
              ("PER", judge.last, "surname"), "\n")
    else:
        b.add(f"For the foregoing reasons, the motion to dismiss is DENIED. Damages of USD {amount} "
              "are reserved.\n\nSO ORDERED.\n\nDated: ", ("DATE", *ctx.date(2019, 2025, "month_d_y")),
              "\n\n/s/ ", ("PER", judge.full, "full"), "\nUnited States District Judge\n")


def genre_hr(ctx: _Context, b: _Builder) -> None:
    employee, manager = ctx.person(ctx.locale if ctx.chance(0.7) else None), ctx.person()
    employer = ctx.company(ctx.locale)
    b.add("EMPLOYEE RECORD - CONFIDENTIAL\n", ("ORG", employer.upper() if ctx.chance(0.4)
                                               else employer), "\n\n")
    b.add("Name: ", ("PER", employee.full.upper(), "full") if ctx.chance(0.5)
          else ("PER", employee.full, "full"), "\n")
    b.add("Employee ID: ", ("CODE", ctx.pick((f"E-{_digits(ctx.rng, 6)}", _digits(ctx.rng, 7),
                                              f"EMP{_digits(ctx.rng, 5)}")), "employee_id"), "\n")
    b.add("Date of birth: ", ("DATE", *ctx.born(employee)), "\n")
    what, value, fmt = ctx.national_id(employee)
    b.add(f"{what[0].upper()}{what[1:]}: ", ("ID", value, fmt), "\n")
    b.add("Home address: ", ("LOC", employee.street), ", ", ("LOC", employee.city), "\n")
    b.add("Phone: ", ("PHONE", employee.phone, employee.phone_style), "\n")
    b.add("Personal email: ", ("EMAIL", employee.email), "\n")
    b.add("Salary paid to: ", ("IBAN", *make_iban(ctx.fake(employee.locale), ctx.rng)), "\n")
    department = ctx.pick(("Finance", "Logistics", "Customer Service", "IT Operations"))
    grade = f"{ctx.pick('ABCD')}{ctx.rng.randint(1, 5)}"
    b.add(f"Department: {department}    Grade: {grade}    "
          f"Hours: {ctx.pick((37.5, 40, 20))} per week\n")
    b.add("Line manager: ", ("PER", manager.full, "full"), "\n")
    b.add("Start date: ", ("DATE", *ctx.date(2005, 2023)), "\n\n")
    b.add("Notes:\n- Annual review on ", ("DATE", *ctx.date(2021, 2024)), " rated "
          "\"exceeds expectations\"; pay rise of 3% agreed with ", _name(ctx, manager, "surname"),
          ".\n")
    if ctx.chance(0.6):
        b.add("- Sick leave of ", str(ctx.rng.randint(2, 15)), " days from ",
              ("DATE", *ctx.date(2021, 2024)), ", fit note from ", ("ORG", ctx.hospital()), ".\n")
    if ctx.chance(0.5):
        b.add("- Emergency contact: ", ("PER", ctx.person(employee.locale).full, "full"), ", ",
              ("PHONE", *ctx.phone(employee.locale)), ".\n")
    if ctx.chance(0.4):
        b.add("- Corporate card ", ("CARD", *make_card(ctx.fake(), ctx.rng)),
              " cancelled after the expenses audit (claim no. ",
              ("CODE", f"{ctx.rng.randint(2019, 2024)}-{_digits(ctx.rng, 5)}", "claim_no"), ").\n")


def genre_cv(ctx: _Context, b: _Builder) -> None:
    me, referee = ctx.person(), ctx.person()
    b.add(("PER", me.full.upper(), "full") if ctx.chance(0.6) else ("PER", me.full, "full"), "\n")
    b.add(("LOC", me.street), ", ", ("LOC", me.city), " | ", ("PHONE", me.phone, me.phone_style),
          " | ", ("EMAIL", me.email), "\n")
    if ctx.chance(0.7):
        b.add(("URL", ctx.url(me.handle)), "\n")
    b.add("Born ", ("DATE", *ctx.born(me)), " in ", ("LOC", ctx.city(me.locale)), "\n\n")
    b.add("PROFILE\nChartered accountant with ", str(ctx.rng.randint(3, 25)),
          " years of experience in audit, payroll and ERP migrations (SAP, Oracle).\n\n")
    b.add("EXPERIENCE\n")
    year = ctx.rng.randint(2012, 2020)
    for _ in range(ctx.rng.randint(2, 3)):
        role = ctx.pick(("Senior Accountant", "Finance Manager", "Payroll Specialist",
                         "Audit Associate", "Controller"))
        b.add(f"{role}, ", ("ORG", ctx.company(ctx.person_locale())), ", ",
              ("LOC", ctx.city(ctx.person_locale())), " (", ("NEUTRAL", str(year)), "-",
              ("NEUTRAL", str(year + ctx.rng.randint(1, 4))), ")\n",
              f"- Led a team of {ctx.rng.randint(2, 12)}; cut month-end close from "
              f"{ctx.rng.randint(8, 12)} to {ctx.rng.randint(3, 6)} days.\n")
        year -= ctx.rng.randint(2, 5)
    b.add("\nEDUCATION\nBSc Economics, ", ("ORG", ctx.university()), ", ",
          ("NEUTRAL", str(year - 3)), "\n\nREFERENCES\n")
    b.add(*_titled(ctx, referee), ", ", ("ORG", ctx.company(referee.locale)), ", ",
          ("EMAIL", referee.email), ", ", ("PHONE", referee.phone, referee.phone_style), "\n")


def genre_log(ctx: _Context, b: _Builder) -> None:
    users = [ctx.person() for _ in range(ctx.rng.randint(2, 4))]
    moment = datetime.datetime.combine(_date(ctx.rng, 2022, 2024), datetime.time(
        ctx.rng.randint(0, 23), ctx.rng.randint(0, 59), ctx.rng.randint(0, 59)))
    apache = ctx.chance(0.4)
    ips = {u.handle: (ctx.fake().ipv4_public(), "v4") if ctx.chance(0.7)
           else make_ipv6(ctx.fake(), ctx.rng) for u in users}

    def stamp() -> None:
        nonlocal moment
        moment += datetime.timedelta(seconds=ctx.rng.randint(1, 90),
                                     milliseconds=ctx.rng.randint(0, 999))
        b.add(("NEUTRAL", moment.strftime("%Y-%m-%dT%H:%M:%S.") + f"{moment.microsecond // 1000:03d}Z"
               if ctx.chance(0.5) else moment.strftime("%Y-%m-%d %H:%M:%S,")
               + f"{moment.microsecond // 1000:03d}"), " ")

    def request_id() -> str:
        return f"req={ctx.rng.getrandbits(48):012x}"

    lines = [
        lambda u: (stamp(), b.add("INFO  auth: login succeeded user=", ("HANDLE", u.handle, "log_kv"),
                                  " ip=", ("IP", *ips[u.handle]), f" {request_id()}\n")),
        lambda u: (stamp(), b.add("WARN  payments: card declined user=",
                                  ("HANDLE", u.handle, "log_kv"), " card=",
                                  ("CARD", *make_card(ctx.fake(u.locale), ctx.rng)),
                                  " code=51 amount=",
                                  f"{ctx.rng.randint(5, 900)}.{_digits(ctx.rng, 2)}\n")),
        lambda u: (stamp(), b.add("ERROR mailer: bounce for ", ("EMAIL", u.email),
                                  " (550 5.1.1 mailbox unavailable)\n")),
        lambda u: (stamp(), b.add("INFO  profile: phone changed user=", ("HANDLE", u.handle, "log_kv"),
                                  " new=\"", ("PHONE", *ctx.phone(u.locale)), "\"\n")),
        lambda u: (stamp(), b.add("DEBUG sepa: mandate created iban=",
                                  ("IBAN", ctx.fake(u.locale).iban(), "compact"),
                                  " user=", ("HANDLE", u.handle, "log_kv"), "\n")),
        lambda u: (stamp(), b.add("INFO  session: user=", ("HANDLE", u.handle, "log_kv"),
                                  f" logged out after {ctx.rng.randint(1, 90)} min, "
                                  f"{request_id()}\n")),
        lambda u: (stamp(), b.add("INFO  orders: order no. ",
                                  ("CODE", f"{ctx.rng.randint(10, 99)}-{_digits(ctx.rng, 7)}",
                                   "order_no"),
                                  " shipped to ", ("LOC", u.city), " user=",
                                  ("HANDLE", u.handle, "log_kv"), "\n")),
        lambda u: (stamp(), b.add("WARN  ratelimit: client ", ("IP", *ips[u.handle]),
                                  " exceeded 100 req/min on /api/v2/search\n")),
        lambda u: (stamp(), b.add("INFO  http: redirect to ", ("URL", ctx.url(u.handle)),
                                  " status=302\n")),
    ]
    for _ in range(ctx.rng.randint(6, 10)):
        user = ctx.pick(users)
        if apache and ctx.chance(0.5):
            ip, fmt = ips[user.handle]
            moment += datetime.timedelta(seconds=ctx.rng.randint(1, 60))
            b.add(("IP", ip, fmt), " - - [", ("NEUTRAL", moment.strftime("%d/%b/%Y:%H:%M:%S +0000")),
                  f"] \"{ctx.pick(('GET', 'POST'))} /account/{ctx.pick(('settings', 'orders', 'cards'))}"
                  f" HTTP/1.1\" {ctx.pick((200, 200, 304, 404))} {ctx.rng.randint(200, 40000)} \"",
                  ("URL", ctx.url()), "\" \"Mozilla/5.0 (X11; Linux x86_64)\"\n")
        else:
            ctx.pick(lines)(user)


# Postcodes, P.O. boxes, sort codes, dates without a year or compact, years of birth, case and
# plot numbers, and digit groups split by Unicode spaces: planted in a closing paragraph drawn
# from a random stream of its own, so the items before it stay the same for a seed.
_UK_OUTWARD = ("M20", "EC1A", "SW1A", "B15", "LS6", "G12", "CF10", "NW3", "BS8", "OX2")
_POSTCODE_LETTERS = "ABDEFGHJLNPQRSTUWXYZ"
_US_STATE_CODES = ("IL", "NY", "CA", "TX", "MA", "WA", "OR", "CO", "FL", "GA")
_UNICODE_SPACES = ("\u00a0", "\u2009", "\u202f")


def _postcode(rng: random.Random, locale: str) -> tuple[str, str]:
    if locale == "en_GB":
        return (f"{rng.choice(_UK_OUTWARD)} {rng.randint(0, 9)}"
                f"{rng.choice(_POSTCODE_LETTERS)}{rng.choice(_POSTCODE_LETTERS)}", "postcode_uk")
    if locale == "en_US":
        zip_code = f"{rng.randint(10, 99)}{_digits(rng, 3)}"
        return (zip_code + (f"-{_digits(rng, 4)}" if rng.random() < 0.3 else ""), "zip")
    if locale == "nl_NL":
        return f"{rng.randint(1000, 9999)} {rng.choice('BCDEGHJKLMNPRTVWXZ')}" \
               f"{rng.choice('BCDEGHJKLMNPRTVWXZ')}", "postcode_nl"
    return f"{rng.randint(1, 95):02d}{_digits(rng, 3)}", f"postcode_{locale[:2]}"


def _extra_formats(rng: random.Random, locale: str, genre: str, b: _Builder) -> None:
    """A closing paragraph with the formats above (nothing for chat and log documents)."""
    if genre in ("chat", "log"):
        return
    city = rng.choice(_REAL_CITIES[locale])
    postcode, fmt = _postcode(rng, locale)
    if rng.random() < 0.25:
        place = [("LOC", f"P.O. Box {rng.randint(10, 9999)}", "po_box")]
    else:
        place = [("LOC", f"{rng.randint(1, 240)} {rng.choice(('Station', 'Church', 'Mill'))} Road",
                  "street")]
    if locale == "en_US":
        b.add("\nPostal address: ", *place, ", ", ("LOC", city), ", ",
              rng.choice(_US_STATE_CODES), " ", ("LOC", postcode, fmt), ".\n")
    elif locale == "en_GB":
        b.add("\nPostal address: ", *place, ", ", ("LOC", city), " ", ("LOC", postcode, fmt), ".\n")
    else:
        b.add("\nPostal address: ", *place, ", ", ("LOC", postcode, fmt), " ", ("LOC", city), ".\n")
    day = _date(rng, 1990, 2024)
    b.add("Next appointment: ", ("DATE", f"{day.day} {_MONTHS[day.month - 1]}", "d_month"), ".\n")
    if genre in ("email", "hr"):
        sort_code = "-".join(_digits(rng, 2) for _ in range(3))
        b.add("Sort code ", ("CODE", sort_code, "sort_code"), ", card ending ")
        number = Faker("en_US")
        number.seed_instance(rng.getrandbits(63))
        card = number.credit_card_number(card_type="visa16")
        b.add(("CARD", group(card, 4, rng.choice(_UNICODE_SPACES)), "unicode_spaced"), ".\n")
    elif genre == "medical":
        born = _date(rng, 1930, 2005)
        b.add("DOB (compact): ", ("DATE", born.strftime("%Y%m%d"), "compact"), "\n")
    elif genre == "court":
        first = rng.randint(1975, 2005)
        b.add("The applicant was born in ", ("DATE", str(rng.randint(1925, 1990)), "birth_year"),
              " and lived there between ", ("NEUTRAL", str(first)), " and ",
              ("NEUTRAL", str(first + rng.randint(1, 9))), "; the land is plot ",
              ("CODE", f"{rng.randint(10, 999)}/{rng.randint(1, 30)}", "plot"), " (case no. ",
              ("CODE", f"{rng.randint(1, 99)}/{rng.randint(1990, 2020)}/{_digits(rng, 3)}/"
                       f"{_digits(rng, 3)}", "case_no"), ").\n")


GENRE_MAKERS: Mapping[str, Callable[[_Context, _Builder], None]] = {
    "email": genre_email, "chat": genre_chat, "medical": genre_medical, "court": genre_court,
    "hr": genre_hr, "cv": genre_cv, "log": genre_log,
}


def make_document(split_seed: int, index: int, prefix: str = "doc") -> Document:
    """Document `index` of the split with this seed (genres in turn, locale drawn)."""
    rng = random.Random(f"larvatus-privacy:{split_seed}:{index}")
    genre = GENRES[index % len(GENRES)]
    locale = rng.choices(LOCALES, weights=LOCALE_WEIGHTS)[0]
    ctx = _Context(rng, locale)
    builder = _Builder()
    GENRE_MAKERS[genre](ctx, builder)
    _extra_formats(random.Random(f"larvatus-privacy-extra:{split_seed}:{index}"), locale, genre,
                   builder)
    return Document(f"{prefix}-{index:04d}-{genre}", genre, locale, builder.text(),
                    tuple(builder.gold), tuple(builder.neutral))


def make_split(split: str = "test", docs: int = DEFAULT_DOCS, seed: Optional[int] = None
               ) -> list[Document]:
    """The first `docs` documents of a split (`seed` overrides the split's own seed)."""
    if split not in SPLIT_SEEDS:
        raise ValueError(f"split must be one of {SPLITS}")
    seed = SPLIT_SEEDS[split] if seed is None else seed
    return [make_document(seed, i, split) for i in range(docs)]


# =========================================================================== scoring

@dataclass(frozen=True)
class Prediction:
    """What a redactor hid in one document: spans of the original text (labels ignored by
    the scores) and, when it made one, its redacted text (else `redact_with` makes it)."""

    spans: tuple[tuple[int, int, str], ...] = ()
    redacted_text: Optional[str] = None


def merge_spans(spans: Iterable[Sequence]) -> list[tuple[int, int]]:
    """The union of (start, end, ...) spans as sorted, disjoint (start, end) intervals."""
    merged: list[list[int]] = []
    for start, end, *_ in sorted((int(s[0]), int(s[1])) for s in spans):
        if end <= start:
            continue
        if merged and start <= merged[-1][1]:
            merged[-1][1] = max(merged[-1][1], end)
        else:
            merged.append([start, end])
    return [(s, e) for s, e in merged]


def coverage_mask(length: int, spans: Iterable[Sequence]) -> bytearray:
    """One byte per character: 1 where some span covers it."""
    mask = bytearray(length)
    for start, end in merge_spans(spans):
        start, end = max(0, start), min(length, end)
        if end > start:
            mask[start:end] = b"\x01" * (end - start)
    return mask


def item_caught(text: str, gold: Gold, mask: bytearray) -> bool:
    """Every alphanumeric character of the gold span lies under a redacted span."""
    return all(mask[i] for i in range(gold.start, gold.end) if text[i].isalnum())


def item_leaked(value: str, redacted_text: str) -> bool:
    """The exact surface string is still in the redacted text, not inside a longer word."""
    start = redacted_text.find(value)
    while start >= 0:
        end = start + len(value)
        before = redacted_text[start - 1] if start else ""
        after = redacted_text[end] if end < len(redacted_text) else ""
        if not (before.isalnum() and value[0].isalnum()) and not (
                after.isalnum() and value[-1].isalnum()):
            return True
        start = redacted_text.find(value, start + 1)
    return False


def redact_with(text: str, spans: Iterable[Sequence], placeholder: str = "[REDACTED]") -> str:
    """The text with the union of the spans replaced by a placeholder."""
    out, pos = [], 0
    for start, end in merge_spans(spans):
        out.append(text[pos:start])
        out.append(placeholder)
        pos = end
    out.append(text[pos:])
    return "".join(out)


def precision_counts(document: Document, mask: bytearray) -> tuple[int, int]:
    """(redacted alphanumerics inside gold, redacted alphanumerics outside neutral spans)."""
    text = document.text
    gold = coverage_mask(len(text), ((g.start, g.end) for g in document.gold))
    neutral = coverage_mask(len(text), document.neutral)
    inside = counted = 0
    for i, flag in enumerate(mask):
        if flag and not neutral[i] and text[i].isalnum():
            counted += 1
            inside += gold[i]
    return inside, counted


_WORD_CHARS = re.compile(r"[^\W\d_]+(?:['’-][^\W\d_]+)*")
NAME_LABELS = frozenset({"PER", "LOC", "ORG", "MISC", "PERSON", "LOCATION", "ORGANIZATION", "NRP"})


def ordinary_word_counts(document: Document, mask: bytearray) -> dict:
    """Words outside gold and neutral spans, and how many of them no redaction touched:
    {"words", "kept", "capitalised", "capitalised_kept"}."""
    text = document.text
    gold = coverage_mask(len(text), ((g.start, g.end) for g in document.gold))
    neutral = coverage_mask(len(text), document.neutral)
    counts = {"words": 0, "kept": 0, "capitalised": 0, "capitalised_kept": 0}
    for m in _WORD_CHARS.finditer(text):
        if any(gold[m.start():m.end()]) or any(neutral[m.start():m.end()]):
            continue
        kept = not any(mask[m.start():m.end()])
        counts["words"] += 1
        counts["kept"] += kept
        if m.group()[0].isupper():
            counts["capitalised"] += 1
            counts["capitalised_kept"] += kept
    return counts


def span_counts(document: Document, spans: Sequence[Sequence]) -> dict:
    """Redacted name spans touching no gold item, and edge damage of spans touching one."""
    text = document.text
    gold = coverage_mask(len(text), ((g.start, g.end) for g in document.gold))
    neutral = coverage_mask(len(text), document.neutral)
    counts = {"name_spans": 0, "name_spans_ordinary": 0, "spans_on_gold": 0,
              "edge_wider": 0, "edge_punctuation": 0}
    for span in spans:
        start, end = max(0, int(span[0])), min(len(text), int(span[1]))
        if end <= start:
            continue
        on_gold = any(gold[start:end])
        if len(span) > 2 and span[2] in NAME_LABELS:
            counts["name_spans"] += 1
            counts["name_spans_ordinary"] += not on_gold and not any(neutral[start:end])
        if not on_gold:
            continue
        counts["spans_on_gold"] += 1
        counts["edge_wider"] += any(text[i].isalnum() and not gold[i] and not neutral[i]
                                    for i in range(start, end))
        counts["edge_punctuation"] += not text[start].isalnum() or not text[end - 1].isalnum()
    return counts


def _ratio(numerator: int, denominator: int) -> Optional[float]:
    return numerator / denominator if denominator else None


def _tally() -> dict:
    return {"items": 0, "caught": 0, "leaked": 0}


def _finish(tally: dict) -> dict:
    return {**tally, "recall": _ratio(tally["caught"], tally["items"])}


def score(documents: Sequence[Document], predictions: Mapping[str, Prediction]) -> dict:
    """Recall per kind (PER per casing, every kind per format), overall rows, precision, leaks.

    A document missing from `predictions` counts as nothing redacted.
    """
    kinds = {k: _tally() for k in KINDS}
    casings = {c: _tally() for c in CASINGS}
    formats: dict[str, dict] = {}
    genres: dict[str, dict] = {}
    overall = {"all": _tally(), "structured": _tally(), "names": _tally()}
    inside = counted = 0
    missing = 0
    misses: list[dict] = []
    words = {"words": 0, "kept": 0, "capitalised": 0, "capitalised_kept": 0}
    edges = {"name_spans": 0, "name_spans_ordinary": 0, "spans_on_gold": 0,
             "edge_wider": 0, "edge_punctuation": 0}
    for document in documents:
        prediction = predictions.get(document.id)
        if prediction is None:
            missing += 1
            prediction = Prediction()
        mask = coverage_mask(len(document.text), prediction.spans)
        redacted = prediction.redacted_text
        if redacted is None:
            redacted = redact_with(document.text, prediction.spans)
        for gold in document.gold:
            caught = item_caught(document.text, gold, mask)
            leaked = item_leaked(gold.value, redacted)
            tallies = [kinds[gold.kind], overall["all"],
                       overall["names" if gold.kind in NAME_KINDS else "structured"],
                       formats.setdefault(f"{gold.kind}/{gold.fmt or '-'}", _tally()),
                       genres.setdefault(f"{document.genre}", _tally())]
            if gold.kind == "PER":
                tallies.append(casings[gold.casing])
            for tally in tallies:
                tally["items"] += 1
                tally["caught"] += caught
                tally["leaked"] += leaked
            if not caught:
                misses.append({"id": document.id, "kind": gold.kind, "fmt": gold.fmt,
                               "value": gold.value})
        for key, value in ordinary_word_counts(document, mask).items():
            words[key] += value
        for key, value in span_counts(document, prediction.spans).items():
            edges[key] += value
        got_inside, got_counted = precision_counts(document, mask)
        inside += got_inside
        counted += got_counted
    return {
        "kinds": {k: _finish(v) for k, v in kinds.items()},
        "per_casing": {c: _finish(v) for c, v in casings.items()},
        "formats": {k: _finish(v) for k, v in sorted(formats.items())},
        "genres": {k: _finish(v) for k, v in sorted(genres.items())},
        "overall": {k: _finish(v) for k, v in overall.items()},
        "precision": {"redacted_alnum": counted, "inside_gold": inside,
                      "precision": _ratio(inside, counted)},
        "leaked": overall["all"]["leaked"],
        "ordinary_words": {**words, "kept_share": _ratio(words["kept"], words["words"]),
                           "capitalised_kept_share": _ratio(words["capitalised_kept"],
                                                            words["capitalised"])},
        "spans": {**edges,
                  "ordinary_share": _ratio(edges["name_spans_ordinary"], edges["name_spans"]),
                  "edge_wider_share": _ratio(edges["edge_wider"], edges["spans_on_gold"]),
                  "edge_punctuation_share": _ratio(edges["edge_punctuation"],
                                                   edges["spans_on_gold"])},
        "documents": len(documents),
        "documents_missing": missing,
        "misses": misses,
    }


# =========================================================================== CLI

def _show(document: Document) -> str:
    """The text with gold items bracketed, for eyeballing the corpus."""
    out, pos = [], 0
    for gold in document.gold:
        out.append(document.text[pos:gold.start])
        tag = gold.kind + (f":{gold.casing}" if gold.kind == "PER" else "")
        out.append(f"[[{tag} {document.text[gold.start:gold.end]}]]")
        pos = gold.end
    out.append(document.text[pos:])
    return "".join(out)


def main(argv: Optional[Sequence[str]] = None) -> int:
    import argparse
    import json
    import sys

    parser = argparse.ArgumentParser(prog="python bench/privacy_corpus.py",
                                     description="Print or write the privacy benchmark corpus.")
    parser.add_argument("--split", choices=SPLITS, default="dev")
    parser.add_argument("--docs", type=int, default=7)
    parser.add_argument("--seed", type=int, default=None)
    parser.add_argument("--jsonl", default=None,
                        help="Write documents with gold (one JSON object a line) here instead.")
    args = parser.parse_args(argv)
    documents = make_split(args.split, args.docs, args.seed)
    if args.jsonl:
        with open(args.jsonl, "w", encoding="utf-8") as handle:
            for document in documents:
                handle.write(json.dumps(document.to_json(), ensure_ascii=False) + "\n")
        print(f"{len(documents)} documents written to {args.jsonl}")
        return 0
    for document in documents:
        sys.stdout.write(f"===== {document.id} ({document.locale})\n{_show(document)}\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
