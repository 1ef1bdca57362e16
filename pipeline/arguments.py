"""Strict `larvatus run` options: an argument neither Larvatus nor Beam knows is an error that suggests the closest."""
from __future__ import annotations

import argparse
import os
import sys
from typing import NoReturn, Sequence

from larvatus.models.command_line import (  # noqa: F401  (the strict parser, shared with models' commands)
    ArgumentParser, UsageError, closest, option_strings, report_usage_error, unrecognized,
)

# Everything after a bare `--` on `larvatus run` goes to Beam unchecked: options of a
# runner that only its job server knows (Beam's `retain_unknown_options`).
UNCHECKED = "--"


def beam_parser() -> argparse.ArgumentParser:
    """Every option Beam knows: those of all PipelineOptions subclasses, as Beam collects them.

    Beam's own check (`PipelineOptions.get_all_options`) builds the same parser
    from `PipelineOptions.__subclasses__()` but only warns about leftovers
    ("Discarding unparseable args"); here they are errors. LarvatusOptions is one
    of those subclasses, so its options are included.
    """
    from apache_beam.options.pipeline_options import PipelineOptions, _BeamArgumentParser

    from larvatus.beam_options import LarvatusOptions  # noqa: F401  (one of the subclasses)

    class Strict(_BeamArgumentParser):
        def error(self, message: str) -> NoReturn:
            raise UsageError(message)

    parser = Strict(allow_abbrev=False, add_help=False, conflict_handler="resolve")
    seen = {}
    for cls in PipelineOptions.__subclasses__():
        seen.setdefault(str(cls), cls)
    for cls in seen.values():
        cls._add_argparse_args(parser)  # pylint: disable=protected-access
    return parser


def split_unchecked(argv: Sequence[str]) -> tuple[list[str], list[str]]:
    """(checked arguments, arguments after a bare `--` that go to Beam unchecked)."""
    argv = list(argv)
    if UNCHECKED in argv:
        at = argv.index(UNCHECKED)
        return argv[:at], argv[at + 1:]
    return argv, []


DASH_VALUED = ("--redact-labels", "--redact_labels")   # values that may start with "-"


def attach_dash_values(argv: Sequence[str]) -> list[str]:
    """`--redact-labels -PER` as `--redact-labels=-PER`: the documented `-LABEL` form would
    otherwise read as an option to argparse and Beam alike."""
    out: list[str] = []
    argv = list(argv)
    i = 0
    while i < len(argv):
        if argv[i] in DASH_VALUED and i + 1 < len(argv) and argv[i + 1].startswith("-") \
                and argv[i + 1][1:2].isalpha():
            out.append(f"{argv[i]}={argv[i + 1]}")
            i += 2
            continue
        out.append(argv[i])
        i += 1
    return out


def check_job_arguments(argv: Sequence[str], larvatus_parser: argparse.ArgumentParser) -> None:
    """Raises UsageError for an argument that is neither a Larvatus nor a Beam option.

    `larvatus_parser` holds the Larvatus options with their types and choices,
    so a bad value is reported with Larvatus's program name, before Beam sees it.
    """
    larvatus_known = option_strings(larvatus_parser)
    _, rest = larvatus_parser.parse_known_args(list(argv))
    beam = beam_parser()
    _, extras = beam.parse_known_args(rest)
    if extras:
        raise UsageError(unrecognized(extras, larvatus_known + option_strings(beam)))


INTERRUPTED = 130


def exit_with(status: int, hard: bool = False) -> NoReturn:
    """Ends a console script with `status`. After Ctrl-C (130) Beam's worker threads may
    still be unwinding and re-raise the interrupt at shutdown; the run's temporary files
    are gone already, so the process leaves at once. `hard` leaves at once too, for the
    read-only commands (show, report): native threads of the libraries they load (gRPC,
    Arrow) can abort the interpreter's shutdown ("terminate called without an active
    exception", exit 134) after everything was printed."""
    if status == INTERRUPTED or hard:
        sys.stdout.flush()
        sys.stderr.flush()
        os._exit(status)
    sys.exit(status)
