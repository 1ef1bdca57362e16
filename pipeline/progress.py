"""The progress of a running job: a tqdm bar on a terminal, plain lines in a log, read from the workers' side channel."""
from __future__ import annotations

import os
import shutil
import sys
import tempfile
import threading
import time
from dataclasses import dataclass
from typing import IO, Callable, Optional

from larvatus.transforms.progress import BYTES, DEAD_LETTERED, DOCUMENTS, FIELDS, RECORDS, WORDS, read_totals

BAR_REFRESH_SECONDS = 0.5
STARTING = "starting (Beam and the model are loading)"
BAR_STEPS = 1000
TERMINAL_STATES = ("DONE", "FAILED", "CANCELLED", "UPDATED", "DRAINED")


def human_bytes(size: float) -> str:
    for unit in ("B", "KiB", "MiB", "GiB", "TiB"):
        if size < 1024 or unit == "TiB":
            return f"{size:.0f} {unit}" if unit == "B" else f"{size:.1f} {unit}"
        size /= 1024
    return f"{size:.1f} TiB"


def human_seconds(seconds: float) -> str:
    seconds = int(round(seconds))
    if seconds < 60:
        return f"{seconds}s"
    if seconds < 3600:
        return f"{seconds // 60}m {seconds % 60:02d}s"
    return f"{seconds // 3600}h {seconds % 3600 // 60:02d}m"


@dataclass
class Snapshot:
    """Totals at one moment, with the rates and ETA they imply."""

    totals: dict
    seconds: float            # since the first document or byte was seen
    total_bytes: Optional[int]

    @property
    def words_per_second(self) -> float:
        return self.totals[WORDS] / self.seconds if self.seconds > 0 else 0.0

    @property
    def read_fraction(self) -> Optional[float]:
        if not self.total_bytes:
            return None
        return min(1.0, self.totals[BYTES] / self.total_bytes)

    @property
    def fraction(self) -> Optional[float]:
        """The job's share done: input bytes read x records read that are done (reading
        runs ahead of annotating, so bytes alone would say 100% early)."""
        read = self.read_fraction
        if read is None:
            return None
        records = self.totals.get(RECORDS, 0)
        done = min(1.0, self.totals[DOCUMENTS] / records) if records else 0.0
        return read * done

    @property
    def eta_seconds(self) -> Optional[float]:
        fraction = self.fraction
        if fraction is None or fraction <= 0 or self.seconds <= 0:
            return None
        return self.seconds * (1 - fraction) / fraction

    def counts_text(self) -> str:
        t = self.totals
        dead = f" ({t[DEAD_LETTERED]:,} dead-lettered)" if t[DEAD_LETTERED] else ""
        return f"{t[DOCUMENTS]:,} documents{dead}, {t[WORDS]:,} words"

    def line(self) -> str:
        if not any(self.totals.values()):
            return f"{STARTING}, no document done yet"
        parts = [self.counts_text()]
        if self.seconds > 0 and self.totals[WORDS]:
            parts.append(f"{self.words_per_second:,.0f} words/s")
        if self.fraction is not None:
            parts.append(f"{self.read_fraction:.0%} of {human_bytes(self.total_bytes)} read, "
                         f"{self.fraction:.0%} done")
        eta = self.eta_seconds
        if eta is not None and self.fraction < 1:
            parts.append(f"ETA {human_seconds(eta)}")
        return ", ".join(parts)


def terminal_columns(stream: IO) -> int:
    """The width of the terminal `stream` writes to; 0 when it is not a terminal, or one of
    unknown width (a pty with no size, where tqdm would draw nothing at all)."""
    try:
        if not stream.isatty():
            return 0
        return os.get_terminal_size(stream.fileno()).columns
    except (AttributeError, OSError, ValueError):
        return 0


@dataclass(frozen=True)
class ProgressSettings:
    """How the launcher shows progress: `bar` (tqdm), `lines` every `interval` seconds, or `off`."""

    mode: str = "off"
    interval: float = 5.0
    prog: str = "larvatus run"

    @staticmethod
    def choose(requested: str, quiet: bool, stream: IO = sys.stderr) -> str:
        """`auto` -> bar on a terminal, lines otherwise; off under -q unless asked for."""
        if requested != "auto":
            return requested
        if quiet:
            return "off"
        return "bar" if terminal_columns(stream) else "lines"

    def monitor(self, total_bytes: Optional[int], local: bool) -> Optional["ProgressMonitor"]:
        if self.mode == "off":
            return None
        return ProgressMonitor(self, total_bytes, local)


