"""Contact and network details: email, phone numbers, IP and MAC addresses, URLs, chat or log handles."""
from __future__ import annotations

import ipaddress
import re
from functools import lru_cache
from typing import Iterable, Optional, Sequence

import phonenumbers

from stdnum import mac as stdnum_mac

from larvatus.transforms.recognizers.base import (
    DIGIT_RE, H, LB, LINE_START, SCORE_FORMAT, SCORE_VALIDATED, count_digits, cue_pattern,
    finditer_on_lines, keep_disjoint, line_window, longest_number, may_hold, with_digit)
from larvatus.transforms.recognizers.phone_matcher import CachedPhoneNumberMatcher
from larvatus.transforms.recognizers.registry import Kind, PatternSettings
from larvatus.transforms.records import EntitySpan

# ----------------------------------------------------------------------------- EMAIL

_EMAIL_RE = re.compile(
    r"(?=[\w%+-])(?<![\w%+-])[\w%+-][\w.%+-]{0,63}@"
    r"(?:[^\W_](?:[\w-]{0,61}[^\W_])?\.)+[^\W\d_]{2,63}(?![\w-])")
_AT_RE = re.compile("@")   # hint: every address and mention holds one
_URL_TLDS_SPELLED = "com|org|net|edu|gov|info|biz|io|co|de|fr|es|it|nl|be|ch|at|uk|us|ca|au|in|eu"


# Addresses spelled out against harvesters: "john dot doe at gmail dot com", "jane (at)
# example (dot) org", "j.doe [at] mail [dot] co [dot] uk": the local part, "at", a domain of
# one or more names joined by "dot", and a common top-level domain. A function word as the
# domain ("look at the dot com bubble") is no address.
_SPELLED_AT = r"(?:[ \t]*[(\[{][ \t]*at[ \t]*[)\]}][ \t]*|[ \t]+at[ \t]+)"
_SPELLED_DOT = r"(?:[ \t]*[(\[{][ \t]*dot[ \t]*[)\]}][ \t]*|[ \t]+dot[ \t]+|\.)"
_SPELLED_WORD = r"[A-Za-z0-9_%+-]+"
_SPELLED_EMAIL_RE = re.compile(
    rf"(?<![\w.@])(?P<local>{_SPELLED_WORD}(?:{_SPELLED_DOT}{_SPELLED_WORD})*){_SPELLED_AT}"
    rf"(?P<domain>{_SPELLED_WORD})(?:{_SPELLED_DOT}{_SPELLED_WORD})*{_SPELLED_DOT}"
    rf"(?:{_URL_TLDS_SPELLED})(?![\w@])", re.IGNORECASE)
_SPELLED_HINT_RE = re.compile(r"(?i:[ \t(\[{]dot[ \t)\]}])")
_FUNCTION_WORDS = frozenset("the a an this that my your our their his her its me us them home "
                            "work school least most all".split())


def recognize_emails(text: str, settings: PatternSettings) -> list[EntitySpan]:
    """Addresses like `jane.doe+news@mail.example.co.uk` (an alphabetic top-level domain),
    and addresses spelled out with "at" and "dot" (`_SPELLED_EMAIL_RE`)."""
    spans = [EntitySpan(m.start(), m.end(), "EMAIL", SCORE_FORMAT)
             for m in finditer_on_lines(_EMAIL_RE, _AT_RE, text)]
    spans += [EntitySpan(m.start(), m.end(), "EMAIL", SCORE_FORMAT)
              for m in finditer_on_lines(_SPELLED_EMAIL_RE, _SPELLED_HINT_RE, text)
              if m.group("domain").lower() not in _FUNCTION_WORDS
              and m.group("local").lower() not in _FUNCTION_WORDS
              and (" " in m.group() or "(" in m.group() or "[" in m.group() or "{" in m.group())]
    return spans


# ----------------------------------------------------------------------------- PHONE

# Runs of digit groups joined the way phone numbers are written ("+44 (0)20 7946 0958",
# "(212) 555-0143", "06.12.34.56.78", "020 - 7946 0958"); only these, with one character
# of context each side for the matcher's letter-adjacency checks, go to the matcher.
# Double spaces and " -" end a run, so aligned tables and negative numbers fall apart.
_PHONE_DASHES = "\\-./\u2010-\u2015\u2212\uff0d"
_PHONE_SEP = (f"(?:[ \u00a0\u2007\u202f]|[{_PHONE_DASHES}]|[ ][{_PHONE_DASHES}][ ]|\\)[ \u00a0]?"
              f"|[ \u00a0]?\\()")
