"""Larvatus command-line options and their checks (Beam-free: `LarvatusOptions`, Beam's view of them, loads on first use)."""
from __future__ import annotations

import argparse
from typing import Sequence

from larvatus.models.handler import DEVICE_CHOICES
from larvatus.models.model_dir import EMBEDDED_DEFAULT
from larvatus.sharing import SHARE_CHOICES
from larvatus.transforms.mlout import EMBEDDING_LAYERS, EMBEDDING_POOLINGS, EmbeddingLayer, EmbeddingPooling
from larvatus.transforms.realign import AGGREGATIONS
from larvatus.transforms import formats
from larvatus.transforms.budget import DEFAULT_RECORD_TIMEOUT
from larvatus.transforms.labels import EntityRole, roles_of_types
from larvatus.transforms.read import DEFAULT_MAX_CHARS
from larvatus.transforms.recognizers import (
    DEFAULT_PHONE_REGIONS, PROFILES, pattern_labels, profile_pattern_labels)
from larvatus.transforms.redact import (
    MIN_KEY_CHARS, PLACEHOLDER_STYLES, KeySource, PlaceholderStyle, SecretKeyError,
)
from larvatus.key_files import read_secret_file

DEFAULT_KEY_ENV = "LARVATUS_PSEUDONYM_KEY"
DEFAULT_LABELS_WORD, ALL_LABELS_WORD, NO_LABELS_WORD = "default", "all", "none"
# `--redact-labels default` hides the model's types of these roles (PER, LOC, ORG for CoNLL).
DEFAULT_ROLES = (EntityRole.PERSON, EntityRole.PLACE, EntityRole.ORGANISATION)
DEFAULT_REDACT_THRESHOLD = 0.04
DEFAULT_ID_FIELD = "id"
DEFAULT_MAX_DEAD_LETTER_RATIO = 0.5
TEXT_ID_CHOICES = ("path", "hash")
PROGRESS_MODES = ("auto", "bar", "lines", "off")
DEFAULT_PROGRESS_INTERVAL = 5.0
MIN_PROGRESS_INTERVAL = 0.1


def progress_interval(value: str) -> float:
    """--progress-interval: seconds, at least MIN_PROGRESS_INTERVAL (0 would print without end)."""
    seconds = float(value)
    if not MIN_PROGRESS_INTERVAL <= seconds < float("inf"):
        raise argparse.ArgumentTypeError(
            f"must be at least {MIN_PROGRESS_INTERVAL:g} second(s), not {value}")
    return seconds


# Offsets are stored as int32: no document may be longer than this many characters.
MAX_CHARS_LIMIT = 2**31 - 1


def max_chars(value: str) -> int:
    """--max-chars: a whole number from 1 to MAX_CHARS_LIMIT (entity offsets are int32)."""
    try:
        number = int(value)
    except ValueError:
        raise argparse.ArgumentTypeError(f"must be a whole number, not {value!r}") from None
    if not 1 <= number <= MAX_CHARS_LIMIT:
        raise argparse.ArgumentTypeError(
            f"must be between 1 and {MAX_CHARS_LIMIT:,} (offsets are 32-bit), not {value}")
    return number


def check_beam_options(options: PipelineOptions) -> None:
    """Refuses Beam options that would fail only once the job runs: a runner Beam does not
    know or cannot load here, a negative --direct_num_workers (OptionsError)."""
    from larvatus.models.runners import beam_options_problem

    problem = beam_options_problem(options)
    if problem is not None:
        raise OptionsError(problem)


RUN_EXAMPLES = """examples:
  larvatus run --input 'corpus/*.jsonl' --output out/
  larvatus run --input docs.parquet --text-field body --id-field doc_id --output out/ \\
      --redact-labels PER,LOC,ORG,MISC --placeholder indexed
  larvatus run --input 'letters/*.txt' --output out/ --text-ids hash -v
  larvatus run --input big.jsonl.gz --output out/ \\
      --direct_num_workers 2 --direct_running_mode multi_processing

Every other argument must be a Beam option (larvatus run --help-beam lists them), e.g.
--runner DataflowRunner --project P --region R --temp_location gs://B/tmp
--setup_file ./setup.py. Arguments after a bare -- go to Beam unchecked (options that only
a runner's job server knows).

exit status: 0 done; 1 the job failed (a full disk, a store that stopped answering) or
failed a check (too many dead letters, counts that do not add up); 2 a bad command line, option, input or model (nothing was run); 130
interrupted (Ctrl-C)."""


