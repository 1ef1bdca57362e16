"""Unit tests for the pattern recognizers: each kind, its negatives, overlaps, merging, speed."""
from __future__ import annotations

import pickle
import random
import re
import time

import pytest

from larvatus.transforms import names, recognizers
from larvatus.transforms.recognizers import (
    DEFAULT_PHONE_REGIONS, LINE_BREAKS, SCORE_CHECKSUM, SCORE_FORMAT, SCORE_VALIDATED, Kind,
    PatternSettings, addresses, base, contact, dates, find_patterns, identifiers, merge_spans,
    pattern_labels, recognize)
from larvatus.transforms.records import Document, EntitySpan, SegmentedDocument


def found(text, settings=PatternSettings()):
    """The (label, surface) pairs find_patterns reports."""
    return {(s.label, text[s.start:s.end]) for s in find_patterns(text, settings)}


def labels_found(text):
    return {label for label, _ in found(text)}


def span_of(text, surface, label, score=0.9):
    start = text.index(surface)
    return EntitySpan(start, start + len(surface), label, score)


# ----------------------------------------------------------------------------- registry, settings

def test_registry_labels_are_unique():
    assert len(pattern_labels()) == len(set(pattern_labels()))


def test_default_settings():
    settings = PatternSettings()
    assert settings.labels == frozenset(pattern_labels()) - {"QUASI"}   # the strict profile's
    assert settings.phone_regions == DEFAULT_PHONE_REGIONS


def test_settings_validate_and_normalise():
    with pytest.raises(ValueError, match="unknown pattern labels"):
        PatternSettings(labels=frozenset({"EMAIL", "PER"}))
    with pytest.raises(ValueError, match="phone regions"):
        PatternSettings(phone_regions=("GB", "XX"))
    settings = PatternSettings(labels={"EMAIL"}, phone_regions=("gb", "GB", "us"))
    assert settings.labels == frozenset({"EMAIL"})
    assert settings.phone_regions == ("GB", "US")


def test_settings_pickle():
    # settings travel to Beam workers inside a DoFn
    settings = PatternSettings(labels=frozenset({"PHONE"}), phone_regions=("GB",))
    assert pickle.loads(pickle.dumps(settings)) == settings


def test_only_the_chosen_labels_run():
    text = "Mail jane@example.com or call +44 20 7946 0958 before 12/08/2024."
    only_email = PatternSettings(labels=frozenset({"EMAIL"}))
    assert found(text, only_email) == {("EMAIL", "jane@example.com")}
    assert found(text, PatternSettings(labels=frozenset())) == set()
    assert labels_found(text) == {"EMAIL", "PHONE", "DATE"}


def test_each_recognizer_reports_its_own_label():
    text = ("jane@example.com +44 20 7946 0958 4111 1111 1111 1111 GB82 WEST 1234 5698 7654 32 "
            "10.0.0.1 https://example.com/x 12/08/1956 NHS 943 476 5919 @jdoe case no. 12345 "
                "12 High Street 00:50:99:84:a2:a0 account 12345678 1NEDqZPvTWRaoho48qXuLLsrYomMXPABfD "
                "car AB12 CDE")
    for label, recognizer in ((k.label, k.find) for k in recognizers.kinds()):
        spans = recognizer(text, PatternSettings())
        assert spans, label
        assert {s.label for s in spans} == {label}


def test_recognize_reads_the_segmented_document():
    text = "Write to jane@example.com."
    segmented = SegmentedDocument(document=Document("d", text, "src"), word_starts=(),
                                  word_ends=())
    assert recognize(segmented) == find_patterns(text)
    assert recognize(segmented, PatternSettings(labels=frozenset({"PHONE"}))) == ()


def test_spans_sorted_disjoint_and_scored():
    text = ("Card 4111 1111 1111 1111, mail jane@example.com, ip 10.0.0.1, "
            "claim #A12345, born 12 August 1956.")
    spans = find_patterns(text)
    assert [s.start for s in spans] == sorted(s.start for s in spans)
    assert all(a.end <= b.start for a, b in zip(spans, spans[1:]))
    scores = {s.label: s.score for s in spans}
    assert scores == {"CARD": SCORE_CHECKSUM, "EMAIL": SCORE_FORMAT, "IP": SCORE_VALIDATED,
                      "CODE": SCORE_FORMAT, "DATE": SCORE_VALIDATED}


# ----------------------------------------------------------------------------- EMAIL

@pytest.mark.parametrize("email", [
    "jane.doe@example.com",
    "j.doe+news@mail.example.co.uk",
    "JANE_DOE@EXAMPLE.ORG",
    "first-last.99@sub-domain.example.io",
    "zoë@exämple.de",
])
def test_email(email):
    assert found(f"Write to {email}.") == {("EMAIL", email)}
    assert found(f"({email})") == {("EMAIL", email)}
    assert found(f"mailto:{email}") == {("EMAIL", email)}


@pytest.mark.parametrize("text", [
    "a@b", "user@localhost", "@handle@", "x@y.1", "email me @ home",
])
def test_not_an_email(text):
    assert "EMAIL" not in labels_found(text)


def test_an_address_spelled_out_is_an_email():
    assert labels_found("name at example dot com") == {"EMAIL"}


# ----------------------------------------------------------------------------- PHONE

@pytest.mark.parametrize("phone", [
    "+44 20 7946 0958",
    "(212) 555-0143",
    "07700 900123",
    "+33 1 23 45 67 89",
    "07911 123456",
    "020 7946 0958",
    "+44 (0)20 7946 0958",
    "+1 415 555 0143",
    "415-555-0143",
    "212.555.0143",
    "1-800-555-0199",
    "+49 30 901820",
    "06 12 34 56 78",
    "+91 98765 43210",
    "0412 345 678",
    "+353 1 234 5678",
    "+34 912 345 678",
    "+31 6 12345678",
    "+31 6 61300834",          # valid, though not in the grouping libphonenumber prints
    "02079460958",
])
def test_phone(phone):
    assert found(f"Call {phone} today.") == {("PHONE", phone)}


def test_phone_in_brackets_is_tight():
    assert found("his son (+31 30 286 5859) was present") == {("PHONE", "+31 30 286 5859")}
    assert found("(020 7946 0958)") == {("PHONE", "020 7946 0958")}