_PHONE_RUN_RE = re.compile(f"[+\uff0b]?\\(?\\d+(?:{_PHONE_SEP}\\d+)*\\)?")
_PHONE_DECIMAL_RE = re.compile(r"\D*\d+\.\d+\D*")     # 0.88213, (2.0477815)
_PHONE_ZIP_RE = re.compile(r"\d{5}-\d{4}")               # US ZIP+4, 02110-1301
_PHONE_SSN_RE = re.compile(r"\d{3}-\d{2}-\d{4}")         # the US SSN shape, 078-05-1121
# "06 12 34 56 78" comes with its leading 0; "60 22 50 86 58" is a row of numbers
_PHONE_PAIRS_RE = re.compile(r"[1-9]\d(?: \d\d){3,}")
_PHONE_CUE = cue_pattern(
    r"tel|tele|telephone|phone|ph|mobile|mob|cell|cellphone|fax|call|text|sms|whatsapp|"
    r"contact|hotline|ring|reach|telefon|telefoon|tél|téléphone|portable|mobil|handy|"
    r"teléfono|telefono|cep|numara|numarası|telepono|电话|電話|手机|手機|טלפון|נייד|"
    r"t(?=:)|m(?=:)|f(?=:)|p(?=:)")
_PHONE_CUE_BEFORE = 32
_PHONE_MIN_DIGITS = 7     # shorter numbers are years, amounts and extensions far more often
_PHONE_MAX_RUN = 200      # longer runs are numeric tables (or hostile input), not phone text


@lru_cache(maxsize=None)
def _region_min_digits(region: str) -> int:
    """The fewest digits a number of `region` can have, by phonenumbers' metadata."""
    metadata = phonenumbers.PhoneMetadata.metadata_for_region(region)
    lengths = [n for n in metadata.general_desc.possible_length if n > 0] if metadata else []
    return min(lengths, default=1)


@lru_cache(maxsize=4096)
def _phone_matches(window: str, region: Optional[str]) -> tuple[tuple[int, int], ...]:
    """Offsets of the numbers PhoneNumberMatcher finds in `window`.

    Region None reads only numbers written with "+": the "+" is evidence enough, so
    any possible number is taken (leniency POSSIBLE: a country code and a length the
    country uses, also in ranges not assigned yet, "+44 7700 900456"). For national
    formats the number must be valid and grouped the way the region groups it
    (STRICT_GROUPING).
    """
    leniency = phonenumbers.Leniency.POSSIBLE if region is None else \
        phonenumbers.Leniency.STRICT_GROUPING
    matcher = CachedPhoneNumberMatcher(window, region, leniency=leniency)
    found = []
    for m in matcher:
        start, end = m.start, m.end
        if window[start] in "([" and window.count(")", start, end) == 0:
            start += 1          # "(+31 30 286 5859)": the matcher keeps the lone "("
        number = window[start:end]
        if count_digits(number) >= _PHONE_MIN_DIGITS and not _PHONE_DECIMAL_RE.fullmatch(number):
            found.append((start, end))
    return tuple(found)



def _phone_run_matches(text: str, start: int, end: int,
                       regions: Sequence[str]) -> list[tuple[int, int]]:
    """The phone numbers in the run text[start:end], in text offsets."""
    run = text[start:end]
    if len(run) > _PHONE_MAX_RUN:
        return []
    international = run[0] in "+\uff0b"
    bare = run.strip("()")
    if bare.isdigit() and not bare.startswith("00"):
        # unformatted digits: serials, seeds, ids, timestamps, unless a cue says "phone"
        ws, _ = line_window(text, start, end, _PHONE_CUE_BEFORE, 0)
        if not _PHONE_CUE.search(text, ws, start):
            return []
    digits = count_digits(run)
    if (digits < _PHONE_MIN_DIGITS or _PHONE_DECIMAL_RE.fullmatch(run)
            or _PHONE_PAIRS_RE.fullmatch(bare) or _PHONE_ZIP_RE.fullmatch(bare)
            or _PHONE_SSN_RE.fullmatch(run)):
        return []
    ws, we = line_window(text, start, end, 1, 1)
    window = text[ws:we]
    matches = list(_phone_matches(window, None)) if international else []
    left = digits - sum(count_digits(window[s:e]) for s, e in matches)
    if left >= _PHONE_MIN_DIGITS:
        for region in regions:
            if left >= _region_min_digits(region):
                matches.extend(_phone_matches(window, region))
    covered = sum(count_digits(window[s:e]) for s, e in
                  _keep_disjoint_offsets(matches))
    if covered < digits - covered:
        return []       # a few digits of a long numeric sequence (a table row), not phone text
    return [(ws + s, ws + e) for s, e in matches]


