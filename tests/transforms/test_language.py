"""Document language: too few letters give "und", and letters are counted exactly up to the threshold."""
from __future__ import annotations

import random

import numpy as np
import pytest

from larvatus.transforms import language

from larvatus.transforms.language import MIN_LETTERS, UNDETERMINED, _has_letters, detect_language


@pytest.mark.parametrize("text, least, expected", [
    ("", 0, True), ("", 1, False), ("a", 1, True), ("12 3", 1, False),
    ("a1b2c3", 3, True), ("a1b2c3", 4, False), ("é" * 20, 20, True), ("ß" * 19 + "9", 20, False),
])
def test_has_letters_counts_letters_up_to_the_threshold(text, least, expected):
    assert _has_letters(text, least) is expected


def test_text_with_too_few_letters_is_undetermined():
    assert detect_language("a" * (MIN_LETTERS - 1) + " 123 456 !!!") == UNDETERMINED
    assert detect_language("The weather is very nice today and we are going outside.") == "en"


def test_the_redact_stage_loads_the_language_model_in_its_setup():
    from larvatus.transforms import language, stages
    from larvatus.transforms.redact import RedactionPolicy

    language._identifier.cache_clear()
    stages.Redact(RedactionPolicy(labels=frozenset({"PER"}))).setup()
    assert language._identifier.cache_info().currsize == 1


def _texts():
    """Fixed texts of many scripts, short ones, and random bytes and characters."""
    rng = random.Random(7)
    fixed = ["", "a", "ab", "abcde", "abcdef", "abcdefg", "Der Hund läuft über die Straße.",
             "Le chat est très content aujourd'hui.", "Это простой русский текст.",
             "これは日本語の文です。", "这是一个中文句子。", "مرحبا بالعالم", "שלום עולם",
             "Γειά σου κόσμε", "नमस्ते दुनिया", "안녕하세요 세계", "ÉTÉ CHAUD À PARIS",
             "x\u0308y\u200dz \x00\x01 \ud7ff", "12 345 678 !!! ???"]
    alphabet = "abcdefghijklmnopqrstuvwxyzéüßçñøåæœ АБВгдеёжзийклмнопр日本語中文한국어αβγδ .,;!?0123"
    chars = ["".join(rng.choice(alphabet) for _ in range(rng.randrange(1, 400)))
             for _ in range(150)]
    raw = [bytes(rng.randrange(256) for _ in range(rng.randrange(1, 300))) for _ in range(150)]
    return fixed + chars + raw


def test_the_numpy_byte_walk_counts_the_features_py3langid_counts():
    from py3langid.langid import visit_counts as reference

    identifier = language._identifier()
    assert identifier.tables is not None, "the installed py3langid model is not the one checked"
    nextmove, rowbase, output = identifier.tk_nextmove, identifier._rowbase, identifier.tk_output
    for text in _texts():
        data = identifier._encode(text)
        expected = reference(nextmove, rowbase, output, data)
        got = language.visit_counts(identifier.tables, data)
        assert list(got.items()) == list((expected or {}).items()), text


def test_feature_counts_are_py3langids_visit_counts_in_their_order():
    from py3langid.langid import visit_counts as reference

    identifier = language._identifier()
    nextmove, rowbase, output = identifier.tk_nextmove, identifier._rowbase, identifier.tk_output
    rng = random.Random(11)
    words = "the of and der die le la de el un una Straße été naïve мир 日本 12 , . !".split()
    long_texts = [" ".join(rng.choice(words) for _ in range(rng.randrange(1, 3000)))
                  for _ in range(20)]
    for text in _texts() + long_texts:
        data = identifier._encode(text)
        expected = reference(nextmove, rowbase, output, data) or {}
        features, counts = language.feature_counts(identifier.tables, data)
        assert features.dtype == np.intp and counts.dtype == np.float32
        assert list(zip(features.tolist(), counts.tolist())) == list(expected.items()), text


def test_language_scores_equal_py3langids_own():
    from py3langid.langid import MODEL_FILE, LanguageIdentifier

    reference = LanguageIdentifier.from_model_file(MODEL_FILE)
    fast = language._identifier()
    reference.set_languages(fast.nb_classes)
    for text in _texts():
        assert fast._decide(text).tobytes() == reference._decide(text).tobytes(), text
        assert fast.classify(text) == reference.classify(text)


@pytest.mark.slow
def test_the_byte_automaton_forgets_all_but_its_last_sync_bytes():
    """From every state, any SYNC_BYTES bytes lead where they lead from the start state:
    pairs (any state, start state) walked over every byte agree after SYNC_BYTES steps."""
    identifier = language._identifier()
    nextmove, rowbase, _ = identifier.tables
    states = len(rowbase)
    pairs = np.arange(states, dtype=np.int64) * states   # (state, start) coded as a * states + b
    every_byte = np.arange(256)
    for _ in range(language.SYNC_BYTES):
        moved = [nextmove[rowbase[part][:, None] + every_byte].ravel().astype(np.int64)
                 for part in (pairs // states, pairs % states)]
        pairs = np.unique(moved[0] * states + moved[1])
    assert (pairs // states == pairs % states).all()


def test_a_model_other_than_the_checked_one_keeps_py3langids_walk():
    identifier = language._identifier()
    nextmove, rowbase, output = identifier.tables
    changed = output.copy()
    changed[0] += 1
    assert language._tables_crc32(nextmove, rowbase, changed) != language.MODEL_CRC32


def test_a_py3langid_without_the_tables_the_walk_reads_keeps_its_own_walk():
    class Other:   # a py3langid version whose identifier lays its automaton out otherwise
        tk_nextmove = tk_output = ()

        def _raw_score(self, text):
            return None

    assert language._dfa_tables(Other()) is None