def test_international_phone_is_not_an_nhs_number():
    # "503 837 8935" alone has a valid NHS check digit, but here it is part of a phone number
    assert found("reach me on +1 503 837 8935 today") == {("PHONE", "+1 503 837 8935")}


def test_phone_regions():
    text = "US (212) 555-0143, UK 020 7946 0958, intl +33 1 23 45 67 89"
    assert found(text, PatternSettings(phone_regions=())) == {("PHONE", "+33 1 23 45 67 89")}
    assert found(text, PatternSettings(phone_regions=("GB",))) == {
        ("PHONE", "020 7946 0958"), ("PHONE", "+33 1 23 45 67 89")}
    assert found(text, PatternSettings(phone_regions=("US",))) == {
        ("PHONE", "(212) 555-0143"), ("PHONE", "+33 1 23 45 67 89")}


def test_phone_found_once_across_regions():
    spans = recognizers.kind("PHONE").find("x +44 20 7946 0958 y", PatternSettings())
    assert [(s.start, s.end) for s in spans] == [(2, 18)]


def test_unformatted_digits_need_a_phone_cue():
    assert found("Call 2125550143 now") == {("PHONE", "2125550143")}
    assert found("M: 07911123456") == {("PHONE", "07911123456")}
    assert found("serial 1164660820, epoch 2272060800") == set()
    assert found("alphabet '0123456789', seed=3113794652, Random(724466096), hal-01168816") == set()


@pytest.mark.parametrize("text", [
    "sepal width:    2.0  4.4   3.05   0.43   -0.4194",
    "average 0.88213...",
    "row: 72 -52 -19 37 -33 -24 -11",
    "-61 -60 22 50 86 58 -11",
    "ISBN 0-471-22361-1",
    "in 1998 2001 2005",
    "BP 150/95, pulse 72",
    "year 2019-2020",
    "Boston, MA 02110-1301 USA",
    "approx(2.0477815699658715)",
    "[0.35355339 0.55634864 0.67082039 0.78679579 0.88034084]",
    "doi:10.1371/journal.pone.0135177",
])
def test_not_a_phone(text):
    assert "PHONE" not in labels_found(text)


def test_phone_does_not_swallow_dates_cards_or_ibans():
    text = "born 12/08/1956 or 12.08.1956, card 4111 1111 1111 1111, GB82 WEST 1234 5698 7654 32"
    assert found(text) == {("DATE", "12/08/1956"), ("DATE", "12.08.1956"),
                           ("CARD", "4111 1111 1111 1111"),
                           ("IBAN", "GB82 WEST 1234 5698 7654 32")}


# ----------------------------------------------------------------------------- CARD

@pytest.mark.parametrize("card", [
    "4111 1111 1111 1111",
    "4111-1111-1111-1111",
    "4111111111111111",
    "5555 5555 5555 4444",
    "3782 822463 10005",
    "378282246310005",
    "6011111111111117",
    "4445 3499 6189 9",         # 13-digit Visa, last group short
    "180057755898097",          # JCB
    "676247429340",             # 12-digit Maestro
    "5705 6481 8997",
])
def test_card(card):
    assert found(f"Card: {card}.") == {("CARD", card)}


def test_card_stops_before_an_expiry_date():
    assert ("CARD", "4111 1111 1111 1111") in found("paid with 4111 1111 1111 1111 12/25")


@pytest.mark.parametrize("text", [
    "Card 4111 1111 1111 1112 declined.",   # Luhn-invalid
    "Card 4111111111111112.",
    "order 1234567812345670",               # Luhn-valid, but no card network starts with 1
    "x4111111111111111",                    # inside a longer token
    "4111111111111111111111",               # too long
    "id 411111111116",                      # 12 digits, Luhn-valid, not a Maestro prefix
])
def test_not_a_card(text):
    assert "CARD" not in labels_found(text)


# ----------------------------------------------------------------------------- IBAN

@pytest.mark.parametrize("iban", [
    "GB82 WEST 1234 5698 7654 32",
    "GB82WEST12345698765432",
    "DE89 3704 0044 0532 0130 00",
    "DE89370400440532013000",
    "FR14 2004 1010 0505 0001 3M02 606",
    "NL91 ABNA 0417 1643 00",
    "NO93 8601 1117 947",
    "ch93 0076 2011 6238 5295 7",
])
def test_iban(iban):
    assert found(f"Pay to {iban}.") == {("IBAN", iban)}


def test_iban_followed_by_a_four_letter_word():
    assert found("AT61 1904 3002 3457 3201 EURO") == {("IBAN", "AT61 1904 3002 3457 3201")}


@pytest.mark.parametrize("text", [
    "IBAN GB83 WEST 1234 5698 7654 32.",   # wrong check digits
    "IBAN GB82 WEST 1234 5698 7654 33.",
    "IBAN DE89 3704 0044 0532 0130 01",
    "code XX82WEST12345698765432",
])
def test_not_an_iban(text):
    assert "IBAN" not in labels_found(text)


# ----------------------------------------------------------------------------- IP

@pytest.mark.parametrize("text, ip", [
    ("host 192.168.0.1 is down", "192.168.0.1"),
    ("connect to 10.0.0.1:8080.", "10.0.0.1"),
    ("net 172.16.0.0/12", "172.16.0.0"),
    ("dotted quad 1.2.3.4", "1.2.3.4"),
    ("v6 2001:db8::1, ok", "2001:db8::1"),
    ("link fe80::1%eth0", "fe80::1"),
    ("mapped ::ffff:192.0.2.1", "::ffff:192.0.2.1"),
    ("full 2001:0db8:85a3:0000:0000:8a2e:0370:7334.", "2001:0db8:85a3:0000:0000:8a2e:0370:7334"),
    ("[2001:db8::42]:443", "2001:db8::42"),
])
def test_ip(text, ip):
    assert found(text) == {("IP", ip)}