def _keep_disjoint_offsets(offsets: Iterable[tuple[int, int]]) -> list[tuple[int, int]]:
    spans = keep_disjoint((EntitySpan(s, e, "", 0.0) for s, e in set(offsets)),
                           key=lambda s: (-len(s), s.start))
    return [(s.start, s.end) for s in spans]


# Scripts and letters that place a document in a region whose national phone formats it
# likely uses (Turkish: the letters only Turkish writes).
_SCRIPT_REGIONS = (
    (re.compile("[\u0590-\u05ff]"), "IL"), (re.compile("[\u4e00-\u9fff]"), "CN"),
    (re.compile("[\uac00-\ud7af]"), "KR"), (re.compile("[\u0e00-\u0e7f]"), "TH"),
    (re.compile("[\u3040-\u30ff]"), "JP"), (re.compile("[ğĞışŞİ]"), "TR"),
    (re.compile("[\u0600-\u06ff]"), "SA"))
_ANY_SCRIPT_RE = re.compile("|".join(script.pattern for script, _ in _SCRIPT_REGIONS))
# "+CC" opening a phone number: at least six more digits, not "+2" in a score or "+0.5"
_COUNTRY_CODE_RE = re.compile(r"(?<![\w+])[+\uff0b]([1-9][0-9]{0,2})(?=(?:[ .()-]{0,2}[0-9]){6})")


def document_phone_regions(text: str, regions: Sequence[str]) -> tuple[str, ...]:
    """`regions`, then the regions the document points to: the main region of each country
    code written as "+CC" in it (so "+63 917 123 4567" lets "0917 765 4321" be read as a
    Philippine number), and the region of a script or letters it is written in (Hebrew: IL,
    Chinese: CN, Hangul: KR, Thai: TH, kana: JP, Arabic: SA, Turkish letters: TR)."""
    found = list(regions)
    for m in _COUNTRY_CODE_RE.finditer(text):
        digits = m.group(1)
        for size in (1, 2, 3):
            region = phonenumbers.region_code_for_country_code(int(digits[:size])) \
                if len(digits) >= size else "ZZ"
            if region != "ZZ":
                found.append(region)
                break
    if _ANY_SCRIPT_RE.search(text):
        found += [region for script, region in _SCRIPT_REGIONS if script.search(text)]
    return tuple(dict.fromkeys(r for r in found if r != "001"))


def recognize_phones(text: str, settings: PatternSettings) -> list[EntitySpan]:
    """Numbers `phonenumbers.PhoneNumberMatcher` finds, once per region, merged.

    Numbers written with "+" are read once, whatever the regions, at leniency POSSIBLE:
    a country code and a length that country's numbers have, assigned or not
    ("+1 (555) 123-4567"). National formats are read once per region that allows that many digits, at
    STRICT_GROUPING: valid, and grouped the way the region groups them (VALID alone
    also takes table rows such as "2.0  4.4   3.05   0.43", ISBNs and decimals).
    Overlapping matches are merged, the longest winning.

    For precision, a number has at least seven digits; unformatted digits
    ("2125550143", "07911123456": also serials, seeds, ids or timestamps) need a cue
    such as "tel", "phone", "call" or "M:" shortly before them on their line, unless they
    start with "+" or "00"; decimals ("0.88213") and US ZIP+4 codes ("02110-1301") are
    not numbers; and numbers that cover less than half the digits of their run are
    dropped (a table row). The regions are the settings' and those the document itself
    points to (`document_phone_regions`).
    """
    if longest_number(text) < _PHONE_MIN_DIGITS:   # a run's digits are one number's
        return []
    regions = document_phone_regions(text, settings.phone_regions)
    found = [EntitySpan(s, e, "PHONE", SCORE_VALIDATED)
             for run in _PHONE_RUN_RE.finditer(text) if run.end() - run.start() >= _PHONE_MIN_DIGITS
             for s, e in _phone_run_matches(text, run.start(), run.end(), regions)]
    found += [EntitySpan(m.start(), m.end(), "PHONE", SCORE_VALIDATED)
              for m in finditer_on_lines(_PH_MOBILE_RE, DIGIT_RE, text) if _is_ph_mobile(m.group())]
    return keep_disjoint(set(found), key=lambda s: (-len(s), s.start))


