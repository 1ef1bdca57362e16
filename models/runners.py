"""What Larvatus knows of Beam's runners: worker processes per machine, the cores their sessions share, local workers."""
from __future__ import annotations

import os
from typing import TYPE_CHECKING, Optional

if TYPE_CHECKING:   # Beam is imported where a runner's options are read, not by the Redactor
    from apache_beam.options.pipeline_options import PipelineOptions

# Runners whose workers are processes or threads of this machine's DirectRunner.
DIRECT_RUNNERS = ("DirectRunner", "BundleBasedDirectRunner", "SwitchingDirectRunner",
                  "FnApiRunner", "TestDirectRunner")
DATAFLOW_RUNNERS = ("DataflowRunner", "TestDataflowRunner")
# Runners that run the job on this machine (and block in Pipeline.run until it is done):
# their workers can write the launcher's progress folder.
LOCAL_RUNNERS = ("directrunner", "direct", "switchingdirectrunner", "bundlebaseddirectrunner")


def processes_per_machine(options: PipelineOptions) -> int:
    """SDK worker processes the chosen runner starts on each machine (0: one per core).

    DirectRunner: --direct_num_workers in multi_processing mode (0 there means
    one per core), else 1. Dataflow: one per vCPU unless the
    no_use_multiple_sdk_containers experiment asks for one. Portable runners
    (Flink, Spark, PortableRunner): --sdk_worker_parallelism (0: the runner
    decides, counted as one per core). The handler splits the cores between them.
    """
    from apache_beam.options.pipeline_options import (
        DebugOptions, DirectOptions, PortableOptions, StandardOptions,
    )

    standard = options.view_as(StandardOptions)
    runner = standard.runner if isinstance(standard.runner, str) else \
        type(standard.runner).__name__ if standard.runner else "DirectRunner"
    runner = runner.rsplit(".", 1)[-1]
    if runner in DIRECT_RUNNERS:
        direct = options.view_as(DirectOptions)
        if direct.direct_running_mode == "multi_processing":
            return direct.direct_num_workers if direct.direct_num_workers is not None else 1
        return 1
    if runner in DATAFLOW_RUNNERS:
        experiments = options.view_as(DebugOptions).experiments or []
        return 1 if "no_use_multiple_sdk_containers" in experiments else 0
    parallelism = options.view_as(PortableOptions).sdk_worker_parallelism
    try:
        return max(0, int(parallelism))
    except (TypeError, ValueError):
        return 1


def is_local_runner(runner) -> bool:
    """Whether workers of this runner share the launcher's file system (the DirectRunner)."""
    if runner is None:
        return True
    name = runner if isinstance(runner, str) else type(runner).__name__
    return name.lower() in LOCAL_RUNNERS


def runs_locally(options: PipelineOptions) -> bool:
    """Whether the options' runner runs the workers on this machine (progress, worker log levels)."""
    from apache_beam.options.pipeline_options import StandardOptions

    return is_local_runner(options.view_as(StandardOptions).runner)


def available_cores() -> int:
    """Cores this process may run on (its CPU affinity, else the machine's count)."""
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except (AttributeError, OSError):
        return max(1, os.cpu_count() or 1)


def session_threads(cores: int, sessions: int, processes_per_machine: int,
                    intra_op_threads: int = 0) -> tuple[int, bool]:
    """Intra-op threads for one ONNX Runtime session and whether its threads may spin.

    An explicit `intra_op_threads` wins. Otherwise the cores are split
    between the sessions on the machine: all of them for a lone process,
    cores // N for N processes (DirectRunner multi_processing, Flink's
    sdk_worker_parallelism) or N shared copies, 1 when the runner starts one
    process per core (Dataflow; `processes_per_machine` 0). Spinning (busy-waiting
    threads, ONNX Runtime's default) is turned off whenever sessions or processes share
    cores, where it burns the time the others need. 0 threads: ONNX Runtime's own default
    (one per physical core), for a lone session.
    """
    sessions = max(1, sessions)
    alone = sessions == 1 and (processes_per_machine or cores) == 1
    if intra_op_threads:
        return intra_op_threads, alone and intra_op_threads >= cores
    if alone:
        return 0, True   # ONNX Runtime's default: one thread per physical core
    return max(1, cores // sessions), False


def sessions_sharing_cores(cores: int, processes_per_machine: int,
                           shared_copies: Optional[int] = None) -> int:
    """How many sessions compete for a machine's cores: the shared copies, else one per process (0: per core)."""
    if shared_copies is not None:
        return shared_copies
    return processes_per_machine or cores


def runner_name(options: PipelineOptions) -> str:
    """The runner a job's options name (Beam's default when none is given)."""
    from apache_beam.options.pipeline_options import StandardOptions

    return str(options.view_as(StandardOptions).runner or "DirectRunner")


def beam_options_problem(options: PipelineOptions) -> Optional[str]:
    """What is wrong with the runner options before a job starts, in one line: a runner Beam
    does not know or cannot load here, a negative --direct_num_workers; None when nothing."""
    from apache_beam.options.pipeline_options import DirectOptions, StandardOptions
    from apache_beam.runners.runner import create_runner

    runner = options.view_as(StandardOptions).runner
    if isinstance(runner, str):
        try:
            create_runner(runner)
        except ValueError as error:
            known = str(error).partition("Valid values are ")[2].rstrip(".")
            return (f"--runner {runner}: Beam knows no such runner"
                    + (f" (it knows {known})" if known else ""))
        except ImportError as error:
            return (f"--runner {runner} needs a library that is not installed ({error}); "
                    f"for DataflowRunner: pip install 'apache-beam[gcp]'")
    workers = options.view_as(DirectOptions).direct_num_workers
    if workers is not None and workers < 0:
        return f"--direct_num_workers must be 0 (one per core) or more, not {workers}"
    return None