@pytest.mark.parametrize("text", [
    "999.1.1.1", "256.1.1.1", "1.2.3.999", "v1.2.3.4", "1.2.3", "1.2.3.4.5", "at 12:30:45",
    "Face::Add", "cuts[1::2]", "MAC 00:1A:2B:3C:4D:5E", "010.0.0.1", "foo==1.0.0.0",
    "typing_extensions >= 3.10.0.0", "RFC 5891 §4.2.3.2", "version 1.2.3.4",
])
def test_not_an_ip(text):
    assert "IP" not in labels_found(text)


# ----------------------------------------------------------------------------- URL

@pytest.mark.parametrize("text, url", [
    ("see https://example.com/path?q=1&r=2.", "https://example.com/path?q=1&r=2"),
    ("(see https://example.com/path)", "https://example.com/path"),
    ("wiki http://x.com/a_(b), ok", "http://x.com/a_(b)"),
    ("visit www.example.org!", "www.example.org"),
    ("profile: linkedin.com/in/janedoe.", "linkedin.com/in/janedoe"),
    ("ftp://files.example.net/pub/report.pdf", "ftp://files.example.net/pub/report.pdf"),
    ("<https://example.com/a>", "https://example.com/a"),
    ("HTTPS://EXAMPLE.COM/X", "HTTPS://EXAMPLE.COM/X"),
    ("example.com", "example.com"),            # a bare registrable domain
])
def test_url(text, url):
    assert found(text) == {("URL", url)}


@pytest.mark.parametrize("text", [
    "report.pdf", "config.py/x", "and/or", "http://", "e.g./i.e.", "www.",
    "jane@www.example.com/x",
])
def test_not_a_url(text):
    assert "URL" not in labels_found(text)


# ----------------------------------------------------------------------------- DATE

@pytest.mark.parametrize("date", [
    "12/08/1956",
    "12.08.1956",
    "12-08-1956",
    "08/31/1956",
    "1956-08-12",
    "1956/08/12",
    "12 August 1956",
    "12th August 1956",
    "12th of August 1956",
    "12-Aug-1956",
    "12 AUG 1956",
    "August 12, 1956",
    "August 12th, 1956",
    "Aug. 12, 1956",
    "Sept. 3, 2001",
    "12th Aug 1956",
    "August 1956",
    "29/02/2020",
    "12/8/56",
    "12.08.56",
])
def test_date(date):
    assert found(f"Born {date}, London.") == {("DATE", date)}


@pytest.mark.parametrize("timestamp", [
    "1956-08-12T10:30:00Z", "2024-06-05T09:15:30.500-07:00", "2024-06-05T09:15+0530",
    "2024-06-05T09:15"])
def test_iso_timestamp_keeps_its_time_and_offset(timestamp):
    assert found(f"at {timestamp} sharp") == {("DATE", timestamp)}


@pytest.mark.parametrize("date", ["May-2021", "May 2021", "05/2021", "5/2021", "12.2020"])
def test_month_and_year(date):
    assert found(f"since {date}, London.") == {("DATE", date)}


@pytest.mark.parametrize("text", ["13/2021", "00/2021", "page 5/2021x", "v1.2021.3", "May-21"])
def test_not_a_month_and_year(text):
    assert "DATE" not in labels_found(text)


@pytest.mark.parametrize("text", [
    "31/02/2020", "29/02/2021", "13/13/2020", "2020-02-30", "30 February 2020", "February 30, 2020",
    "in 1956", "at 10:30", "at 10:30:15", "you may 2020", "on 12 august", "version 1.4.2",
    "ratio 12/08", "12/08/1956/3", "x12/08/1956",
])
def test_not_a_date(text):
    assert "DATE" not in labels_found(text)


# ----------------------------------------------------------------------------- ID

@pytest.mark.parametrize("text, identifier", [
    ("NHS 943 476 5919", "943 476 5919"),
    ("reference 943 476 5919 on file", "943 476 5919"),           # usual formatting, no cue
    ("NHS number: 9434765919", "9434765919"),
    ("SSN 536-90-4399", "536-90-4399"),
    ("born 536-90-4399", "536-90-4399"),                           # usual formatting, no cue
    ("SSN: 536904399", "536904399"),
    ("NINO AB 12 34 56 C", "AB 12 34 56 C"),
    ("ni: JG103759A", "JG103759A"),
    ("DNI 12345678Z", "12345678Z"),
    ("NIE X1234567L", "X1234567L"),
    ("BSN: 123456782", "123456782"),
    ("burgerservicenummer 1234.56.782", "1234.56.782"),
    ("NIR 2 95 10 99 126 111 93", "2 95 10 99 126 111 93"),
    ("numéro de sécurité sociale 295109912611193", "295109912611193"),
    ("CF RCCMNL83S18D969H", "RCCMNL83S18D969H"),
    ("PESEL 44051401359", "44051401359"),
    ("Steuer-ID 36 574 261 809", "36 574 261 809"),
    ("PPSN 6433435F", "6433435F"),
    ("NN 85.07.30-033.28", "85.07.30-033.28"),
    ("123456782 (BSN)", "123456782"),                             # cue after the number
    ("Tax identification number: 62 436 790 152", "62 436 790 152"),
    ("Passport number: 123456789", "123456789"),
    ("pasaporte AAA123456", "AAA123456"),
    ("Reisepass-Nr. A1234567 ausgestellt", "A1234567"),
    ("YA1234567 (passaporto)", "YA1234567"),
])
def test_id(text, identifier):
    assert found(text) == {("ID", identifier)}


@pytest.mark.parametrize("text", [
    "The number 9434765919 was printed on the form.",   # valid NHS checksum, no cue, no groups
    "NHS\n9434765919",                                   # the cue is on another line
    "ref 943 476 5910",                                  # wrong check digit, no cue
    "000-12-3456 and 666-12-3456 and 900-12-3456",       # never issued, no cue
    "number 123456789",                                  # 11-proef fails, no cue
    "order 123456782 shipped",                           # valid BSN, no cue
    "44851401353 rows",                                  # PESEL of the 1800s, no cue
    "44131401350 rows",                                  # PESEL checksum, month 13
    "36574261809 bytes",                                 # valid German tax id, no cue
    "1234567T",                                          # valid PPS, no cue
    "GB 12 34 56 C, QQ123456C, AB123456E",               # not allocated NINO prefixes/suffix
    "code 12345678A",                                    # wrong control letter, no cue
    "RCCMNL83S18D969A",                                  # wrong control letter
    "Order 123456789 shipped",                           # passport shape, no cue
    "passport photo 12345",                              # too short for a passport number
])
def test_not_an_id(text):
    assert "ID" not in labels_found(text)


