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
# A rate needs this long a span of documents flowing; an ETA needs as long a span and this
# share of the job done within it (before, the model's start-up would stretch it absurdly).
MIN_RATE_SECONDS = 1.0
MIN_ETA_SECONDS = 5.0
MIN_ETA_PROGRESS = 0.05
# In a log, a line whose totals have not moved is repeated only this often.
REPEAT_UNCHANGED_SECONDS = 60.0


def plural(count: int, noun: str) -> str:
    """`1 document`, `2 documents`, `1,234 words`."""
    return f"{count:,} {noun}" + ("" if count == 1 else "s")


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


@dataclass(frozen=True)
class Snapshot:
    """Totals at one moment, with the rate and ETA they imply.

    The clock starts when the first finished document is seen (`seconds` since then;
    0 before), not at the first byte read: the model loads on the workers in between,
    and a rate or ETA over that wait says nothing about the rest of the job. The
    share done and the words at that moment are kept, so that both are measured on
    what was done while the clock ran.
    """

    totals: dict
    seconds: float
    total_bytes: Optional[int]
    done_at_start: float = 0.0
    words_at_start: int = 0

    @property
    def words_per_second(self) -> Optional[float]:
        """Words a second while the clock ran; None until it has run MIN_RATE_SECONDS."""
        gained = self.totals[WORDS] - self.words_at_start
        if self.seconds < MIN_RATE_SECONDS or gained <= 0:
            return None
        return gained / self.seconds

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
        """Seconds left at the pace since the clock started; None until that pace rests on
        MIN_ETA_SECONDS and MIN_ETA_PROGRESS of the job."""
        fraction = self.fraction
        if fraction is None or fraction >= 1:
            return None
        gained = fraction - self.done_at_start
        if self.seconds < MIN_ETA_SECONDS or gained < MIN_ETA_PROGRESS:
            return None
        return self.seconds * (1 - fraction) / gained

    def counts_text(self) -> str:
        t = self.totals
        dead = f" ({t[DEAD_LETTERED]:,} dead-lettered)" if t[DEAD_LETTERED] else ""
        return f"{plural(t[DOCUMENTS], 'document')}{dead}, {plural(t[WORDS], 'word')}"

    def rate_text(self) -> str:
        rate = self.words_per_second
        return "" if rate is None else f"{rate:,.0f} words/s"

    def line(self) -> str:
        if not any(self.totals.values()):
            return f"{STARTING}, no document done yet"
        read = (f"{self.read_fraction:.0%} of {human_bytes(self.total_bytes)} read"
                if self.read_fraction is not None else "")
        if not self.totals[DOCUMENTS]:
            return ", ".join(filter(None, ["no document done yet", read]))
        parts = [self.counts_text(), self.rate_text()]
        if self.fraction is not None:
            parts.append(f"{read}, {self.fraction:.0%} done")
        eta = self.eta_seconds
        if eta is not None:
            parts.append(f"ETA {human_seconds(eta)}")
        return ", ".join(filter(None, parts))


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
                 stream: IO = None, clock: Callable[[], float] = time.monotonic):
        self.settings = settings
        self.total_bytes = total_bytes or None
        self.directory: Optional[str] = (
            tempfile.mkdtemp(prefix="larvatus-progress-") if local else None)
        self._stream = stream or sys.stderr
        self._source: Optional[Callable[[], dict]] = (
            (lambda: read_totals(self.directory)) if self.directory else None)
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._loop, name="larvatus-progress", daemon=True)
        self._clock = clock
        self._first_seen: Optional[float] = None      # when a finished document was first seen
        self._at_first_seen: tuple[float, int] = (0.0, 0)   # (share done, words) then
        self._bar = None
        self._last: Optional[Snapshot] = None
        self._last_written: Optional[tuple[dict, float]] = None   # (totals, when), lines mode

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
                # tqdm's own {remaining} would count the model's start-up: ETA in the postfix
                self._bar = tqdm(total=BAR_STEPS, desc=self.settings.prog, file=self._stream,
                                 dynamic_ncols=True, mininterval=BAR_REFRESH_SECONDS, leave=True,
                                 bar_format="{desc}: {percentage:3.0f}%|{bar}| "
                                            "{elapsed}{postfix}")
            else:                  # size unknown: a running count of documents
                self._bar = tqdm(total=None, unit=" documents", desc=self.settings.prog,
                                 file=self._stream, dynamic_ncols=True,
                                 mininterval=BAR_REFRESH_SECONDS, leave=True)
        self._started = self._clock()
        self._thread.start()
        return self

    def snapshot(self) -> Snapshot:
        totals = self._source() if self._source else dict.fromkeys(FIELDS, 0)
        now = self._clock()
        if self._first_seen is None and totals[DOCUMENTS]:
            self._first_seen = now
            self._at_first_seen = (Snapshot(totals, 0.0, self.total_bytes).fraction or 0.0,
                                   totals[WORDS])
        seconds = now - self._first_seen if self._first_seen is not None else 0.0
        done, words = self._at_first_seen
        self._last = Snapshot(totals, seconds, self.total_bytes, done, words)
        return self._last

    def _loop(self) -> None:
        wait = BAR_REFRESH_SECONDS if self._bar is not None else self.settings.interval
        while not self._stop.wait(wait):
            self.tick()

    def tick(self) -> None:
        """Takes a snapshot and shows it (the thread's step; never raises)."""
        try:
            self._show(self.snapshot())
        except Exception:   # progress must never break the job
            pass

    def _show(self, snap: Snapshot, final: bool = False) -> None:
        if self._bar is not None:
            target = (round(snap.fraction * BAR_STEPS) if snap.fraction is not None
                      else snap.totals[DOCUMENTS])
            self._bar.update(max(0, target - self._bar.n))
            eta = snap.eta_seconds
            postfix = ", ".join(filter(None, [
                snap.counts_text(), snap.rate_text(),
                f"ETA {human_seconds(eta)}" if eta is not None and not final else ""]))
            self._bar.set_postfix_str(postfix if any(snap.totals.values()) else STARTING,
                                      refresh=True)
            return
        now = self._clock()
        if self._last_written is not None:
            totals, when = self._last_written
            if totals == snap.totals and now - when < REPEAT_UNCHANGED_SECONDS:
                return      # nothing moved: no second identical line
        self._last_written = (dict(snap.totals), now)
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
                self._show(final, final=True)
            self._bar.close()
        if final is not None and not failed:
            self._write(f"{self.settings.prog}: done: {self.done_text(final)}")
        if self.directory:
            shutil.rmtree(self.directory, ignore_errors=True)
        return final

    def done_text(self, final: Snapshot) -> str:
        """The closing line's counts and times; a rate only where one was measured (documents
        seen flowing for MIN_RATE_SECONDS before the end), never one over an instant."""
        seconds = self._clock() - self._started
        text = f"{final.counts_text()}; {seconds:.1f} s in all"
        rate = final.words_per_second
        if rate is not None:
            text += (f", {final.seconds:.1f} s of it from the first document done, at "
                     f"{rate:,.0f} words/s")
        return text

    def __enter__(self) -> "ProgressMonitor":
        return self.start()

    def __exit__(self, exc_type, *rest) -> None:
        self.stop(failed=exc_type is not None)
