"""Tianshou's masked multi-agent DQN on Trinity Towers: a learner against the random player.

This is Tianshou's own multi-agent example (``test/pettingzoo/tic_tac_toe.py`` of Tianshou
2.0) with the env constructor changed to ``PettingZooEnv(trinity_env.env())`` and nothing
else about the env touched: the learner's DQN and a random masked player share the game
through ``MultiAgentOffPolicyAlgorithm``, the legal-action mask reaches the Q-network's
argmax through Tianshou's ``PettingZooEnv`` wrapper, and the learner's column of the
returns is what the trainer scores. At the end the learner (greedy, no exploration)
plays fresh games against the random player and the win rate is printed.

The defaults are a smoke-test budget (under a minute). ``--epochs 6 --epoch-steps 5000``
(30,000 env steps, both seats' moves) won 60% of 200 games against random; the default run
wins about 35%.

Needs Tianshou 2.x (``pip install "trinity-towers[integrations]"``).

``--export policy.onnx`` writes the learner's Q-network as an ONNX file every evaluation tool takes
(its Q-values as the logits: ``trinity benchmark --agent onnx:policy.onnx``).

Usage: python examples/tianshou_dqn.py [--epochs N] [--epoch-steps S] [--eval-games G] [--seat 0|1] [--seed S]
       [--export PATH]
"""

from __future__ import annotations

import argparse
import logging
import math

import numpy as np
import torch
from tianshou.algorithm import DQN, MARLRandomDiscreteMaskedOffPolicyAlgorithm, MultiAgentOffPolicyAlgorithm
from tianshou.algorithm.modelfree.dqn import DiscreteQLearningPolicy
from tianshou.algorithm.optim import AdamOptimizerFactory
from tianshou.data import Collector, CollectStats, VectorReplayBuffer
from tianshou.env import DummyVectorEnv
from tianshou.env.pettingzoo_env import PettingZooEnv
from tianshou.trainer import OffPolicyTrainerParams
from tianshou.utils.net.common import Net

import trinity_env


def make_env(draft: str = "pick") -> PettingZooEnv:
    return PettingZooEnv(trinity_env.env(draft=draft))


def build(args: argparse.Namespace) -> tuple[MultiAgentOffPolicyAlgorithm, DiscreteQLearningPolicy]:
    """The multi-agent algorithm (learner in seat ``args.seat``, random player in the other), the learner's policy."""
    env = make_env(args.draft)
    observation_space = env.observation_space["observation"]
    net = Net(state_shape=observation_space.shape, action_shape=env.action_space.n, hidden_sizes=args.hidden)
    policy = DiscreteQLearningPolicy(
        model=net, action_space=env.action_space, eps_training=args.eps_train, eps_inference=args.eps_test
    )
    learner = DQN(
        policy=policy,
        optim=AdamOptimizerFactory(lr=args.lr),
        n_step_return_horizon=args.n_step,
        gamma=args.gamma,
        target_update_freq=args.target_update_freq,
    )
    opponent = MARLRandomDiscreteMaskedOffPolicyAlgorithm(action_space=env.action_space)
    seats = [learner, opponent] if args.seat == 0 else [opponent, learner]
    return MultiAgentOffPolicyAlgorithm(algorithms=seats, env=env), policy


class QValues(torch.nn.Module):
    """The Q-network as the ONNX contract's module: float32 observations [B, 339] -> Q-values [B, 256]."""

    def __init__(self, net: Net):
        super().__init__()
        self.net = net

    def forward(self, observation: torch.Tensor) -> torch.Tensor:
        return self.net(observation)[0]  # Tianshou's Net returns (output, hidden state)


def export(policy: DiscreteQLearningPolicy, path: str) -> str:
    """The learner's Q-network written to ``path`` as ONNX
    (``trinity_env.agents.loaders.onnx_policy.export_policy``)."""
    from trinity_env.agents.loaders.onnx_policy import export_policy

    return str(export_policy(QValues(policy.model), path))


