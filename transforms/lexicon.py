"""Common words per language from maintained sources (wordfreq, spaCy stop words, lemminflect), loaded at a worker's setup."""
from __future__ import annotations

import csv
import gzip
import io
import importlib.util
import threading
from functools import lru_cache
from pathlib import Path

# Languages whose documents get the common-word decision (`is_common_in`): the model is
# English, and in these its capitalised nouns and verbs look like names to it.
DECISION_LANGUAGES = ("de", "fr", "es", "it", "nl")
# A capitalised word is a common word of its language when its Zipf frequency there (log10
# of occurrences per billion words, wordfreq) reaches this ...
COMMON_ZIPF = 3.0
# ... and is this much higher than in English (a hundred times more frequent), so that names
# shared by both ("Thomas", "Paris", "Becker") are no common words; a lowercase word needs only
# `LOWERCASE_ZIPF` in its language (names are capitalised in cased text).
OVER_ENGLISH = 2.0
LOWERCASE_ZIPF = 3.0
# wordfreq's "small" lists hold every word down to Zipf 3 (a word a million): all the decision
# reads in the document's language, a tenth of a second each to load. English, the
# comparison, is read whole ("best"): a Dutch surname such as "Jansen" is rare in English,
# not absent, and the difference must not be overstated.
WORDLIST = "small"
ENGLISH_WORDLIST = "best"


def _wordlist(language: str) -> str:
    return ENGLISH_WORDLIST if language == "en" else WORDLIST

_LOCK = threading.Lock()
_LOADED: set[str] = set()


def load(languages: tuple[str, ...] = DECISION_LANGUAGES) -> None:
    """Loads every resource the decisions read for English and `languages`: wordfreq's
    frequency tables, spaCy's stop words and lemminflect's verb table. Called from a worker's
    setup, so that no document pays for a load inside its own time; idempotent."""
    from larvatus.transforms.audit import common_words
    from larvatus.transforms.ordinary import STOP_WORD_LANGUAGES, stop_words

    with _LOCK:
        wanted = [code for code in ("en", *languages) if code not in _LOADED]
        if not wanted:
            return
        import wordfreq
        for code in wanted:
            wordfreq.get_frequency_dict(code, wordlist=_wordlist(code))
            zipf("the", code)   # warms the tokenizer wordfreq uses for the language
            if code in STOP_WORD_LANGUAGES:
                stop_words(code)
        base_verbs()
        common_words()
        _LOADED.update(wanted)


def loaded() -> frozenset[str]:
    """The languages whose resources `load` has read."""
    return frozenset(_LOADED)


@lru_cache(maxsize=1 << 16)
def zipf(word: str, language: str) -> float:
    """wordfreq's Zipf frequency of a word in a language (0.0 when unknown)."""
    import wordfreq

    return wordfreq.zipf_frequency(word, language, wordlist=_wordlist(language))


@lru_cache(maxsize=1 << 16)
def is_common_in(word: str, language: str) -> bool:
    """Whether a word is a common word of `language` and not a name shared with English:
    "Schreiben", "Vertrag", "Kennzeichen", "Hiermit", "gekündigt" are; "Thomas", "Becker",
    "Paris" are not. A hyphenated word is common when each of its parts is ("Steuer-ID")."""
    from larvatus.transforms.ordinary import is_ordinary

    parts = [p for p in word.split("-") if p]
    if not parts or len(parts) > 1 and not all(p[:1].isalpha() for p in parts):
        return False
    return all(is_ordinary(part, language) or _common_part(part, language) for part in parts)


def _common_part(part: str, language: str) -> bool:
    if not part.isalpha():
        return False
    if part.islower():
        return zipf(part, language) >= LOWERCASE_ZIPF
    here = zipf(part, language)
    return here >= COMMON_ZIPF and here - zipf(part, "en") >= OVER_ENGLISH


@lru_cache(maxsize=1)
def base_verbs() -> frozenset[str]:
    """English verbs in their base form, from lemminflect's lemma table (the rows whose word is
    its own verb lemma), read from the package's data file: a tenth of the time its own
    lemmatizer takes to load."""
    data = _package_file("lemminflect", "resources", "lemma_lu.csv.gz").read_bytes()
    rows = csv.reader(io.StringIO(gzip.decompress(data).decode("utf-8")))
    return frozenset(word for word, category, lemmas, *_ in rows
                     if category == "verb" and word in lemmas.split("/"))


def _package_file(package: str, *parts: str) -> Path:
    """A file inside an installed package, found without importing the package (lemminflect's
    and spaCy's language packages import far more than the data files read here)."""
    spec = importlib.util.find_spec(package)
    if spec is None or spec.origin is None:
        raise ImportError(f"{package} is not installed: pip install {package}")
    return Path(spec.origin).parent.joinpath(*parts)


def stop_words_of(language: str) -> frozenset[str]:
    """spaCy's stop words of one language, lowercased, read from `spacy/lang/<code>/stop_words.py`
    alone: importing `spacy.lang.fr` itself loads its tokenizer exceptions (seconds)."""
    path = _package_file("spacy", "lang", language, "stop_words.py")
    spec = importlib.util.spec_from_file_location(f"_larvatus_stop_words_{language}", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return frozenset(w.lower() for w in module.STOP_WORDS)


def is_base_verb(word: str) -> bool:
    """Whether an English word is a verb's base form: "Contact", "Ask", "Call" are; "Maria",
    "Text" are not."""
    return word.lower() in base_verbs()