class OptionsError(ValueError):
    """Bad command-line options: the job stops before it starts."""


def add_job_args(parser: argparse.ArgumentParser) -> None:
    """The Larvatus job's options (one group), on `larvatus run`'s parser or Beam's."""
    group = parser.add_argument_group("Larvatus") if hasattr(parser, "add_argument_group") else parser
    for add in (_add_input_args, _add_model_args, _add_redaction_args, _add_inference_args,
                _add_ml_output_args, _add_output_args, _add_engine_args):
        add(group)


def __getattr__(name: str):
    """`LarvatusOptions`, the options as a Beam PipelineOptions view, imported on first use
    so that the option table and its checks load no Beam module (the Redactor uses them)."""
    if name == "LarvatusOptions":
        from larvatus.beam_options import LarvatusOptions

        return LarvatusOptions
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def _format_help() -> str:
    """--input-format's help, from the format table: what each format holds, then the
    extensions `auto` goes by (formats with the same description share one entry)."""
    described: dict[str, list[str]] = {}
    for fmt in formats.FORMATS:
        described.setdefault(fmt.describe, []).append(fmt.name)
    entries = "; ".join(f"{', '.join(names)}: {text}" for text, names in described.items())
    extensions = ", ".join("/".join(fmt.extensions) for fmt in formats.FORMATS
                           if fmt.name != formats.DEFAULT_FORMAT)
    return (f"{entries}. auto (default) reads it from each file's extension ({extensions}, "
            f"else {formats.DEFAULT_FORMAT}).")


def _add_input_args(group) -> None:
    """Where the documents come from (files, format, fields) and where the output goes."""
    with_fields = ", ".join(fmt.name for fmt in formats.FORMATS if fmt.has_fields)
    group.add_argument("--input", required=False, help="Input file or glob (required).")
    group.add_argument("--output", required=False,
                       help="Output directory for Parquet files and _SUMMARY.json (required).")
    group.add_argument("--input-format", "--input_format", dest="input_format", default="auto",
                       choices=("auto", *formats.format_names()), help=_format_help())
    group.add_argument("--id-field", "--id_field", dest="id_field", default="id",
                       help=f"Field or column holding the document id ({with_fields}). "
                            f"Default: id. A record without one takes its source (file:line, "
                            f"file#row=N) as id.")
    group.add_argument("--text-field", "--text_field", dest="text_field", default="text",
                       help=f"Field or column holding the text ({with_fields}). Default: text.")
    group.add_argument("--keep-fields", "--keep_fields", dest="keep_fields", default="",
                       help=f"Other fields or columns of the input ({with_fields}) carried "
                            f"into the annotations as string columns, comma-separated (e.g. "
                            f"lang,date). Copied as they are, NOT redacted: name only fields "
                            f"free of personal data.")


def _add_model_args(group) -> None:
    """Which model, on which device."""
    group.add_argument("--model", default=EMBEDDED_DEFAULT,
                       help="Model directory: a local path or any Beam filesystem "
                            "(gs://, s3://, hdfs://...). Workers copy it once per "
                            "process into a local cache ($LARVATUS_CACHE, else "
                            "~/.cache/larvatus) and check its sha256 against the "
                            f"launcher's. Default: {EMBEDDED_DEFAULT}, the English NER "
                            "model inside the installed Larvatus package.")
    group.add_argument("--device", default="auto", choices=DEVICE_CHOICES,
                       help="auto (default): CUDA when a GPU and onnxruntime-gpu can "
                            "use it, else CPU. cuda fails at start if CUDA is unusable.")


