"""A Beam filesystem with its own scheme (fakefs://) over a local folder: remote storage without a cloud."""
from __future__ import annotations

import os

from apache_beam.io.localfilesystem import LocalFileSystem

SCHEME = "fakefs"
PREFIX = SCHEME + "://"


class FakeRemoteFileSystem(LocalFileSystem):
    """`fakefs://a/b` is `FakeRemoteFileSystem.root/a/b`; counts the files it opens.

    Beam finds it by its scheme once this module is imported, as it finds
    GCSFileSystem for gs:// once apache-beam[gcp] is installed.
    """

    root: str = ""
    opened: list = []

    @classmethod
    def scheme(cls):
        return SCHEME

    def _local(self, path: str) -> str:
        if not path.startswith(PREFIX):
            raise ValueError(f"not a {SCHEME} path: {path}")
        if not self.root:
            raise IOError("the fake remote store is not mounted")
        return os.path.join(self.root, path[len(PREFIX):])

    def join(self, basepath, *paths):
        return "/".join([basepath.rstrip("/")] + [p.strip("/") for p in paths])

    def split(self, path):
        head, _, tail = path.rstrip("/").rpartition("/")
        return head, tail

    def exists(self, path):
        return super().exists(self._local(path))

    def open(self, path, *args, **kwargs):
        FakeRemoteFileSystem.opened.append(path)
        return super().open(self._local(path), *args, **kwargs)

    def create(self, path, *args, **kwargs):
        return super().create(self._local(path), *args, **kwargs)
