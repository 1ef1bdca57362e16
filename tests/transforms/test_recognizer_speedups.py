"""Fast paths of the pattern stage give what their plain versions give: line hints, separator folding."""
from __future__ import annotations

import random
import re
import threading

import pytest

from larvatus.transforms import separators
from larvatus.transforms.recognizers import base, dates, identifiers, postal, references

_HINTS = [base.DIGIT_RE, dates._FULL_YEAR_HINT_RE, dates._DATE_CUE, identifiers._ID_HINT_RE,
          postal._PO_BOX_HINT_RE, references._LAND_HINT_RE, re.compile("x")]
_PIECES = ["1996", "12", "x", "born ", "Box ", "plot ", "Date", "\n", "\r\n", " ", "ab",
           "\u2028", "4111 1111", ""]


def _texts(seed, count):
    rng = random.Random(seed)
    return ["".join(rng.choice(_PIECES) for _ in range(rng.randint(0, 12))) for _ in range(count)]


def test_lines_with_gives_each_texts_own_lines_whatever_was_asked_before():
    rng = random.Random(3)
    texts = _texts(5, 400)
    for _ in range(3000):
        text = rng.choice(texts)
        if rng.random() < 0.2:
            text = "".join(list(text))   # an equal text, another object
        hint = rng.choice(_HINTS)
        assert base.lines_with(hint, text) == base._search_lines(hint, text), (hint, text)


def test_lines_with_is_right_in_every_thread():
    texts = _texts(9, 300)
    wrong = []

    def work(seed):
        rng = random.Random(seed)
        for _ in range(2000):
            text, hint = rng.choice(texts), rng.choice(_HINTS)
            if base.lines_with(hint, text) != base._search_lines(hint, text):
                wrong.append((hint, text))

    threads = [threading.Thread(target=work, args=(seed,)) for seed in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert not wrong


def _fold_everything(text):
    """The plain folding: every character looked up, none skipped."""
    return "".join(separators._FOLD.get(ord(ch), ch) for ch in text)


def test_folding_skips_no_text_that_holds_something_to_fold():
    rng = random.Random(11)
    foldable = [chr(c) for c in separators._FOLD]
    others = list("aé’“”xyz 0123456789\n\tß") + ["\u00e9", "\u4e2d", "\u0130", "\U0001f600"]
    changed = 0
    for _ in range(5000):
        pool = others + (rng.sample(foldable, 3) if rng.random() < 0.5 else [])
        text = "".join(rng.choice(pool) for _ in range(rng.randint(0, 30)))
        folded = separators.fold_separators(text)
        assert folded == _fold_everything(text), ascii(text)
        changed += folded != text
    assert changed > 1000    # the inputs do hold characters to fold


def test_stem_letters_match_in_re_only_what_lower_case_finds():
    """`re` matches a stem's letter case-insensitively only with characters whose lower case
    is that letter, or with the characters that rule the stems out (`_NOT_LOWERED`)."""
    everything = "".join(chr(c) for c in range(0x110000) if not 0xD800 <= c < 0xE000)
    letters = {ch for stems in base._HINT_STEMS.values() for stem in stems for ch in stem}
    assert base._HINT_STEMS and letters
    for ch in letters:
        matched = set(re.findall(re.escape(ch), everything, re.IGNORECASE))
        assert ch == ch.lower()
        assert matched - set(base._NOT_LOWERED) <= {c for c in everything if c.lower() == ch}, ch


_CUE_PIECES = ["Plot ", "PARCEL ", "sheet", "Lot", "Flurstück", "KADASTRAAL", "Folio", "zip",
               "Postcode", "PLZ", "C.P.", "CP", "cap", "Código", "CODIGO", "P.O. Box", "BOX",
               "Postfach", "postbus", "Postale", "Apartado", "B.P.", "Sort code", "S/C", "Date",
               "dated", "DOB", "D.O.B", "born", "Birthday", "geboren", "Geb.", "Datum", "né",
               "NÉE", "Naissance", "fecha", "Nacimiento", "data", "Nascita", "geboortedatum",
               "\u017fheet", "\u212aadastra", "\u0130", "\u0131", "x", " ", "\n", "12", "é"]


@pytest.mark.parametrize("hint", list(base._HINT_STEMS), ids=lambda h: h.pattern[:30])
def test_hints_with_stems_find_every_line_a_full_search_finds(hint):
    rng = random.Random(21)
    found = 0
    for _ in range(3000):
        text = "".join(rng.choice(_CUE_PIECES) for _ in range(rng.randint(0, 8)))
        everywhere = base._search_lines(hint, text)
        assert base.lines_with(hint, text) == everywhere, text
        found += len(everywhere)
    assert found > 20, found    # the pieces do hold matches