def test_random_ten_digit_number_is_nothing():
    assert found("Ticket printed: 4839201746 at desk") == set()
    assert found("value 9434765919") == set()


# ----------------------------------------------------------------------------- HANDLE

@pytest.mark.parametrize("text, handle", [
    ("thanks @carol!", "carol"),            # the name, without the "@"
    ("cc @bob_42 and", "bob_42"),
    ("(@jane.doe)", "jane.doe"),
    ("<alice> morning", "alice"),
    ("[09:14] <@op_bob> hi", "op_bob"),
    ("[12:03] bob: hey", "bob"),
    ("2023-01-05 12:03:44 Dave: ok", "Dave"),
    ("jsmith42: yo", "jsmith42"),
    ("GET /x user=jdoe status=200", "jdoe"),
    ('login_name="mary.k"', "mary.k"),
    ("username: kev_99", "kev_99"),
    ("Invalid user oracle from 203.0.113.9", "oracle"),
    ("Failed password for jsmith from 203.0.113.9 port 22", "jsmith"),
])
def test_handle(text, handle):
    assert ("HANDLE", handle) in found(text)
    assert {label for label, surface in found(text) if surface != handle} <= {"IP", "DATE"}


@pytest.mark.parametrize("text", [
    "Note: the meeting moved",
    "Subject: hello",
    "error: file not found",
    "[12:04] INFO: started",
    "[12:04] ERROR: disk full",
    "re: your mail",
    "@dataclass\nclass X:",
    "    @property\n    def x(self):",
    "@pytest.mark.slow(1)",
    "@InProceedings{key,",
    "use ``@pytest.mark.parametrize`` here",
    "each decorated with @overload. For",
    "# @param name the user",
    "b'~?@C'",
    "def name_by_id(user_id: UserId) -> str:",
    "meet @3pm",
    "  input1: First input",
    "col1: x",
    "<p> text",
    "    <program>  Copyright",
    "User: please log in",
    "login: 3 attempts",
    "user=null",
    "handle = io.BytesIO(raw)",
    "username: str",
])
def test_not_a_handle(text):
    assert "HANDLE" not in labels_found(text)


@pytest.mark.parametrize("text", ["jane@example.com", "write to bob42@mail.example.org now",
                                  "user=jane@example.com", "@jane@example.com"])
def test_emails_are_not_handles(text):
    assert labels_found(text) <= {"EMAIL"}
    assert "EMAIL" in labels_found(text)


# ----------------------------------------------------------------------------- CODE

@pytest.mark.parametrize("text, code", [
    ("application no. 36110/97", "36110/97"),
    ("Application No. 36110/97", "36110/97"),
    ("case 202201873 B4", "202201873 B4"),
    ("MRN 00482913", "00482913"),
    ("MRN: 00482913", "00482913"),
    ("ref: AB-2291-X", "AB-2291-X"),
    ("Our ref. 2023/00457", "2023/00457"),
    ("file number 2019/1234", "2019/1234"),
    ("claim #A12345", "A12345"),
    ("patient ID 8841-22", "8841-22"),
    ("patient ID: 8841-22", "8841-22"),
    ("docket No. 21-cv-1234", "21-cv-1234"),
    ("Case No. 2:21-cv-01234", "2:21-cv-01234"),
    ("invoice INV-2024-0042", "INV-2024-0042"),
    ("policy nr 99812-A", "99812-A"),
    ("lodged an application (no. 46168/00) against", "46168/00"),
    ("Civil Action No. 3:22-cv-82177", "3:22-cv-82177"),
])
def test_code(text, code):
    assert found(text + ", closed.") == {("CODE", code)}


@pytest.mark.parametrize("text", [
    "case of the missing file", "ref: see below", "order 66", "licence 2.0", "file 2019",
    "Case closed.", "in any case, 12 people", "the application was refused", "showcase 12345",
    "account: n/a", "student 384, teacher 768", "from ticket #617",
])
def test_not_a_code(text):
    assert "CODE" not in labels_found(text)


# ----------------------------------------------------------------------------- line breaks, offsets

POSITIVES = [
    "jane.doe@example.com", "+44 20 7946 0958", "(212) 555-0143", "4111 1111 1111 1111",
    "GB82 WEST 1234 5698 7654 32", "192.168.0.1", "2001:db8::1", "https://example.com/a/b",
    "12 August 1956", "August 12, 1956", "12/08/1956", "943 476 5919", "AB 12 34 56 C",
    "@carol", "MRN 00482913", "case 202201873 B4",
]


@pytest.mark.parametrize("surface", POSITIVES)
def test_no_span_crosses_a_line_break(surface):
    for i in range(1, len(surface)):
        for brk in ("\n", "\r\n", "\u2028", "\u2029", "\r"):
            text = f"Contact: {surface[:i]}{brk}{surface[i:]} end"
            for span in find_patterns(text):
                piece = text[span.start:span.end]
                assert not any(ch in LINE_BREAKS for ch in piece), (text, piece)
                assert piece == piece.strip(), (text, piece)


def test_line_break_characters():
    assert set(LINE_BREAKS) == set("\n\r\x0b\x0c\x1c\x1d\x1e\x85\u2028\u2029")
    assert all(len(("a" + ch + "b").splitlines()) == 2 for ch in LINE_BREAKS)


def test_offsets_are_code_points_after_astral_characters():
    text = ("😀👍🏽 𝒥ane: jane@example.com 🇬🇧 +44 20 7946 0958 — 12 August 1956 "
            "𝔠𝔞𝔯𝔡 4111 1111 1111 1111 @carol")
    expected = {("EMAIL", "jane@example.com"), ("PHONE", "+44 20 7946 0958"),
                ("DATE", "12 August 1956"), ("CARD", "4111 1111 1111 1111"),
                ("HANDLE", "carol")}
    spans = find_patterns(text)
    assert {(s.label, text[s.start:s.end]) for s in spans} == expected
    email = next(s for s in spans if s.label == "EMAIL")
    assert email.start == text.index("jane@") == 10      # 14 in UTF-16 code units
    assert len(text[:email.start].encode("utf-16-le")) // 2 == 14


