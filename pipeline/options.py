"""Larvatus command-line options, as a Beam PipelineOptions subclass, and their checks."""
from __future__ import annotations

import argparse
import os

from apache_beam.options.pipeline_options import PipelineOptions

from models.handler import DEVICE_CHOICES
from models.model_dir import DEFAULT_MODEL_DIR
from transforms.realign import AGGREGATIONS
from transforms.read import DEFAULT_MAX_CHARS
from transforms.redact import PLACEHOLDER_STYLES, PlaceholderStyle

DEFAULT_KEY_ENV = "LARVATUS_PSEUDONYM_KEY"
DEFAULT_ID_FIELD = "id"
DEFAULT_MAX_DEAD_LETTER_RATIO = 0.5
PROGRESS_MODES = ("auto", "bar", "lines", "off")
DEFAULT_PROGRESS_INTERVAL = 5.0
RUN_EXAMPLES = """examples:
  larvatus run --input 'corpus/*.jsonl' --output out/
  larvatus run --input docs.parquet --text-field body --id-field doc_id --output out/ \\
      --redact-labels PER,LOC,ORG,MISC --placeholder indexed
  larvatus run --input 'letters/*.txt' --output out/ --keep-text -v
  larvatus run --input big.jsonl.gz --output out/ --progress lines \\
      --direct_num_workers 2 --direct_running_mode multi_processing

Every other argument must be a Beam option (larvatus run --help-beam lists them), e.g.
--runner DataflowRunner --project P --region R --temp_location gs://B/tmp
--setup_file ./setup.py. Arguments after a bare -- go to Beam unchecked (options that only
a runner's job server knows).

exit status: 0 done; 1 the job ran but failed a check (too many dead letters, counts that
do not add up); 2 a bad command line, option, input or model (nothing was run)."""


class OptionsError(ValueError):
    """Bad command-line options: the job stops before it starts."""


class LarvatusOptions(PipelineOptions):
    """Options of the Larvatus job; every other argument goes to Beam."""

    @classmethod
    def _add_argparse_args(cls, parser: argparse.ArgumentParser) -> None:
        group = parser.add_argument_group("Larvatus") if hasattr(parser, "add_argument_group") else parser
        group.add_argument("--input", required=False, help="Input file or glob (required).")
        group.add_argument("--output", required=False,
                           help="Output directory for Parquet files and _SUMMARY.json (required).")
        group.add_argument(
            "--input-format", "--input_format", dest="input_format", default="auto",
            choices=("auto", "jsonl", "text", "parquet"),
            help="jsonl: one JSON object a line; text: one document a file (id = path); "
                 "parquet: one document a row. auto (default) reads it from each file's "
                 "extension (.jsonl/.json/.ndjson, .parquet, else text).")
        group.add_argument("--id-field", "--id_field", dest="id_field", default=None,
                           help="Field holding the document id (jsonl, parquet). Default: id "
                                "when present; a record without one takes its source "
                                "(file:line) as id. A field named here must exist.")
        group.add_argument("--text-field", "--text_field", dest="text_field", default="text",
                           help="Field holding the text (jsonl, parquet). Default: text.")
        group.add_argument("--model", default=str(DEFAULT_MODEL_DIR),
                           help="Model directory (default: the embedded English NER model).")
        group.add_argument("--device", default="auto", choices=DEVICE_CHOICES,
                           help="auto (default): CUDA when a GPU and onnxruntime-gpu can "
                                "use it, else CPU. cuda fails at start if CUDA is unusable.")
        group.add_argument("--redact-labels", "--redact_labels", dest="redact_labels",
                           default="PER,LOC,ORG",
                           help="Comma-separated entity types to replace. Default: PER,LOC,ORG.")
        group.add_argument("--placeholder", default="label", choices=PLACEHOLDER_STYLES,
                           help="label: [PER]; indexed: [PER_1], numbered per document, the "
                                "same surface form getting the same number; pseudonym: "
                                "[PER_<hmac>], keyed HMAC-SHA256 stable across documents (the "
                                "key is read from the environment variable --pseudonym-key-env).")
        group.add_argument("--pseudonym-key-env", "--pseudonym_key_env",
                           dest="pseudonym_key_env", default=DEFAULT_KEY_ENV,
                           help=f"Environment variable holding the secret key for "
                                f"--placeholder pseudonym. Default: {DEFAULT_KEY_ENV}.")
        group.add_argument("--no-propagate", "--no_propagate", dest="propagate",
                           action="store_false", default=True,
                           help="Do not redact other occurrences of a redacted surface form.")
        group.add_argument("--aggregation", default="first", choices=AGGREGATIONS,
                           help="How a word's tag comes from its subwords: first (default), "
                                "average or max of their probabilities.")
        group.add_argument("--window-length", "--window_length", dest="window_length",
                           type=int, default=None,
                           help="Wordpieces per window, [CLS]/[SEP] included. Default and "
                                "maximum: the model's max_length.")
        group.add_argument("--window-overlap", "--window_overlap", dest="window_overlap",
                           type=int, default=None,
                           help="Wordpieces shared by consecutive windows of a long document. "
                                "Default: a quarter of the window, at most 128.")
        group.add_argument("--batch-tokens", "--batch_tokens", dest="batch_tokens",
                           type=int, default=None,
                           help="Padded tokens per inference batch. Default: 512 on CPU (small batches stay in cache), "
                                "65536 on CUDA.")
        group.add_argument("--intra-op-threads", "--intra_op_threads", dest="intra_op_threads",
                           type=int, default=0,
                           help="ONNX Runtime threads per worker (0: its default, all cores).")
        group.add_argument("--keep-text", "--keep_text", dest="keep_text", action="store_true",
                           default=False,
                           help="Also write the original text and entity surface strings. Off "
                                "by default: the output is meant to be shareable.")
        group.add_argument("--max-chars", "--max_chars", dest="max_chars", type=int,
                           default=DEFAULT_MAX_CHARS,
                           help=f"Longer documents are dead-lettered as too_large. "
                                f"Default: {DEFAULT_MAX_CHARS}.")
        group.add_argument("--overwrite", action="store_true", default=False,
                           help="Replace Larvatus files already in --output.")
        group.add_argument(
            "--max-dead-letter-ratio", "--max_dead_letter_ratio", dest="max_dead_letter_ratio",
            type=float, default=DEFAULT_MAX_DEAD_LETTER_RATIO,
            help=f"The job exits with status 1, listing the reasons, when more than this share "
                 f"of records is dead-lettered (the output is written all the same). A job "
                 f"whose every record is dead-lettered always fails. Default: "
                 f"{DEFAULT_MAX_DEAD_LETTER_RATIO}.")


