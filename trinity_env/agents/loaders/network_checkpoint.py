"""The project's network checkpoints: their fields, one save, one load, and a run folder's lookup.

A checkpoint of ours (PPO's ``trinity_env.agents.networks.ppo_network``, AlphaZero's ``trinity_env.agents.az``) is a
torch file holding ``format``, ``network``, ``hidden``, ``layers``, ``tactics`` and ``model``, and whatever a kind adds.
``load_network`` checks those fields, the size limits and the model's names and shapes on the dry run
(``trinity_env.agents.loaders.checkpoint.read_torch``), before any tensor is built; ``save_network`` is the one write
door; ``best_else_latest`` the one run-folder lookup. Every refusal is a ``CheckpointError`` naming the file, one line.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

from trinity_env.agents.loaders.checkpoint import (
    CheckpointError,
    TensorInfo,
    check_state_dict,
    float32_weights,
    network_size_problem,
    read_torch,
)


def int_field(name: str, payload: dict, key: str, low: int, high: int | None = None) -> int:
    """``payload[key]`` as a genuine int (not a bool, float or string) in ``[low, high]``."""
    if key not in payload:
        raise CheckpointError(f"{name} is missing the field {key!r}")
    value = payload[key]
    if type(value) is not int:  # bool is a subclass of int: refused too
        raise CheckpointError(f"{name}: field {key!r} must be an int, got {type(value).__name__} {value!r:.60}")
    if value < low or (high is not None and value > high):
        bound = f"between {low} and {high}" if high is not None else f"at least {low}"
        raise CheckpointError(f"{name}: field {key!r} must be {bound}, got {value}")
    return value


def network_fields(
    name: str, payload: Any, format_name: str, kind: str, networks: tuple[str, ...]
) -> tuple[str, int, int, bool]:
    """``(network, hidden, layers, tactics)`` of a described network checkpoint, each required and checked against
    the size limits. ``network``: the architecture, one of ``networks``."""
    if not isinstance(payload, dict) or payload.get("format") != format_name:
        bare = isinstance(payload, dict) and payload and all(isinstance(v, TensorInfo) for v in payload.values())
        hint = f"; a bare state_dict of a project network plays as state_dict:{name}" if bare else ""
        raise CheckpointError(f"{name} is not a trinity-towers {kind} checkpoint (no format {format_name!r}){hint}")
    if "network" not in payload:
        raise CheckpointError(f"{name} is missing the field 'network' (one of {', '.join(networks)})")
    network = payload["network"]
    if type(network) is not str or network not in networks:
        raise CheckpointError(f"{name}: field 'network' must be one of {', '.join(networks)}, got {network!r:.60}")
    hidden = int_field(name, payload, "hidden", 1)
    layers = int_field(name, payload, "layers", 1)
    problem = network_size_problem(hidden, layers, network)
    if problem:
        raise CheckpointError(f"{name}: {problem}")
    if "tactics" not in payload:
        raise CheckpointError(f"{name} is missing the field 'tactics'")
    tactics = payload["tactics"]
    if type(tactics) is not bool:
        raise CheckpointError(f"{name}: field 'tactics' must be a bool, got {type(tactics).__name__} {tactics!r:.60}")
    if "model" not in payload:
        raise CheckpointError(f"{name} is missing the field 'model'")
    return network, hidden, layers, tactics


# ------------------------------------------------------------------------------ one save, one load, one lookup


def save_network(path: str | Path, network: Any, format_name: str, extra: dict[str, Any] | None = None) -> None:
    """Write ``network`` (a module with ``architecture``, ``hidden``, ``layers``, ``tactics``) and ``extra`` tensors
    and numbers.

    Atomically and never through a link: a crash or a full disk leaves the old file (``WriteError``, one line;
    ``trinity_env.core.writes``). Every torch policy of the project (PPO's and AlphaZero's) is saved here."""
    import torch

    from trinity_env.core.writes import atomic_file

    payload = {
        "format": format_name,
        "network": network.architecture,
        "hidden": network.hidden,
        "layers": network.layers,
        "tactics": network.tactics,
        "model": network.state_dict(),
    }
    payload |= extra or {}
    with atomic_file(Path(path)) as handle:
        torch.save(payload, handle)


def load_network(
    path: str | Path,
    builds: dict[str, Callable[[int, int, bool], Any]],
    format_name: str,
    kind: str,
    validate_extra: Callable[[str, dict], None] | None = None,
) -> tuple[Any, dict[str, Any]]:
    """The network ``builds[network](hidden, layers, tactics)`` with a checkpoint's weights, and the whole payload.

    ``builds``: the architectures this kind of checkpoint may hold, by the name its ``network`` field gives. The
    fields, the size limits and the model's names and shapes (built on the meta device) are checked on the dry
    run, before any tensor is built; then the file is read weights-only and the weights cast to float32 and
    checked finite. ``validate_extra(name, payload)`` checks a kind's own fields on the dry run too.
    ``CheckpointError`` names the file and the fault."""
    import torch

    name = str(path)

    def validate(payload: Any) -> None:
        network, hidden, layers, tactics = network_fields(name, payload, format_name, kind, tuple(builds))
        with torch.device("meta"):
            expected = {key: tuple(t.shape) for key, t in builds[network](hidden, layers, tactics).state_dict().items()}
        check_state_dict(name, payload["model"], expected, f"{kind} {network} network")
        if validate_extra is not None:
            validate_extra(name, payload)

    payload = read_torch(Path(path), name, validate)
    network = builds[payload["network"]](payload["hidden"], payload["layers"], payload["tactics"])
    network.load_state_dict(float32_weights(name, payload["model"]))
    network.eval()
    return network, payload


def best_else_latest(folder: Path, best: Path, latest: Path, load: Callable[[Path], Any]) -> Any:
    """``load(best)``; when it is missing or damaged (refused by any check), ``load(latest)`` with a warning.

    The one run-folder lookup of every trainer's folder (PPO ``.pt`` and ``.zip``, AlphaZero): ``CheckpointError``
    names the folder when there is neither file, and both problems when neither loads."""
    import warnings

    if not os.path.lexists(best) and not os.path.lexists(latest):
        raise CheckpointError(f"no checkpoint in the run folder {folder}: no {best.name} or {latest.name}")
    if not os.path.lexists(best):
        return load(latest)
    try:
        return load(best)
    except CheckpointError as best_error:
        if not os.path.lexists(latest):
            raise
        try:
            result = load(latest)
        except CheckpointError as latest_error:
            raise CheckpointError(
                f"no usable checkpoint in the run folder {folder}: {best.name}: {best_error}; "
                f"{latest.name}: {latest_error}"
            ) from None
        warnings.warn(f"{best} cannot be loaded ({best_error}); playing {latest} instead", stacklevel=4)
        return result
