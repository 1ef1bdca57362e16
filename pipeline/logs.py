"""Command-line logging: one handler that names the program, -v/-q levels, Beam's noise kept out."""
from __future__ import annotations

import contextlib
import json
import logging
import re
import sys
from typing import Iterator, Optional, Sequence

# Loggers of Larvatus's own code; everything else (Beam, gRPC, ONNX Runtime) is "theirs".
OUR_LOGGERS = ("larvatus", "pipeline", "models", "transforms")
# verbosity -> (our level, their level) in the launcher; worker processes (WORKER_LEVELS)
# print to the same terminal in their own format, so they keep quieter at the default.
LEVELS = {
    -1: (logging.WARNING, logging.ERROR),
    0: (logging.INFO, logging.ERROR),
    1: (logging.DEBUG, logging.WARNING),
    2: (logging.DEBUG, logging.INFO),
}
WORKER_LEVELS = {
    -1: ("WARNING", "ERROR"),
    0: ("WARNING", "ERROR"),
    1: ("DEBUG", "WARNING"),
    2: ("DEBUG", "INFO"),
}
HARNESS_OPTIONS = ("--default_sdk_harness_log_level", "--sdk_harness_log_level_overrides")
# Records that say nothing about a Larvatus job: (logger name, message prefix).
NOISE = (
    # Printed at `import apache_beam` through the root logger, --help included.
    ("root", "apitools not found"),
)


class BeamNoiseFilter(logging.Filter):
    """Drops the records listed in NOISE."""

    def filter(self, record: logging.LogRecord) -> bool:
        for name, prefix in NOISE:
            if record.name == name and str(record.msg).startswith(prefix):
                return False
        return True


def install_noise_filter() -> None:
    """Puts BeamNoiseFilter on the root logger (once); run before Beam is imported."""
    root = logging.getLogger()
    if not any(isinstance(f, BeamNoiseFilter) for f in root.filters):
        root.addFilter(BeamNoiseFilter())


class CliHandler(logging.Handler):
    """Writes `PROG: [level: ][logger: ]message` to stderr."""

    def __init__(self, prog: str):
        super().__init__()
        self.prog = prog
        self.addFilter(BeamNoiseFilter())

    def format(self, record: logging.LogRecord) -> str:
        message = record.getMessage()
        if record.exc_info and record.levelno >= logging.ERROR:
            message += "\n" + logging.Formatter().formatException(record.exc_info)
        ours = record.name.split(".")[0] in OUR_LOGGERS
        where = "" if ours else f"{record.name}: "
        level = "" if record.levelno == logging.INFO and ours else f"{record.levelname.lower()}: "
        return f"{self.prog}: {level}{where}{message}"

    def emit(self, record: logging.LogRecord) -> None:
        try:
            text = self.format(record)
            tqdm = _live_progress_bar()
            if tqdm is not None:   # clear the bar, write the line, draw the bar again
                tqdm.write(text, file=sys.stderr)
            else:
                sys.stderr.write(text + "\n")
                sys.stderr.flush()
        except Exception:   # never let logging break the job
            self.handleError(record)


def _live_progress_bar():
    """tqdm's class while a bar is drawn in this process (pipeline/progress.py), else None.

    Looked up without importing tqdm, so that logging costs nothing when no bar is shown.
    """
    module = sys.modules.get("tqdm")
    tqdm = getattr(module, "tqdm", None)
    return tqdm if tqdm is not None and getattr(tqdm, "_instances", None) else None


def configure(prog: str, verbosity: int = 0) -> None:
    """Replaces whatever configured the root logger (Beam calls basicConfig at import).

    verbosity -1 (-q): warnings and errors of Larvatus, errors of libraries;
    0: Larvatus's info lines, library errors; 1 (-v): Larvatus debug, library
    warnings; 2 (-vv): library info too.
    """
    ours, theirs = LEVELS[max(-1, min(2, verbosity))]
    root = logging.getLogger()
    for handler in list(root.handlers):
        root.removeHandler(handler)
    root.addHandler(CliHandler(prog))
    root.setLevel(theirs)
    for name in OUR_LOGGERS:
        logging.getLogger(name).setLevel(ours)
    install_noise_filter()


# A worker's own failure inside Beam's report: "ModelError: on worker HOST: ...".
_WORKER_ERROR_RE = re.compile(r"\b([A-Z]\w*Error): (on worker [^\n]+)")


def worker_error(records: Sequence[logging.LogRecord]) -> Optional[str]:
    """The first "XError: on worker HOST: ..." line in held library records (a message or its
    traceback), for the one-line failure of a job whose runner only says it failed."""
    for record in records:
        text = record.getMessage()
        if record.exc_info and record.exc_info[1] is not None:
            text += "\n" + str(record.exc_info[1])
        found = _WORKER_ERROR_RE.search(text)
        if found:
            return f"{found.group(1)}: {found.group(2)}"
    return None


@contextlib.contextmanager
def library_errors_held(show_on_failure: bool) -> Iterator[list[logging.LogRecord]]:
    """Holds the error records of libraries (Beam's report of a failed bundle, with its
    traceback) while a job runs: if the job fails, the command says why in one line and
    they are dropped unless `show_on_failure` (-v); if it finishes, they are printed then.
    Yields the held records (`worker_error` reads a worker's failure from them)."""
    held: list[logging.LogRecord] = []

    class Hold(logging.Filter):
        def filter(self, record: logging.LogRecord) -> bool:
            if record.levelno < logging.ERROR or record.name.split(".")[0] in OUR_LOGGERS:
                return True
            held.append(record)
            return False

    handlers = [h for h in logging.getLogger().handlers if isinstance(h, CliHandler)]
    hold = Hold()
    for handler in handlers:
        handler.addFilter(hold)
    failed = True
    try:
        yield held
        failed = False
    finally:
        for handler in handlers:
            handler.removeFilter(hold)
        if show_on_failure or not failed:
            for record in held:
                for handler in handlers:
                    handler.handle(record)


def worker_log_options(verbosity: int, argv: Sequence[str], local: bool) -> list[str]:
    """Beam options giving the SDK worker processes of a local run the launcher's -v/-q.

    The DirectRunner's multi_processing workers write to the launcher's terminal, at
    INFO by default (a dozen harness lines per worker, Beam's "Discarding unparseable
    args" included); these options quiet them once each worker has read its options.
    Remote runners' workers log elsewhere (Cloud Logging, ...) and are left as they are,
    and so is a run whose command line sets either option itself.
    """
    if not local or any(a.split("=", 1)[0] in HARNESS_OPTIONS for a in argv):
        return []
    ours, theirs = WORKER_LEVELS[max(-1, min(2, verbosity))]
    return [f"--default_sdk_harness_log_level={theirs}",
            f"--sdk_harness_log_level_overrides={json.dumps(dict.fromkeys(OUR_LOGGERS, ours))}"]
