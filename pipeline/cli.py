"""The `larvatus` command: run, show, report, evaluate, export and train behind one program name."""
from __future__ import annotations

import importlib
import sys
from importlib import metadata
from typing import Optional, Sequence

from larvatus.arguments import closest, exit_with, report_usage_error
from larvatus.pipes import guard_standard_streams, stdout_reader_left

PROG = "larvatus"
# command -> (module whose main(argv, prog) runs it, one line for the command list)
COMMANDS = {
    "run": ("larvatus.run", "annotate and redact a corpus (an Apache Beam job)"),
    "show": ("larvatus.show", "print a finished job's counts and a few redacted examples"),
    "estimate": ("larvatus.estimate", "estimate what gets through on your corpus, by planting known items"),
    "report": ("larvatus.report", "write a finished job's HTML report"),
    "evaluate": ("larvatus.models.evaluate", "score a model directory on CoNLL data"),
    "export": ("larvatus.models.export", "turn a Hugging Face NER checkpoint into a --model directory"),
    "train": ("larvatus.models.train", "fine-tune an encoder on CoNLL data (needs the train extra)"),
}
EXAMPLES = """examples:
  larvatus run --input 'corpus/*.jsonl' --output out/
  larvatus show out/
  larvatus report out/            # writes out/report.html
  larvatus export --checkpoint my-hf-ner/ --output my-model/ --precision int8 --optimize
  larvatus run --input 'corpus/*.jsonl' --output out2/ --model my-model/

'larvatus COMMAND --help' explains each command."""


def version() -> str:
    """`larvatus X.Y.Z (...)` from the installed packages' metadata (nothing imported)."""
    def of(name: str) -> str:
        try:
            return metadata.version(name)
        except metadata.PackageNotFoundError:
            return "not installed"

    runtime = "onnxruntime-gpu" if of("onnxruntime-gpu") != "not installed" else "onnxruntime"
    return (f"{PROG} {of('larvatus')} (apache-beam {of('apache-beam')}, {runtime} "
            f"{of(runtime)}, spacy {of('spacy')}, python {sys.version.split()[0]})")


def usage() -> str:
    width = max(map(len, COMMANDS))
    commands = "\n".join(f"  {name:<{width}}  {line}" for name, (_, line) in COMMANDS.items())
    return (f"usage: {PROG} [-h] [-V] COMMAND [ARGS...]\n\n"
            f"Annotate and anonymize text corpora: BERT NER on ONNX Runtime, on Apache Beam.\n\n"
            f"commands:\n{commands}\n\n"
            f"options:\n  -h, --help     show this help and exit\n"
            f"  -V, --version  show the version and exit\n\n{EXAMPLES}")


# Message options a command takes; before the command (`larvatus -v run ...`) they are
# handed to it as if written after it.
MESSAGE_OPTIONS = ("-q", "--quiet", "--verbose")


def _leading_message_options(argv: list[str]) -> tuple[list[str], list[str]]:
    """(-v, -vv, -q... written before the command, the rest of the command line)."""
    leading = []
    while argv and (argv[0] in MESSAGE_OPTIONS
                    or (argv[0].startswith("-v") and set(argv[0][1:]) == {"v"})):
        leading.append(argv[0])
        argv = argv[1:]
    return leading, argv


def main(argv: Optional[Sequence[str]] = None) -> int:
    """Dispatches `larvatus COMMAND ARGS...` to the command's own main; returns the exit status."""
    argv = list(sys.argv[1:] if argv is None else argv)
    if not argv:
        print(usage(), file=sys.stderr)
        return 2
    leading, argv = _leading_message_options(argv)
    if not argv:
        print(usage(), file=sys.stderr)
        return 2
    first, rest = argv[0], [*leading, *argv[1:]]
    if first == "help" and rest and rest[0] in COMMANDS:   # `larvatus help run`
        first, rest = rest[0], ["--help"]
    if first in ("-h", "--help", "help"):
        print(usage())
        return 0
    if first in ("-V", "--version"):
        print(version())
        return 0
    if first not in COMMANDS:
        suggestion = closest(first, COMMANDS) if not first.startswith("-") else None
        kind = "option" if first.startswith("-") else "command"
        hint = f" (did you mean '{suggestion}'?)" if suggestion else ""
        return report_usage_error(
            PROG, f"unknown {kind} {first!r}{hint}",
            f"Commands: {', '.join(COMMANDS)}. See '{PROG} --help'.")
    module = importlib.import_module(COMMANDS[first][0])
    try:
        return module.main(rest, prog=f"{PROG} {first}")
    except BrokenPipeError:   # `larvatus run --help-beam | head`: stdout's reader has left
        stdout_reader_left()
        return 0


READ_ONLY_COMMANDS = ("show", "report")   # they leave at once when done (see exit_with)


def console_main() -> None:
    """The `larvatus` console script."""
    guard_standard_streams()   # `larvatus show OUT | head -5`: a reader may stop early
    status = main()
    exit_with(status, hard=len(sys.argv) > 1 and sys.argv[1] in READ_ONLY_COMMANDS)


if __name__ == "__main__":
    console_main()
