"""What the trainers measure and where they write it.

An evaluation plays the learner's best moves against each evaluation opponent, seats
swapped, (with ``eval_endgames``) scores it on the endgame suite and (with ``eval_accuracy``) measures its
network's heads against perfect play (``EXACT``). Results go to
``metrics.csv`` (a header row, then one row per measure per evaluation: ``METRICS_COLUMNS``; easy to load
anywhere, ``read_metrics`` here) and to TensorBoard (``RUN/tb``), beside the trainer's own losses.
"""

from __future__ import annotations

import csv
import io
import os
from pathlib import Path

from trinity_env.agents.spec import make
from trinity_env.core import TrinityError
from trinity_env.core.writes import open_append, write_text
from trinity_env.evaluation.accuracy import score_network, validation_set
from trinity_env.evaluation.endgames import DEFAULT_SUITE, load_suite, suite_share
from trinity_env.evaluation.match import seat_swapped_points
from trinity_env.evaluation.ratings import Share
from trinity_env.spec.agent import Agent

from .config import YAMLConfig

ENDGAMES = "endgames"
"""The results key of the endgame-suite score: the share of won positions where a winning move was chosen."""
EXACT = "exact:"
"""The prefix of the results keys measured against perfect play (``eval_accuracy``): ``exact:policy`` (the raw
policy's first choice keeps the exact value), ``exact:value`` (the value head's sign is the exact value's), each
pooled over the validation set's 4-11 empty tiles and again at 10 empty (``exact:policy@10``)."""
EXACT_COUNT = 10

Results = dict[str, tuple[float, float, float]]

METRICS_UNITS = ("steps", "games")
"""What ``metrics.csv``'s first column counts: learner steps (PPO, RLlib) or self-play games (AlphaZero)."""
METRICS_COLUMNS = ("seconds", "measure", "rate", "low", "high")
"""``metrics.csv``'s columns after the first, which is the run's count (its header names it: ``steps`` for the PPO
trainers, RLlib's ``main`` decisions included, ``games`` for AlphaZero's self-play games). ``seconds``: training time
so far; ``measure``: an evaluation opponent's agent spec (the win rate against it, draws half), ``endgames`` (the
endgame suite's share) or an ``exact:*`` key (``EXACT``); ``rate``, ``low``, ``high``: the share and its 95% Wilson
interval."""


def evaluate_agent(learner: Agent, config: YAMLConfig, seed: int, progress: bool = False) -> Results:
    """Win rate and 95% interval against each evaluation opponent (and the endgame score).

    ``config``: any training config with ``eval_opponents``, ``eval_games``, ``eval_endgames`` and ``env``.
    ``progress``: a bar (on standard error, gone when done) counting the games and endgame positions, with an estimate.
    """
    results: Results = {}
    bar = _evaluation_bar(config, progress)
    for spec in config.eval_opponents:
        opponent = make(spec)
        bar.set_postfix_str(f"vs {spec}")
        ticks = (lambda k, _: bar.update()) if progress else None  # on_game keeps each game's states: only for the bar
        points = seat_swapped_points(learner, opponent, config.env, range(config.eval_games), lambda k: seed + k, ticks)
        results[spec] = _row(Share(points, config.eval_games))
    if config.eval_endgames:
        suite = [endgame for endgame in load_suite(DEFAULT_SUITE) if endgame.value == 1]
        bar.set_postfix_str("the endgame suite")
        suite = _Ticking(suite, bar)
        results[ENDGAMES] = _row(suite_share(learner, suite))
    bar.close()
    evaluate = getattr(learner, "evaluate", None)
    if getattr(config, "eval_accuracy", False) and callable(evaluate):
        results |= exact_results(evaluate)
    return results


def _evaluation_bar(config: YAMLConfig, progress: bool):
    """The evaluation's bar: every game against every opponent, then (``eval_endgames``) each won endgame position."""
    from tqdm import tqdm

    positions = sum(e.value == 1 for e in load_suite(DEFAULT_SUITE)) if config.eval_endgames and progress else 0
    total = len(config.eval_opponents) * config.eval_games + positions
    return tqdm(total=total, disable=not progress, desc="evaluating", unit="game", leave=False, dynamic_ncols=True)


class _Ticking(list):
    """A list that ticks ``bar`` as each item is taken in a loop over it (the endgame suite, as it is scored)."""

    def __init__(self, items, bar):
        super().__init__(items)
        self.bar = bar

    def __iter__(self):
        for item in super().__iter__():
            yield item
            self.bar.update()


