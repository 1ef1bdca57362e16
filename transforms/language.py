"""Per-document language detection with py3langid (its model ships inside the package: no download)."""
from __future__ import annotations

from functools import lru_cache

# Fewer letters than this say too little: the document is reported as undetermined.
MIN_LETTERS = 20
# The languages told apart (ISO 639-1). py3langid knows 97, among them creoles and regional
# languages that a short English sentence full of names can score highest ("Angela Merkel met
# Barack Obama in Berlin" reads as Nigerian Pidgin to the full model); the corpora Larvatus
# meets are in these.
LANGUAGES = (
    "af", "ar", "bg", "bn", "ca", "cs", "cy", "da", "de", "el", "en", "es", "et", "eu", "fa",
    "fi", "fr", "ga", "gl", "he", "hi", "hr", "hu", "hy", "id", "is", "it", "ja", "ka", "ko",
    "lt", "lv", "mk", "ms", "mt", "nb", "nl", "nn", "pl", "pt", "ro", "ru", "sk", "sl", "sq",
    "sr", "sv", "sw", "ta", "th", "tl", "tr", "uk", "ur", "vi", "zh")
UNDETERMINED = "und"


@lru_cache(maxsize=1)
def _identifier():
    from py3langid.langid import MODEL_FILE, LanguageIdentifier

    identifier = LanguageIdentifier.from_model_file(MODEL_FILE)
    identifier.set_languages([code for code in LANGUAGES if code in identifier.nb_classes])
    return identifier


def load_model() -> None:
    """Loads py3langid's model now (about 1 s: a worker's set-up), not on the first document."""
    _identifier()


def detect_language(text: str) -> str:
    """The ISO 639-1 code of the document's language, or "und" for text with too few letters.

    Capitalised words are left out when enough other letters remain: names say little about
    the language they are written in, and the words around them say much.
    """
    sample = text[:10_000]
    if not _has_letters(sample, MIN_LETTERS):
        return UNDETERMINED
    uncapitalised = " ".join(w for w in sample.split() if not w[:1].isupper())
    code, _ = _identifier().classify(uncapitalised if _has_letters(uncapitalised, MIN_LETTERS)
                                     else sample)
    return code


def _has_letters(text: str, least: int) -> bool:
    """Whether `text` holds at least `least` letters (it stops counting there)."""
    found = 0
    for found, _ in enumerate(filter(str.isalpha, text), start=1):
        if found >= least:
            return True
    return found >= least
