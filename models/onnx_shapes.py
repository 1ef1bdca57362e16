"""Initializer shapes of an ONNX file read straight from its protobuf, without loading weights or the onnx package."""
from __future__ import annotations

import os
from typing import BinaryIO, Iterator, Optional

# Field numbers in onnx.proto: ModelProto.graph, GraphProto.initializer,
# TensorProto.dims and TensorProto.name.
_MODEL_GRAPH, _GRAPH_INITIALIZER, _TENSOR_DIMS, _TENSOR_NAME = 7, 5, 1, 8
_VARINT, _FIXED64, _LENGTH, _FIXED32 = 0, 1, 2, 5


def _varint(handle: BinaryIO) -> int:
    result = shift = 0
    while True:
        byte = handle.read(1)
        if not byte:
            raise EOFError("protobuf ends inside a varint")
        result |= (byte[0] & 0x7F) << shift
        if not byte[0] & 0x80:
            return result
        shift += 7
        if shift > 63:
            raise ValueError("varint longer than 10 bytes")


def _fields(handle: BinaryIO, end: int) -> Iterator[tuple[int, int, int]]:
    """(field number, wire type, value) up to `end`; for a length-delimited field the value
    is its length and the handle stands at its start; whatever the caller reads, the next
    field is found after it."""
    while handle.tell() < end:
        key = _varint(handle)
        number, wire = key >> 3, key & 7
        if wire == _VARINT:
            yield number, wire, _varint(handle)
        elif wire == _FIXED64:
            handle.seek(8, os.SEEK_CUR)
        elif wire == _FIXED32:
            handle.seek(4, os.SEEK_CUR)
        elif wire == _LENGTH:
            length = _varint(handle)
            start = handle.tell()
            if start + length > end:
                raise ValueError("field runs past its message")
            yield number, wire, length
            handle.seek(start + length)
        else:
            raise ValueError(f"unsupported protobuf wire type {wire}")


def _tensor(handle: BinaryIO, end: int) -> tuple[str, tuple[int, ...]]:
    name, dims = "", []
    for number, wire, value in _fields(handle, end):
        if number == _TENSOR_DIMS and wire == _VARINT:
            dims.append(value)
        elif number == _TENSOR_DIMS and wire == _LENGTH:   # packed
            stop = handle.tell() + value
            while handle.tell() < stop:
                dims.append(_varint(handle))
        elif number == _TENSOR_NAME and wire == _LENGTH:
            name = handle.read(value).decode("utf-8", "replace")
    return name, tuple(dims)


def initializer_shapes(path: str | os.PathLike) -> dict[str, tuple[int, ...]]:
    """Name -> shape of every initializer (weights) in an ONNX model file.

    Reads only the protobuf's framing: tensor data is skipped, so a large model
    costs a few milliseconds and no memory. Raises on a file that is not a
    well-formed ONNX protobuf.
    """
    shapes: dict[str, tuple[int, ...]] = {}
    with open(path, "rb") as handle:
        size = os.fstat(handle.fileno()).st_size
        for number, wire, length in _fields(handle, size):
            if number != _MODEL_GRAPH or wire != _LENGTH:
                continue
            graph_end = handle.tell() + length
            for field, kind, tensor_length in _fields(handle, graph_end):
                if field == _GRAPH_INITIALIZER and kind == _LENGTH:
                    name, dims = _tensor(handle, handle.tell() + tensor_length)
                    shapes[name] = dims
    return shapes


def position_embedding_rows(path: str | os.PathLike) -> Optional[int]:
    """How many positions the graph's absolute position embeddings hold, or None when it
    cannot be told (no such weight by name, or a file this reader cannot parse)."""
    try:
        shapes = initializer_shapes(path)
    except (OSError, ValueError, EOFError):
        return None
    rows = [dims[0] for name, dims in shapes.items()
            if "position_embedding" in name.lower() and len(dims) == 2 and dims[0] > 0]
    return min(rows) if rows else None