def test_spans_respect_word_boundaries():
    assert found("ID12345678Z x4111111111111111 abc192.168.0.1 12/08/1956abc") == set()


# ----------------------------------------------------------------------------- overlaps

def _fake_recognizers(monkeypatch, spans_by_label):
    for label, spans in spans_by_label.items():
        real = recognizers.kind(label)
        fake = Kind(label, lambda text, settings, spans=tuple(spans): list(spans), real.tier,
                    real.matches)
        monkeypatch.setitem(recognizers.registry._KINDS, label, fake)
    return PatternSettings(labels=frozenset(spans_by_label))


@pytest.mark.parametrize("winner, loser", [
    (EntitySpan(0, 25, "PHONE", 0.95), EntitySpan(5, 20, "IBAN", 1.0)),    # a container hides all
    (EntitySpan(0, 15, "PHONE", 0.95), EntitySpan(3, 15, "ID", 1.0)),      # "+1 305 614 9207"
    (EntitySpan(0, 16, "CARD", 1.0), EntitySpan(5, 19, "PHONE", 0.95)),
    (EntitySpan(0, 10, "DATE", 0.95), EntitySpan(3, 18, "PHONE", 0.95)),
    (EntitySpan(0, 16, "EMAIL", 0.9), EntitySpan(5, 16, "URL", 0.9)),      # same tier: longer
    (EntitySpan(0, 30, "URL", 0.9), EntitySpan(10, 20, "DATE", 0.95)),
    (EntitySpan(4, 16, "EMAIL", 0.9), EntitySpan(0, 9, "HANDLE", 0.9)),
    (EntitySpan(0, 12, "ID", 1.0), EntitySpan(0, 12, "CODE", 0.9)),
    (EntitySpan(0, 8, "CODE", 0.9), EntitySpan(0, 8, "PHONE", 0.95)),
])
def test_overlap_resolution(monkeypatch, winner, loser):
    bystander = EntitySpan(40, 45, "HANDLE", 0.9)
    spans = {winner.label: [winner], loser.label: [loser]}
    spans.setdefault("HANDLE", []).append(bystander)
    settings = _fake_recognizers(monkeypatch, spans)
    assert find_patterns("x" * 50, settings) == (winner, bystander)


def test_real_overlaps_resolve():
    assert found("user=jane@example.com") == {("EMAIL", "jane@example.com")}
    assert found("patient ID 943 476 5919") == {("ID", "943 476 5919")}
    assert found("https://example.com/2020/01/05/story?ip=10.0.0.1") == {
        ("URL", "https://example.com/2020/01/05/story?ip=10.0.0.1")}


# ----------------------------------------------------------------------------- merge_spans

def test_pattern_beats_overlapping_model_span():
    text = "Mail Jane Doe at jane.doe@example.com or Acme Corp."
    email = span_of(text, "jane.doe@example.com", "EMAIL", 0.9)
    model = [span_of(text, "Jane Doe", "PER"), span_of(text, "jane.doe@example.com", "PER"),
             span_of(text, "doe@example", "ORG"), span_of(text, "Acme Corp", "ORG")]
    merged = merge_spans(model, [email], text)
    assert [(s.label, text[s.start:s.end]) for s in merged] == [
        ("PER", "Jane Doe"), ("EMAIL", "jane.doe@example.com"), ("ORG", "Acme Corp")]


def test_model_span_touching_a_pattern_span_survives():
    text = "Jane+44 20 7946 0958"
    phone = span_of(text, "+44 20 7946 0958", "PHONE", 0.95)
    merged = merge_spans([span_of(text, "Jane", "PER")], [phone], text)
    assert [(s.label, text[s.start:s.end]) for s in merged] == [
        ("PER", "Jane"), ("PHONE", "+44 20 7946 0958")]


def test_model_spans_split_at_line_breaks():
    text = "Dear John\nSmith,\r\nfrom Acme \u2028 Corp\u2029\n   \nLtd"
    whole = EntitySpan(5, len(text), "PER", 0.8, propagated=True)
    merged = merge_spans([whole], [], text)
    assert [(s.label, text[s.start:s.end], s.score, s.propagated) for s in merged] == [
        ("PER", "John", 0.8, True), ("PER", "Smith,", 0.8, True), ("PER", "from Acme", 0.8, True),
        ("PER", "Corp", 0.8, True), ("PER", "Ltd", 0.8, True)]


def test_split_pieces_that_overlap_a_pattern_are_dropped():
    text = "Jane Doe\njane@example.com\nLondon"
    email = span_of(text, "jane@example.com", "EMAIL")
    model = EntitySpan(0, len(text), "PER", 0.7)
    merged = merge_spans([model], [email], text)
    assert [(s.label, text[s.start:s.end]) for s in merged] == [
        ("PER", "Jane Doe"), ("EMAIL", "jane@example.com"), ("PER", "London")]


def test_merge_drops_blank_model_spans_and_keeps_model_overlaps():
    text = "A  \n  B"
    merged = merge_spans([EntitySpan(1, 6, "PER", 0.5), EntitySpan(0, 1, "PER", 0.5),
                          EntitySpan(0, 1, "ORG", 0.4)], [], text)
    assert [(s.start, s.end, s.label) for s in merged] == [(0, 1, "ORG"), (0, 1, "PER")]


def test_merge_with_pattern_spans_from_find_patterns():
    text = "Call Jane on +44 20 7946 0958\nor write to Jane at jane@example.com."
    end = text.index("or write to") + len("or write to")
    across = EntitySpan(text.index("+44"), end, "ORG", 0.6)
    model = [span_of(text, "Jane", "PER"), across]
    merged = merge_spans(model, find_patterns(text), text)
    assert [(s.label, text[s.start:s.end]) for s in merged] == [
        ("PER", "Jane"), ("PHONE", "+44 20 7946 0958"), ("ORG", "or write to"),
        ("EMAIL", "jane@example.com")]


