"""AgileRL's DQN on the PettingZoo env with action masks: a learner against the random player.

The learner takes a random seat each game in ``trinity_env.env()`` (the AEC env, unchanged)
and the other seat plays uniformly random legal moves, as in AgileRL's Connect Four
tutorial. A learner transition runs from one of its decisions to its next one (or to the
end of the game), with the reward PettingZoo accumulated for it in between; the action
mask goes to ``DQN.get_action``. At the end the greedy learner plays fresh games against
the random player and the win rate is printed. The default is a smoke test; ``--games 1500``
(22,652 learner decisions) won 56% of 200 games against random.

AgileRL 2.58 needs ``pettingzoo<1.27`` (the env works with PettingZoo 1.23 and later, but
``pettingzoo.make`` needs 1.27: use ``trinity_env.env()``), and its ``agilerl.algorithms``
imports ``peft``, which only its LLM extras install: ``pip install agilerl peft``.

Usage: python examples/agilerl_dqn.py [--games N] [--eval-games G] [--draft pick|dealt] [--seed S]
"""

from __future__ import annotations

import argparse

import numpy as np
import torch
from agilerl.algorithms.dqn import DQN
from agilerl.components.data import Transition, transition_to_tensordict
from agilerl.components.replay_buffer import ReplayBuffer
from gymnasium import spaces

import trinity_env


def random_move(mask: np.ndarray, rng: np.random.Generator) -> int:
    return int(rng.choice(np.flatnonzero(mask)))


def play(env, dqn: DQN, seat: int, rng: np.random.Generator, seed: int, epsilon: float = 0.0, memory=None) -> float:
    """One game, the learner in ``seat``; with ``memory``, its transitions are stored. Returns its final reward."""
    env.reset(seed=seed)
    learner = env.possible_agents[seat]
    previous = None  # the learner's last observation and action
    result = 0.0
    for agent in env.agent_iter():
        observation, reward, termination, truncation, _ = env.last()
        done = termination or truncation
        if agent != learner:
            env.step(None if done else random_move(observation["action_mask"], rng))
            continue
        features = observation["observation"].astype(np.float32)
        if previous is not None and memory is not None:
            transition = transition_to_tensordict(
                Transition(obs=previous[0], action=previous[1], reward=reward, next_obs=features, done=float(done))
            )
            memory.add(transition.unsqueeze(0))
        if done:
            result = reward
            env.step(None)
            continue
        action = int(dqn.get_action(features[None], epsilon, observation["action_mask"][None])[0])
        previous = (features, np.array([action]))
        env.step(action)
    return result


def main(argv: list[str] | None = None) -> float:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--games", type=int, default=60, help="training games (default 60, a smoke test)")
    parser.add_argument("--eval-games", type=int, default=50)
    parser.add_argument("--draft", choices=("pick", "dealt"), default="pick")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--batch-size", type=int, default=64)
    parser.add_argument("--learn-step", type=int, default=4, help="learner decisions between updates")
    parser.add_argument("--lr", type=float, default=1e-4)
    parser.add_argument("--eps-decay", type=float, default=0.995, help="per game, from 1.0 down to 0.1")
    args = parser.parse_args(argv)

    torch.manual_seed(args.seed)
    rng = np.random.default_rng(args.seed)
    env = trinity_env.env(draft=args.draft)
    space = env.observation_space(env.possible_agents[0])["observation"]
    dqn = DQN(
        observation_space=spaces.Box(0.0, float(space.high.max()), space.shape, np.float32),
        action_space=env.action_space(env.possible_agents[0]),
        net_config={"encoder_config": {"hidden_size": [256, 256]}},
        batch_size=args.batch_size,
        lr=args.lr,
        learn_step=args.learn_step,
        gamma=0.99,
        tau=1e-3,
    )
    memory = ReplayBuffer(max_size=50_000)
    epsilon, decisions = 1.0, 0
    for game in range(args.games):
        before = len(memory)
        play(env, dqn, int(rng.integers(2)), rng, seed=args.seed * 1_000_003 + game, epsilon=epsilon, memory=memory)
        decisions += len(memory) - before
        if len(memory) >= args.batch_size:
            for _ in range(max(1, (len(memory) - before) // args.learn_step)):
                dqn.learn(memory.sample(args.batch_size))
        epsilon = max(0.1, epsilon * args.eps_decay)

    wins = sum(
        play(env, dqn, game % 2, rng, seed=10_000_000 + args.seed * 1_000 + game) > 0 for game in range(args.eval_games)
    )
    rate = wins / args.eval_games
    print(
        f"AgileRL DQN after {args.games} games ({decisions} learner decisions): "
        f"wins {rate:.0%} of {args.eval_games} games against random"
    )
    return rate


if __name__ == "__main__":
    main()
