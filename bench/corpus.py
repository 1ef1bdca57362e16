"""Benchmark corpora, deterministic for a seed, and how Larvatus counts them."""
# Kinds (`CorpusSpec.kind`):
#
# - "news": news-like documents of varied, realistic length (mostly 150-450 words, a
#   quarter 450-800, some 800-1,400), runs of paragraphs of pipeline/sample/news.jsonl (else
#   of a built-in generator). 240 documents, seed 0: 140,625 words and 155,654 wordpieces
#   as Larvatus counts them, median 506 words, 135 documents over 512 wordpieces.
# - "long": long documents (5,000-15,000 words each, built the same way), where every
#   document spans dozens of windows.
# - "conll": the CoNLL-2003 validation documents as raw text (tokens joined by spaces,
#   sentences by newlines; `larvatus.models.conll`), the first N or all of them.
#
# "news" and "long" take either a number of documents or a number of words (`words`: whole
# documents until at least that many whitespace-separated words, e.g. a million-word corpus
# over which start-up is amortised). A words corpus begins with the same documents as the
# documents corpus of the same kind and seed.
from __future__ import annotations

import hashlib
import json
import random
import statistics
from dataclasses import dataclass
from pathlib import Path
from typing import Callable, Optional, Sequence

REPO = Path(__file__).resolve().parents[1]
CACHE = REPO / "bench" / ".cache"
SAMPLE = REPO / "pipeline" / "sample" / "news.jsonl"
# shared/ sits beside the checkout (CI, developers) or inside it (the device machine's copy).
CONLL_VALID = next((root / "shared" / "data" / "conll2003" / "valid.txt"
                    for root in (REPO.parent, REPO)
                    if (root / "shared" / "data" / "conll2003" / "valid.txt").is_file()),
                   REPO.parent / "shared" / "data" / "conll2003" / "valid.txt")
KINDS = ("news", "long", "conll")
DEFAULT_DOCS = {"news": 240, "long": 24, "conll": None}  # None: every document
LONG_WORDS = (5_000, 15_000)


# --------------------------------------------------------------------------- sources

def sample_paragraphs(path: Path = SAMPLE) -> list[list[str]]:
    """Paragraphs of each sample document (lines that do not parse are skipped)."""
    documents: list[list[str]] = []
    if not path.is_file():
        return documents
    with open(path, encoding="utf-8") as handle:
        for line in handle:
            try:
                text = json.loads(line)["text"]
            except (ValueError, KeyError, TypeError):
                continue  # a partial last line while someone writes the file
            paragraphs = [p.strip() for p in text.split("\n\n") if p.strip()]
            if paragraphs:
                documents.append(paragraphs)
    return documents


_FIRST = ["Maria", "John", "Amara", "Kenji", "Lucía", "Oleksandr", "Fatima", "Pierre", "Grace",
          "Abdi", "Ingrid", "Rahul", "Chen", "Sipho", "Nadia", "Tomás"]
_LAST = ["Okafor", "Schmidt", "Tanaka", "García", "Kowalski", "Haddad", "Dubois", "Wambui",
         "Farah", "Lindqvist", "Sharma", "Wei", "Nkosi", "Petrova", "Silva", "Murphy"]
_PLACES = ["Nairobi", "Hamburg", "Osaka", "Valparaíso", "Gdańsk", "Beirut", "Lyon", "Mumbai",
           "Chengdu", "Durban", "Tbilisi", "Porto", "Winnipeg", "Adelaide", "Kraków", "Accra"]
_ORGS = ["the World Bank", "Reuters", "the European Commission", "Siemens", "Safaricom",
         "the United Nations", "Toyota", "the Red Cross", "Petrobras", "the IMF",
         "Lufthansa", "the Central Bank", "Unilever", "the Football Association"]
_TEMPLATES = [
    "{p} said on {day} that {o} would review its plans for {l} before the end of the year.",
    "Officials in {l} confirmed that {p}, a senior adviser at {o}, had resigned.",
    "\"We are not going to wait,\" {p} told reporters in {l}, adding that {o} had been informed.",
    "Shares of {o} rose 3.2 percent in {l} after {p} announced a new round of cost cuts.",
    "The agreement, signed in {l} by {p} and representatives of {o}, runs until 2030.",
    "Critics, among them {p}, argued that the figures published by {o} were too optimistic.",
    "Heavy rain forced the closure of several roads around {l} on {day}, police said.",
    "{o} declined to comment on the report, which {p} described as incomplete.",
]
_DAYS = ["Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday"]


