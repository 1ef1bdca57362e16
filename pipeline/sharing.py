"""--share-model: one machine's cores as worker processes around one shared model copy (DirectRunner)."""
from __future__ import annotations

from dataclasses import dataclass
from typing import Optional, Sequence

SHARE_CHOICES = ("auto", "on", "off")
DIRECT_RUNNERS = ("DirectRunner", "BundleBasedDirectRunner", "SwitchingDirectRunner",
                  "FnApiRunner", "TestDirectRunner")


class SharingError(ValueError):
    """--share-model cannot apply to the options given; the message says what to change."""


@dataclass(frozen=True)
class Sharing:
    """What --share-model adds: Beam arguments, and how many worker processes they start."""

    arguments: tuple[str, ...] = ()
    workers: int = 1

    @property
    def active(self) -> bool:
        return bool(self.arguments) or self.workers > 1


def given(argv: Sequence[str], *names: str) -> Optional[str]:
    """The value of the last of `names` in argv (`--name value` or `--name=value`), None if absent.

    A flag without a value (`--large_model`) gives an empty string.
    """
    found = None
    for index, argument in enumerate(argv):
        name, equals, value = argument.partition("=")
        if name not in names:
            continue
        if equals:
            found = value
        elif index + 1 < len(argv) and not argv[index + 1].startswith("--"):
            found = argv[index + 1]
        else:
            found = ""
    return found


def _runner_name(argv: Sequence[str]) -> str:
    runner = given(argv, "--runner") or "DirectRunner"
    return runner.rsplit(".", 1)[-1]


def plan_sharing(argv: Sequence[str], mode: str, device: str, cores: int) -> Sharing:
    """The worker processes and model sharing for --share-model MODE on a machine with `cores`.

    on: the DirectRunner runs `multi_processing` workers, one per core unless
    --direct_num_workers says otherwise, and the model is loaded once per
    machine and shared by all of them (Beam RunInference's model_copies=1)
    unless --model-copies or --large-model says otherwise. auto: on when
    `device` (where the launcher's model check ran it) is cuda (the GPU needs
    one model while the CPU stages need every core), off otherwise. A runner other than the DirectRunner, or
    --direct_running_mode other than multi_processing, turns auto off and
    makes on an error: those runners size their own workers.
    """
    if mode not in SHARE_CHOICES:
        raise SharingError(f"--share-model must be one of {SHARE_CHOICES}, not {mode!r}")
    if mode == "off" or (mode == "auto" and device != "cuda"):
        return Sharing()
    runner = _runner_name(argv)
    running_mode = given(argv, "--direct_running_mode", "--direct-running-mode")
    reason = None
    if runner not in DIRECT_RUNNERS:
        reason = (f"the {runner} sizes its own workers: use its worker options with "
                  f"--model-copies 1 instead")
    elif running_mode not in (None, "multi_processing"):
        reason = (f"--direct_running_mode {running_mode} runs one process: drop it, or use "
                  f"multi_processing")
    if reason is not None:
        if mode == "on":
            raise SharingError(f"--share-model on works on the DirectRunner only; {reason}")
        return Sharing()
    arguments: list[str] = []
    if running_mode is None:
        arguments.append("--direct_running_mode=multi_processing")
    workers_given = given(argv, "--direct_num_workers", "--direct-num-workers")
    try:
        workers = int(workers_given) if workers_given else 0
    except ValueError as error:
        raise SharingError(f"--direct_num_workers must be a whole number, not "
                           f"{workers_given!r}") from error
    if workers <= 0:
        workers = max(1, cores)
        arguments.append(f"--direct_num_workers={workers}")
    if given(argv, "--model-copies", "--model_copies") is None and \
            given(argv, "--large-model", "--large_model") is None:
        arguments.append("--model_copies=1")
    return Sharing(tuple(arguments), workers)