# ----------------------------------------------------------------------------- realistic documents

DOCUMENTS = {
    "email signature": (
        "Best regards,\n"
        "Jane Doe\n"
        "Senior Counsel | Example Legal LLP\n"
        "T: +44 20 7946 0958 | M: 07700 900123\n"
        "E: jane.doe@example-legal.co.uk\n"
        "W: https://www.example-legal.co.uk/people/jane-doe\n"
        "LinkedIn: linkedin.com/in/janedoe\n"
        "This email and any attachments are confidential. If you received it in error, "
        "please notify us on 0161 496 0000 and delete it.\n",
        {("PHONE", "+44 20 7946 0958"), ("PHONE", "07700 900123"),
         ("EMAIL", "jane.doe@example-legal.co.uk"),
         ("URL", "https://www.example-legal.co.uk/people/jane-doe"),
         ("URL", "linkedin.com/in/janedoe"), ("PHONE", "0161 496 0000")}),
    "chat log": (
        "[09:14] <alice> morning all, @bob42 can you check the build?\n"
        "[09:15] <bob42> on it, the log says user=jsmith failed login from 10.0.0.5\n"
        "[09:16] <alice> ok. Note: the VPN gateway moved to 2001:db8::1 yesterday\n"
        "[09:17] <carol_w> I'll mail it@example.com, see "
        "https://status.example.com/incidents/881.\n"
        "[09:18] <bob42> thx, version 1.4.2 deployed at 09:30\n",
        {("HANDLE", "alice"), ("HANDLE", "bob42"), ("HANDLE", "jsmith"),
         ("IP", "10.0.0.5"), ("IP", "2001:db8::1"), ("HANDLE", "carol_w"),
         ("EMAIL", "it@example.com"), ("URL", "https://status.example.com/incidents/881")}),
    "medical note": (
        "Patient: John Smith    DOB: 12/08/1956    MRN 00482913\n"
        "NHS number: 943 476 5919\n"
        "Seen on 3 March 2021 for follow-up of hypertension (BP 150/95). "
        "Next of kin: Mary Smith, tel 07911 123456.\n"
        "Plan: repeat bloods in 6 weeks; increase amlodipine to 10 mg. "
        "Letter copied to GP, ref: AB-2291-X.\n",
        {("DATE", "12/08/1956"), ("CODE", "00482913"), ("ID", "943 476 5919"),
         ("DATE", "3 March 2021"), ("PHONE", "07911 123456"), ("CODE", "AB-2291-X")}),
    "court paragraph": (
        "In the case of Smith v. United Kingdom (application no. 36110/97), the applicant, "
        "born on 12 August 1956 and living in Leeds, complained that the decision of "
        "14.03.1996 had violated Article 8 of the Convention. The domestic proceedings "
        "(case 202201873 B4, docket No. 21-cv-1234) ended on June 5, 1998.\n",
        {("CODE", "36110/97"), ("DATE", "12 August 1956"), ("DATE", "14.03.1996"),
         ("CODE", "202201873 B4"), ("CODE", "21-cv-1234"), ("DATE", "June 5, 1998")}),
    "HR record": (
        "Employee record\n"
        "Name: Anna Kowalski\n"
        "Employee ID: 8841-22\n"
        "Date of birth: 1989-04-17\n"
        "National Insurance: AB 12 34 56 C\n"
        "Bank: IBAN GB82 WEST 1234 5698 7654 32\n"
        "Corporate card: 4111 1111 1111 1111\n"
        "Personal email: anna.k@example.org; mobile +48 512 345 678\n"
        "Started in March 2015 on a salary of 42,000 GBP; 25 days of leave.\n",
        {("CODE", "8841-22"), ("DATE", "1989-04-17"), ("ID", "AB 12 34 56 C"),
         ("IBAN", "GB82 WEST 1234 5698 7654 32"), ("CARD", "4111 1111 1111 1111"),
         ("EMAIL", "anna.k@example.org"), ("PHONE", "+48 512 345 678"),
         ("DATE", "March 2015")}),
}


@pytest.mark.parametrize("name", list(DOCUMENTS))
def test_realistic_document(name):
    text, expected = DOCUMENTS[name]
    spans = find_patterns(text)
    assert {(s.label, text[s.start:s.end]) for s in spans} == expected
    assert len(spans) == len({(s.start, s.end) for s in spans})


def test_realistic_chat_log_counts_every_mention():
    text, _ = DOCUMENTS["chat log"]
    handles = [text[s.start:s.end] for s in find_patterns(text) if s.label == "HANDLE"]
    assert handles == ["alice", "bob42", "bob42", "jsmith", "alice", "carol_w", "bob42"]


# ----------------------------------------------------------------------------- speed

def _digit_table():
    rng = random.Random(7)
    return ", ".join(str(rng.randrange(10 ** 6, 10 ** 7)) for _ in range(20_000))


HOSTILE = {
    "digits": lambda: "1" * 200_000,
    "at signs": lambda: "a@" * 50_000,
    "spaced digits": lambda: "1 " * 100_000,
    "dotted digits": lambda: "1." * 100_000,
    "colons": lambda: "1:" * 100_000,
    "dotted letters": lambda: "a." * 100_000,
    "mentions": lambda: "@a" * 100_000,
    "closing brackets": lambda: "http://x.com/" + ")" * 200_000,
    "long local part": lambda: "a" * 200_000 + "@example.com",
    "blank": lambda: " " * 200_000,
    "digit then blanks": lambda: "12" + " " * 200_000 + "of",
    "newlines": lambda: "\n" * 200_000,
    "cue words": lambda: "case no. " * 25_000,
    "month names": lambda: "12 Aug " * 30_000,
    "random 7-digit numbers": _digit_table,
}


# Typically 0.3 to 1 s each; catastrophic backtracking would take minutes. The budget
# leaves room for a loaded CI machine.
HOSTILE_BUDGET_S = 5.0


@pytest.mark.parametrize("name", list(HOSTILE))
def test_hostile_input_is_fast(name):
    text = HOSTILE[name]()
    assert len(text) >= 100_000
    started = time.perf_counter()
    find_patterns(text)
    assert time.perf_counter() - started < HOSTILE_BUDGET_S