# Philippine mobiles in their national format, 09XX XXX XXXX (compact or in those groups):
# found in any document, because the shape with the mobile prefix is distinctive.
_PH_MOBILE_RE = re.compile(
    r"(?=0)(?<![\w+.,/-])09[0-9]{2}(?:[0-9]{7}|( |-)[0-9]{3}\1[0-9]{4})(?![\w]|[.,/-][0-9])")


def _is_ph_mobile(number: str) -> bool:
    """Whether phonenumbers reads `number` as a valid Philippine mobile number."""
    parsed = phonenumbers.parse(number, "PH")
    return phonenumbers.is_valid_number(parsed) and phonenumbers.number_type(parsed) in (
        phonenumbers.PhoneNumberType.MOBILE, phonenumbers.PhoneNumberType.FIXED_LINE_OR_MOBILE)


# ----------------------------------------------------------------------------- IP

# "==1.0.0.0", ">= 3.10.0.0", "§4.2.3.2", "version 1.2.3.4": versions and sections
_NOT_IP_BEFORE_RE = re.compile(rf"(?:[=<>~!]=|§|\b(?i:version|ver\.)){H}?\Z")
_IPV4_RE = re.compile(r"(?=[0-9])(?<![\w.])[0-9]{1,3}(?:\.[0-9]{1,3}){3}(?!\w|\.[0-9])")
_IPV6_RE = re.compile(
    r"(?=[0-9A-Fa-f:])(?<![\w:.])(?=[0-9A-Fa-f]{0,4}:[0-9A-Fa-f]{0,4}:)[0-9A-Fa-f:]{2,39}"
    r"(?:(?<=:)[0-9]{1,3}(?:\.[0-9]{1,3}){3})?(?![\w:]|\.[0-9])")
_IPV4_HINT_RE = with_digit(re.compile(r"[0-9]\.[0-9]{1,3}\.[0-9]"))   # "1.2.3" of "1.2.3.4"
_IPV6_HINT_RE = re.compile(r":[0-9A-Fa-f]{0,4}:")   # what the opening lookahead asks for
_IPV6_LOOPBACK_RE = re.compile(r"(?=:)(?<![\w:\[.\\/])::1(?![\w:\]]|\.[0-9])")
_IPV6_LOOPBACK_HINT_RE = re.compile(r"::1")


def recognize_ips(text: str, settings: PatternSettings) -> list[EntitySpan]:
    """IPv4 dotted quads and IPv6 addresses that Python's `ipaddress` accepts.

    Any valid dotted quad is an address ("1.2.3.4" too), but not one inside a longer
    token ("v1.2.3.4", "1.2.3.4.5") or after "version", "==", ">=" or "§". An IPv6
    candidate needs a decimal digit and a group of three or more hex digits or four
    colons, so C++ scopes ("Face::Add") and Python slices ("[1::2]") are not addresses;
    the loopback "::1" is one where it stands alone (not in "[::1]", "a::1" or "::1::").
    """
    spans = []
    for m in finditer_on_lines(_IPV4_RE, _IPV4_HINT_RE, text):
        if _NOT_IP_BEFORE_RE.search(text, max(0, m.start() - 10), m.start()):
            continue
        try:
            ipaddress.IPv4Address(m.group())
        except ValueError:
            continue
        spans.append(EntitySpan(m.start(), m.end(), "IP", SCORE_VALIDATED))
    for m in finditer_on_lines(_IPV6_RE, _IPV6_HINT_RE, text):
        candidate = m.group()
        if candidate.endswith(":") and not candidate.endswith("::"):
            candidate = candidate[:-1]     # "fe80::1:" ending a clause
        groups = candidate.split(":")
        if not any(ch.isdigit() for ch in candidate) or (
                max(len(g) for g in groups) < 3 and len(groups) < 5):
            continue    # "Face::Add" is C++, "cuts[1::2]" a Python slice
        try:
            ipaddress.IPv6Address(candidate)
        except ValueError:
            continue
        spans.append(EntitySpan(m.start(), m.start() + len(candidate), "IP", SCORE_VALIDATED))
    spans += [EntitySpan(m.start(), m.end(), "IP", SCORE_VALIDATED)
              for m in finditer_on_lines(_IPV6_LOOPBACK_RE, _IPV6_LOOPBACK_HINT_RE, text)]
    return spans


