"""Unit tests for transforms/segment.py: words with code-point, end-exclusive offsets."""
from __future__ import annotations

from hypothesis import given, settings, strategies as st

from larvatus.transforms.chars import CONTROL_CHAR
from larvatus.transforms.records import Document
from larvatus.transforms.segment import segment, segment_words
from tests.paths import ROOT


def words_of(text: str) -> list[str]:
    starts, ends = segment_words(text)
    return [text[s:e] for s, e in zip(starts, ends)]


def check_invariants(text: str) -> None:
    starts, ends = segment_words(text)
    assert len(starts) == len(ends)
    owner = [0] * len(text)
    previous_end = 0
    for s, e in zip(starts, ends):
        assert isinstance(s, int) and isinstance(e, int)
        assert previous_end <= s < e <= len(text)          # non-empty, ordered, disjoint
        assert not any(c.isspace() or CONTROL_CHAR.match(c) for c in text[s:e])  # nor controls
        for i in range(s, e):
            owner[i] += 1
        previous_end = e
    for i, c in enumerate(text):
        # every other character is in exactly one word; whitespace and controls in none
        assert owner[i] == (0 if c.isspace() or CONTROL_CHAR.match(c) else 1), (i, c)


def test_simple_sentence_offsets():
    text = "Angela Merkel visited Paris."
    assert segment_words(text) == ((0, 7, 14, 22, 27), (6, 13, 21, 27, 28))
    assert words_of(text) == ["Angela", "Merkel", "visited", "Paris", "."]


def test_offsets_are_end_exclusive_code_points_with_astral_characters():
    text = "Hi \U0001F44D\U0001F3FD \U0001d49clice met Bob"
    # "👍🏽" is 2 code points (4 UTF-16 units, 8 UTF-8 bytes); "𝒜" is 1 code point.
    assert segment_words(text) == ((0, 3, 6, 12, 16), (2, 5, 11, 15, 19))
    assert words_of(text) == ["Hi", "\U0001F44D\U0001F3FD", "\U0001d49clice", "met", "Bob"]


def test_emoji_split_from_adjacent_letters():
    text = "\U0001F44D\U0001F3FDZo\u00eb!"
    assert segment_words(text) == ((0, 2, 5), (2, 5, 6))
    assert words_of(text) == ["\U0001F44D\U0001F3FD", "Zo\u00eb", "!"]


def test_combining_mark_stays_in_word():
    text = "Hello, Zoe\u0308 Saldana"
    assert segment_words(text) == ((0, 5, 7, 12), (5, 6, 11, 19))
    assert words_of(text) == ["Hello", ",", "Zoe\u0308", "Saldana"]


def test_cjk():
    text = "I met 𝒜lice in 東京 today."
    assert segment_words(text) == ((0, 2, 6, 12, 15, 18, 23), (1, 5, 11, 14, 17, 23, 24))
    assert words_of(text)[4] == "東京"
    check_invariants(text)


def test_whitespace_of_every_kind_separates_words():
    text = "a\tb\u00a0c\u2003d\u3000e\nf\r\ng\x0bh\u2028i"
    assert words_of(text) == list("abcdefghi")
    check_invariants(text)


def test_leading_trailing_and_runs_of_whitespace():
    text = "  \n Angela   Merkel \t\n"
    assert segment_words(text) == ((4, 13), (10, 19))
    check_invariants(text)


def test_whitespace_only_and_empty():
    assert segment_words("") == ((), ())
    assert segment_words(" \n\t ") == ((), ())


def test_zero_width_space_is_a_word():
    # U+200B is not whitespace to Python; it must stay inside some word.
    text = "Angela \u200b Merkel"
    assert words_of(text) == ["Angela", "\u200b", "Merkel"]
    check_invariants(text)


def test_giant_single_token():
    token = "x" * 19_999 + "y"   # 20,000 characters
    assert len(token) == 20_000
    assert segment_words(token) == ((0,), (20_000,))
    text = "  " + token + " ok"
    assert segment_words(text) == ((2, 20_003), (20_002, 20_005))


def test_segment_builds_segmented_document():
    document = Document("d1", "Zoe\u0308 met \U0001F44D Paris", "src")
    segmented = segment(document)
    assert segmented.document is document
    assert segmented.num_words == 4
    assert [segmented.word_text(i) for i in range(4)] == ["Zoe\u0308", "met", "\U0001F44D", "Paris"]
    assert segmented.word_starts == (0, 5, 9, 11)
    assert segmented.word_ends == (4, 8, 10, 16)


@settings(max_examples=100, deadline=None)
@given(st.text(
    alphabet=st.one_of(
        # any code point but lone surrogates, which read.py turns into dead letters
        st.characters(exclude_categories=("Cs",)),
        st.sampled_from(" \t\n\u00a0\u2003\u200b\u0308\U0001F44D\U0001F3FD\u200d\ufe0f.,'-\"()"),
    ),
    max_size=200))
def test_property_words_partition_non_space_characters(text):
    check_invariants(text)


def test_tokenizer_is_spacy_blank_english_without_its_imports():
    """Same tokens and offsets as spacy.blank("en") with the same affixes, built without
    importing PyTorch, transformers or Presidio (a fresh process: nothing loaded before)."""
    import subprocess
    import sys
    
    code = (
        "import sys\n"
        "from larvatus.transforms.segment import english_tokenizer\n"
        "english_tokenizer()\n"
        "loaded = [m for m in ('torch', 'transformers', 'presidio_analyzer') "
        "if sys.modules.get(m) is not None]\n"
        "assert not loaded, loaded\n"
        "assert 'torch' not in sys.modules  # hidden only while spaCy was imported\n"
        "print('ok')\n")
    done = subprocess.run([sys.executable, "-c", code], cwd=ROOT,
                          capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout.strip() == "ok"

    import spacy
    from spacy.util import compile_infix_regex, compile_prefix_regex, compile_suffix_regex

    from larvatus.transforms import segment

    nlp = spacy.blank("en")
    reference = nlp.tokenizer
    reference.prefix_search = compile_prefix_regex(
        [segment.SYMBOL_RUN] + list(nlp.Defaults.prefixes)).search
    reference.suffix_search = compile_suffix_regex(
        list(nlp.Defaults.suffixes) + [segment.SYMBOL_RUN]).search
    reference.infix_finditer = compile_infix_regex(
        list(nlp.Defaults.infixes) + [segment.SYMBOL_RUN]).finditer
    texts = ["Mr. O'Neil's U.S.-based 👍🏽Zoë e-mail: a@b.com (NYC).",
             "Don't visit https://example.com/a?b=1 at 5:30pm, it's 20% off!!!",
             "Dr. Smith vs. J.R.R. Tolkien -- \"quoted\" [brackets] {braces} 3.14 $5",
             "can't won't I'm gonna y'all ma'am 'cause 1990s e.g. i.e. etc."]
    ours = segment.english_tokenizer()
    for text in texts:
        assert [(t.idx, t.text) for t in ours(text)] == [(t.idx, t.text) for t in reference(text)]
