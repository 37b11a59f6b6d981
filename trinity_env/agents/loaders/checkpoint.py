"""Reading torch checkpoint files by what loading them would allocate, before anything is allocated.

``torch.load(..., weights_only=True)`` runs no code from a file, but it builds whatever the
file describes: a 2 KB file can hold a tensor that is an expanded view of one element
(stride 0) declaring a billion elements, which costs nothing to load and gigabytes the
moment anything reads it (a cast, a finiteness check, ``load_state_dict``); a storage can
claim more elements than its record holds; a float64 weight of 1e308 is finite, then
infinite once cast to the float32 that runs. So a file is read here in two passes:

1. **A dry run.** The zip's entry count and directory size are read from its end record and bounded before
   ``zipfile`` parses it (``core.zips.open_zip``); its members are listed (every one must be stored, not compressed,
   so that nothing read can outgrow the file itself), and its ``data.pkl`` is unpickled by
   an unpickler that knows only the few names a checkpoint of ours holds and builds, for
   each tensor, a ``TensorInfo`` (dtype, shape, stride, offset, storage) instead of the
   tensor. Every storage's record must hold exactly the bytes its declared element count
   needs; every tensor must be contiguous and lie inside its storage; all tensors together
   may not hold more elements than all storages (no view read twice to amplify one record).
   The caller's ``validate`` then checks the fields and the model's names and shapes on this
   description, against the size limits below.
2. **The load.** Only a file that passed is handed to ``torch.load(weights_only=True)``, on
   the same open file; what it allocates is then bounded by the file's own bytes.

Network weights are cast to the float32 that plays them and checked finite after the cast
(``float32_weights``). Every refusal is a ``CheckpointError`` naming the file, one line.

The size limits are one table, shared by the trainers' config checks and the loaders, so
nothing trainable is unloadable and nothing loadable is untrainable. The project's own checkpoints (their fields, one
save, one load, a run folder's lookup) are read through this in ``network_checkpoint``. This module imports
torch only inside ``read_torch`` and ``float32_weights``: configs check sizes without it.
"""

from __future__ import annotations

import io
import pickle
import zipfile
from collections import OrderedDict
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any

from trinity_env.core import TrinityError
from trinity_env.core.board import TILES
from trinity_env.core.paths import open_regular
from trinity_env.core.zips import open_zip
from trinity_env.spec.observation import (
    OBSERVATION_SIZE,
    OWN_CARD_FEATURES,
    SCALARS,
    THEIR_CARD_FEATURES,
    TILE_FEATURES,
)

ACTIONS = 256
"""Action logits every policy network ends in."""

MAX_HIDDEN = 4096
"""Widest hidden layer a network may have."""
MAX_LAYERS = 16
"""Most hidden layers a network may have."""
MAX_PARAMETERS = 1 << 24
"""Most weights one network may hold (64 MiB as float32); an SB3 policy's policy and value MLPs count apart."""
MAX_CHECKPOINT_BYTES = 4 << 30
"""Largest checkpoint file read at all: a training run's ``latest.pt`` holds its replay buffer and pool."""
MAX_PICKLE_BYTES = 4 << 20
"""Largest ``data.pkl`` inside a checkpoint: it describes tensors and holds small fields only."""
MAX_TENSOR_DIMS = 8
"""Most dimensions a tensor of ours has (observations and buffers have at most four)."""
MAX_DIMENSION = 1 << 40
"""Largest size, stride or offset a tensor may declare (the storage checks bound real ones far lower)."""


class CheckpointError(TrinityError):
    """A checkpoint file that cannot be used: unreadable, corrupt, oversized, or for another network."""


def describe_error(err: BaseException) -> str:
    """A one-line account of why torch (or zipfile, json) could not read a file.

    torch's refusal of a pickled object is several paragraphs that suggest
    ``weights_only=False``: only its ``WeightsUnpickler error`` line is kept, and the
    advice is not repeated.
    """
    text = str(err)
    marker = "WeightsUnpickler error:"
    if marker in text:
        detail = text.split(marker, 1)[1].strip().splitlines()[0].split(". ")[0]
        return f"it holds more than tensors and plain data, refused without running it: {detail}"
    line = next((part.strip() for part in text.splitlines() if part.strip()), "")
    line = line if len(line) <= 200 else line[:197] + "..."
    return f"{type(err).__name__}: {line}" if line else type(err).__name__


# ------------------------------------------------------------------------------ the size limits


def mlp_parameters(hidden: int, layers: int) -> int:
    """Weights of an MLP of ``layers`` x ``hidden`` on the observation plus the policy and value heads.

    A tactics head adds 65 weights, left out: a constant far inside ``MAX_PARAMETERS``'s margin.
    """
    body = OBSERVATION_SIZE * hidden + hidden + (layers - 1) * (hidden * hidden + hidden)
    return body + hidden * ACTIONS + ACTIONS + hidden + 1


