"""Reads a secret file's bytes: a local path directly, any other Beam filesystem through Beam (imported only then)."""
from __future__ import annotations


def read_secret_file(path: str) -> bytes:
    """A secret file's bytes: a local file, or gs://, s3://... through Beam's FileSystems."""
    if "://" not in path:   # no filesystem scheme: a local file
        with open(path, "rb") as handle:
            return handle.read()
    from apache_beam.io.filesystem import CompressionTypes
    from apache_beam.io.filesystems import FileSystems

    with FileSystems.open(path, compression_type=CompressionTypes.UNCOMPRESSED) as handle:
        return handle.read()