def win_rate(
    algorithm: MultiAgentOffPolicyAlgorithm, policy: DiscreteQLearningPolicy, args: argparse.Namespace
) -> float:
    """Share of ``args.eval_games`` fresh games the greedy learner wins against the random player."""
    policy.set_eps_inference(0.0)
    envs = DummyVectorEnv([lambda: make_env(args.draft) for _ in range(args.test_envs)])
    envs.seed(args.seed + 10_000)
    stats = Collector[CollectStats](algorithm, envs).collect(n_episode=args.eval_games, reset_before_collect=True)
    returns = np.asarray(stats.returns).reshape(-1, 2)[:, args.seat]  # one column per seat
    return float(np.mean(returns > 0))


def main(argv: list[str] | None = None) -> float:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--epochs", type=int, default=1)
    parser.add_argument("--epoch-steps", type=int, default=500, help="env steps per epoch (both seats' moves)")
    parser.add_argument("--eval-games", type=int, default=50, help="games against random at the end")
    parser.add_argument("--seat", type=int, choices=(0, 1), default=0, help="the learner's seat")
    parser.add_argument("--draft", choices=("pick", "dealt"), default="pick")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--train-envs", type=int, default=4)
    parser.add_argument("--test-envs", type=int, default=4)
    parser.add_argument("--buffer-size", type=int, default=20_000)
    parser.add_argument("--batch-size", type=int, default=64)
    parser.add_argument("--lr", type=float, default=1e-4)
    parser.add_argument("--gamma", type=float, default=0.9)
    parser.add_argument("--n-step", type=int, default=3)
    parser.add_argument("--target-update-freq", type=int, default=320)
    parser.add_argument("--eps-train", type=float, default=0.1)
    parser.add_argument("--eps-test", type=float, default=0.05)
    parser.add_argument("--update-per-step", type=float, default=0.1)
    parser.add_argument("--hidden", type=int, nargs="*", default=[256, 256])
    parser.add_argument("--progress", action="store_true", help="show Tianshou's progress bars")
    parser.add_argument("--export", default=None, metavar="PATH", help="write the Q-network to this ONNX file")
    args = parser.parse_args(argv)
    # Tianshou warns on every multi-agent episode that its returns are 2-D (one column per seat)
    logging.getLogger("tianshou.data.stats").setLevel(logging.ERROR)

    np.random.seed(args.seed)
    torch.manual_seed(args.seed)
    train_envs = DummyVectorEnv([lambda: make_env(args.draft) for _ in range(args.train_envs)])
    test_envs = DummyVectorEnv([lambda: make_env(args.draft) for _ in range(args.test_envs)])
    train_envs.seed(args.seed)
    test_envs.seed(args.seed + 1)
    algorithm, policy = build(args)

    train_collector = Collector[CollectStats](
        algorithm, train_envs, VectorReplayBuffer(args.buffer_size, len(train_envs)), exploration_noise=True
    )
    test_collector = Collector[CollectStats](algorithm, test_envs, exploration_noise=True)
    train_collector.reset()
    train_collector.collect(n_step=args.batch_size * args.train_envs)
    # env steps per collection: a multiple of the env count, enough for at least one gradient step
    collect_steps = args.train_envs * max(2, math.ceil(1 / (args.update_per_step * args.train_envs)))
    result = algorithm.run_training(
        OffPolicyTrainerParams(
            training_collector=train_collector,
            test_collector=test_collector,
            max_epochs=args.epochs,
            epoch_num_steps=args.epoch_steps,
            collection_step_num_env_steps=collect_steps,
            test_step_num_episodes=args.test_envs,
            batch_size=args.batch_size,
            update_step_num_gradient_steps_per_sample=args.update_per_step,
            multi_agent_return_reduction=lambda returns: returns[:, args.seat],  # score the learner's column
            test_in_training=False,
            verbose=args.progress,
            show_progress=args.progress,
        )
    )
    if args.export:
        print(f"wrote {export(policy, args.export)}")
    rate = win_rate(algorithm, policy, args)
    print(
        f"Tianshou DQN (seat {args.seat}) after {result.train_step} env steps, {result.update_step} updates: "
        f"wins {rate:.0%} of {args.eval_games} games against random"
    )
    return rate


if __name__ == "__main__":
    main()