def board_parameters(hidden: int, layers: int) -> int:
    """Weights of a ``BoardNetwork`` (``trinity_env.agents.networks.board_network``) of width ``hidden`` with ``layers``
    rounds of message passing, its tactics head (65 weights) left out as ``mlp_parameters`` leaves it."""
    h = hidden
    tiles = (TILE_FEATURES + 16) * h + h + TILES * h + layers * (2 * h * h + h)  # own entries, 4 a neighbouring side
    cards = (OWN_CARD_FEATURES + 1) * h + (THEIR_CARD_FEATURES + 1) * h
    trunk = (SCALARS + 5 * h) * h + h + h * h + h  # the scalars, three lanes and two decks; then h x h
    heads = 2 * (h + 1) + 5 * (h * h + h)  # the value and draft outs; draft card and trunk, place card, tile, trunk
    return tiles + cards + trunk + heads


PARAMETERS: dict[str, Callable[[int, int], int]] = {"mlp": mlp_parameters, "board": board_parameters}
"""The weights of each network architecture a checkpoint's ``network`` field may name, by ``hidden`` and
``layers``: what building it would allocate, known before anything is built."""


def network_size_problem(hidden: int, layers: int, network: str = "mlp") -> str | None:
    """Why a ``network`` of that shape is out of bounds (one phrase), or ``None`` when it may be trained and
    loaded."""
    if not 1 <= hidden <= MAX_HIDDEN:
        return f"hidden must be between 1 and {MAX_HIDDEN}, got {hidden}"
    if not 1 <= layers <= MAX_LAYERS:
        return f"layers must be between 1 and {MAX_LAYERS}, got {layers}"
    weights = PARAMETERS[network](hidden, layers)
    if weights > MAX_PARAMETERS:
        return (
            f"hidden={hidden} with layers={layers} makes {weights:,} weights, over the limit of "
            f"{MAX_PARAMETERS:,} (a {network} network)"
        )
    return None


# ------------------------------------------------------------------------------ the dry run


_STORAGES = {
    "FloatStorage": ("float32", 4),
    "DoubleStorage": ("float64", 8),
    "HalfStorage": ("float16", 2),
    "BFloat16Storage": ("bfloat16", 2),
    "LongStorage": ("int64", 8),
    "IntStorage": ("int32", 4),
    "ShortStorage": ("int16", 2),
    "CharStorage": ("int8", 1),
    "ByteStorage": ("uint8", 1),
    "BoolStorage": ("bool", 1),
}
FLOATING = frozenset({"float32", "float64", "float16", "bfloat16"})


@dataclass(frozen=True)
class _StorageType:
    dtype: str
    itemsize: int


@dataclass(frozen=True)
class StorageInfo:
    """One storage a checkpoint declares: its record in the zip and its element count."""

    key: str
    dtype: str
    itemsize: int
    numel: int


@dataclass(frozen=True)
class TensorInfo:
    """What a tensor in a checkpoint would be, read without building it."""

    storage: StorageInfo
    offset: int
    shape: tuple[int, ...]
    stride: tuple[int, ...]

    @property
    def dtype(self) -> str:
        return self.storage.dtype

    @property
    def numel(self) -> int:
        count = 1
        for size in self.shape:
            count *= size
        return count

    def is_floating_point(self) -> bool:
        return self.dtype in FLOATING


def _plain_int(value: Any) -> bool:
    return type(value) is int


def _rebuild_tensor(
    storage: Any,
    offset: Any,
    shape: Any,
    stride: Any,
    requires_grad: Any = False,
    hooks: Any = None,
    metadata: Any = None,
) -> TensorInfo:
    if not isinstance(storage, StorageInfo):
        raise pickle.UnpicklingError("a tensor without a storage")
    if not (isinstance(shape, tuple) and isinstance(stride, tuple) and len(shape) == len(stride)):
        raise pickle.UnpicklingError("a tensor whose shape and stride are not matching tuples")
    numbers = (offset, *shape, *stride)
    if len(shape) > MAX_TENSOR_DIMS or not all(_plain_int(v) and abs(v) <= MAX_DIMENSION for v in numbers):
        raise pickle.UnpicklingError("a tensor whose shape, stride or offset is not small integers")
    if hooks or metadata or type(requires_grad) is not bool:
        raise pickle.UnpicklingError("a tensor with hooks or metadata")
    return TensorInfo(storage, offset, shape, stride)


def _rebuild_parameter(data: Any, requires_grad: Any = False, hooks: Any = None) -> TensorInfo:
    if not isinstance(data, TensorInfo) or hooks:
        raise pickle.UnpicklingError("a parameter that is not a plain tensor")
    return data