def _add_redaction_args(group) -> None:
    """What is redacted and how it is replaced."""
    group.add_argument("--redact-labels", "--redact_labels", dest="redact_labels",
                       default=DEFAULT_LABELS_WORD,
                       help="What to replace, comma-separated: entity types of the model "
                            f"(PER, LOC, ORG, MISC) and pattern labels ({', '.join(pattern_labels())}); "
                            "'default' = PER,LOC,ORG and every pattern label, DATE included; "
                            "'all' = every model type and pattern label; '-LABEL' removes one "
                            "(e.g. 'default,-DATE' or '-DATE' keeps dates); 'none' turns redaction off "
                            "(with a warning). Default: default.")
    group.add_argument("--profile", default="default", choices=PROFILES,
                       help="default: names, places, organisations and identifiers "
                            "(--redact-labels default). strict: also every MISC span "
                            "(events, nationalities, works) and quasi-identifiers (label "
                            "QUASI): bare years, ages, durations, the number after no., plot "
                            "and sheet numbers; for court, medical and regulatory documents. "
                            "It changes what 'default' and 'all' mean in --redact-labels.")
    group.add_argument("--redact-threshold", "--redact_threshold", dest="redact_threshold",
                       type=float, default=DEFAULT_REDACT_THRESHOLD,
                       help="Recall-first decision: a word is redacted when the model's "
                            "summed probability of the redacted types reaches this value, "
                            "whatever its top label (a MISC span needs half its "
                            f"probability on the redacted types). In (0, 1]; lower hides "
                            f"more. Default: "
                            f"{DEFAULT_REDACT_THRESHOLD} (chosen on CoNLL validation for "
                            "token recall of PER/LOC/ORG >= 0.99; see the model card).")
    group.add_argument("--label-thresholds", "--label_thresholds", dest="label_thresholds",
                       default="",
                       help="Per-label thresholds overriding --redact-threshold, e.g. "
                            "'ORG=0.3,PER=0.02': a model span is redacted when its "
                            "decision_score reaches its label's threshold.")
    group.add_argument("--keep-terms", "--keep_terms", dest="keep_terms", default=None,
                       help="A UTF-8 file of words or phrases, one a line, never redacted "
                            "(whole words, any case; '#' starts a comment line).")
    group.add_argument("--always-redact", "--always_redact", dest="always_redact",
                       default=None,
                       help="A UTF-8 file of words or phrases, one a line, always redacted "
                            "wherever they stand as whole words (any case), e.g. a client "
                            "list; 'LABEL<TAB>term' picks the placeholder's label (default "
                            "TERM).")
    group.add_argument("--phone-regions", "--phone_regions", dest="phone_regions",
                       default=",".join(DEFAULT_PHONE_REGIONS),
                       help="Regions whose national phone formats are recognised (numbers "
                            "written with +country code are found whatever the region): a "
                            "list (US,GB), or 'default' with +XX/-XX to add or remove one "
                            f"(default,+VN). Default: {','.join(DEFAULT_PHONE_REGIONS)}.")
    group.add_argument("--placeholder", default="label", choices=PLACEHOLDER_STYLES,
                       help="label: [PER]; indexed: [PER_1], numbered per document, the "
                            "same surface form getting the same number; pseudonym: "
                            "[PER_<hmac>], keyed HMAC-SHA256 stable across documents (the "
                            "key is read from the environment variable --pseudonym-key-env).")
    group.add_argument("--pseudonym-key-env", "--pseudonym_key_env",
                       dest="pseudonym_key_env", default=DEFAULT_KEY_ENV,
                       help=f"Environment variable holding the secret key for "
                            f"--placeholder pseudonym, read by each worker (never sent "
                            f"in the job). Default: {DEFAULT_KEY_ENV}.")
    group.add_argument("--pseudonym-key-file", "--pseudonym_key_file",
                       dest="pseudonym_key_file", default=None,
                       help="Instead of --pseudonym-key-env: a file holding the key (a "
                            "mounted secret, or gs://, s3://... readable by the workers), "
                            "read by each worker; surrounding whitespace is ignored.")
    group.add_argument("--no-propagate", "--no_propagate", dest="propagate",
                       action="store_false", default=True,
                       help="Do not redact other occurrences of a redacted surface form.")


def _add_inference_args(group) -> None:
    """How the model runs: word tags, windows, batches, threads, copies."""
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
                       help="ONNX Runtime threads per model session. 0 (default): the "
                            "machine's cores split between the sessions on it: all for "
                            "one process, cores/N for N processes "
                            "(--direct_num_workers, --sdk_worker_parallelism) or N "
                            "--model-copies, 1 on Dataflow (one process per vCPU).")
    group.add_argument("--model-copies", "--model_copies", dest="model_copies",
                       type=int, default=None,
                       help="Load exactly this many model copies per machine, shared by "
                            "all its worker processes (Beam RunInference's model_copies). "
                            "Default: one copy per process. 1 suits a GPU worker.")
    group.add_argument("--large-model", "--large_model", dest="large_model",
                       action="store_true", default=False,
                       help="Share one model copy per machine across its worker "
                            "processes (Beam RunInference's large_model), for models too "
                            "big to load once per process.")
    group.add_argument("--share-model", "--share_model", dest="share_model",
                       default="auto", choices=SHARE_CHOICES,
                       help="on: on the DirectRunner, one worker process per core (or "
                            "--direct_num_workers) in multi_processing mode, all sharing "
                            "one model copy (--model-copies 1): the CPU stages use every "
                            "core while one model serves them, on a GPU or a CPU. auto "
                            "(default): on when the model runs on CUDA (--device cuda, "
                            "or auto on a GPU machine). off: Beam's own defaults.")


