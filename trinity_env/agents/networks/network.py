"""The policy-value network of every torch agent: an MLP from the observation to 256 masked action logits and a value.

``MLPNetwork`` maps int8 observations ``[B, 339]`` (``docs/observation.md``), scaled by
``OBSERVATION_HIGH``, through ``layers`` hidden layers of width ``hidden`` to a policy head (256
logits, illegal actions at -1e9) and a value head that share that body. With ``tactics`` each
placement's logit also gets a learned function of its tactical features
(``trinity_env.agents.networks.tactics``: captures, domino, lane completion, blocks). Its presets:
PPO's ``PolicyNetwork`` (``trinity_env.agents.networks.ppo_network``: Tanh, the policy head initialised
orthogonally at gain 0.01, an unbounded value) and AlphaZero's ``AZNetwork``
(``trinity_env.agents.az``: ReLU, default initialisation, a value in [-1, 1] through tanh).

The parameters are named alike in every preset (``body.N``, ``policy``, ``value``,
``placement.0`` and ``placement.2``), so the checkpoints of both (``trinity_env.agents.loaders.checkpoint``)
are described by ``hidden``, ``layers`` and ``tactics`` alone.
"""

from __future__ import annotations

from typing import ClassVar, Literal

import numpy as np
import torch
from torch import nn

from trinity_env.agents.networks.tactics import FEATURES, tactical_features
from trinity_env.core.actions import DECK_SIZE
from trinity_env.spec.observation import OBSERVATION_HIGH, OBSERVATION_SIZE

__all__ = ["ACTIVATIONS", "MLPNetwork"]

ACTIVATIONS: dict[str, type[nn.Module]] = {"tanh": nn.Tanh, "relu": nn.ReLU}
"""The hidden layers' activations, by the name ``MLPNetwork`` takes."""


class MLPNetwork(nn.Module):
    """An MLP from the observation to masked action logits and a value (see the module).

    ``activation``: the hidden layers' (``"tanh"`` or ``"relu"``). ``bounded_value``: the value
    through tanh, in [-1, 1]. ``orthogonal_policy``: the policy head's weights initialised
    orthogonally at gain 0.01 and its bias at zero, so the first policy is near uniform.
    The parameters are created in one fixed order (body, policy, value, the policy head's
    initialisation, placement): a seeded torch builds the same weights every time.
    """

    architecture: ClassVar[str] = "mlp"
    """The name checkpoints give it (their ``network`` field; ``trinity_env.agents.loaders.checkpoint``)."""

    def __init__(
        self,
        hidden: int = 256,
        layers: int = 2,
        tactics: bool = False,
        *,
        activation: Literal["tanh", "relu"],
        bounded_value: bool,
        orthogonal_policy: bool,
    ):
        super().__init__()
        if activation not in ACTIVATIONS:
            raise ValueError(f"activation must be one of {', '.join(ACTIVATIONS)}, got {activation!r}")
        self.hidden, self.layers, self.tactics = hidden, layers, tactics
        self.activation, self.bounded_value, self.orthogonal_policy = activation, bounded_value, orthogonal_policy
        blocks: list[nn.Module] = []
        width = OBSERVATION_SIZE
        for _ in range(layers):
            blocks += [nn.Linear(width, hidden), ACTIVATIONS[activation]()]
            width = hidden
        self.body = nn.Sequential(*blocks)
        self.policy = nn.Linear(hidden, 256)
        self.value = nn.Linear(hidden, 1)
        if orthogonal_policy:
            nn.init.orthogonal_(self.policy.weight, 0.01)
            nn.init.zeros_(self.policy.bias)
        if tactics:
            self.placement = nn.Sequential(nn.Linear(FEATURES, 8), nn.ReLU(), nn.Linear(8, 1))

    def forward(
        self, observations: torch.Tensor, masks: torch.Tensor, tactical: torch.Tensor | None = None
    ) -> tuple[torch.Tensor, torch.Tensor]:
        """Logits (illegal actions at -1e9) and values, for int8 observations [B, 339] and masks [B, 256].

        ``tactical``: the observations' ``tactical_features`` [B, 16, 15, FEATURES], when the caller
        already has them (the trainers reuse one computation over all their epochs).
        """
        features = self.features(observations)
        return self.logits(features, observations, masks, tactical), self.values(features)

    def features(self, observations: torch.Tensor) -> torch.Tensor:
        """The body's output, shared by the policy and value heads (RLlib's "embeddings")."""
        return self.body(observations.float() / OBSERVATION_HIGH)

    def logits(
        self,
        features: torch.Tensor,
        observations: torch.Tensor,
        masks: torch.Tensor,
        tactical: torch.Tensor | None = None,
    ) -> torch.Tensor:
        """The policy head on ``features`` (with the tactical bonus), illegal actions masked."""
        logits = self.policy(features)
        if self.tactics:
            if tactical is None:
                tactical = tactical_features(observations)
            bonus = self.placement(tactical).flatten(1)  # [B, 240]: 16 cards x 15 tiles
            logits = torch.cat([logits[:, :DECK_SIZE], logits[:, DECK_SIZE:] + bonus], dim=1)
        return logits.masked_fill(~masks.bool(), -1e9)

    def values(self, features: torch.Tensor) -> torch.Tensor:
        """The value head on ``features`` (through tanh when ``bounded_value``)."""
        values = self.value(features).squeeze(-1)
        return torch.tanh(values) if self.bounded_value else values

    @torch.no_grad()
    def act(self, observations: np.ndarray, masks: np.ndarray, greedy: bool = True, generator=None) -> np.ndarray:
        """Actions for a batch: the most likely legal action, or a sample."""
        logits, _ = self(torch.as_tensor(observations), torch.as_tensor(masks))
        if greedy:
            return logits.argmax(-1).numpy()
        probs = torch.softmax(logits, -1)
        return torch.multinomial(probs, 1, generator=generator).squeeze(-1).numpy()