class ProgressMonitor:
    """Watches a running job from the launcher, in a thread, and shows its progress.

    On the DirectRunner (one process, or `--direct_running_mode multi_processing`)
    workers write running totals into `directory` (transforms/progress.py),
    because `Pipeline.run` returns only when the job is done and Beam's metrics
    are not readable before. On a runner whose `run` returns at once, `follow`
    reads Beam's counters from the result instead.
    """

    def __init__(self, settings: ProgressSettings, total_bytes: Optional[int], local: bool = True,
                 stream: IO = None):
        self.settings = settings
        self.total_bytes = total_bytes or None
        self.directory: Optional[str] = (
            tempfile.mkdtemp(prefix="larvatus-progress-") if local else None)
        self._stream = stream or sys.stderr
        self._source: Optional[Callable[[], dict]] = (
            (lambda: read_totals(self.directory)) if self.directory else None)
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._loop, name="larvatus-progress", daemon=True)
        self._first_seen: Optional[float] = None
        self._bar = None
        self._last: Optional[Snapshot] = None

    def follow(self, result) -> None:
        """Reads Beam's counters from a running job's result (runners whose run() returns early)."""
        from larvatus.summary import progress_counts

        if getattr(result, "state", None) in TERMINAL_STATES:
            return
        if self._source is None:
            self._source = lambda: progress_counts(result)

    def start(self) -> "ProgressMonitor":
        if self.settings.mode == "bar":
            from tqdm import tqdm

            if self.total_bytes:   # the bar is the share done, in thousandths
                self._bar = tqdm(total=BAR_STEPS, desc=self.settings.prog, file=self._stream,
                                 dynamic_ncols=True, mininterval=BAR_REFRESH_SECONDS, leave=True,
                                 bar_format="{desc}: {percentage:3.0f}%|{bar}| "
                                            "{elapsed}<{remaining}{postfix}")
            else:                  # size unknown: a running count of documents
                self._bar = tqdm(total=None, unit=" documents", desc=self.settings.prog,
                                 file=self._stream, dynamic_ncols=True,
                                 mininterval=BAR_REFRESH_SECONDS, leave=True)
        self._started = time.monotonic()
        self._thread.start()
        return self

    def snapshot(self) -> Snapshot:
        totals = self._source() if self._source else dict.fromkeys(FIELDS, 0)
        now = time.monotonic()
        if self._first_seen is None and (totals[DOCUMENTS] or totals[BYTES]):
            self._first_seen = now
        seconds = now - self._first_seen if self._first_seen is not None else 0.0
        self._last = Snapshot(totals, seconds, self.total_bytes)
        return self._last

    def _loop(self) -> None:
        wait = BAR_REFRESH_SECONDS if self._bar is not None else self.settings.interval
        while not self._stop.wait(wait):
            try:
                self._show(self.snapshot())
            except Exception:   # progress must never break the job
                pass

    def _show(self, snap: Snapshot) -> None:
        if self._bar is not None:
            target = (round(snap.fraction * BAR_STEPS) if snap.fraction is not None
                      else snap.totals[DOCUMENTS])
            self._bar.update(max(0, target - self._bar.n))
            self._bar.set_postfix_str(
                f"{snap.counts_text()}, {snap.words_per_second:,.0f} words/s"
                if any(snap.totals.values()) else STARTING, refresh=True)
        else:
            self._write(f"{self.settings.prog}: progress: {snap.line()}")

    def _write(self, text: str) -> None:
        from tqdm import tqdm

        tqdm.write(text, file=self._stream)

    def stop(self, failed: bool = False) -> Optional[Snapshot]:
        """Stops the thread, shows the final totals (unless the job failed), removes the folder."""
        self._stop.set()
        if self._thread.is_alive():
            self._thread.join()
        final = None
        if self._source is not None:
            final = self.snapshot()
        if self._bar is not None:
            if final is not None and not failed:
                self._show(final)
            self._bar.close()
        if final is not None and not failed:
            seconds = time.monotonic() - self._started
            rate = (f", {final.seconds:.1f} s of it on documents at "
                    f"{final.words_per_second:,.0f} words/s") if final.seconds > 0 else ""
            self._write(f"{self.settings.prog}: done: {final.counts_text()}; {seconds:.1f} s "
                        f"in all{rate}")
        if self.directory:
            shutil.rmtree(self.directory, ignore_errors=True)
        return final

    def __enter__(self) -> "ProgressMonitor":
        return self.start()

    def __exit__(self, exc_type, *rest) -> None:
        self.stop(failed=exc_type is not None)