def _add_ml_output_args(group) -> None:
    """The optional ML outputs: redacted token ids and vectors."""
    group.add_argument("--emit-token-ids", "--emit_token_ids", dest="emit_token_ids",
                       action="store_true", default=False,
                       help="Add the column redacted_input_ids: the whole document's "
                            "WordPiece ids with each redacted entity replaced by one "
                            "placeholder token per label ([PER], [EMAIL], ...), and write "
                            "the tokenizer with those tokens as OUTPUT/tokenizer.json.")
    group.add_argument("--emit-embeddings", "--emit_embeddings", dest="emit_embeddings",
                       action="store_true", default=False,
                       help="Add contextual vectors from the same ONNX run: embedding per "
                            "document and vector per entity (the mean of its pieces). "
                            "Needs a model exported with hidden-state outputs.")
    group.add_argument("--embedding-layer", "--embedding_layer", dest="embedding_layer",
                       default=EmbeddingLayer.LAST.value, choices=EMBEDDING_LAYERS,
                       help="Hidden states the vectors come from: last (default), "
                            "second_to_last, or sum_last_four.")
    group.add_argument("--embedding-pooling", "--embedding_pooling",
                       dest="embedding_pooling", default=EmbeddingPooling.MEAN.value,
                       choices=EMBEDDING_POOLINGS,
                       help="Document vector: mean of its pieces (default) or cls (the "
                            "[CLS] vector, averaged over a long document's windows).")


def _add_output_args(group) -> None:
    """What the output holds, the bounds on a document, and when a job fails."""
    by_path = " or ".join(fmt.name for fmt in formats.FORMATS if fmt.ids_from_path)
    group.add_argument("--keep-text", "--keep_text", dest="keep_text", action="store_true",
                       default=False,
                       help="Also write the original text and entity surface strings. Off "
                            "by default: the output is meant to be shareable.")
    group.add_argument("--max-chars", "--max_chars", dest="max_chars", type=max_chars,
                       default=DEFAULT_MAX_CHARS,
                       help=f"Longer documents are dead-lettered as too_large. "
                            f"Default: {DEFAULT_MAX_CHARS}.")
    group.add_argument("--record-timeout", "--record_timeout", dest="record_timeout",
                       type=float, default=DEFAULT_RECORD_TIMEOUT,
                       help=f"Seconds one document may spend in one stage (segment, "
                            f"encode, realign, patterns, redact, audit) before it is "
                            f"dead-lettered as timeout; the job goes on. 0: no limit. "
                            f"Default: {DEFAULT_RECORD_TIMEOUT:g}.")
    group.add_argument("--overwrite", action="store_true", default=False,
                       help="Replace Larvatus files already in --output (only once the "
                            "new run is wholly written; files of yours there stay).")
    group.add_argument(
        "--max-dead-letter-ratio", "--max_dead_letter_ratio", dest="max_dead_letter_ratio",
        type=float, default=DEFAULT_MAX_DEAD_LETTER_RATIO,
        help=f"The job exits with status 1, listing the reasons, when more than this share "
             f"of records is dead-lettered (the output is written all the same); a job "
             f"whose every record is dead-lettered always fails. Default: "
             f"{DEFAULT_MAX_DEAD_LETTER_RATIO}.")
    group.add_argument(
        "--text-ids", "--text_ids", dest="text_ids", default="path", choices=TEXT_ID_CHOICES,
        help=f"For --input-format {by_path}, where ids and sources come from: path (default), "
             "the file's path relative to the input's base folder; hash, 'sha256:' and "
             "the first 16 hex digits of that path's SHA-256, for files named after "
             "people (the name then appears nowhere in the output: not in ids, not in "
             "source); with --placeholder pseudonym it is 'hmac:' and an HMAC-SHA256 "
             "under the pseudonym key, which nobody without the key can test a guessed "
             f"name against. Refused when no input file is read as {by_path}.")

