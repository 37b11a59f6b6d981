"""One PPO iteration on the batched fast engine, in three steps (``collect_rollout``, ``compute_advantages``,
``update``), with the network's optimiser: what the trainer ``training.fast_ppo`` and the exploitability tool
(``trinity_env.evaluation.exploit``, a best response trained against a frozen agent) both run.

The learner's trajectory holds only its own decisions and ends with its own +1 or -1; the opponent moves inside the
vector env (``TrinityTowersVectorEnv``'s ``opponent``), and ``collect_rollout`` asks it which kind each game's
opponent is (``Opponents.kinds``), to count the games each kind ended and the points the learner took from them.
Hyperparameters come from any value with ``PPOSettings``' fields (``training.config.TrainConfig``,
``evaluation.exploit.BestResponse``).
"""

from __future__ import annotations

import math
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Protocol

import numpy as np
import torch
from torch import nn
from torch.optim import Adam

from trinity_env.agents.networks.ppo_network import PolicyNetwork
from trinity_env.agents.networks.tactics import tactical_features

if TYPE_CHECKING:
    from trinity_env.fast.vector_env import TrinityTowersVectorEnv

OPPONENT_KINDS = 4
"""The kinds of opponent a rollout counts games and points for (the trainer's pool: random, greedy, latest, past)."""


class PPOSettings(Protocol):
    """The hyperparameters one iteration reads."""

    learning_rate: float
    epochs: int
    minibatches: int
    clip: float
    entropy: float
    value_coef: float
    max_grad_norm: float
    gamma: float
    gae_lambda: float
    tactics: bool


class Opponents(Protocol):
    def kinds(self) -> np.ndarray:
        """Each game's opponent as a kind, ``0 <= kind < OPPONENT_KINDS``."""
        ...


@dataclass
class Rollout:
    """One rollout: ``T = rollout_steps`` learner decisions in each of ``B = num_games`` games."""

    observations: np.ndarray  # int8 [T, B, 339]
    masks: np.ndarray  # bool [T, B, 256]
    actions: torch.Tensor  # [T, B]
    logprobs: torch.Tensor
    values: torch.Tensor
    rewards: torch.Tensor
    dones: torch.Tensor
    next_observations: np.ndarray | None = None  # where the games stand after the rollout (to bootstrap)
    next_masks: np.ndarray | None = None
    games_ended: np.ndarray = field(default_factory=lambda: np.zeros(OPPONENT_KINDS))  # per opponent kind
    points: np.ndarray = field(default_factory=lambda: np.zeros(OPPONENT_KINDS))  # 1 a win, 1/2 a draw

    @classmethod
    def empty(cls, steps: int, games: int, observation_size: int) -> Rollout:
        return cls(
            np.zeros((steps, games, observation_size), np.int8),
            np.zeros((steps, games, 256), bool),
            torch.zeros((steps, games), dtype=torch.long),
            *(torch.zeros((steps, games)) for _ in range(4)),
        )

    @classmethod
    def game_step_bytes(cls, observation_size: int) -> int:
        """Bytes a rollout holds per game and learner step: its arrays at one step of one game (measured on a
        rollout of one), and the advantages and returns of the update (float32 each)."""
        one = cls.empty(1, 1, observation_size)
        arrays = (one.observations, one.masks, one.actions, one.logprobs, one.values, one.rewards, one.dones)
        return sum(int(array.nbytes) for array in arrays) + 2 * 4


def collect_rollout(
    network: PolicyNetwork,
    env: TrinityTowersVectorEnv,
    pool: Opponents,
    rollout: Rollout,
    observations: np.ndarray,
    masks: np.ndarray,
) -> Rollout:
    """Play ``rollout_steps`` learner decisions in every game, sampling from ``network``; fill ``rollout``.

    Game results (for ``train/win_rate_vs_*``) come from the env's ``winner``, not from rewards,
    which ``reward: margin`` shapes."""
    rollout.games_ended[:], rollout.points[:] = 0, 0
    for t in range(rollout.actions.shape[0]):
        rollout.observations[t], rollout.masks[t] = observations, masks
        with torch.no_grad():
            logits, value = network(torch.as_tensor(observations), torch.as_tensor(masks))
            distribution = torch.distributions.Categorical(logits=logits)
            action = distribution.sample()
        rollout.actions[t], rollout.logprobs[t], rollout.values[t] = action, distribution.log_prob(action), value
        seats, kinds = env.seats.copy(), pool.kinds()  # before the step restarts finished games
        observations, reward, terminated, _, infos = env.step(action.numpy())
        masks = infos["action_mask"]
        rollout.rewards[t], rollout.dones[t] = torch.as_tensor(reward), torch.as_tensor(terminated, dtype=torch.float32)
        winner = infos["final_info"]["winner"][terminated] if terminated.any() else infos["winner"][terminated]
        points = (winner == seats[terminated]) + 0.5 * (winner == -1)
        np.add.at(rollout.games_ended, kinds[terminated], 1)
        np.add.at(rollout.points, kinds[terminated], points)
    rollout.next_observations, rollout.next_masks = observations, masks
    return rollout


