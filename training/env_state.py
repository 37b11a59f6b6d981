"""The state of the fast engine's vector env as checkpoint data: the games in progress and every random stream.

``fast_ppo`` saves it in ``latest.pt`` so that a resumed run plays on the very games the
uninterrupted run would have. The engine has no ``get_state`` of its own, so this reads
the objects' attributes generically: every numpy array (named tuples of them too), numpy
``Generator``, ``random.Random`` and plain number of the vector env and of its
``FastGames``; configs, spaces and the opponent are rebuilt from the config instead.
A checkpoint whose attributes do not match the env's (the engine changed in between) is
refused rather than resumed inexactly. The result holds tensors, numbers and JSON strings
only, so ``torch.load(weights_only=True)`` reads it back.
"""

from __future__ import annotations

import json
import random
from typing import Any

import numpy as np
import torch

from trinity_env.agents.networks.ppo_network import CheckpointError

SKIP = frozenset({"games", "opponent"})
"""Attributes handled elsewhere: the games get their own entry, the opponent pool saves itself."""


def env_state(env: Any) -> dict:
    """The vector env's state and its games' (``env.games``)."""
    return {"env": _state(env), "games": _state(env.games)}


def load_env_state(env: Any, state: dict) -> None:
    """Put ``env_state``'s values back, in place (arrays others hold stay theirs); ``CheckpointError`` if the
    env's attributes differ from the checkpoint's."""
    _load(env, state["env"], "vector env")
    _load(env.games, state["games"], "games")


def _state(obj: Any) -> dict:
    out = {}
    for name, value in vars(obj).items():
        if name in SKIP:
            continue
        encoded = _encode(value)
        if encoded is not None:
            out[name] = encoded
    return out


def _encode(value: Any) -> dict | None:
    if isinstance(value, np.ndarray):
        return {"array": _tensor(value), "dtype": value.dtype.str}
    if isinstance(value, tuple) and hasattr(value, "_asdict") and all(isinstance(v, np.ndarray) for v in value):
        return {"arrays": {k: {"array": _tensor(v), "dtype": v.dtype.str} for k, v in value._asdict().items()}}
    if isinstance(value, np.random.Generator):
        return {"generator": json.dumps(value.bit_generator.state)}
    if isinstance(value, random.Random):
        return {"random": json.dumps(value.getstate())}
    if isinstance(value, (bool, int, float)) and not isinstance(value, np.generic):
        return {"number": value}
    return None


def _tensor(array: np.ndarray) -> torch.Tensor:
    array = np.ascontiguousarray(array)
    if array.dtype.kind == "u" and array.itemsize > 1:  # torch stores few unsigned types: keep the bits
        array = array.view(f"i{array.itemsize}")
    return torch.from_numpy(array.copy())


def _array(entry: dict) -> np.ndarray:
    return entry["array"].numpy().view(np.dtype(entry["dtype"]))


def _load(obj: Any, state: dict, what: str) -> None:
    now = _state(obj)
    if set(now) != set(state):
        changed = sorted(set(now) ^ set(state))
        raise CheckpointError(f"the {what} changed since this checkpoint (attributes {changed}): cannot resume it")
    for name, entry in state.items():
        value = getattr(obj, name)
        if "array" in entry:
            _copy(value, _array(entry), f"{what}.{name}")
        elif "arrays" in entry:
            for key, part in entry["arrays"].items():
                _copy(getattr(value, key), _array(part), f"{what}.{name}.{key}")
        elif "generator" in entry:
            value.bit_generator.state = json.loads(entry["generator"])
        elif "random" in entry:
            version, internal, gauss = json.loads(entry["random"])
            value.setstate((version, tuple(internal), gauss))
        else:
            setattr(obj, name, entry["number"])


def _copy(target: np.ndarray, source: np.ndarray, name: str) -> None:
    if target.shape != source.shape or target.dtype != source.dtype:
        raise CheckpointError(
            f"{name} is {source.dtype}{list(source.shape)} in the checkpoint, "
            f"{target.dtype}{list(target.shape)} here: cannot resume it"
        )
    np.copyto(target, source)