class _DryUnpickler(pickle.Unpickler):
    """Builds plain data and ``TensorInfo``; any other name in the file is refused, never imported."""

    def find_class(self, module: str, name: str) -> Any:
        if module == "collections" and name == "OrderedDict":
            return OrderedDict
        if module == "torch._utils" and name == "_rebuild_tensor_v2":
            return _rebuild_tensor
        if module == "torch._utils" and name == "_rebuild_parameter":
            return _rebuild_parameter
        if module == "torch" and name in _STORAGES:
            return _StorageType(*_STORAGES[name])
        raise pickle.UnpicklingError(f"it names {module[:40]}.{name[:40]}, which a checkpoint of ours never holds")

    def persistent_load(self, pid: Any) -> StorageInfo:
        if not (isinstance(pid, tuple) and len(pid) == 5 and pid[0] == "storage"):
            raise pickle.UnpicklingError("a storage reference of an unknown form")
        _, kind, key, location, numel = pid
        if not isinstance(kind, _StorageType) or not isinstance(key, str) or not _plain_int(numel) or numel < 0:
            raise pickle.UnpicklingError("a storage reference with a bad type, key or size")
        if location != "cpu" and not (isinstance(location, str) and location.startswith("cuda")):
            raise pickle.UnpicklingError(f"a storage on an unknown device {str(location)[:20]!r}")
        return StorageInfo(key, kind.dtype, kind.itemsize, numel)


def _tensors(value: Any, found: list[TensorInfo], depth: int = 0) -> None:
    if depth > 50:
        raise CheckpointError("nested too deeply")
    if isinstance(value, TensorInfo):
        found.append(value)
    elif isinstance(value, dict):
        for item in value.values():
            _tensors(item, found, depth + 1)
    elif isinstance(value, (list, tuple)):
        for item in value:
            _tensors(item, found, depth + 1)


def _contiguous(shape: tuple[int, ...], stride: tuple[int, ...]) -> bool:
    expected = 1
    for size, step in zip(reversed(shape), reversed(stride)):
        if size != 1 and step != expected:
            return False
        expected *= size
    return True


def _dry_run(handle: IO[bytes], name: str) -> Any:
    """The payload with ``TensorInfo`` for tensors, after every check of the module docstring's first pass."""
    try:
        archive = open_zip(handle, name, CheckpointError)  # refused before zipfile parses it if it lists too much
    except (zipfile.BadZipFile, OSError, ValueError) as err:
        if isinstance(err, CheckpointError):
            raise
        raise CheckpointError(f"{name} is not a readable checkpoint (not a torch zip: {describe_error(err)})") from None
    with archive:
        members = {info.filename: info for info in archive.infolist()}
        if len(members) != len(archive.infolist()):
            raise CheckpointError(f"{name}: the zip holds a member twice")
        compressed = [n for n, info in members.items() if info.compress_type != zipfile.ZIP_STORED]
        if compressed:
            raise CheckpointError(f"{name}: the zip member {compressed[0][:60]!r} is compressed (torch never does)")
        pickles = [n for n in members if n.endswith("/data.pkl") and n.count("/") == 1]
        if len(pickles) != 1:
            raise CheckpointError(f"{name} is not a readable checkpoint (no single data.pkl in the zip)")
        prefix = pickles[0][: -len("data.pkl")]
        if members[pickles[0]].file_size > MAX_PICKLE_BYTES:
            raise CheckpointError(f"{name}: its data.pkl is over {MAX_PICKLE_BYTES >> 20} MiB")
        try:
            with archive.open(pickles[0]) as member:
                raw = member.read(MAX_PICKLE_BYTES + 1)
            payload = _DryUnpickler(io.BytesIO(raw)).load()
        except pickle.UnpicklingError as err:
            raise CheckpointError(f"{name}: refused without running it: {err}") from None
        except Exception as err:  # truncated, bad CRC, a malformed pickle: every kind is one line
            raise CheckpointError(f"{name} is not a readable checkpoint ({describe_error(err)})") from None
        tensors: list[TensorInfo] = []
        _tensors(payload, tensors)
        storages = {t.storage.key: t.storage for t in tensors}
        for key, storage in storages.items():
            info = members.get(f"{prefix}data/{key}")
            if info is None:
                raise CheckpointError(f"{name}: storage {key[:20]!r} has no record in the zip")
            if info.file_size != storage.numel * storage.itemsize:
                raise CheckpointError(
                    f"{name}: storage {key[:20]!r} declares {storage.numel:,} {storage.dtype} values but its record "
                    f"holds {info.file_size:,} bytes"
                )
        for tensor in tensors:
            if not _contiguous(tensor.shape, tensor.stride) or any(s < 0 for s in tensor.shape) or tensor.offset < 0:
                raise CheckpointError(
                    f"{name}: a tensor of shape {tensor.shape[:4]} is an expanded or strided view "
                    f"(stride {tensor.stride[:4]}): refused"
                )
            if tensor.offset + tensor.numel > tensor.storage.numel:
                raise CheckpointError(f"{name}: a tensor of shape {tensor.shape[:4]} reaches past its storage")
        if sum(t.numel for t in tensors) > sum(s.numel for s in storages.values()):
            raise CheckpointError(f"{name}: its tensors view the same storage more than once")
    return payload


