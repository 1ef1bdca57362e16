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
        if self.root and path.startswith(self.root + os.sep):
            return path     # already translated (LocalFileSystem's methods call each other)
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

    def _remote(self, local: str) -> str:
        return PREFIX + os.path.relpath(local, self.root).replace(os.sep, "/")

    def match(self, patterns, limits=None):
        import glob as glob_lib

        from apache_beam.io.filesystem import FileMetadata, MatchResult

        results = []
        for pattern in patterns:
            local = self._local(pattern)
            files = sorted(p for p in glob_lib.glob(local, recursive=True) if os.path.isfile(p))
            results.append(MatchResult(pattern, [
                FileMetadata(self._remote(p), os.path.getsize(p), os.path.getmtime(p))
                for p in files]))
        return results

    def mkdirs(self, path):
        return super().mkdirs(self._local(path))

    def delete(self, paths):
        return super().delete([self._local(p) for p in paths])

    def rename(self, source_file_names, destination_file_names):
        return super().rename([self._local(p) for p in source_file_names],
                              [self._local(p) for p in destination_file_names])

    def copy(self, source_file_names, destination_file_names):
        return super().copy([self._local(p) for p in source_file_names],
                            [self._local(p) for p in destination_file_names])

    def size(self, path):
        return super().size(self._local(path))

    def last_updated(self, path):
        return super().last_updated(self._local(path))

    def checksum(self, path):
        return super().checksum(self._local(path))

    def metadata(self, path):
        from apache_beam.io.filesystem import FileMetadata

        m = super().metadata(self._local(path))
        return FileMetadata(path, m.size_in_bytes, m.last_updated_in_seconds)