def compute_advantages(network: PolicyNetwork, rollout: Rollout, config: PPOSettings) -> tuple[torch.Tensor, ...]:
    """GAE advantages and returns, cut at each game's end and bootstrapped from the value after the rollout."""
    T, B = rollout.actions.shape
    with torch.no_grad():
        _, next_value = network(torch.as_tensor(rollout.next_observations), torch.as_tensor(rollout.next_masks))
        advantages = torch.zeros((T, B))
        running = torch.zeros(B)
        for t in reversed(range(T)):
            following = next_value if t == T - 1 else rollout.values[t + 1]
            alive = 1.0 - rollout.dones[t]
            delta = rollout.rewards[t] + config.gamma * following * alive - rollout.values[t]
            running = delta + config.gamma * config.gae_lambda * alive * running
            advantages[t] = running
    return advantages, advantages + rollout.values


def update(
    network: PolicyNetwork,
    optimizer: torch.optim.Optimizer,
    rollout: Rollout,
    advantages: torch.Tensor,
    returns: torch.Tensor,
    config: PPOSettings,
) -> dict[str, float]:
    """The clipped PPO update: ``epochs`` passes over the rollout in ``minibatches``.

    Returns CleanRL's diagnostics, averaged over the minibatches: the losses, ``approx_kl`` (the
    ``(r - 1) - log r`` estimator of KL(old, new)), ``clipfrac`` (share of ratios outside the clip
    range) and ``explained_variance`` of the returns by the rollout's values."""
    n = advantages.numel()
    obs = torch.as_tensor(rollout.observations.reshape(n, -1))
    masks = torch.as_tensor(rollout.masks.reshape(n, -1))
    tactical = tactical_features(obs) if config.tactics else None  # once, not once per epoch
    actions, logprobs = rollout.actions.reshape(-1), rollout.logprobs.reshape(-1)
    advantages, returns = advantages.reshape(-1), returns.reshape(-1)
    size = n // config.minibatches
    sums = dict.fromkeys(("policy", "value", "entropy", "approx_kl", "clipfrac"), 0.0)
    for _ in range(config.epochs):
        order = torch.randperm(n)
        for start in range(0, n, size):
            idx = order[start : start + size]
            logits, value = network(obs[idx], masks[idx], None if tactical is None else tactical[idx])
            distribution = torch.distributions.Categorical(logits=logits)
            log_ratio = distribution.log_prob(actions[idx]) - logprobs[idx]
            ratio = torch.exp(log_ratio)
            adv = advantages[idx]
            adv = (adv - adv.mean()) / (adv.std() + 1e-8)
            policy_loss = torch.max(-adv * ratio, -adv * ratio.clamp(1 - config.clip, 1 + config.clip)).mean()
            value_loss = 0.5 * (value - returns[idx]).pow(2).mean()
            entropy = distribution.entropy().mean()
            loss = policy_loss + config.value_coef * value_loss - config.entropy * entropy
            optimizer.zero_grad()
            loss.backward()
            nn.utils.clip_grad_norm_(network.parameters(), config.max_grad_norm)
            optimizer.step()
            with torch.no_grad():
                sums["policy"] += policy_loss.item()
                sums["value"] += value_loss.item()
                sums["entropy"] += entropy.item()
                sums["approx_kl"] += ((ratio - 1) - log_ratio).mean().item()
                sums["clipfrac"] += ((ratio - 1).abs() > config.clip).float().mean().item()
    stats = {name: total / (config.epochs * config.minibatches) for name, total in sums.items()}
    values = rollout.values.reshape(-1)
    variance = returns.var().item()
    stats["explained_variance"] = math.nan if variance == 0 else 1 - (returns - values).var().item() / variance
    return stats


def make_optimizer(network: PolicyNetwork, config: PPOSettings) -> Adam:
    return Adam(network.parameters(), lr=config.learning_rate, eps=1e-5)


@contextmanager
def torch_threads(count: int) -> Iterator[None]:
    """torch's intra-op threads set to ``count`` inside, restored after (a config's ``torch_threads``)."""
    previous = torch.get_num_threads()
    torch.set_num_threads(count)
    try:
        yield
    finally:
        torch.set_num_threads(previous)