def exact_results(evaluate) -> Results:
    """The network's heads against perfect play on the shipped validation set (``accuracy.validation_set``): one
    batched forward pass per empty count, no game played, so cheap enough for every evaluation."""
    rows = score_network(evaluate, validation_set())
    results: Results = {}
    for suffix, chosen in (("", rows), (f"@{EXACT_COUNT}", [r for r in rows if r.empty == EXACT_COUNT])):
        for name, share in (("policy", lambda r: r.policy), ("value", lambda r: r.value_sign)):
            hits = sum(share(r).hits for r in chosen)
            total = sum(share(r).total for r in chosen)
            if total:
                results[f"{EXACT}{name}{suffix}"] = _row(Share(hits, total))
    return results


def _row(share: Share) -> tuple[float, float, float]:
    """A result as the run's history and ``metrics.csv`` hold it: ``(rate, low, high)``."""
    return (share.value, *share.interval)


def selection_score(results: Results) -> float:
    """What ``best`` maximises: the worst win rate over the evaluation's opponents (else the endgame score)."""
    rates = [rate for spec, (rate, _, _) in results.items() if spec != ENDGAMES and not spec.startswith(EXACT)]
    return min(rates) if rates else results[ENDGAMES][0]


def history_from_json(history: list[dict]) -> list[dict]:
    """An evaluation history read back from JSON: each result a ``(rate, low, high)`` tuple again."""
    return [h | {"results": {spec: tuple(v) for spec, v in h["results"].items()}} for h in history]


class RunLog:
    """``metrics.csv`` and TensorBoard scalars for one run.

    ``resume_from``: the checkpoint's step count and evaluation history when a run resumes.
    ``metrics.csv`` is then rewritten from that history and TensorBoard hides every event past
    that step, so rows and points logged after the checkpoint (by a killed or stopped
    session) are gone and the resumed run continues both files as if never stopped. ``unit``: the first column's
    name (``METRICS_COLUMNS``).
    """

    def __init__(
        self,
        run: Path,
        tensorboard: bool = True,
        resume_from: tuple[int, list[dict]] | None = None,
        unit: str = "steps",
    ) -> None:
        path = run / "metrics.csv"
        header = [unit, *METRICS_COLUMNS]
        if resume_from is not None:
            text = io.StringIO(newline="")
            writer = csv.writer(text)
            writer.writerow(header)
            for record in resume_from[1]:
                writer.writerows(_rows(record[unit], record["seconds"], record["results"]))
            write_text(path, text.getvalue())
        self._csv = io.TextIOWrapper(open_append(path), encoding="utf-8", newline="")
        self._rows = csv.writer(self._csv)
        if os.fstat(self._csv.fileno()).st_size == 0:  # a new run's file
            self._rows.writerow(header)
            self._csv.flush()
        self._board = None
        if tensorboard:
            from torch.utils.tensorboard import SummaryWriter

            purge = None if resume_from is None else resume_from[0] + 1
            self._board = SummaryWriter(str(run / "tb"), purge_step=purge)

    def results(self, steps: int, seconds: float, results: Results) -> None:
        self._rows.writerows(_rows(steps, seconds, results))
        for spec, (rate, _, _) in results.items():
            self.scalar(f"eval/{spec}", rate, steps)
        self._csv.flush()

    def scalar(self, name: str, value: float, steps: int) -> None:
        if self._board is not None:
            self._board.add_scalar(name, value, steps)

    def text(self, name: str, text: str, steps: int) -> None:
        """A markdown text in TensorBoard's text tab (the hyperparameter table)."""
        if self._board is not None:
            self._board.add_text(name, text, steps)

    def close(self) -> None:
        self._csv.close()
        if self._board is not None:
            self._board.close()


def read_metrics(path: Path) -> list[list[str]]:
    """The rows of a ``metrics.csv`` as strings (``[count, seconds, measure, rate, low, high]``), without its header
    row; a file whose first row is not the header (``steps`` or ``games``, then ``METRICS_COLUMNS``) is a
    ``TrinityError`` in one line."""
    with open(path, encoding="utf-8", newline="") as handle:
        rows = list(csv.reader(handle))
    if not rows or rows[0][0] not in METRICS_UNITS or tuple(rows[0][1:]) != METRICS_COLUMNS:
        first = ",".join(rows[0]) if rows else "nothing"
        raise TrinityError(
            f"{path}: not a metrics.csv (its first row must be the header steps or games,{','.join(METRICS_COLUMNS)};"
            f" got {first[:80]!r})"
        )
    return rows[1:]


def _rows(steps: int, seconds: float, results: Results) -> list[list]:
    return [[steps, round(seconds, 1), spec, rate, low, high] for spec, (rate, low, high) in results.items()]
