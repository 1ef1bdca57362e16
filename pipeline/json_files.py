"""JSON files of the output folder (the summary), whole or not at all, through Beam's FileSystems with every store call bounded."""
from __future__ import annotations

import contextlib
import json
import os
import uuid
from typing import Optional

from larvatus import storage
from larvatus.layout import PARTIAL_SUFFIX


def write_json(path: str, value: dict) -> None:
    """Writes a JSON file whole or not at all: locally through a temporary file renamed
    into place (removed again if the write fails); an object store makes an object
    visible only once it is closed."""
    data = json.dumps(value, indent=2).encode("utf-8")
    if storage.is_local(path):
        partial = f"{path}.{uuid.uuid4().hex[:12]}{PARTIAL_SUFFIX}"
        try:
            with open(partial, "wb") as handle:
                handle.write(data)
            os.replace(partial, path)
        except BaseException:
            with contextlib.suppress(OSError):
                os.remove(partial)
            raise
        return

    def write() -> None:
        with storage._fs().create(path, mime_type="application/json",
                          compression_type=storage._uncompressed()) as handle:
            handle.write(data)

    storage.bounded(f"writing {path}", write)


class UnreadableJson(ValueError):
    """A JSON file that exists but does not parse (cut short, or not ours)."""


def read_json(path: str) -> Optional[dict]:
    """A JSON file's content, or None when it does not exist; UnreadableJson when it
    does not parse."""
    if storage.is_local(path):
        if not os.path.isfile(path):
            return None
        with open(path, "rb") as handle:
            data = handle.read()
    else:
        if not storage._exists(path):
            return None
        data = storage.bounded(f"reading {path}", _read_remote, path)
    try:
        value = json.loads(data.decode("utf-8"))
    except ValueError as error:
        raise UnreadableJson(f"{path} is not valid JSON ({error})") from None
    if not isinstance(value, dict):
        raise UnreadableJson(f"{path} holds no JSON object")
    return value


def _read_remote(path: str) -> bytes:
    with storage._fs().open(path, compression_type=storage._uncompressed()) as handle:
        return handle.read()
