"""The run plumbing ``fast_ppo`` and ``alphazero`` share, written once: the trainers keep their algorithm.

A ``TrainingRun`` owns what a trainer's loop does around its algorithm: ``metrics.csv`` and
TensorBoard (``RunLog``), the training clock across sessions, the graceful Ctrl-C
(``GracefulStop``), the evaluation schedule (when to evaluate, ``best.pt``, the history), the
stop reasons (Ctrl-C, ``max_minutes``, ``stop_at``, the budget reached) and the end of a
session (the last checkpoint, ``TrainingInterrupted``, a final evaluation for the report).
A trainer's loop then reads::

    with TrainingRun(folder, config, state, "steps", ...) as run, run.running():
        while True:
            due = ...  # the trainer's own reasons to checkpoint (snapshots, checkpoint_every_iterations)
            if run.evaluate_save_or_stop(due):  # evaluate if due, checkpoint, then: stop here?
                break
            ...  # one iteration of the algorithm, which advances state.steps
    return run.finish("at step ...")

``state`` is the trainer's ``Progress``: it has ``seconds``, ``best``, ``next_eval``, ``history``
and the counter that the schedule runs on (``unit``: ``steps`` or ``games``); the trainer's
checkpoint saves it. Evaluation seeds are ``10_000_000 + count``. Each evaluation is printed as it
finishes (one line, through ``tqdm.write`` so the progress bar stays whole; ``progress=False``: not),
and ``metrics.csv``'s first column is named by ``unit``. A command line (``session.run_command``)
that resumes a run which already reached its budget ends at once with one line saying so and how to
extend it (``RunFinished``); ``train`` called from Python returns the run's history instead.

``trinity_env.evaluation.exploit`` shares the algorithm (``agents.ppo``: ``fast_ppo``'s network, rollout,
advantages and update, ``torch_threads``) but not this plumbing, on purpose: it is a measurement,
not a run. It has no run folder (no ``config.json``, lock, ``metrics.csv``, TensorBoard or
checkpoint, so nothing to resume and no ``best.pt``), one session (no clock across sessions, no
``max_minutes`` or ``stop_at``), one evaluation at the end with its own seeds and a Wilson
interval (no schedule), and Ctrl-C stops it at once with the partial result (``RunInterrupted``,
as ``trinity arena`` does) instead of stopping at a consistent point to save a checkpoint.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

from tqdm import tqdm

from .evaluation import EXACT, Results, RunLog, selection_score
from .report import label
from .run_folder import RunFolder
from .session import GracefulStop, RunFinished, TrainingInterrupted, finished_runs_stop

EVAL_SEED = 10_000_000
"""An evaluation at count ``n`` plays games seeded from ``EVAL_SEED + n``."""


class TrainingRun:
    """One session of a run: the log, the clock, the evaluation schedule and the stop reasons.

    ``total``: where the schedule ends (the last evaluation is there; the others every ``eval_every_<unit>`` of the
    config: ``eval_every_steps``, ``eval_every_games``); ``stop_at``: end this session once the count reaches it.
    ``save_latest`` writes ``latest.pt`` (the whole state), ``save_best`` writes ``best.pt`` (the network now),
    ``evaluate(seed)`` measures the network.
    ``record(seconds, results)``: an evaluation's row in the history (by default ``unit``,
    ``seconds``, ``results``). ``saved_at_start``: the starting state counts as saved, so a
    session stopped before its first iteration writes no ``latest.pt``. ``progress``: print each evaluation
    as it finishes (``evaluation_line``).
    """

    def __init__(
        self,
        folder: RunFolder,
        config: Any,
        state: Any,
        unit: str,
        *,
        total: int,
        stop_at: int | None,
        save_latest: Callable[[], None],
        save_best: Callable[[], None],
        evaluate: Callable[[int], Results],
        record: Callable[[float, Results], dict] | None = None,
        saved_at_start: bool = False,
        progress: bool = True,
    ) -> None:
        self.path, self.config, self.state, self.unit = folder.path, config, state, unit
        self.total, self.stop_at, self.progress = total, stop_at, progress
        self._save_latest, self._save_best, self._evaluate = save_latest, save_best, evaluate
        self._record = record or (lambda seconds, results: {unit: self.count, "seconds": seconds, "results": results})
        self.saved_at = self.count if saved_at_start else None
        self.stopped: str | None = None
        """Why this session stops: ``interrupted``, ``max_minutes`` or ``stop_at`` (``None``: it has not)."""
        self.last_results: Results | None = None
        """What this session's last evaluation measured (``None`` before its first)."""
        self.stop = GracefulStop()
        if folder.resuming and self.count >= total and self.evaluated() and finished_runs_stop():
            raise RunFinished(self._finished())
        resume_from = (self.count, state.history) if folder.resuming else None
        self.log = RunLog(self.path, config.tensorboard, resume_from=resume_from, unit=unit)
        self.log.text("hyperparameters", config.table(), self.count)

    def _finished(self) -> str:
        """``RunFinished``'s line: where the run stands, its report, and how to extend it."""
        budget = f"total_{self.unit}"
        report = self.path / "report.md"
        shown = f"; its report: {report}" if report.is_file() else ""
        option = "--" + budget.replace("_", "-")
        return (
            f"{self.path} already reached its budget ({self.count:,} {self.unit}; {budget} "
            f"{getattr(self.config, budget, self.total):,}): nothing to train{shown}; "
            f"to train on, --resume {option} N with N above {self.count:,}"
        )

    @property
    def count(self) -> int:
        """Where the run stands on its schedule: ``state.steps`` or ``state.games``."""
        return getattr(self.state, self.unit)

    def __enter__(self) -> TrainingRun:
        return self

    def __exit__(self, *error) -> None:
        self.log.close()

    @contextmanager
    def running(self) -> Iterator[TrainingRun]:
        """Start this session's clock; Ctrl-C inside becomes a request to stop at a consistent point."""
        self.started, self.start_count, self._before = time.perf_counter(), self.count, self.state.seconds
        with self.stop.installed():
            yield self

    def elapsed(self) -> float:
        """Training time of the whole run: the sessions before this one, and this one so far."""
        return self._before + time.perf_counter() - self.started

    def evaluated(self) -> bool:
        """Whether the history's last evaluation is at the current count."""
        return bool(self.state.history) and self.state.history[-1][self.unit] == self.count

    def evaluate_save_or_stop(self, due: bool) -> bool:
        """What a trainer's loop does before each iteration: evaluate when an evaluation is due, checkpoint when
        ``due`` (the trainer's own reasons: a snapshot, ``checkpoint_every_iterations``) or after an evaluation; then
        whether to end the loop (``should_stop``)."""
        if self.evaluation_due():
            self.evaluate()
            due = True
        if due:
            self.checkpoint()
        return self.should_stop()

    def evaluation_due(self) -> bool:
        return self.count >= self.state.next_eval or (self.count >= self.total and not self.evaluated())

    def evaluate(self) -> Results | None:
        """Evaluate now, record it (history, ``metrics.csv``, TensorBoard, ``best.pt`` if the best so far) and plan
        the next one. Ctrl-C here stops at once (``None``): the evaluation stays pending in the checkpoint."""
        try:
            with self.stop.interruptible():
                results = self._evaluate(EVAL_SEED + self.count)
        except KeyboardInterrupt:
            if not self.stop.graceful:
                raise
            self.stopped = "interrupted"  # the evaluation is pending in the checkpoint: done again on resume
            return None
        self.last_results = results
        seconds = self.elapsed()
        self.state.history.append(self._record(seconds, results))
        self.log.results(self.count, seconds, results)
        self._show(seconds, results)
        score = selection_score(results)
        if score > self.state.best:
            self.state.best = score
            self._save_best()
        every = getattr(self.config, f"eval_every_{self.unit}")
        self.state.next_eval = (self.count // every + 1) * every
        return results

    def _show(self, seconds: float, results: Results, note: str = "") -> None:
        if self.progress:
            tqdm.write(evaluation_line(self.count, self.unit, seconds, results, note))

    def checkpoint(self) -> None:
        """``latest.pt``, with the training time so far."""
        self.state.seconds = self.elapsed()
        self._save_latest()
        self.saved_at = self.count

    def saved(self) -> bool:
        """Whether ``latest.pt`` holds the current state."""
        return self.saved_at == self.count

    def should_stop(self) -> bool:
        """Whether to end the loop: the budget is reached or a stop reason (``stopped``) came."""
        if self.stopped or self.count >= self.total:
            return True
        self.stopped = self._stop_reason()
        return self.stopped is not None

    def _stop_reason(self) -> str | None:
        if self.stop.requested:
            return "interrupted"
        if self.config.max_minutes and time.perf_counter() - self.started > 60 * self.config.max_minutes:
            return "max_minutes"
        if self.stop_at is not None and self.count >= self.stop_at:
            return "stop_at"
        return None

    def finish(self, where: str) -> list[dict]:
        """End the session: ``latest.pt`` if stopped since the last one; ``TrainingInterrupted`` after Ctrl-C
        (``where``: the message's "at step N"); else the evaluation history for the report.

        A run stopped early is measured where it stopped, for the report only: ``latest.pt`` keeps no record of
        it, so a resume stays exact, and it never replaces ``best.pt``, which only scheduled evaluations choose
        (the same rule for every trainer; ``best.pt`` is the latest network only where no evaluation chose one)."""
        if self.stopped and not self.saved():
            self.checkpoint()
        if self.stopped == "interrupted":
            raise TrainingInterrupted(f"saved {self.path / 'latest.pt'} {where}; --resume continues the run")
        history = list(self.state.history)
        if not self.evaluated():
            results = self._evaluate(EVAL_SEED + self.count)
            seconds = self.elapsed()
            history.append(self._record(seconds, results))
            self.log.results(self.count, seconds, results)
            self._show(seconds, results, "where it stopped, for the report")
        if not (self.path / "best.pt").is_file():
            self._save_best()
        return history


def evaluation_line(count: int, unit: str, seconds: float, results: Results, note: str = "") -> str:
    """An evaluation as the trainers print it when it finishes: where and when, then each measure's share and 95%
    interval (win rates first; the network against perfect play, ``exact:*``, on a second line)::

        40,960 steps (1.2 min): vs random 98.5% [96.8%, 99.3%], vs greedy 71.5% [66.9%, 75.7%], endgame suite ...
    """
    games = [spec for spec in results if not spec.startswith(EXACT)]
    exact = [spec for spec in results if spec.startswith(EXACT)]

    def shares(specs: list[str]) -> str:
        return ", ".join(f"{label(s)} {results[s][0]:.1%} [{results[s][1]:.1%}, {results[s][2]:.1%}]" for s in specs)

    when = f"{seconds:.0f} s" if seconds < 60 else f"{seconds / 60:.1f} min"
    where = f"{count:,} {unit} ({when}{', ' + note if note else ''}): "
    lines = [where + shares(games)] if games else []
    if exact:
        lines.append(("  " if games else where) + shares(exact))
    return "\n".join(lines)
