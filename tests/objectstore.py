"""A Beam FileSystem for tests: object-store semantics (no folders, like gs:// or s3://) over a local folder.

Importing this module registers the scheme `larvtest://` with Beam's FileSystems.
`larvtest://bucket/a/b` is stored at `$LARVTEST_ROOT/bucket/a/b`; as on an object
store there are no directories: `mkdirs` does nothing, `exists` is true for objects
only, listing is by prefix, and deleting a missing object is not an error.
"""
from __future__ import annotations

import io
import os
from typing import BinaryIO

from apache_beam.io.filesystem import (
    BeamIOError, CompressedFile, CompressionTypes, FileMetadata, FileSystem,
)

SCHEME = "larvtest"
PREFIX = SCHEME + "://"
ROOT_ENV = "LARVTEST_ROOT"


def local(path: str) -> str:
    if not path.startswith(PREFIX):
        raise ValueError(f"not a {SCHEME} path: {path!r}")
    return os.path.join(os.environ[ROOT_ENV], path[len(PREFIX):])


class ObjectStoreFileSystem(FileSystem):
    """`larvtest://`: an object store kept in the folder named by $LARVTEST_ROOT."""

    @classmethod
    def scheme(cls):
        return SCHEME

    def join(self, basepath, *paths):
        path = basepath
        for part in paths:
            path = path + part if path.endswith("/") else path + "/" + part
        return path

    def split(self, path):
        body = path[len(PREFIX):]
        head, _, tail = body.rpartition("/")
        return PREFIX + head, tail

    def mkdirs(self, path):
        pass

    def has_dirs(self):
        return False

    def _list(self, dir_or_prefix):
        root = os.environ[ROOT_ENV]
        for folder, _, files in os.walk(root):
            for name in files:
                full = os.path.join(folder, name)
                path = PREFIX + os.path.relpath(full, root)
                if path.startswith(dir_or_prefix):
                    yield FileMetadata(path, os.path.getsize(full), os.path.getmtime(full))

    def _open(self, path, mode, compression_type) -> BinaryIO:
        compression_type = FileSystem._get_compression_type(path, compression_type)
        raw = io.open(local(path), mode)
        if compression_type == CompressionTypes.UNCOMPRESSED:
            return raw
        return CompressedFile(raw, compression_type=compression_type)

    def create(self, path, mime_type="application/octet-stream",
               compression_type=CompressionTypes.AUTO) -> BinaryIO:
        os.makedirs(os.path.dirname(local(path)), exist_ok=True)
        return self._open(path, "wb", compression_type)

    def open(self, path, mime_type="application/octet-stream",
             compression_type=CompressionTypes.AUTO) -> BinaryIO:
        return self._open(path, "rb", compression_type)

    def _move(self, sources, destinations, keep):
        errors = {}
        for source, destination in zip(sources, destinations):
            try:
                if not os.path.isfile(local(source)):
                    raise IOError(f"no object {source}")
                os.makedirs(os.path.dirname(local(destination)), exist_ok=True)
                with open(local(source), "rb") as src, open(local(destination), "wb") as dst:
                    dst.write(src.read())
                if not keep:
                    os.remove(local(source))
            except Exception as error:  # pylint: disable=broad-except
                errors[(source, destination)] = error
        if errors:
            raise BeamIOError("Move failed", errors)

    def copy(self, source_file_names, destination_file_names):
        self._move(source_file_names, destination_file_names, keep=True)

    def rename(self, source_file_names, destination_file_names):
        self._move(source_file_names, destination_file_names, keep=False)

    def exists(self, path):
        return os.path.isfile(local(path))

    def size(self, path):
        return os.path.getsize(local(path))

    def last_updated(self, path):
        return os.path.getmtime(local(path))

    def checksum(self, path):
        return str(self.size(path))

    def metadata(self, path):
        return FileMetadata(path, self.size(path), self.last_updated(path))

    def delete(self, paths):
        for path in paths:
            if path.endswith("/"):
                for meta in list(self._list(path)):
                    os.remove(local(meta.path))
            elif os.path.isfile(local(path)):
                os.remove(local(path))