def _add_engine_args(group) -> None:
    """Which engine runs the job: Beam (any runner) or Apache Spark."""
    group.add_argument("--engine", default="beam", choices=("beam", "spark"),
                       help="beam (default): an Apache Beam job on --runner (the DirectRunner "
                            "unless told). spark: an Apache Spark job on --spark-master (pip "
                            "install '.[spark]' in the checkout; a Java runtime), with the same output, "
                            "checks and exit statuses; see docs/scale.md.")
    group.add_argument("--spark-master", "--spark_master", dest="spark_master",
                       default="local[*]",
                       help="With --engine spark: the Spark master URL (local[*], the default; "
                            "spark://HOST:7077, yarn, k8s://...). An active SparkSession in "
                            "this process is used as it is.")


def add_launcher_args(parser: argparse.ArgumentParser) -> None:
    """Options of the launching command itself (messages); never passed to Beam."""
    group = parser.add_argument_group("Messages and progress")
    group.add_argument("-v", "--verbose", action="count", default=0,
                       help="More messages: -v adds Larvatus's debug lines and Beam's "
                            "warnings, -vv Beam's info lines.")
    group.add_argument("-q", "--quiet", action="store_true", default=False,
                       help="Only warnings and errors; no progress unless --progress asks.")
    group.add_argument("--progress", default="auto", choices=PROGRESS_MODES,
                       help="auto (default): a bar when stderr is a terminal, a line every "
                            "--progress-interval seconds otherwise (a log file); off with -q. "
                            "Shown on the DirectRunner (single and multi-process), whose "
                            "workers share this machine; other runners have their own "
                            "monitoring pages.")
    group.add_argument("--progress-interval", "--progress_interval", dest="progress_interval",
                       type=progress_interval, default=DEFAULT_PROGRESS_INTERVAL,
                       help=f"Seconds between progress lines. Default: "
                            f"{DEFAULT_PROGRESS_INTERVAL:g}.")
    group.add_argument("--help-beam", "--help_beam", dest="help_beam", action="store_true",
                       default=False, help="List Beam's own options and exit.")


def job_parser(prog: str, parser_class=argparse.ArgumentParser) -> argparse.ArgumentParser:
    """The `larvatus run` parser: Larvatus's job options and the launcher's own."""
    parser = parser_class(
        prog=prog,
        description="Annotate and redact named entities and personal data in a corpus, on "
                    "Apache Beam. Writes Parquet annotations, dead letters and _SUMMARY.json "
                    "to --output.",
        epilog=RUN_EXAMPLES, formatter_class=argparse.RawDescriptionHelpFormatter)
    add_job_args(parser)
    add_launcher_args(parser)
    return parser


def resolve_redact_labels(value: str, model_types: Sequence[str],
                          profile: str = "default") -> frozenset[str]:
    """The labels to redact from the `--redact-labels` grammar.

    Words: `default` (the model's types for people, places and organisations, by their
    roles: PER, LOC, ORG for CoNLL, PERSON, GPE, ORG for OntoNotes; every model type when
    none has such a role; and every pattern label of the default profile), `all` (every model
    type too), `none`; labels; `-LABEL` removes one. Under `profile` "strict", `default` and
    `all` are every model type (MISC too) and every pattern label, the quasi-identifiers
    (QUASI) included. An empty value is an error: turning redaction off must be said (`none`).
    """
    items = [item.strip() for item in value.split(",") if item.strip()]
    if not items:
        raise OptionsError(
            f"--redact-labels {value!r} names no label; name labels, or say 'none' to write "
            "unredacted output on purpose")
    model_types = tuple(model_types)
    if profile not in PROFILES:
        raise OptionsError(f"--profile {profile!r} is not one of {', '.join(PROFILES)}")
    roles = roles_of_types(model_types)
    defaults = [t for t in model_types if roles.role(t) in DEFAULT_ROLES] or list(model_types)
    if profile == "strict":
        defaults = list(model_types)
    profile_labels = set(profile_pattern_labels(profile))
    known = set(model_types) | set(pattern_labels())
    chosen: set[str] = set()
    if items[0].startswith("-"):   # `-DATE` alone: the default labels less DATE
        chosen |= set(defaults) | profile_labels
    for item in items:
        word = item.lower()
        if word == NO_LABELS_WORD:
            if len(items) > 1:
                raise OptionsError("--redact-labels none cannot be combined with other labels")
            return frozenset()
        if word == DEFAULT_LABELS_WORD:
            chosen |= set(defaults) | profile_labels
        elif word == ALL_LABELS_WORD:
            chosen |= set(model_types) | profile_labels
        elif item.startswith("-"):
            label = item[1:].strip().upper()
            if label not in known:
                raise OptionsError(f"--redact-labels cannot remove {label!r}: not a label "
                                   f"({', '.join(sorted(known))})")
            chosen.discard(label)
        elif item.upper() in known:
            chosen.add(item.upper())
        else:
            raise OptionsError(
                f"--redact-labels names {item!r}, which is neither a type the model predicts "
                f"({', '.join(model_types)}) nor a pattern label ({', '.join(pattern_labels())})")
    if not chosen:
        raise OptionsError(f"--redact-labels {value!r} leaves nothing to redact; say 'none' "
                           "if that is what you want")
    return frozenset(chosen)


