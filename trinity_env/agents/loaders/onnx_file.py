"""An ONNX policy file's first two checks, before protobuf parses it (``onnx_check.check_model`` runs them first):

1. **The bytes** (``read_model_bytes``). A regular file only (``core.paths.open_regular``: never a named pipe or a
   device), at most ``MAX_ONNX_BYTES``.
2. **The wire** (``scan_wire``). The encoding is walked with ONNX's schema, building nothing: at most ``MAX_FIELDS``
   fields (every message and string costs an object once parsed) and ``MAX_PACKED_VALUES`` packed integers (8 bytes
   each once parsed), nesting at most ``MAX_DEPTH``.

Every refusal is one ``OnnxPolicyError`` line (a ``CheckpointError``) naming the file. onnx is imported inside the
functions (``import_onnx``): ``import trinity_env.agents`` works without it.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np

from trinity_env.agents.loaders.checkpoint import CheckpointError
from trinity_env.core.files import cut, one_line
from trinity_env.core.paths import name_problem, open_regular

MAX_ONNX_BYTES = 256 << 20
"""Largest ONNX file read at all."""
MAX_FIELDS = 500_000
"""Most protobuf fields in a file: each message or string parses into an object of about 150 bytes."""
MAX_PACKED_VALUES = 32_000_000
"""Most packed integers (``int64_data``, ``dims``...) in a file: each costs 8 bytes parsed, from 1 in the file."""
MAX_DEPTH = 24
"""Deepest protobuf nesting (a policy's is under 10: model, graph, node, attribute, tensor, types)."""


class OnnxPolicyError(CheckpointError):
    """An ONNX policy file that cannot be played: unreadable, malformed, oversized, unsafe, or not the contract."""


def import_onnx() -> tuple[Any, Any]:
    """``(onnx, onnxruntime)``, or one ``OnnxPolicyError`` line naming the missing extra."""
    try:
        import onnx
        import onnxruntime
    except ImportError as err:
        raise OnnxPolicyError(
            f"ONNX policies need the onnx extra ({err.name or 'onnx'} is not installed): "
            "pip install 'trinity-towers[onnx]'"
        ) from None
    return onnx, onnxruntime


def read_model_bytes(path: str | Path) -> tuple[str, bytes]:
    """The file's shown name and bytes: a regular file, at most ``MAX_ONNX_BYTES``, never a pipe or device."""
    shown = str(path) if isinstance(path, str | Path) else repr(path)
    shown = cut(shown if shown.isprintable() else ascii(shown), 200)
    problem = name_problem(path)
    if problem is not None:
        raise OnnxPolicyError(f"cannot read ONNX file {shown}: {problem}")
    try:
        handle, kind, size = open_regular(path)
        if kind is not None or handle is None:
            raise OnnxPolicyError(f"ONNX file {shown} is {kind}, not a regular file: refused without reading it")
        with handle:
            if size > MAX_ONNX_BYTES:
                raise OnnxPolicyError(f"ONNX file {shown} is too large ({size} bytes, over {MAX_ONNX_BYTES >> 20} MiB)")
            data = handle.read(MAX_ONNX_BYTES + 1)
    except OSError as err:
        raise OnnxPolicyError(f"cannot read ONNX file {shown}: {one_line(err.strerror or err)}") from None
    if len(data) > MAX_ONNX_BYTES:
        raise OnnxPolicyError(f"ONNX file {shown} is too large (over {MAX_ONNX_BYTES >> 20} MiB)")
    if not data:
        raise OnnxPolicyError(f"ONNX file {shown} is empty")
    return shown, data


class _Malformed(Exception):
    pass


def _varint(data: bytes, pos: int, end: int) -> tuple[int, int]:
    result = shift = 0
    while True:
        if pos >= end or shift > 63:
            raise _Malformed(f"a varint cut short or too long at byte {pos}")
        byte = data[pos]
        pos += 1
        result |= (byte & 0x7F) << shift
        if byte < 0x80:
            return result, pos
        shift += 7


def scan_wire(name: str, data: bytes) -> None:
    """Refuse a file whose parse would build more than ``MAX_FIELDS`` objects or ``MAX_PACKED_VALUES`` integers,
    or that is not protobuf at all, walking the encoding with ``onnx.ModelProto``'s schema (nothing is built)."""
    from google.protobuf.descriptor import FieldDescriptor as F

    onnx, _ = import_onnx()
    varints = {
        F.TYPE_INT32,
        F.TYPE_INT64,
        F.TYPE_UINT32,
        F.TYPE_UINT64,
        F.TYPE_SINT32,
        F.TYPE_SINT64,
        F.TYPE_BOOL,
        F.TYPE_ENUM,
    }
    view = np.frombuffer(data, np.uint8)
    fields = packed = 0
    stack = [(0, len(data), onnx.ModelProto.DESCRIPTOR, 0)]
    schemas: dict[Any, dict[int, tuple[Any, bool]]] = {}  # by message type: each field's message type, packed ints
    try:
        while stack:
            pos, end, descriptor, depth = stack.pop()
            by_number = schemas.get(descriptor)
            if by_number is None:
                by_number = schemas[descriptor] = {
                    number: (field.message_type if field.type == F.TYPE_MESSAGE else None, field.type in varints)
                    for number, field in descriptor.fields_by_number.items()
                }
            while pos < end:
                key = data[pos]  # one byte for every field number below 16: the fast path
                key, pos = (key, pos + 1) if key < 0x80 else _varint(data, pos, end)
                number, wire = key >> 3, key & 7
                fields += 1
                if fields > MAX_FIELDS:
                    raise OnnxPolicyError(
                        f"ONNX file {name} holds over {MAX_FIELDS} protobuf fields: refused before "
                        "parsing (each would be an object in memory)"
                    )
                if number == 0:
                    raise _Malformed(f"field number 0 at byte {pos}")
                if wire == 2:
                    length = data[pos] if pos < end else 0x80
                    length, pos = (length, pos + 1) if length < 0x80 else _varint(data, pos, end)
                    stop = pos + length
                    if stop > end:
                        raise _Malformed(f"a field of {length} bytes at byte {pos} runs past its end")
                    message, packs = by_number.get(number, (None, False))
                    if message is not None:
                        if depth >= MAX_DEPTH:
                            raise _Malformed(f"messages nested over {MAX_DEPTH} deep")
                        stack.append((pos, stop, message, depth + 1))
                    elif packs:
                        packed += int(np.count_nonzero(view[pos:stop] < 0x80))
                        if packed > MAX_PACKED_VALUES:
                            raise OnnxPolicyError(
                                f"ONNX file {name} holds over {MAX_PACKED_VALUES} packed integers: "
                                "refused before parsing (store tensors as raw_data)"
                            )
                    pos = stop
                elif wire == 0:
                    _, pos = _varint(data, pos, end)
                elif wire in (1, 5):
                    pos += 8 if wire == 1 else 4
                    if pos > end:
                        raise _Malformed(f"a fixed-size field runs past its end at byte {end}")
                else:
                    raise _Malformed(f"wire type {wire} at byte {pos}")
    except _Malformed as err:
        raise OnnxPolicyError(f"ONNX file {name} is not a valid ONNX model (malformed protobuf: {err})") from None
