"""The AlphaZero learner (minibatch steps on the replay buffer) and its checkpoint: ``latest.pt`` holds the network,
the optimiser, the buffer, the random states and where the run stands (``Progress``).
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import torch
from torch.optim import AdamW

from trinity_env.agents.az import AZModel, load_network, save_network
from trinity_env.agents.networks.ppo_network import CheckpointError
from trinity_env.fast.tactics import tactical_batch

from .az_config import AZConfig
from .evaluation import history_from_json
from .replay_buffer import ReplayBuffer


def learn(
    network: AZModel, optimizer, replay: ReplayBuffer, config: AZConfig, rng: np.random.Generator, steps: int
) -> dict[str, float]:
    """``steps`` minibatch steps on uniform samples of the buffer; the mean losses."""
    network.train()
    sums = dict.fromkeys(("policy", "value", "target_entropy"), 0.0)
    for _ in range(steps):
        rows = np.sort(rng.integers(0, replay.size, config.batch_size))
        observations = replay.observations[rows]
        tactical = torch.from_numpy(tactical_batch(observations)) if config.tactics else None
        logits, value = network(torch.from_numpy(observations), torch.from_numpy(replay.masks[rows]), tactical)
        target = torch.from_numpy(replay.policies[rows].astype(np.float32))
        target = target / target.sum(dim=1, keepdim=True).clamp_min(1e-8)
        log_probs = torch.log_softmax(logits, dim=1)
        policy_loss = -(target * log_probs).sum(dim=1).mean()
        value_loss = (value - torch.from_numpy(replay.values[rows])).pow(2).mean()
        loss = policy_loss + config.value_coef * value_loss
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        with torch.no_grad():
            sums["policy"] += policy_loss.item()
            sums["value"] += value_loss.item()
            sums["target_entropy"] += -(target * torch.log(target.clamp_min(1e-12))).sum(dim=1).mean().item()
    network.eval()
    means = {name: total / max(steps, 1) for name, total in sums.items()}
    return means | {"learning_rate": optimizer.param_groups[0]["lr"]}


def make_optimizer(network: AZModel, config: AZConfig) -> AdamW:
    return AdamW(network.parameters(), lr=config.learning_rate, weight_decay=config.weight_decay)


@dataclass
class Progress:
    """Where a run stands: what ``latest.pt`` keeps besides the network, optimiser, buffer and random states."""

    iterations: int = 0
    games: int = 0
    learner_steps: int = 0
    positions: int = 0
    seconds: float = 0.0
    """Training time of the run so far (all sessions), at the last checkpoint."""
    best: float = -1.0
    """The best ``selection_score`` so far (``best.pt``'s)."""
    next_eval: int = 0
    history: list[dict] = field(default_factory=list)


def save_latest(
    path: Path, network, optimizer, replay: ReplayBuffer, rng: np.random.Generator, progress: Progress
) -> None:
    """``latest.pt``: everything the rest of the run depends on, written atomically."""
    extra = {
        "iterations": progress.iterations,
        "games": progress.games,
        "learner_steps": progress.learner_steps,
        "positions": progress.positions,
        "seconds": progress.seconds,
        "best": progress.best,
        "next_eval": progress.next_eval,
        "history": json.dumps(progress.history),
        "optimizer": optimizer.state_dict(),
        "replay": replay.state_dict(),
        "rng": json.dumps(rng.bit_generator.state),
        "torch_rng": torch.get_rng_state(),
    }
    save_network(path, network, extra)


def load_latest(path: Path, config: AZConfig, replay: ReplayBuffer, rng: np.random.Generator):
    """The network, optimiser and progress of ``latest.pt``; restores the buffer and the random states."""
    network, payload = load_network(path)
    shape = (network.architecture, network.hidden, network.layers, network.tactics)
    if shape != (config.network, config.hidden, config.layers, config.tactics):
        raise CheckpointError(f"{path} holds another network than the config's")
    try:
        optimizer = make_optimizer(network, config)
        optimizer.load_state_dict(payload["optimizer"])
        replay.load_state_dict(payload["replay"], path)
        rng.bit_generator.state = json.loads(payload["rng"])
        torch.set_rng_state(payload["torch_rng"])
        progress = Progress(
            *(int(payload[k]) for k in ("iterations", "games", "learner_steps", "positions")),
            float(payload["seconds"]),
            float(payload["best"]),
            int(payload["next_eval"]),
            history_from_json(json.loads(payload["history"])),
        )
    except CheckpointError:
        raise
    except (KeyError, ValueError, TypeError, RuntimeError) as err:
        raise CheckpointError(f"{path} is not a resumable alphazero checkpoint ({type(err).__name__}: {err})") from None
    return network, optimizer, progress