def pseudonym_key(options: LarvatusOptions) -> bytes | None:
    """The secret for pseudonyms, read from the environment, or an error that says how to set it."""
    if options.placeholder != PlaceholderStyle.PSEUDONYM:
        return None
    key = os.environ.get(options.pseudonym_key_env, "")
    if len(key) < 16:
        raise OptionsError(
            f"--placeholder pseudonym needs a secret key of at least 16 characters in the "
            f"environment variable {options.pseudonym_key_env} (for example: export "
            f"{options.pseudonym_key_env}=$(openssl rand -hex 32)). Keep it secret: whoever "
            f"holds it can test guesses against the pseudonyms.")
    return key.encode("utf-8")


def add_launcher_args(parser: argparse.ArgumentParser) -> None:
    """Options of the launching command itself (logging, progress); never passed to Beam."""
    group = parser.add_argument_group("Messages and progress")
    group.add_argument("-v", "--verbose", action="count", default=0,
                       help="More messages: -v adds Larvatus's debug lines and Beam's "
                            "warnings, -vv Beam's info lines.")
    group.add_argument("-q", "--quiet", action="store_true", default=False,
                       help="Only warnings and errors; no progress unless --progress asks.")
    group.add_argument("--progress", default="auto", choices=PROGRESS_MODES,
                       help="auto (default): a bar when stderr is a terminal, a line every "
                            "--progress-interval seconds otherwise (a log file); off with -q "
                            "or on runners other than the DirectRunner that block until done.")
    group.add_argument("--progress-interval", "--progress_interval", dest="progress_interval",
                       type=float, default=DEFAULT_PROGRESS_INTERVAL,
                       help=f"Seconds between progress lines. Default: "
                            f"{DEFAULT_PROGRESS_INTERVAL:g}.")
    group.add_argument("--help-beam", "--help_beam", dest="help_beam", action="store_true",
                       default=False, help="List Beam's own options and exit.")


def job_parser(prog: str, parser_class=argparse.ArgumentParser) -> argparse.ArgumentParser:
    """The `larvatus run` parser: Larvatus's job options and the launcher's own."""
    parser = parser_class(
        prog=prog,
        description="Annotate and redact named entities in a corpus, on Apache Beam. Writes "
                    "Parquet annotations, dead letters and _SUMMARY.json to --output.",
        epilog=RUN_EXAMPLES, formatter_class=argparse.RawDescriptionHelpFormatter)
    LarvatusOptions._add_argparse_args(parser)
    add_launcher_args(parser)
    return parser


def help_text(prog: str = "larvatus run") -> str:
    """--help for the Larvatus options, with a pointer to Beam's."""
    return job_parser(prog).format_help()