# ------------------------------------------------------------------------------ the load


def _open_checkpoint(path: Path) -> IO[bytes]:
    """``path`` opened for reading if it is a regular file (``core.paths.open_regular``: a named pipe, device or
    socket is refused without blocking), every failure a ``CheckpointError``."""
    try:
        handle, kind, _ = open_regular(path)
    except FileNotFoundError:
        raise CheckpointError(f"no checkpoint at {path}") from None
    except OSError as err:
        raise CheckpointError(f"cannot read checkpoint {path}: {err.strerror or err}") from None
    if kind == "a folder":
        raise CheckpointError(f"{path} is a directory, not a checkpoint file")
    if handle is None:
        raise CheckpointError(f"{path} is {kind}, not a regular file: refused without reading it")
    return handle


def read_torch(
    source: str | Path | bytes,
    name: str | None = None,
    validate: Callable[[Any], None] | None = None,
    max_bytes: int = MAX_CHECKPOINT_BYTES,
) -> Any:
    """The payload of a torch file (a path, or the bytes of a zip member), checked by the dry run first.

    ``validate(payload)`` sees the payload with ``TensorInfo`` in place of tensors and raises
    ``CheckpointError`` for what the caller refuses; only then is the file loaded with
    ``torch.load(weights_only=True)``. ``name`` names the file in errors (default: the path).
    """
    import torch

    if isinstance(source, bytes):
        name = name or "checkpoint"
        if len(source) > max_bytes:
            raise CheckpointError(f"{name} is over {max_bytes:,} bytes")
        handle: IO[bytes] = io.BytesIO(source)
    else:
        name = name or str(source)
        handle = _open_checkpoint(Path(source))
    with handle:
        size = handle.seek(0, io.SEEK_END)
        if size > max_bytes:
            raise CheckpointError(f"{name} is over {max_bytes:,} bytes, the most a checkpoint is read at")
        handle.seek(0)
        description = _dry_run(handle, name)
        if validate is not None:
            validate(description)
        handle.seek(0)
        try:
            return torch.load(handle, map_location="cpu", weights_only=True)
        except Exception as err:  # torch raises many kinds for a damaged file
            raise CheckpointError(f"{name} is not a readable checkpoint ({describe_error(err)})") from None


def float32_weights(name: str, model: dict[str, Any]) -> dict[str, Any]:
    """``model``'s tensors cast to float32 (what the networks run), each checked finite after the cast."""
    import torch

    weights = {}
    for key, tensor in model.items():
        cast = tensor.to(torch.float32)
        if not bool(torch.isfinite(cast).all()):
            raise CheckpointError(f"{name}: model entry {key[:60]!r} holds NaN or infinite values as float32")
        weights[key] = cast
    return weights


def check_state_dict(name: str, model: Any, expected: dict[str, tuple[int, ...]], network: str) -> None:
    """Refuse a described ``model`` that is not exactly ``expected``'s names and shapes, in floating point."""
    if not isinstance(model, dict):
        raise CheckpointError(f"{name}: field 'model' must be a dict of tensors, got {type(model).__name__}")
    if not all(isinstance(key, str) for key in model):
        raise CheckpointError(f"{name}: field 'model' has a key that is not a string")
    missing, unexpected = sorted(set(expected) - set(model)), sorted(set(model) - set(expected))
    if missing or unexpected:
        shown = [key[:40] for key in unexpected[:4]]
        raise CheckpointError(f"{name} does not match the {network}: missing {missing[:4]}, unexpected {shown}")
    for key, shape in expected.items():
        tensor = model[key]
        if not isinstance(tensor, TensorInfo):
            raise CheckpointError(f"{name}: model entry {key!r} is not a dense tensor ({type(tensor).__name__})")
        if not tensor.is_floating_point():
            raise CheckpointError(f"{name}: model entry {key!r} has dtype {tensor.dtype}, not a floating-point one")
        if tensor.shape != shape:
            raise CheckpointError(
                f"{name} does not match the {network}: {key!r} has shape {tensor.shape[:4]}, expected {shape}"
            )
