"""PPO's network (a preset of ``trinity_env.agents.networks.network.MLPNetwork``), its checkpoints,
and an agent that plays one.

What is safe to load: a ``.pt`` checkpoint is first read dry (``trinity_env.agents.loaders.checkpoint``:
no tensor is built, every storage and view is checked against the bytes the file really
holds), its fields checked strictly: ``format``, ``hidden`` and ``layers`` (ints, not bools,
floats or strings, inside the shared size limits), ``network`` (``"mlp"``), ``tactics`` (a
bool), ``steps`` when present (an int, at least 0) and ``model`` (floating-point
tensors with exactly the names and shapes of the network those fields describe). Only
then is it read with ``torch.load(..., weights_only=True)``, which never imports or calls a
class named in the file, and the weights are cast to float32 and checked finite; a
``NetworkAgent``'s outputs are held to every policy's contract (``trinity_env.agents.outputs``)
on a probe batch when it is made and on every move. Other
keys (the trainer's optimizer state, pool, RNG states) are kept in the payload as loaded.
Every unreadable, truncated, oversized, foreign or mismatched file raises
``CheckpointError`` (a ``TrinityError``, so a ``ValueError``) naming the file and the
problem. torch is imported here, so only an agent that needs it loads this module: the rest of
the library runs without it.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import torch

from trinity_env.agents.loaders.checkpoint import CheckpointError
from trinity_env.agents.loaders.network_checkpoint import int_field, load_network, save_network
from trinity_env.agents.networks.network import MLPNetwork
from trinity_env.agents.outputs import checked, probe
from trinity_env.core import GameState
from trinity_env.core.actions import DECK_SIZE
from trinity_env.spec.agent import Agent, Observation

FORMAT = "trinity-towers-policy"

__all__ = ["FORMAT", "CheckpointError", "NetworkAgent", "PolicyNetwork", "load_checkpoint", "save_checkpoint"]


class PolicyNetwork(MLPNetwork):
    """PPO's network (``training/fast_ppo.py``): an ``MLPNetwork`` (Tanh, the policy head initialised
    orthogonally at gain 0.01, an unbounded value) from the observation to 256 action logits and a value.

    With ``tactics``, each placement's logit also gets a learned function of its tactical
    features (``trinity_env.agents.networks.tactics``: captures, domino, lane completion, blocks).
    """

    def __init__(self, hidden: int = 256, layers: int = 2, tactics: bool = False):
        super().__init__(hidden, layers, tactics, activation="tanh", bounded_value=False, orthogonal_policy=True)


def save_checkpoint(path: str | Path, network: PolicyNetwork, extra: dict[str, Any] | None = None) -> None:
    """Write the network (and ``extra`` tensors and numbers) atomically, never through a link: a crash or a full
    disk leaves the old file (``trinity_env.agents.loaders.network_checkpoint.save_network``)."""
    save_network(path, network, FORMAT, extra)


def load_checkpoint(path: str | Path) -> tuple[PolicyNetwork, dict[str, Any]]:
    """The network of a checkpoint and the whole payload; ``CheckpointError`` says what is wrong.

    Checked on a dry run before any tensor is built, then read with ``weights_only=True`` (no code in it can
    run): see the module's docstring and ``trinity_env.agents.loaders.network_checkpoint.load_network``.
    """
    return load_network(path, {"mlp": PolicyNetwork}, FORMAT, "policy", validate_extra=_steps)


def _steps(name: str, payload: dict) -> None:
    if "steps" in payload:
        int_field(name, payload, "steps", 0)


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
        # the output contract (``outputs``; PPO's value is a return, unbounded): on the probe batch now, on every
        # move in play, each refusal one line naming ``name`` (the file, for a loaded network)
        self._checked = checked(name, self._forward, bounded=False)
        probe(name, self._checked, bounded=False)

    def _forward(self, observations: np.ndarray, masks: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        with torch.inference_mode():
            logits, values = self.network(torch.as_tensor(observations), torch.as_tensor(masks))
        return logits.numpy(), values.numpy()

    def reset(self, seed: int | None = None) -> None:
        if seed is not None:
            self._generator.manual_seed(seed)

    def evaluate(self, observations: np.ndarray, masks: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """The network's masked logits and value estimates for a batch of observations [B, 339] and masks
        [B, 256] (``trinity accuracy`` scores the value head and the policy's first choice), held to the output
        contract."""
        return self._checked(observations, masks)

    def act(self, observation: Observation, state: GameState | None = None) -> int:
        mask = observation["action_mask"]
        drafting = not mask[DECK_SIZE:].any()
        sample = self.sample == "all" or (self.sample == "draft" and drafting)
        logits, _ = self._checked(np.asarray(observation["observation"])[None], np.asarray(mask)[None])
        if not sample:  # as ``MLPNetwork.act``: the most likely legal action, or a sample of the masked softmax
            return int(logits[0].argmax())
        probabilities = torch.softmax(torch.from_numpy(logits), -1)
        return int(torch.multinomial(probabilities, 1, generator=self._generator)[0, 0])

    @classmethod
    def from_checkpoint(cls, path: str | Path, sample: bool | str = False, seed: int | None = None) -> NetworkAgent:
        network, _ = load_checkpoint(path)
        return cls(network, name=str(path), sample=sample, seed=seed)