def resolve_phone_regions(value: str) -> tuple[str, ...]:
    """The regions of `--phone-regions`: a full list (`US,GB`), or `default` with `+XX`
    to add and `-XX` to remove regions (`default,+VN`)."""
    regions: list[str] = []
    for item in (part.strip() for part in value.split(",")):
        if item.lower() == DEFAULT_LABELS_WORD:
            regions += DEFAULT_PHONE_REGIONS
        elif item.startswith("-"):
            regions = [r for r in regions if r.upper() != item[1:].strip().upper()]
        elif item:
            regions.append(item.lstrip("+").strip())
    if not regions:
        raise OptionsError(f"{value!r} names no region")
    return tuple(regions)


def pseudonym_key_source(options) -> KeySource | None:
    """Where workers will read the pseudonym key, checked now so that a missing key fails at start.

    Only the reference (a variable's name, a file's path) goes into the job;
    the key itself never does.
    """
    if options.placeholder != PlaceholderStyle.PSEUDONYM:
        if options.pseudonym_key_file:
            raise OptionsError(
                f"--pseudonym-key-file is read only with --placeholder pseudonym, not with "
                f"--placeholder {options.placeholder}: add --placeholder pseudonym, or leave "
                f"the key file out")
        return None
    if options.pseudonym_key_file:
        source = KeySource(file=options.pseudonym_key_file)
        advice = (f"write one with: openssl rand -hex 32 > {options.pseudonym_key_file}")
    else:
        source = KeySource(env=options.pseudonym_key_env)
        advice = (f"for example: export {options.pseudonym_key_env}=$(openssl rand -hex 32), "
                  f"or use --pseudonym-key-file")
    try:
        source.load(read_secret_file)
    except SecretKeyError as error:
        raise OptionsError(
            f"--placeholder pseudonym needs a secret key of at least {MIN_KEY_CHARS} "
            f"characters in the {source.describe()} ({error}; {advice}). Keep it secret: "
            f"whoever holds it can test guesses against the pseudonyms. Workers read it "
            f"themselves, so it must be readable there too.") from error
    return source


# What most runs need, shown first in `larvatus run --help` (argument names, in order).
COMMON_OPTIONS = ("input", "output", "input_format", "text_field", "id_field", "model",
                  "redact_labels", "placeholder", "keep_text", "overwrite")


def resolve_keep_fields(value: str, text_field: str) -> tuple[str, ...]:
    """The `--keep-fields` names, refusing the text itself and the annotations' own columns."""
    from larvatus.schemas import column_names

    names = tuple(dict.fromkeys(name.strip() for name in value.split(",") if name.strip()))
    if text_field in names:
        raise OptionsError(f"--keep-fields cannot carry the text field {text_field!r}: the "
                           f"original text goes into the output only with --keep-text")
    taken = sorted(set(names) & set(column_names()))
    if taken:
        raise OptionsError(f"--keep-fields {', '.join(taken)}: the annotations have columns of "
                           f"that name already")
    return names


def help_text(prog: str = "larvatus run") -> str:
    """--help for the Larvatus options: the common ones first, each under one name (the
    underscore spellings are accepted but not shown), with a pointer to Beam's."""
    parser = job_parser(prog)
    parser.usage = "%(prog)s --input FILES --output FOLDER [options] [Beam options]"
    for action in parser._actions:  # pylint: disable=protected-access
        shown = [name for name in action.option_strings if "_" not in name]
        action.option_strings = shown or action.option_strings
    groups = parser._action_groups  # pylint: disable=protected-access
    common = parser.add_argument_group("Most used options")
    groups.remove(common)
    by_dest = {}
    for group in groups:
        by_dest.update({a.dest: a for a in group._group_actions if a.dest in COMMON_OPTIONS})
        group._group_actions[:] = [a for a in group._group_actions if a.dest not in COMMON_OPTIONS]
        if group.title == "Larvatus":
            group.title = "More options"
    common._group_actions[:] = [by_dest[dest] for dest in COMMON_OPTIONS]
    groups.insert(2, common)
    return parser.format_help()