# ----------------------------------------------------------------------------- ADDRESS

@pytest.mark.parametrize("address", [
    "431 Zachary Falls Suite 621", "561 Mark Crest Apt. 671", "04704 kyle turnpike apt. 567",
    "7 Garry Views", "12 High St", "Flat 34, Deborah Island", "Studio 7, Debra Corners",
    "Mellestraat 87", "louiseweg 9", "Jaagpad 4", "Fedor-Putz-Straße 60/14", "Hauptstr. 5",
    "katarina-kraushaar-gasse 3/7", "Reinhild-van der Dussen-Allee 51/70", "Rayanring 5",
    "75, chemin de Joseph", "51, rue valentin", "39, rue Michelle Gaillard",
    "12 Place Vendôme", "6686 Cooke Via Suite 039", "1968 Lutz Rue Suite 311"])
def test_street_addresses_are_found_whole(address):
    text = f"Lives at {address}, since May.\n"
    assert [(s.label, text[s.start:s.end]) for s in find_patterns(text)
            if s.label == "ADDRESS"] == [("ADDRESS", address)]


@pytest.mark.parametrize("text", [
    "It's a 10 minute walk from here.", "we have 3 main branches", "during 5 days",
    "spring 2020 was cold", "bring 2 chairs", "order an ipad 2 today", "send it 2 via email",
    "4 square metres", "5 new cases dr", "12 high st", "offering 3 options", "total 5",
    "chapter 3 of the Park", "Str. 5", "sent 2 copies via post"])
def test_quantities_and_words_are_not_addresses(text):
    assert [text[s.start:s.end] for s in find_patterns(text) if s.label == "ADDRESS"] == []


def test_french_street_name_stops_before_the_sentence_goes_on():
    text = "au 51, rue valentin et puis"
    assert [text[s.start:s.end] for s in find_patterns(text) if s.label == "ADDRESS"] == [
        "51, rue valentin"]


def test_model_span_around_a_pattern_keeps_its_parts_outside_it():
    text = "I live at Mellestraat 87, Amsterdam."
    model = EntitySpan(text.index("Mellestraat"), text.index("."), "LOC", 0.8)
    merged = merge_spans([model], find_patterns(text), text)
    assert [(s.label, text[s.start:s.end]) for s in merged] == [
        ("ADDRESS", "Mellestraat 87"), ("LOC", "Amsterdam")]


def test_compound_addresses_are_searched_only_where_they_can_be_yet_found_as_everywhere():
    """The line prefilter in front of the compound-street pattern changes nothing: the same
    matches as the pattern run over the whole text, on shuffled fragments that put street
    endings, digits, line breaks of every kind and look-alikes next to each other."""
    fragments = ["Mellestraat 87", "Fedor-Putz-Straße 60/14", "Reinhild-van der Dussen-Allee 51",
                 "STR. 5", "Hauptstr. 12", "during 2020", "spring 3", "\n", "\r\n", "\u2028",
                 "\x85", " ", "\t", "Keizersgracht\u00a0123", "x", "9", "van der", "BERGWEG 4a",
                 "straẞe 7", "Weg 1", "-", "/", "Parkweg 3 - 5", "Kerkstraat", "12"]
    rng = random.Random(7)
    texts = ["".join(rng.choice(fragments) for _ in range(rng.randint(1, 12)))
             for _ in range(5000)]
    found = 0
    for text in texts:
        everywhere = [m.span() for m in addresses._ADDRESS_COMPOUND_RE.finditer(text)]
        assert [m.span() for m in addresses._compound_address_matches(text)] == everywhere, text
        found += len(everywhere)
    assert found > 2000   # the fragments do make addresses


_LINE_FRAGMENTS = ["\n", "\r\n", "\u2028", "\x85", " ", "\t", "x", "9", ".", ":", "/", "@", "-"]
_DATE_FRAGMENTS = ["12", "3", "August", "Aug.", "may", "1956", "2020", "of", "th", "T10", ",",
                   "12/08/1956", "1956-08-12", "12.08.56", "12/8/56", "30 February 2020",
                   "August 12, 1956", "Aug. 12th 1956", "12 August 1956", "March 2021"]


_FIRM_FRAGMENTS = ["Nordic Freight", " A/S", " GmbH", " & Co. KG", ", Inc.", " B. V.", " B.\nV.",
                   " S.à r.l.", " sp. z o.o.", " Ltd", " limited", " SE", " se", "Müller", "van",
                   ",", "LÖWER PRUSCHKE", " E.G.", "Sri Lanka", " and Sons", " BV", "Bergen",
                   " plc", "inc"]


