"""The annotation settings from `larvatus run`'s options or the Redactor's keywords: one builder, one set of checks."""
from __future__ import annotations

import logging
import os
from typing import Iterable, Optional, Union

from larvatus.key_files import read_secret_file
from larvatus.models.handler import OnnxTokenClassifier, missing_hidden_states
from larvatus.models.model_dir import ModelError, load_model_spec
from larvatus.options import (
    OptionsError, pseudonym_key_source, resolve_phone_regions, resolve_redact_labels,
)
from larvatus.transforms.budget import check_record_timeout
from larvatus.transforms.labels import name_roles
from larvatus.transforms.encode import default_overlap
from larvatus.transforms.mlout import EmbeddingSettings, MlSettings, tokenizer_with_placeholders
from larvatus.transforms.realign import RedactionDecision
from larvatus.transforms.recognizers import PatternSettings, pattern_labels
from larvatus.transforms.redact import RedactionPolicy
from larvatus.transforms.settings import AnnotationSettings

LOG = logging.getLogger("larvatus")

# A term list: a UTF-8 file, one term a line (the command line), or the terms themselves (the API).
TermSource = Union[None, str, "os.PathLike[str]", Iterable[str]]


def option_error(option: str, error: ValueError) -> OptionsError:
    return OptionsError(f"{option}: {error}")


def settings_from_options(options) -> AnnotationSettings:
    """The model and the settings of every annotation stage, checked, from an option namespace
    (`larvatus run`'s parsed options, or the Redactor's keywords parsed by the same parser):
    a bad value raises OptionsError naming its option, a bad model ModelError."""
    spec = load_model_spec(options.model)
    labels = resolve_redact_labels(options.redact_labels, spec.scheme.entity_types,
                                   getattr(options, "profile", "default"))
    if not labels:
        LOG.warning("--redact-labels none: the output is NOT redacted; it carries every name "
                    "and identifier of the input")
    window_length = spec.max_length if options.window_length is None else options.window_length
    overlap = default_overlap(window_length) if options.window_overlap is None \
        else options.window_overlap
    try:
        encode_settings = spec.encode_settings(spec.load_tokenizer(), overlap, window_length)
    except ValueError as error:
        raise option_error("--window-length/--window-overlap", error) from error
    if options.max_chars < 1:
        raise OptionsError("--max-chars must be positive")
    try:
        record_timeout = check_record_timeout(options.record_timeout)
    except ValueError as error:
        raise option_error("--record-timeout", error) from error
    model_types = labels & set(spec.scheme.entity_types)
    try:
        label_thresholds = parse_label_thresholds(options.label_thresholds, model_types)
        decision = RedactionDecision(model_types, options.redact_threshold,
                                     label_thresholds) if model_types else None
    except ValueError as error:
        raise option_error("--redact-threshold/--label-thresholds", error) from error
    keep_terms = read_terms(options.keep_terms, "--keep-terms")
    always_redact = read_labelled_terms(options.always_redact)
    try:
        policy = RedactionPolicy(
            # A label with its own threshold is redacted by the decision, not by name.
            labels=labels - {label for label, _ in label_thresholds}, style=options.placeholder,
            key_source=pseudonym_key_source(options), propagate=options.propagate,
            keep_terms=keep_terms, always_redact=always_redact,
            name_roles=name_roles(spec.scheme))
    except ValueError as error:
        raise option_error("--placeholder", error) from error
    try:
        patterns = PatternSettings(labels=labels & set(pattern_labels()),
                                   phone_regions=resolve_phone_regions(options.phone_regions))
    except ValueError as error:
        raise option_error("--phone-regions", error) from error
    settings = AnnotationSettings(
        spec=spec, device=options.device, batch_tokens=options.batch_tokens,
        intra_op_threads=options.intra_op_threads, encode_settings=encode_settings,
        aggregation=options.aggregation, policy=policy, keep_text=options.keep_text,
        patterns=patterns, decision=decision, record_timeout=record_timeout,
        max_chars=options.max_chars, ml=ml_settings(options, spec))
    try:
        classifier(settings)
    except ValueError as error:
        if isinstance(error, (OptionsError, ModelError)):
            raise
        raise option_error("--batch-tokens/--intra-op-threads", error) from error
    return settings


