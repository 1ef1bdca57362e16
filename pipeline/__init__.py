"""The Larvatus job: options, Parquet schemas, the Beam graph and its entry points."""

from larvatus.models import beam_imports  # noqa: F401,E402  (before any apache_beam.ml import)
from larvatus.logs import install_noise_filter

# Beam logs "apitools not found" through the root logger when it is imported, on every
# command (--help included); it says nothing about a Larvatus job.
install_noise_filter()
