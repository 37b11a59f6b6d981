"""Agents from Stable-Baselines3 policies: what ``selfplay_ppo`` trains, playable anywhere.

An SB3 checkpoint is a zip that SB3 loads itself (its parameters with ``torch.load``,
``weights_only`` where SB3 supports it); only ``sb3-contrib``'s MaskablePPO is read here.
"""

from __future__ import annotations

from pathlib import Path

from trinity_env.agents.base import Agent, Observation
from trinity_env.core import GameState


class SB3PolicyAgent(Agent):
    """Plays an SB3 maskable policy: its best move, or a sample with ``sample=True``."""

    def __init__(self, policy, sample: bool = False, name: str = "sb3"):
        self.policy, self.sample, self.name = policy, sample, name

    def act(self, observation: Observation, state: GameState | None = None) -> int:
        action, _ = self.policy.predict(
            observation["observation"], action_masks=observation["action_mask"].astype(bool),
            deterministic=not self.sample,
        )  # fmt: skip
        return int(action)

    @classmethod
    def from_zip(cls, path: str | Path) -> SB3PolicyAgent:
        """The policy of a MaskablePPO zip (``RUN/best.zip``, ``RUN/latest.zip``)."""
        from sb3_contrib import MaskablePPO

        from trinity_env.agents.policy import CheckpointError

        try:
            model = MaskablePPO.load(path, device="cpu")
        except FileNotFoundError:
            raise CheckpointError(f"no checkpoint at {path}") from None
        except Exception as err:  # SB3 raises many kinds for a damaged or foreign zip
            raise CheckpointError(
                f"{path} is not a readable MaskablePPO checkpoint ({type(err).__name__}: {err})"
            ) from None
        return cls(model.policy, name=str(path))