@pytest.mark.parametrize("pattern, hint, fragments, least", [
    pytest.param(contact._URL_RE, contact._URL_HINT_RE,
                 ["https://x.io/a?b=1", "www.example.com", "WwW.Example.org",
                  "example.com/jobs/12", "config.py/x", "ftp://f", "(see www.a.de)",
                  "mail.example.co.uk:8080/", "http://"], 2500, id="url"),
    pytest.param(contact._EMAIL_RE, contact._AT_RE,
                 ["jane.doe+news@mail.example.co.uk", "a@b", "x@y.io", "@home", "user@", ".com",
                  "né@é.fr"], 2000, id="email"),
    pytest.param(contact._IPV4_RE, contact._IPV4_HINT_RE,
                 ["192.168.0.1", "1.2.3.4.5", "v1.2.3.4", "10.0.0", "255.255.255.255", "3.14"],
                 600, id="ipv4"),
    pytest.param(contact._IPV6_RE, contact._IPV6_HINT_RE,
                 ["fe80::1", "2001:db8::ff00:42:8329", "::", "Face::Add", "::ffff:192.0.2.1",
                  "a:b:c", "[1::2]"], 3000, id="ipv6"),
    pytest.param(contact._MENTION_RE, contact._AT_RE,
                 ["@jsmith", "@dataclass(", "a@b.c", "@@x", "@_x1", "(@Ann_B)"], 1800,
                 id="mention"),
    *[pytest.param(pattern, dates._FULL_YEAR_HINT_RE, _DATE_FRAGMENTS, least, id=f"date-written-{i}")
      for i, (pattern, least) in enumerate(zip(dates._DATE_WRITTEN_RES, (250, 250, 600)))],
    pytest.param(dates._DATE_DMY_RE, dates._FULL_YEAR_HINT_RE, _DATE_FRAGMENTS, 100, id="date-dmy"),
    pytest.param(dates._DATE_YMD_RE, dates._FULL_YEAR_HINT_RE, _DATE_FRAGMENTS, 140, id="date-ymd"),
    pytest.param(dates._DATE_SHORT_RE, dates._SHORT_DATE_HINT_RE, _DATE_FRAGMENTS, 300, id="date-short"),
    pytest.param(identifiers._CODE_RE, base.DIGIT_RE,
                 ["case", "Case No.", "file #", "ref:", "invoice", "A-", "202201873", "B4", "12",
                  "x9", "order 66", "patient MRN", "acct. 4417-22"], 1500, id="code"),
    pytest.param(addresses._ADDRESS_EN_RE, base.DIGIT_RE,
                 ["431", "Zachary", "Falls", "Suite 621", "Flat 34,", "Deborah Island", "Road",
                  "St.", "12b", "10 minute walk", "Apt 5"], 300, id="address-en"),
    pytest.param(addresses._ADDRESS_PREFIXED_RE, base.DIGIT_RE,
                 ["75,", "chemin de Joseph", "12 rue Bouvet", "rue", "via Roma", "calle", "3",
                  "de la"], 300, id="address-prefixed"),
    pytest.param(contact._CHAT_ANGLE_RE, contact._LESS_THAN_RE,
                 ["<jsmith> ", "\n<@op> ", "[12:03] <ann> ", "<b>", "hi", "<", ">", "jsmith"],
                 300, id="chat-angle"),
    pytest.param(contact._CHAT_STAMPED_RE, contact._CLOCK_RE,
                 ["\n[12:03] jsmith: ", "\n2024-01-02 10:30 ann: ", "jsmith:", "pm", "@nick:",
                  "12:03", "\n[9:15 PM] @op: ", "nick"], 300, id="chat-stamped"),
    pytest.param(contact._CHAT_BARE_RE, contact._COLON_RE,
                 ["\njsmith42: ", "col1:", "Note:", "\na_b: ", "x", "42"], 600, id="chat-bare"),
    pytest.param(contact._LOGIN_RE, contact._KEY_VALUE_RE,
                 ["user=", "username:", "login_name=", "\"jsmith\"", "jsmith", "nick:", "'x'",
                  "="], 1500, id="login"),
    pytest.param(contact._SSHD_RE, contact._FROM_RE,
                 ["Invalid user jsmith from ", "Failed password for root from", "jsmith",
                  " from", "FROM", "publickey for ann FROM ", "invalid user", "illegal user"],
                 300, id="sshd"),
    pytest.param(names._FIRM_RE, names._FORM_HINT_RE, _FIRM_FRAGMENTS, 2000, id="firm"),
])
def test_patterns_searched_only_on_lines_with_their_hint_are_found_as_everywhere(
        pattern, hint, fragments, least):
    """The line prefilter changes nothing: the same matches as the pattern over the whole text,
    on shuffled fragments that put matches, look-alikes and line breaks of every kind side by
    side."""
    rng = random.Random(13)
    pool = fragments + _LINE_FRAGMENTS
    found = 0
    for _ in range(4000):
        text = "".join(rng.choice(pool) for _ in range(rng.randint(1, 14)))
        everywhere = [m.span() for m in pattern.finditer(text)]
        assert [m.span() for m in base.finditer_on_lines(pattern, hint, text)] \
            == everywhere, text
        found += len(everywhere)
    assert found > least, found   # the fragments do make matches


_ID_FRAGMENTS = ["943 476 5919", "536-90-4399", "AB 12 34 56 C", "AB123456C", "12345678Z",
                 "X1234567L", "123456782", "1234.56.782", "2 95 10 99 126 111 93", "44051401359",
                 "36 574 261 809", "6433435F", "85.07.30-033.28", "12", "345", "6789", "X",
                 "Z", "-", "C", "AB", "RCCMNL83S18D969H", "AAA123456", "A1234567",
                 "971013-9019902", "10000000146", "1-2345-45678-78-1", "7503305044089",
                 "880320-0016", "131052-308T", "2341 2341 2346", "123 456 782", "15 070649 C 103",
                 "181/815/08155", "912-71-1234", "1234567893", "51 824 753 556", "004 085 616",
                 "2123 45670 1", "123-456-789-000", "S1234567D", "AB1234563", "MORGA753116SM9IJ",
                 "11-12-345678-90", "hh 01 02 03 d", "ab 12 34 56 c"]
# and for the shapes searched on the lines of their own hint
_ID_FRAGMENTS += ["DE136695976", "DE 136695976", "M123A4567", "ABCPD1234E", "WKH1234566",
                  "123456601", "MD-123456", "CA00000AA", "AX 1234567", "M123A4567", "YA1234567",
                  "A1234567", "S1234567D"]
_OWN_HINT_FRAGMENTS = ["C01X00T47", "T220001293", "1EG4-TE5-MK73", "1EG4TE5MK73", "RCCMNL83S18D969H"]


@pytest.mark.parametrize("index", [i for i, kind in enumerate(identifiers.ID_SCHEMES) if kind.hinted])
def test_identifier_shapes_searched_only_on_lines_with_their_hint_are_found_as_everywhere(index):
    kind = identifiers.ID_SCHEMES[index]
    rng = random.Random(17 + index)
    examples = re.findall(r"`([^`]+)`", kind.example) * 3   # the scheme's own documented values
    pool = _ID_FRAGMENTS + _LINE_FRAGMENTS + examples + (_OWN_HINT_FRAGMENTS if kind.hint else [])
    found = 0
    for _ in range(3000):
        text = "".join(rng.choice(pool) for _ in range(rng.randint(1, 10)))
        everywhere = [m.span() for m in kind.shape.finditer(text)]
        assert [m.span() for m in kind.candidates(text)] == everywhere, text
        found += len(everywhere)
    assert found > 15, found   # the fragments do make candidates of this kind