# ----------------------------------------------------------------------------- URL

_URL_CHARS = r"[^\s<>\"'`{}|\\^\[\]]"
_URL_TLDS = (
    "com|org|net|edu|gov|mil|int|info|biz|io|co|me|app|dev|ai|eu|uk|ie|us|ca|au|nz|in|"
    "de|fr|es|it|nl|be|ch|at|se|no|dk|fi|pl|pt")
_URL_RE = re.compile(
    rf"(?=[^\W_])(?:(?<![\w@./-])(?:(?:https?|ftp)://{_URL_CHARS}|www\.[^\W_]){_URL_CHARS}*"
    rf"|(?<![\w@./:-])(?:[^\W_](?:[\w-]{{0,61}}[^\W_])?\.)+(?:{_URL_TLDS})"
    rf"(?::[0-9]{{1,5}})?/{_URL_CHARS}*)",
    re.IGNORECASE)
_URL_HINT_RE = re.compile(r"/|w[wW][wW]\.|W[wW][wW]\.")   # every URL holds "/" or "www."
_URL_CLOSERS = {")": "(", "]": "[", "}": "{", ">": "<"}


def _trim_url(url: str) -> str:
    """Drops trailing sentence punctuation, and closing brackets the URL did not open."""
    depth = {c: url.count(c) - url.count(o) for c, o in _URL_CLOSERS.items()}
    end = len(url)
    while end:
        c = url[end - 1]
        if c in ".,;:!?*'\"":
            end -= 1
        elif c in depth and depth[c] > 0:
            depth[c] -= 1
            end -= 1
        else:
            break
    return url[:end]


_SCHEME_RE = re.compile(r"(?:https?|ftp)://|www\.", re.IGNORECASE)


def _has_domain(url: str) -> bool:
    """Whether the host after a scheme or "www." holds a dot, is bracketed (IPv6) or is
    localhost: "http://microsoft" and "www.microsoft" are words after a prefix, not addresses."""
    prefix = _SCHEME_RE.match(url)
    if prefix is None:   # a domain and a path: its pattern asks for a dot
        return True
    host = re.split(r"[/:?#]", url[prefix.end():], maxsplit=1)[0]
    return "." in host.strip(".") or url[prefix.end():].startswith("[") \
        or host.lower() == "localhost"


def recognize_urls(text: str, settings: PatternSettings) -> list[EntitySpan]:
    """URLs with a scheme (http, https, ftp), starting with "www.", or a domain and a path.

    The path form needs a common top-level domain ("example.com/jobs/12", not
    "config.py/x"), nor a scheme or "www." before a host without a dot ("http://microsoft",
    "www.microsoft"). Bare domains with a registrable name are URLs too (`recognize_domains`).
    """
    spans = []
    for m in finditer_on_lines(_URL_RE, _URL_HINT_RE, text):
        url = _trim_url(m.group())
        if url.endswith("//") or not _has_domain(url):
            continue
        spans.append(EntitySpan(m.start(), m.start() + len(url), "URL", SCORE_FORMAT))
    return spans + recognize_domains(text)


# Bare domains ("wilhelminabraithwaite.com", "bbc.co.uk"): a registrable name under a public
# suffix of the Public Suffix List (tldextract's bundled snapshot, read offline). The suffix
# must be written in lower case ("end.Today" is a missing space) and be a classic generic
# or a country-code top-level domain other than the file extensions that are also country
# codes ("config.py", "main.rs", "README.md"); the newer generic ones are English words too
# often joined by a dot in code and typos ("self.name", "user.email", "end.today").
_DOMAIN_RE = re.compile(
    r"(?=[^\W_])(?<![\w@./:\\-])(?:[^\W_](?:[\w-]{0,61}[^\W_])?\.)+[a-z]{2,6}"
    r"(?![\w@/-]|\.[^\W_])")
_DOMAIN_HINT_RE = re.compile(r"[^\W_]\.[a-z]{2}")
_GENERIC_TLDS = frozenset("com org net edu gov mil int info biz".split())
_FILE_EXTENSION_TLDS = frozenset("py rs md sh so ps pl cc ai mk am pm im".split())


