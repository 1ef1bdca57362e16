"""Strict command-line parsing: unknown arguments are errors that suggest the closest option."""
from __future__ import annotations

import argparse
import difflib
import sys
from typing import Iterable, NoReturn, Optional, Sequence

# Everything after a bare `--` on `larvatus run` goes to Beam unchecked: options of a
# runner that only its job server knows (Beam's `retain_unknown_options`).
UNCHECKED = "--"


class UsageError(ValueError):
    """A command line that cannot run: printed as `PROG: error: ...`, exit status 2."""


def closest(name: str, candidates: Iterable[str]) -> Optional[str]:
    """The candidate closest to `name`, if any is close (difflib), dashes and underscores alike."""
    normal: dict[str, str] = {}
    for candidate in sorted(set(candidates)):   # "--a-b" sorts before "--a_b": dashes win
        normal.setdefault(candidate.replace("_", "-"), candidate)
    match = difflib.get_close_matches(name.replace("_", "-"), list(normal), n=1, cutoff=0.6)
    return normal[match[0]] if match else None


def unrecognized(extras: Sequence[str], known: Iterable[str]) -> str:
    """`unrecognized argument X (did you mean Y?)` for the first of `extras` (argparse leftovers)."""
    known = list(known)
    options = [a for a in extras if a.startswith("-") and a not in ("-", "--")]
    if not options:
        return (f"unrecognized argument {extras[0]!r} (options take the form --name VALUE; "
                f"a value with spaces needs quotes)")
    name = options[0].split("=", 1)[0]
    suggestion = closest(name, known)
    hint = f" (did you mean {suggestion}?)" if suggestion else ""
    more = f"; also {' '.join(options[1:])}" if len(options) > 1 else ""
    return f"unrecognized argument {name}{hint}{more}"


def option_strings(parser: argparse.ArgumentParser) -> list[str]:
    return [s for action in parser._actions for s in action.option_strings]


class ArgumentParser(argparse.ArgumentParser):
    """argparse with `PROG: error: ...` messages, suggestions for misspelt options, no abbreviations.

    Raises UsageError instead of exiting, so that a caller decides how to report it;
    `main` functions print it and return 2 (`report_usage_error`).
    """

    def __init__(self, *args, **kwargs):
        kwargs.setdefault("allow_abbrev", False)
        kwargs.setdefault("formatter_class", argparse.RawDescriptionHelpFormatter)
        super().__init__(*args, **kwargs)

    def parse_args(self, args=None, namespace=None):
        parsed, extras = self.parse_known_args(args, namespace)
        if extras:
            self.error(unrecognized(extras, option_strings(self)))
        return parsed

    def error(self, message: str) -> NoReturn:
        raise UsageError(message)


def report_usage_error(prog: str, error: Exception, hint: str = "") -> int:
    """Prints `PROG: error: MESSAGE` (and a hint) to stderr; returns exit status 2."""
    print(f"{prog}: error: {error}", file=sys.stderr)
    if hint:
        print(hint, file=sys.stderr)
    return 2


def beam_parser() -> argparse.ArgumentParser:
    """Every option Beam knows: those of all PipelineOptions subclasses, as Beam collects them.

    Beam's own check (`PipelineOptions.get_all_options`) builds the same parser
    from `PipelineOptions.__subclasses__()` but only warns about leftovers
    ("Discarding unparseable args"); here they are errors. LarvatusOptions is one
    of those subclasses, so its options are included.
    """
    from apache_beam.options.pipeline_options import PipelineOptions, _BeamArgumentParser

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
