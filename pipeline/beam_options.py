"""The Larvatus options as a Beam PipelineOptions subclass: how Beam parses and carries them."""
from __future__ import annotations

import argparse

from apache_beam.options.pipeline_options import PipelineOptions

from larvatus.options import add_job_args


class LarvatusOptions(PipelineOptions):
    """Options of the Larvatus job; every other argument goes to Beam."""

    @classmethod
    def _add_argparse_args(cls, parser: argparse.ArgumentParser) -> None:
        add_job_args(parser)