@lru_cache(maxsize=1)
def _public_suffixes():
    """tldextract over its bundled Public Suffix List snapshot: no download, no cache file."""
    import tldextract

    return tldextract.TLDExtract(suffix_list_urls=(), cache_dir=None, fallback_to_snapshot=True)


def _registrable(domain: str) -> bool:
    top = domain.rsplit(".", 1)[1]
    if top not in _GENERIC_TLDS and (len(top) != 2 or top in _FILE_EXTENSION_TLDS):
        return False
    parts = _public_suffixes()(domain.lower())
    return bool(parts.suffix) and any(ch.isalpha() for ch in parts.domain)


def recognize_domains(text: str) -> list[EntitySpan]:
    """Bare domains with a registrable name (labelled URL): see `_DOMAIN_RE`'s comment."""
    return [EntitySpan(m.start(), m.end(), "URL", SCORE_FORMAT)
            for m in finditer_on_lines(_DOMAIN_RE, _DOMAIN_HINT_RE, text) if _registrable(m.group())]


# ----------------------------------------------------------------------------- HANDLE

_MENTION_RE = re.compile(
    r"(?=@)(?<![\w@./+`-])@[A-Za-z0-9_](?:[A-Za-z0-9_.-]{0,37}[A-Za-z0-9_])(?![\w@])")
_DECORATOR_RE = re.compile(r"[({]")   # @dataclass(frozen=True), @pytest.mark.slow(...), @Book{
_TIME_LIKE_RE = re.compile(r"[0-9][0-9:.]*(?:am|pm|h|hrs?)?", re.IGNORECASE)
_TIMESTAMP = (r"[\[(]?(?:[0-9]{4}-[0-9]{2}-[0-9]{2}[ T])?[0-9]{1,2}:[0-9]{2}(?::[0-9]{2})?"
              rf"(?:{H}?[AaPp][Mm])?[\])]?")
_NICK = r"[A-Za-z_][\w|^`-]{0,30}"
_CHAT_ANGLE_RE = re.compile(  # <nick> hi, [12:03] <@nick> hi; not indented ("    <program>")
    rf"{LINE_START}(?:{_TIMESTAMP}{H}+)?<[@+%&~]?(?P<nick>{_NICK})>(?={H})")
_CHAT_STAMPED_RE = re.compile(  # [12:03] nick: hi
    rf"{LINE_START}{H}*{_TIMESTAMP}{H}+[@+]?(?P<nick>{_NICK}):(?={H}|[{LB}]|\Z)")
_CHAT_BARE_RE = re.compile(  # jsmith42: hi (not indented: "  input1: x" is YAML)
    rf"{LINE_START}(?P<nick>[a-z_][a-z0-9_|^`-]{{1,30}}):(?={H})")
_LOGIN_RE = re.compile(  # user=jsmith, username: jsmith, login_name="jsmith"
    r"(?=[LNSUlnsu])(?<![\w.-])(?P<key>(?i:user(?:[ _-]?(?:name|id))?|login(?:[ _-]?name)?|logon|"
    r"nick(?:name)?|screen[ _-]?name))"
    rf"(?:=|(?P<colon>:)){H}*[\"']?(?P<value>\w(?:[\w.@+-]{{0,62}}\w)?)(?![\w@(\[])")
_SSHD_RE = re.compile(  # sshd: "Invalid user jsmith from", "Failed password for jsmith from"
    rf"(?=[IPip])(?<!\w)(?:(?:invalid|illegal){H}+user"
    rf"|(?:password|publickey){H}+for(?:{H}+invalid{H}+user)?)"
    rf"{H}+(?P<value>\w(?:[\w.-]{{0,30}}\w)?){H}+from(?!\w)", re.IGNORECASE)
