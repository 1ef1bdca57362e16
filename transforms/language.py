"""Per-document language detection with py3langid (its model ships inside the package: no download)."""
from __future__ import annotations

from functools import lru_cache

# Fewer letters than this say too little: the document is reported as undetermined.
MIN_LETTERS = 20
UNDETERMINED = "und"


@lru_cache(maxsize=1)
def _identifier():
    from py3langid.langid import MODEL_FILE, LanguageIdentifier

    return LanguageIdentifier.from_model_file(MODEL_FILE)


def detect_language(text: str) -> str:
    """The ISO 639-1 code of the document's language, or "und" for text with too few letters."""
    if sum(1 for c in text[:10_000] if c.isalpha()) < MIN_LETTERS:
        return UNDETERMINED
    code, _ = _identifier().classify(text[:10_000])
    return code
