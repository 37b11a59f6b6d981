"""What both trainers measure and where they write it.

An evaluation plays the learner's best moves against each evaluation opponent, seats
swapped, and (with ``eval_endgames``) scores it on the endgame suite. Results go to
``metrics.csv`` (one row per opponent per evaluation, easy to load anywhere) and to
TensorBoard (``RUN/tb``), beside the trainer's own losses.
"""

from __future__ import annotations

import csv
from pathlib import Path

from training.config import YAMLConfig
from trinity_env.agents.base import Agent
from trinity_env.agents.registry import make
from trinity_env.envs.config import make_config
from trinity_env.evaluation.endgames import DEFAULT_SUITE, load_suite, score_agent
from trinity_env.evaluation.match import play_game
from trinity_env.evaluation.ratings import wilson_interval

ENDGAMES = "endgames"
"""The results key of the endgame-suite score: the share of won positions where a winning move was chosen."""

Results = dict[str, tuple[float, float, float]]


def evaluate_agent(learner: Agent, config: YAMLConfig, seed: int) -> Results:
    """Win rate and 95% interval against each evaluation opponent (and the endgame score).

    ``config``: any training config with ``eval_opponents``, ``eval_games``, ``eval_endgames`` and ``env``.
    """
    env_config = make_config(config.env)
    results: Results = {}
    for spec in config.eval_opponents:
        opponent = make(spec)
        points = 0.0
        for k in range(config.eval_games):
            seats = (learner, opponent) if k % 2 == 0 else (opponent, learner)
            winner = play_game(seats, env_config, seed + k).winner
            points += 0.5 if winner is None else float(winner == k % 2)
        low, high = wilson_interval(points, config.eval_games)
        results[spec] = (points / config.eval_games, low, high)
    if config.eval_endgames:
        suite = [endgame for endgame in load_suite(DEFAULT_SUITE) if endgame.value == 1]
        share = score_agent(learner, suite)
        results[ENDGAMES] = (share, *wilson_interval(share * len(suite), len(suite)))
    return results


def selection_score(results: Results, config: YAMLConfig) -> float:
    """What ``best`` maximises: the worst win rate over the evaluation opponents."""
    return min(results[spec][0] for spec in config.eval_opponents) if config.eval_opponents else results[ENDGAMES][0]


class RunLog:
    """``metrics.csv`` and TensorBoard scalars for one run; appends, so a resumed run continues both."""

    def __init__(self, run: Path, tensorboard: bool = True):
        self._csv = (run / "metrics.csv").open("a", newline="", encoding="utf-8")
        self._rows = csv.writer(self._csv)
        self._board = None
        if tensorboard:
            from torch.utils.tensorboard import SummaryWriter

            self._board = SummaryWriter(str(run / "tb"))

    def results(self, steps: int, seconds: float, results: Results) -> None:
        for spec, (rate, low, high) in results.items():
            self._rows.writerow([steps, round(seconds, 1), spec, rate, low, high])
            self.scalar(f"eval/{spec}", rate, steps)
        self._csv.flush()

    def scalar(self, name: str, value: float, steps: int) -> None:
        if self._board is not None:
            self._board.add_scalar(name, value, steps)

    def close(self) -> None:
        self._csv.close()
        if self._board is not None:
            self._board.close()