# Hints (`finditer_on_lines`): what each chat and log pattern cannot do without.
_LESS_THAN_RE = re.compile("<")              # _CHAT_ANGLE_RE
_CLOCK_RE = with_digit(re.compile(":[0-9][0-9]"))        # _CHAT_STAMPED_RE (":03" of "12:03")
_COLON_RE = re.compile(":")                  # _CHAT_BARE_RE
_KEY_VALUE_RE = re.compile("[=:]")           # _LOGIN_RE
_FROM_RE = re.compile("[fF][rR][oO][mM]")    # _SSHD_RE
# Words every match holds, in any case: texts without them are not searched at all.
_LOGIN_STEMS = ("user", "login", "logon", "nick", "screen")
_SSHD_STEMS = ("invalid", "illegal", "password", "publickey")
_NUMBERED_KEY_RE = re.compile(  # "col1:", "new_col2:", "step3:" are keys, not people
    r"(?:[a-z]+_)*(?:arg|answer|block|case|chapter|class|col|column|db|example|feature|field|file|"
    r"group|host|id|input|item|key|label|layer|level|line|name|node|option|opt|output|param|part|"
    r"phase|q|question|row|section|server|stage|step|table|task|test|type|val|value|var|version|v|"
    r"x|y|z)_?[0-9]+")
# Decorators, annotations and doc-comment tags that code quoted in prose writes with "@"
_NOT_MENTIONS = frozenset(
    "abc abstractmethod addtogroup app author brief cached_property classmethod cond "
    "contextmanager dataclass dataclasses deprecated endcond file final functools given "
    "inheritdoc link mock overload override param patch property pytest return returns "
    "runtime_checkable see since staticmethod suppresswarnings throws todo typing version "
    "wraps".split())
_HTML_TAGS = frozenset(
    "a abbr b blockquote body br button code div em footer form h1 h2 h3 h4 h5 h6 head header hr "
    "html i img input label li link meta nav ol option p pre script section select small span "
    "strong style sub sup table tbody td textarea th thead title tr u ul".split())
_NOT_NICKS = frozenset(
    "a alert answer bcc cc client critical date debug edit email error fatal fax fixme from fw "
    "file filename fwd host http https info input kernel mailto main mobile name nb note notes "
    "notice output path phone program ps q question re reply result sent server status subject "
    "summary system tel to todo trace update url user username value version warn "
    "warning".split())
_TECH_TOKENS = frozenset(
    "amd64 arm64 base64 covid19 eth0 eth1 h264 h265 http2 http3 i386 ipv4 ipv6 md5 mp3 mp4 "
    "oauth2 py3 python3 sha1 sha256 sha512 utf8 utf16 utf32 wlan0 win32 win64 x509 x86".split())
_NOT_LOGINS = frozenset(
    "admin administrator anonymous any bool bytes dict empty failed false float guest int "
    "invalid list n na nil no none null object optional required root set str success true "
    "tuple unknown yes".split())


def _alone_on_line(text: str, start: int, end: int) -> bool:
    """Whether only whitespace surrounds [start, end) on its line (a decorator, not a mention)."""
    ws, we = line_window(text, start, end, 200, 200)
    return not text[ws:start].strip() and not text[end:we].strip()


def _plausible_nick(nick: str) -> bool:
    letters = [ch for ch in nick if ch.isalpha()]
    if len(letters) >= 2 and all(ch.isupper() for ch in letters):
        return False    # INFO, ERROR, WARN: log levels, not people
    return nick.lower() not in _NOT_NICKS


