"""Train sb3-contrib's MaskablePPO on Trinity Towers against a random opponent, then evaluate.

A few thousand steps is enough to see it run end to end (the CI smoke test does exactly
that); tens of thousands start to beat the random player. The learner's seat is random
each episode and the opponent moves inside the env, so the learner sees its own wins and
losses. It says what it will do at the start, gives an estimate of the time left after the
first rollout and then about every tenth of the run (with the win rate of the games just
played), counts the evaluation games as they finish, and ends with the win rate and its 95%
Wilson interval. ``docs/integrations.md`` gives the time and result of ``--steps 20000``.

Usage: python examples/maskable_ppo.py [--steps N] [--eval-games G] [--seed S] [--save PATH]
"""

from __future__ import annotations

import argparse
import time

from sb3_contrib import MaskablePPO
from stable_baselines3.common.callbacks import BaseCallback

from trinity_env.envs.single_agent import TrinityTowersEnv
from trinity_env.evaluation.ratings import wilson_interval

ROLLOUT_STEPS = 512


def minutes(seconds: float) -> str:
    return f"{seconds:.0f} s" if seconds < 90 else f"{seconds / 60:.1f} min"


class Progress(BaseCallback):
    """After the first rollout and then about every tenth of the run: steps done, time spent, an estimate of the
    time left, and the learner's win rate over its last 100 training games (sampled moves)."""

    def __init__(self, total_steps: int):
        super().__init__()
        self.total_steps = total_steps
        self.every = max(1, total_steps // ROLLOUT_STEPS // 10)
        self.rollouts = 0
        self.started = time.perf_counter()

    def _on_step(self) -> bool:
        return True

    def _on_rollout_end(self) -> None:
        self.rollouts += 1
        if self.rollouts != 1 and self.rollouts % self.every:
            return
        done, spent = self.num_timesteps, time.perf_counter() - self.started
        left = spent * max(0, self.total_steps - done) / done
        games = [info["r"] for info in self.model.ep_info_buffer]
        won = f"; won {sum(r > 0 for r in games) / len(games):.0%} of its last {len(games)} games" if games else ""
        print(f"  {done:,}/{self.total_steps:,} steps, {minutes(spent)}: about {minutes(left)} left{won}", flush=True)


def evaluate(model: MaskablePPO, games: int, seed: int, progress: bool = False, **config) -> float:
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
        if progress and ((game + 1) % max(1, games // 4) == 0 or game + 1 == games):
            print(f"  {game + 1}/{games} games: won {wins / (game + 1):.0%} so far", flush=True)
    return wins / games


def main(argv: list[str] | None = None) -> float:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=4096, help="training steps (default 4096)")
    parser.add_argument("--eval-games", type=int, default=100, help="evaluation games (default 100)")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--save", default=None, metavar="PATH", help="save the model (an SB3 zip every tool takes)")
    args = parser.parse_args(argv)

    print(
        f"MaskablePPO against the random player on dealt hands: {args.steps:,} training steps "
        f"(rollouts of {ROLLOUT_STEPS}), then {args.eval_games} evaluation games, seed {args.seed}. "
        "An estimate of the time follows the first rollout.",
        flush=True,
    )
    started = time.perf_counter()
    config = {"draft": "dealt"}  # dealt hands: the learner only learns to place
    env = TrinityTowersEnv(opponent="random", **config)
    model = MaskablePPO("MlpPolicy", env, n_steps=ROLLOUT_STEPS, batch_size=128, seed=args.seed, verbose=0)
    model.learn(total_timesteps=args.steps, callback=Progress(args.steps))
    if args.save:
        model.save(args.save)
    print(f"trained in {minutes(time.perf_counter() - started)}; evaluating:", flush=True)
    win_rate = evaluate(model, args.eval_games, seed=10_000 + args.seed, progress=True, **config)
    low, high = wilson_interval(win_rate * args.eval_games, args.eval_games)
    print(
        f"MaskablePPO after {args.steps} steps: wins {win_rate:.0%} [{low:.0%}, {high:.0%}] of {args.eval_games} "
        f"games against random (95% Wilson interval; {minutes(time.perf_counter() - started)} in all)"
    )
    return win_rate


if __name__ == "__main__":
    main()