def synthetic_paragraphs(rng: random.Random, count: int = 60) -> list[list[str]]:
    """A built-in news-like generator, used when the sample corpus is absent."""
    documents = []
    for _ in range(count):
        paragraphs = []
        for _ in range(rng.randint(6, 12)):
            sentences = [rng.choice(_TEMPLATES).format(
                p=f"{rng.choice(_FIRST)} {rng.choice(_LAST)}", l=rng.choice(_PLACES),
                o=rng.choice(_ORGS), day=rng.choice(_DAYS)) for _ in range(rng.randint(2, 4))]
            paragraphs.append(" ".join(sentences))
        documents.append(paragraphs)
    return documents


def _describe(source: Path) -> str:
    try:
        return str(source.relative_to(REPO))
    except ValueError:
        return str(source)


def _paragraph_pool(rng: random.Random, source: Path) -> tuple[list[str], str]:
    documents = sample_paragraphs(source)
    origin = f"{_describe(source)} ({len(documents)} documents)"
    if not documents:
        documents = synthetic_paragraphs(rng)
        origin = "built-in generator"
    return [p for doc in documents for p in doc], origin


# --------------------------------------------------------------------------- builders

def news_length(rng: random.Random) -> int:
    """A news document's target length in words: 60% 150-450, 30% 450-800, 10% 800-1,400."""
    roll = rng.random()
    return (rng.randint(150, 450) if roll < 0.6 else
            rng.randint(450, 800) if roll < 0.9 else rng.randint(800, 1400))


def long_length(rng: random.Random) -> int:
    return rng.randint(*LONG_WORDS)


LENGTHS: dict[str, Callable[[random.Random], int]] = {"news": news_length, "long": long_length}


def generate(kind: str, seed: int, docs: Optional[int] = None, words: Optional[int] = None,
             source: Path = SAMPLE) -> tuple[list[dict], str]:
    """`docs` documents, or whole documents until at least `words` words, of a built kind.

    Each document is a run of paragraphs starting at a random paragraph and running on
    into the next documents until its target length. Returns the records
    (`{"id", "text"}`) and a description of the source.
    """
    if (docs is None) == (words is None):
        raise ValueError("give exactly one of docs and words")
    length = LENGTHS[kind]
    rng = random.Random(seed)
    paragraphs, origin = _paragraph_pool(rng, source)
    records: list[dict] = []
    total = 0
    while (len(records) < docs) if docs is not None else (total < words):
        target = length(rng)
        position = rng.randrange(len(paragraphs))
        chosen: list[str] = []
        count = 0
        while count < target:
            paragraph = paragraphs[position % len(paragraphs)]
            chosen.append(paragraph)
            count += len(paragraph.split())
            position += 1
        records.append({"id": f"bench-{len(records):05d}", "text": "\n\n".join(chosen)})
        total += count
    return records, origin


def make_documents(count: int, seed: int, source: Path = SAMPLE) -> tuple[list[dict], str]:
    """`count` news-like documents (the throughput benchmark's default corpus)."""
    return generate("news", seed, docs=count, source=source)


def make_long_documents(count: int, seed: int, source: Path = SAMPLE) -> tuple[list[dict], str]:
    """`count` documents of 5,000-15,000 words."""
    return generate("long", seed, docs=count, source=source)


def make_word_corpus(words: int, seed: int, kind: str = "news",
                     source: Path = SAMPLE) -> tuple[list[dict], str]:
    """Whole documents of a kind until at least `words` words (e.g. 1,000,000)."""
    return generate(kind, seed, words=words, source=source)


def conll_documents(path: Path = CONLL_VALID, limit: Optional[int] = None) -> tuple[list[dict], str]:
    """CoNLL documents as the raw text the pipeline would meet (`larvatus.models.conll`)."""
    from larvatus.models.conll import read_documents

    if not Path(path).is_file():
        raise FileNotFoundError(f"{path}: no CoNLL file (the shared data sits beside the repo)")
    documents = read_documents(path)[:limit]
    return [{"id": d.doc_id, "text": d.text} for d in documents], f"{_describe(Path(path))}"


def whitespace_words(records: Sequence[dict]) -> int:
    return sum(len(r["text"].split()) for r in records)


# --------------------------------------------------------------------------- specs and files