def recognize_handles(text: str, settings: PatternSettings) -> list[EntitySpan]:
    """User names where a chat or log format marks them.

    - `@name` mentions (the span is the name, without the "@"; never in an email address,
      nor a decorator such as `@dataclass(...)`, `@property` alone on its line or `@param`);
    - chat line prefixes: `<nick>` at a line's very start (after an optional timestamp),
      `[12:03] nick:` after a timestamp, and a bare `nick:` at a line's very start only
      when the nick is lowercase and bears a digit ("jsmith42:"), since "Note:",
      "error:" or YAML keys would otherwise pass (numbered keys such as "col1:" do not);
    - log fields: `user=`, `username:`, `login_name=`, `nick:` ... and sshd's
      "Invalid user NAME from" / "password for NAME from".
    """
    spans = []
    for m in finditer_on_lines(_MENTION_RE, _AT_RE, text):
        name = m.group()[1:]
        if not any(ch.isalpha() for ch in name) or _TIME_LIKE_RE.fullmatch(name) \
                or name.split(".")[0].lower() in _NOT_MENTIONS \
                or _DECORATOR_RE.match(text, m.end()) or _alone_on_line(text, m.start(), m.end()):
            continue
        spans.append(EntitySpan(m.start() + 1, m.end(), "HANDLE", SCORE_FORMAT))
    for pattern, hint in ((_CHAT_ANGLE_RE, _LESS_THAN_RE), (_CHAT_STAMPED_RE, _CLOCK_RE)):
        for m in finditer_on_lines(pattern, hint, text):
            nick = m.group("nick")
            if pattern is _CHAT_ANGLE_RE and nick.lower() in _HTML_TAGS:
                continue
            if _plausible_nick(nick):
                spans.append(EntitySpan(m.start("nick"), m.end("nick"), "HANDLE", SCORE_FORMAT))
    for m in finditer_on_lines(_CHAT_BARE_RE, _COLON_RE, text):
        nick = m.group("nick")
        if (any(ch.isdigit() for ch in nick) and sum(ch.isalpha() for ch in nick) >= 2
                and nick not in _TECH_TOKENS and nick not in _NOT_NICKS
                and not _NUMBERED_KEY_RE.fullmatch(nick)):
            spans.append(EntitySpan(m.start("nick"), m.end("nick"), "HANDLE", SCORE_FORMAT))
    logins = finditer_on_lines(_LOGIN_RE, _KEY_VALUE_RE, text) \
        if may_hold(text, _LOGIN_STEMS) else ()
    for m in logins:
        key, value = m.group("key").lower(), m.group("value")
        if value.lower() in _NOT_LOGINS:
            continue
        if m.group("colon") and (key == "user" or not any(ch.isalpha() for ch in value)
                                 or text.startswith(")", m.end())):
            continue    # "User: please", "login: 3 attempts", "f(user_id: UserId)"
        spans.append(EntitySpan(m.start("value"), m.end("value"), "HANDLE", SCORE_FORMAT))
    for m in finditer_on_lines(_SSHD_RE, _FROM_RE, text) if may_hold(text, _SSHD_STEMS) else ():
        if m.group("value").lower() not in _NOT_LOGINS:
            spans.append(EntitySpan(m.start("value"), m.end("value"), "HANDLE", SCORE_FORMAT))
    return spans



# ----------------------------------------------------------------------------- MAC

_MAC_RE = re.compile(
    r"(?=[0-9A-Fa-f])(?<![\w:.-])(?:[0-9A-Fa-f]{2}([:-])[0-9A-Fa-f]{2}(?:\1[0-9A-Fa-f]{2}){4}|"
    r"[0-9A-Fa-f]{4}\.[0-9A-Fa-f]{4}\.[0-9A-Fa-f]{4})(?![\w:]|[.-]\w)")
# ":1A:" or "-1a-" (the second pair between separators), ".2b3c." (Cisco's middle quad)
_MAC_HINT_RE = re.compile(r"[:.-][0-9A-Fa-f]{2}(?:[:-]|[0-9A-Fa-f]{2}\.)")


def _colon_form(address: str) -> str:
    """00:50:99:84:a2:a0 for 0050.9984.a2a0 (stdnum.mac reads pairs); other forms unchanged."""
    if "." not in address:
        return address
    digits = address.replace(".", "")
    return ":".join(digits[i:i + 2] for i in range(0, 12, 2))


def recognize_macs(text: str, settings: PatternSettings) -> list[EntitySpan]:
    """MAC addresses: six hex pairs joined by ":" or "-", or Cisco's three dotted quads."""
    return [EntitySpan(m.start(), m.end(), "MAC", SCORE_FORMAT)
            for m in finditer_on_lines(_MAC_RE, _MAC_HINT_RE, text)
            if stdnum_mac.is_valid(_colon_form(m.group()))]


KINDS = (
    Kind("EMAIL", recognize_emails, 0, "email addresses with an alphabetic top-level domain"),
    Kind("PHONE", recognize_phones, 3,
         "phone numbers: international (+44 ...) anywhere, national formats of --phone-regions",
         validation="phonenumbers' metadata (valid number for its region)"),
    Kind("IP", recognize_ips, 0, "IPv4 dotted quads and IPv6 addresses",
         validation="Python's ipaddress"),
    Kind("URL", recognize_urls, 0, "URLs with a scheme, starting with www., or a domain and a path"),
    Kind("HANDLE", recognize_handles, 4,
         "user names in @mentions, chat lines (<nick>, nick:) and log lines (user=, sshd)"),
    Kind("MAC", recognize_macs, 0, "MAC addresses: 00:1A:2B:3C:4D:5E, 00-1a-2b-3c-4d-5e, 001a.2b3c.4d5e",
         validation="format (stdnum.mac)"),
)
