"""The Larvatus job: options, Parquet schemas, the Beam graph and its entry point."""

from models import beam_imports  # noqa: F401,E402  (before any apache_beam.ml import)
