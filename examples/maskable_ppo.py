"""Train sb3-contrib's MaskablePPO on Trinity Towers against a random opponent, then evaluate.

A few thousand steps is enough to see it run end to end (the CI smoke test does exactly
that); tens of thousands start to beat the random player. The learner's seat is random
each episode and the opponent moves inside the env, so the learner sees its own wins and
losses.

Usage: python examples/maskable_ppo.py [--steps N] [--eval-games G] [--seed S] [--save PATH]
"""

from __future__ import annotations

import argparse

from sb3_contrib import MaskablePPO

from trinity_env.envs.single_agent import TrinityTowersEnv


def evaluate(model: MaskablePPO, games: int, seed: int, **config) -> float:
    """Share of games won against the random opponent, seats chosen at random."""
    env = TrinityTowersEnv(opponent="random", **config)
    wins = 0
    for game in range(games):
        observation, info = env.reset(seed=seed + game)
        done = False
        while not done:
            action, _ = model.predict(observation, action_masks=env.action_masks(), deterministic=True)
            observation, reward, done, _, info = env.step(int(action))
        wins += info["winner"] == info["seat"]
    return wins / games


def main(argv: list[str] | None = None) -> float:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=4096, help="training steps (default 4096)")
    parser.add_argument("--eval-games", type=int, default=100, help="evaluation games (default 100)")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--save", default=None, metavar="PATH", help="save the model (an SB3 zip every tool takes)")
    args = parser.parse_args(argv)

    config = {"draft": "dealt"}  # dealt hands: the learner only learns to place
    env = TrinityTowersEnv(opponent="random", **config)
    model = MaskablePPO("MlpPolicy", env, n_steps=512, batch_size=128, seed=args.seed, verbose=0)
    model.learn(total_timesteps=args.steps)
    if args.save:
        model.save(args.save)
    win_rate = evaluate(model, args.eval_games, seed=10_000 + args.seed, **config)
    print(f"MaskablePPO after {args.steps} steps: wins {win_rate:.0%} of {args.eval_games} games against random")
    return win_rate


if __name__ == "__main__":
    main()
