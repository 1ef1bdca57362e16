"""Strict argparse for every larvatus command: unknown or misspelt options are errors that suggest the closest."""
from __future__ import annotations

import argparse
import difflib
import os
import sys
from typing import Iterable, NoReturn, Optional, Sequence


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
    options = [a for a in extras if looks_like_option(a)]
    if not options:
        return (f"unrecognized argument {extras[0]!r} (options take the form --name VALUE; "
                f"a value with spaces needs quotes)")
    name = options[0].split("=", 1)[0]
    suggestion = closest(name, known)
    hint = f" (did you mean {suggestion}?)" if suggestion else ""
    more = f"; also {' '.join(options[1:])}" if len(options) > 1 else ""
    return f"unrecognized argument {name}{hint}{more}"


def looks_like_option(argument: str) -> bool:
    """Whether argparse would take `argument` for an option (not `-`, `--` or a negative number)."""
    if not argument.startswith("-") or argument in ("-", "--"):
        return False
    try:
        float(argument)
        return False
    except ValueError:
        return True


def option_strings(parser: argparse.ArgumentParser) -> list[str]:
    return [s for action in parser._actions for s in action.option_strings]


class ArgumentParser(argparse.ArgumentParser):
    """argparse with `PROG: error: ...` messages, suggestions for misspelt options, no abbreviations.

    Raises UsageError instead of exiting, so that a caller decides how to report it;
    `main` functions print it and return 2 (`report_usage_error`). A misspelt option
    is reported before a missing required one (`--modle x` says "did you mean --model",
    not "--model is required").
    """

    def __init__(self, *args, **kwargs):
        kwargs.setdefault("allow_abbrev", False)
        kwargs.setdefault("formatter_class", argparse.RawDescriptionHelpFormatter)
        super().__init__(*args, **kwargs)

    def parse_args(self, args=None, namespace=None):
        args = list(sys.argv[1:] if args is None else args)
        try:
            parsed, extras = self.parse_known_args(args, namespace)
        except UsageError:
            known = set(option_strings(self))
            unknown = [a for a in args if looks_like_option(a) and a.split("=", 1)[0] not in known]
            if unknown:
                self.error(unrecognized(unknown, known))
            raise
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


def parse_or_report(parser: argparse.ArgumentParser, argv: Optional[Sequence[str]]):
    """(the parsed arguments, None), or (None, exit status 2) after printing the usage error."""
    try:
        return parser.parse_args(list(sys.argv[1:] if argv is None else argv)), None
    except UsageError as error:
        return None, report_usage_error(parser.prog, error, f"See '{parser.prog} --help'.")


def existing_file(path: str) -> str:
    """argparse type: a file that exists (checked before anything loads)."""
    if not os.path.isfile(path):
        raise argparse.ArgumentTypeError(
            f"{path!r} is a folder, not a file" if os.path.isdir(path) else f"no file {path!r}")
    return path


def existing_dir(path: str) -> str:
    """argparse type: a folder that exists (checked before anything loads)."""
    if not os.path.isdir(path):
        raise argparse.ArgumentTypeError(
            f"{path!r} is a file, not a folder" if os.path.exists(path) else f"no folder {path!r}")
    return path
