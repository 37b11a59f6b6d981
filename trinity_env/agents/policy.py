"""Neural policies: the network the trainers use, its checkpoints, and an agent that plays it.

What is safe to load: a ``.pt`` checkpoint is read with ``torch.load(..., weights_only=True)``,
which rebuilds only tensors, numbers, strings and plain containers and never imports or
calls a class named in the file, so a crafted file cannot run code. Its fields are then
checked strictly before anything is built: ``format``, ``hidden`` and ``layers`` (ints,
not bools, floats or strings, at least 1), ``tactics`` (a bool, absent means ``False``),
``steps`` when present (an int, at least 0) and ``model`` (a dict of finite floating-point
tensors with exactly the names and shapes of the network those fields describe). Other
keys (the trainer's optimizer state, pool, RNG states) are kept in the payload as loaded.
Every unreadable, truncated, foreign or mismatched file raises ``CheckpointError`` (a
``TrinityError``, so a ``ValueError``) naming the file and the problem. torch is
imported here only: the rest of the library runs without it.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import torch
from torch import nn

from trinity_env.agents.base import Agent, Observation
from trinity_env.agents.tactics import FEATURES, tactical_features
from trinity_env.core import GameState, TrinityError
from trinity_env.core.actions import DECK_SIZE
from trinity_env.envs.observation import OBSERVATION_HIGH, OBSERVATION_SIZE

FORMAT = "trinity-towers-policy"


class CheckpointError(TrinityError):
    """A checkpoint file that cannot be used: unreadable, corrupt, or for another network."""


class PolicyNetwork(nn.Module):
    """An MLP from the observation to 256 action logits and a value.

    With ``tactics``, each placement's logit also gets a learned function of its tactical
    features (``trinity_env.agents.tactics``: captures, domino, lane completion, blocks).
    """

    def __init__(self, hidden: int = 256, layers: int = 2, tactics: bool = False):
        super().__init__()
        self.hidden, self.layers, self.tactics = hidden, layers, tactics
        blocks: list[nn.Module] = []
        width = OBSERVATION_SIZE
        for _ in range(layers):
            blocks += [nn.Linear(width, hidden), nn.Tanh()]
            width = hidden
        self.body = nn.Sequential(*blocks)
        self.policy = nn.Linear(hidden, 256)
        self.value = nn.Linear(hidden, 1)
        nn.init.orthogonal_(self.policy.weight, 0.01)
        nn.init.zeros_(self.policy.bias)
        if tactics:
            self.placement = nn.Sequential(nn.Linear(FEATURES, 8), nn.ReLU(), nn.Linear(8, 1))

    def forward(
        self, observations: torch.Tensor, masks: torch.Tensor, tactical: torch.Tensor | None = None
    ) -> tuple[torch.Tensor, torch.Tensor]:
        """Masked logits (illegal actions at a large negative value) and values.

        ``tactical``: the observations' ``tactical_features``, when the caller already has them
        (the PPO update reuses one computation over all its epochs).
        """
        features = self.features(observations)
        return self.logits(features, observations, masks, tactical), self.values(features)

    def features(self, observations: torch.Tensor) -> torch.Tensor:
        """The body's output, shared by the policy and value heads (RLlib's "embeddings")."""
        return self.body(observations.float() / OBSERVATION_HIGH)

    def logits(
        self, features: torch.Tensor, observations: torch.Tensor, masks: torch.Tensor,
        tactical: torch.Tensor | None = None,
    ) -> torch.Tensor:  # fmt: skip
        """The policy head on ``features`` (with the tactical bonus), illegal actions masked."""
        logits = self.policy(features)
        if self.tactics:
            if tactical is None:
                with torch.no_grad():
                    tactical = tactical_features(observations)
            bonus = self.placement(tactical).flatten(1)  # [B, 240]: 16 cards x 15 tiles
            logits = torch.cat([logits[:, :DECK_SIZE], logits[:, DECK_SIZE:] + bonus], dim=1)
        return logits.masked_fill(~masks.bool(), -1e9)

    def values(self, features: torch.Tensor) -> torch.Tensor:
        """The value head on ``features``."""
        return self.value(features).squeeze(-1)

    @torch.no_grad()
    def act(self, observations: np.ndarray, masks: np.ndarray, greedy: bool = True, generator=None) -> np.ndarray:
        """Actions for a batch: the most likely legal action, or a sample."""
        logits, _ = self(torch.as_tensor(observations), torch.as_tensor(masks))
        if greedy:
            return logits.argmax(-1).numpy()
        probs = torch.softmax(logits, -1)
        return torch.multinomial(probs, 1, generator=generator).squeeze(-1).numpy()


def save_checkpoint(path: str | Path, network: PolicyNetwork, extra: dict[str, Any] | None = None) -> None:
    """Write the network (and ``extra`` tensors and numbers) atomically: a crash leaves the old file."""
    path = Path(path)
    payload = {"format": FORMAT, "hidden": network.hidden, "layers": network.layers, "tactics": network.tactics,
               "model": network.state_dict()}  # fmt: skip
    payload |= extra or {}
    temporary = path.with_suffix(path.suffix + ".tmp")
    torch.save(payload, temporary)
    temporary.replace(path)


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


def _field_int(path: Path, payload: dict, key: str, minimum: int) -> int:
    """``payload[key]`` as a genuine int (not a bool, float or string) of at least ``minimum``."""
    if key not in payload:
        raise CheckpointError(f"{path} is missing the field {key!r}")
    value = payload[key]
    if type(value) is not int:  # bool is a subclass of int: refused too
        raise CheckpointError(f"{path}: field {key!r} must be an int, got {type(value).__name__} {value!r:.60}")
    if value < minimum:
        raise CheckpointError(f"{path}: field {key!r} must be at least {minimum}, got {value}")
    return value


def _check_state_dict(path: Path, model: Any, hidden: int, layers: int, tactics: bool) -> None:
    """Refuse a ``model`` that is not exactly the tensors of ``PolicyNetwork(hidden, layers, tactics)``.

    The expected shapes come from the network built on the meta device (no memory, no
    computation), so nothing the size of ``hidden`` is allocated before the file's own
    tensors have been found to match it.
    """
    if not isinstance(model, dict):
        raise CheckpointError(f"{path}: field 'model' must be a dict of tensors, got {type(model).__name__}")
    if not all(isinstance(key, str) for key in model):
        raise CheckpointError(f"{path}: field 'model' has a key that is not a string")
    if layers > len(model):  # each layer holds two tensors: a count this large cannot match
        raise CheckpointError(f"{path} does not match the policy network: {layers} layers but {len(model)} tensors")
    try:
        with torch.device("meta"):
            expected = {key: tuple(t.shape) for key, t in PolicyNetwork(hidden, layers, tactics).state_dict().items()}
    except (RuntimeError, TypeError, ValueError, OverflowError):  # sizes past what torch can even describe
        raise CheckpointError(f"{path} does not match the policy network: hidden={hidden} is out of range") from None
    missing, unexpected = sorted(set(expected) - set(model)), sorted(set(model) - set(expected))
    if missing or unexpected:
        raise CheckpointError(
            f"{path} does not match the policy network (hidden={hidden}, layers={layers}, tactics={tactics}): "
            f"missing {missing[:4]}, unexpected {unexpected[:4]}"
        )
    for key, shape in expected.items():
        tensor = model[key]
        if not isinstance(tensor, torch.Tensor) or tensor.layout != torch.strided:
            raise CheckpointError(f"{path}: model entry {key!r} is not a dense tensor ({type(tensor).__name__})")
        if tuple(tensor.shape) != shape:
            raise CheckpointError(
                f"{path} does not match the policy network: {key!r} has shape {tuple(tensor.shape)}, expected {shape}"
            )
        if not tensor.is_floating_point():
            raise CheckpointError(f"{path}: model entry {key!r} has dtype {tensor.dtype}, not a floating-point one")
        if not bool(torch.isfinite(tensor).all()):
            raise CheckpointError(f"{path}: model entry {key!r} holds NaN or infinite values")


def load_checkpoint(path: str | Path) -> tuple[PolicyNetwork, dict[str, Any]]:
    """The network of a checkpoint and the whole payload; ``CheckpointError`` says what is wrong.

    The file is read with ``weights_only=True`` (no code in it can run) and every field the
    network is built from is validated first: see the module's docstring.
    """
    path = Path(path)
    if path.is_dir():
        raise CheckpointError(f"{path} is a directory, not a checkpoint file")
    try:
        payload = torch.load(path, map_location="cpu", weights_only=True)
    except FileNotFoundError:
        raise CheckpointError(f"no checkpoint at {path}") from None
    except Exception as err:  # torch raises many kinds for a damaged, truncated or pickled-class file
        raise CheckpointError(f"{path} is not a readable checkpoint ({describe_error(err)})") from None
    if not isinstance(payload, dict) or payload.get("format") != FORMAT:
        raise CheckpointError(f"{path} is not a trinity-towers policy checkpoint")
    hidden = _field_int(path, payload, "hidden", 1)
    layers = _field_int(path, payload, "layers", 1)
    tactics = payload.get("tactics", False)
    if type(tactics) is not bool:
        raise CheckpointError(f"{path}: field 'tactics' must be a bool, got {type(tactics).__name__} {tactics!r:.60}")
    if "steps" in payload:
        _field_int(path, payload, "steps", 0)
    if "model" not in payload:
        raise CheckpointError(f"{path} is missing the field 'model'")
    _check_state_dict(path, payload["model"], hidden, layers, tactics)
    network = PolicyNetwork(hidden, layers, tactics)
    try:
        network.load_state_dict(payload["model"])
    except (RuntimeError, KeyError, TypeError) as err:  # already checked: a last line of defence
        raise CheckpointError(f"{path} does not match the policy network: {err}") from None
    network.eval()
    return network, payload


class NetworkAgent(Agent):
    """Plays a policy network: its most likely legal action, or a sample from it.

    ``sample``: ``False`` (or ``"none"``) never samples, ``True`` (or ``"all"``) always, and
    ``"draft"`` samples its picks only, so self-play drafts vary while placements stay the
    network's best.
    """

    SAMPLING = {False: "none", True: "all", "none": "none", "all": "all", "draft": "draft"}

    def __init__(
        self, network: PolicyNetwork, name: str = "policy", sample: bool | str = False, seed: int | None = None
    ):
        if sample not in self.SAMPLING:
            raise ValueError(f"sample must be one of none, all, draft (or a bool), got {sample!r}")
        self.network = network
        self.name = name
        self.sample = self.SAMPLING[sample]
        self._generator = torch.Generator().manual_seed(seed or 0)

    def reset(self, seed: int | None = None) -> None:
        if seed is not None:
            self._generator.manual_seed(seed)

    def act(self, observation: Observation, state: GameState | None = None) -> int:
        mask = observation["action_mask"]
        drafting = not mask[DECK_SIZE:].any()
        sample = self.sample == "all" or (self.sample == "draft" and drafting)
        actions = self.network.act(
            observation["observation"][None], mask[None], greedy=not sample, generator=self._generator
        )
        return int(actions[0])

    @classmethod
    def from_checkpoint(cls, path: str | Path, sample: bool | str = False, seed: int | None = None) -> NetworkAgent:
        network, _ = load_checkpoint(path)
        return cls(network, name=str(path), sample=sample, seed=seed)