def classifier(settings: AnnotationSettings, processes_per_machine: int = 1) -> OnnxTokenClassifier:
    """The model runner the settings ask for (Beam-free; the Beam graph wraps the same class)."""
    return OnnxTokenClassifier(
        settings.spec, device=settings.device, batch_tokens=settings.batch_tokens,
        intra_op_threads=settings.intra_op_threads, processes_per_machine=processes_per_machine,
        embedding_layer=settings.embedding_layer)


def parse_label_thresholds(value, model_types: set[str]) -> tuple[tuple[str, float], ...]:
    """'ORG=0.3,PER=0.02' (or a {label: threshold} mapping) as (label, threshold) pairs; a
    label must be a redacted model type."""
    if isinstance(value, dict):
        value = ",".join(f"{label}={threshold}" for label, threshold in value.items())
    pairs = []
    for part in filter(None, (p.strip() for p in (value or "").split(","))):
        label, sep, number = part.partition("=")
        label = label.strip().upper()
        if not sep or label not in model_types:
            raise ValueError(f"{part!r}: write LABEL=THRESHOLD with LABEL one of the redacted "
                             f"model types {sorted(model_types)}")
        try:
            pairs.append((label, float(number)))
        except ValueError:
            raise ValueError(f"{part!r}: the threshold is not a number") from None
    return tuple(pairs)


def _term_lines(source: TermSource, option: str) -> list[str]:
    if not source:
        return []
    if isinstance(source, (str, os.PathLike)):
        try:
            with open(source, encoding="utf-8") as handle:
                lines = handle.read().splitlines()
        except (OSError, UnicodeDecodeError) as error:
            raise OptionsError(f"{option}: cannot read {os.fspath(source)}: "
                               f"{type(error).__name__}") from error
    else:
        lines = list(source)
        if not all(isinstance(line, str) for line in lines):
            raise OptionsError(f"{option}: give a file's path or a list of strings")
    return [line.strip() for line in lines if line.strip() and not line.lstrip().startswith("#")]


def read_terms(source: TermSource, option: str) -> tuple[str, ...]:
    """The words or phrases of a term list, one a line."""
    return tuple(_term_lines(source, option))


def read_labelled_terms(source: TermSource) -> tuple[tuple[str, str], ...]:
    """(term, label) pairs of an --always-redact list: 'LABEL<TAB>term' or a bare term (TERM)."""
    pairs = []
    for line in _term_lines(source, "--always-redact"):
        label, tab, term = line.partition("\t")
        pairs.append((term.strip(), label.strip().upper() or "TERM") if tab else (line, "TERM"))
    return tuple(pairs)


def ml_settings(options, spec) -> Optional[MlSettings]:
    """--emit-token-ids and --emit-embeddings as settings (None when neither is asked for).

    Placeholder tokens cover every label that can be redacted (the model's types and the
    pattern labels), whatever --redact-labels says, so their ids do not change between runs.
    """
    if not options.emit_token_ids and not options.emit_embeddings:
        return None
    placeholders = ()
    if options.emit_token_ids:
        _, ids = tokenizer_with_placeholders(
            spec.load_tokenizer(), [*spec.scheme.entity_types, *pattern_labels()])
        placeholders = tuple(sorted(ids.items()))
    embeddings = None
    if options.emit_embeddings:
        embeddings = EmbeddingSettings(options.embedding_layer, options.embedding_pooling)
        if embeddings.layer not in spec.hidden_outputs:
            raise ModelError(missing_hidden_states(spec, embeddings.layer))
    return MlSettings(placeholders, embeddings)


__all__ = ["AnnotationSettings", "settings_from_options", "classifier", "read_secret_file",
           "parse_label_thresholds", "read_terms", "read_labelled_terms", "ml_settings"]