@dataclass(frozen=True)
class CorpusSpec:
    """Which corpus: kind, size (documents or words), seed, and the CoNLL file for "conll"."""

    kind: str = "news"
    docs: Optional[int] = None
    words: Optional[int] = None
    seed: int = 0
    conll_path: str = str(CONLL_VALID)

    def __post_init__(self):
        if self.kind not in KINDS:
            raise ValueError(f"kind must be one of {KINDS}, got {self.kind!r}")
        if self.words is not None and self.kind == "conll":
            raise ValueError("a words target needs a built kind (news, long), not conll")
        if (self.words is not None and self.words < 1) or (self.docs is not None and self.docs < 1):
            raise ValueError("docs and words must be positive")

    @property
    def size(self) -> Optional[int]:
        """Documents asked for (the kind's default when neither docs nor words is given)."""
        return self.docs if self.docs is not None else (
            None if self.words is not None else DEFAULT_DOCS[self.kind])

    @property
    def name(self) -> str:
        size = f"{self.words}w" if self.words is not None else str(self.size or "all")
        return f"{self.kind}-{size}-seed{self.seed}" if self.kind != "conll" else f"conll-{size}"

    def scaled(self, factor: int) -> "CorpusSpec":
        """The same corpus, `factor` times larger (memory scaling)."""
        if self.words is not None:
            return CorpusSpec(self.kind, None, self.words * factor, self.seed, self.conll_path)
        if self.kind == "conll":
            raise ValueError("the CoNLL corpus cannot be scaled")
        return CorpusSpec(self.kind, self.size * factor, None, self.seed, self.conll_path)

    def build(self) -> tuple[list[dict], str]:
        if self.kind == "conll":
            return conll_documents(Path(self.conll_path), self.size)
        if self.words is not None:
            return make_word_corpus(self.words, self.seed, self.kind)
        return generate(self.kind, self.seed, docs=self.size)


def write_jsonl(records: Sequence[dict], path: Path) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_suffix(".tmp")
    with open(tmp, "w", encoding="utf-8") as handle:
        for record in records:
            handle.write(json.dumps(record, ensure_ascii=False) + "\n")
    tmp.replace(path)


def read_jsonl(path: Path) -> list[dict]:
    with open(path, encoding="utf-8") as handle:
        return [json.loads(line) for line in handle if line.strip()]


def write_corpus(spec: CorpusSpec, directory: Path = CACHE) -> dict:
    """Builds the corpus into `directory/docs-NAME.jsonl`; returns path, origin and digest."""
    records, origin = spec.build()
    path = Path(directory) / f"docs-{spec.name}.jsonl"
    write_jsonl(records, path)
    digest = hashlib.sha256(path.read_bytes()).hexdigest()[:12]
    return {"name": spec.name, "kind": spec.kind, "path": str(path), "origin": origin,
            "sha256": digest, "whitespace_words": whitespace_words(records)}


# --------------------------------------------------------------------------- counts

def segment_records(records: Sequence[dict]) -> list:
    """Larvatus's segmentation of each record (`larvatus.transforms.segment`)."""
    from larvatus.transforms.records import Document
    from larvatus.transforms.segment import segment

    return [segment(Document(r["id"], r["text"], f"{i}")) for i, r in enumerate(records)]


def count_documents(records: Sequence[dict], tokenizer, settings) -> dict:
    """Words and wordpieces as Larvatus counts them, and the windows it will build."""
    from larvatus.transforms.encode import encode_many

    segmented = segment_records(records)
    encoded = encode_many(segmented, tokenizer, settings)
    pieces = [e.num_pieces for e in encoded]
    return {
        "documents": len(records),
        "words": sum(s.num_words for s in segmented),
        "wordpieces": sum(pieces),
        "windows": sum(len(e.windows) for e in encoded),
        "window_tokens": sum(e.num_tokens for e in encoded),
        "docs_over_512_pieces": sum(p > 512 for p in pieces),
        "docs_over_one_window": sum(len(e.windows) > 1 for e in encoded),
        "median_words_per_doc": statistics.median(s.num_words for s in segmented)
        if segmented else 0,
    }


def corpus_counts(model_dir: Path, docs_path: Path, overlap: int) -> dict:
    """`count_documents` with a model directory's tokenizer and encode settings."""
    from larvatus.models.model_dir import load_model_spec

    spec = load_model_spec(model_dir)
    tokenizer = spec.load_tokenizer()
    return count_documents(read_jsonl(Path(docs_path)), tokenizer,
                           spec.encode_settings(tokenizer, overlap))
