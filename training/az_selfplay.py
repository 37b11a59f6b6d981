"""AlphaZero self-play: a batch of games played in lockstep to their ends, every move chosen by one batched
search per ply (``trinity_env.search.az``), and the positions with their policy and value targets (``SelfPlay``).
``LocalSelfPlay`` runs it in the trainer's process (``training.alphazero_ray``: on Ray actors).
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from trinity_env.agents.az import AZModel, evaluator
from trinity_env.agents.view import decode, determinise
from trinity_env.fast.games import FastGames
from trinity_env.fast.layout import FIRST_PLAYER, PHASE, PLAY, TO_MOVE, Batch
from trinity_env.search.az import BatchedSearch, SearchMode
from trinity_env.search.solver import Solver

from .az_config import AZConfig


@dataclass
class SelfPlay:
    """What one iteration of self-play produced."""

    observations: np.ndarray
    masks: np.ndarray
    policies: np.ndarray
    values: np.ndarray
    games: int
    moves: int
    solved: int
    """Positions given the solver's value: at once (inline), or later by the labelling workers (``to_label``)."""
    first_mover_wins: float
    to_label: np.ndarray = field(default_factory=lambda: np.zeros(0, np.int64))
    """``collect``: the positions (indices into the arrays above) that await the solver; they hold the fallback."""
    label_positions: Batch = field(default_factory=lambda: Batch.empty(0))
    """``collect``: those positions as fast-engine rows, in the same order."""
    label_games: np.ndarray = field(default_factory=lambda: np.zeros(0, np.int64))
    """``collect``: each one's game (its index in the batch of games)."""


class LocalSelfPlay:
    """Self-play in the trainer's own process: one ``FastGames`` of ``games_per_iteration`` lockstep games and
    one batched search (``training.alphazero_ray`` has the same interface on Ray actors)."""

    def __init__(self, config: AZConfig):
        self.config = config
        self.search = make_search(config)
        self.games = FastGames(config.games_per_iteration, draft_share=config.draft_share, config=config.env)
        self.open_hands = self.games.config.open_hands

    def play(
        self, network: AZModel, seed: int, rng: np.random.Generator, solver: Solver | None, collect: bool
    ) -> SelfPlay:
        """One iteration's games, dealt from ``seed``: ``play_games`` on freshly reset games."""
        self.games.reset(seed=seed)
        return play_games(network, self.config, self.search, self.games, rng, solver, collect=collect)

    def close(self) -> None:
        """Nothing to release in one process."""


def make_search(config: AZConfig, games: int | None = None) -> BatchedSearch:
    """The batched search of ``games`` lockstep games (default: an iteration's)."""
    return BatchedSearch(
        games or config.games_per_iteration,
        config.simulations,
        mode=config.mode,
        max_considered=config.max_considered,
        c_puct=config.c_puct,
        open_hands=config.env.open_hands,
    )


def play_games(
    network: AZModel,
    config: AZConfig,
    search: BatchedSearch,
    games: FastGames,
    rng: np.random.Generator,
    solver: Solver | None,
    *,
    collect: bool = False,
) -> SelfPlay:
    """Play every game of ``games`` (freshly reset) to its end, one batched search per ply; the positions.

    The positions that qualify for an exact value (``solver_empty``) get ``solver``'s, or with ``collect`` keep the
    fallback target and are returned for the labelling workers (``SelfPlay.to_label``). Neither changes the games.
    """
    evaluate = evaluator(network, config.precision)
    open_hands = games.config.open_hands
    count = games.num_games
    active = np.ones(count, bool)
    plies = np.zeros(count, np.int64)
    records: list[tuple[np.ndarray, ...]] = []  # per ply: game ids, movers, observations, masks, policies, exact
    labels: list[Batch] = []  # values, root values, awaiting labels; and per ply the positions awaiting labels
    outcome = np.full(count, -1, np.int64)
    first = games.batch.info[:, FIRST_PLAYER].copy()  # drawn when the game starts
    solved = 0
    while active.any():
        idx = np.flatnonzero(active)
        observations, masks = games.observations()[idx], games.masks()[idx]
        movers = games.batch.info[idx, TO_MOVE].astype(np.int64)
        choice = masks.sum(axis=1) > 1
        roots = Batch.empty(idx.size)
        for j, g in enumerate(idx):
            if open_hands and games.batch.info[g, PHASE] == PLAY:  # nothing is hidden from the mover
                for target, source in zip(roots, games.batch):
                    target[j] = source[g]
            else:  # build the root from the mover's observation only; deal what it cannot see
                world = determinise(decode(observations[j]), rng)
                for target, source in zip(roots, world):
                    target[j] = source[0]
        result = search.run(
            roots,
            evaluate,
            rng,
            gumbel_scale=1.0,
            noise_alpha=config.dirichlet_alpha,
            noise_fraction=config.noise_fraction if config.mode == SearchMode.PUCT else 0.0,
        )
        if config.mode == SearchMode.GUMBEL:
            actions, targets = result.action.copy(), result.policy
        else:
            visits = result.visits.astype(np.float64)
            targets = (visits / visits.sum(axis=1, keepdims=True)).astype(np.float32)
            actions = visits.argmax(axis=1)
            for j, g in enumerate(idx):
                if plies[g] < config.temperature_moves:
                    actions[j] = rng.choice(256, p=visits[j] / visits[j].sum())
        values = np.full(idx.size, np.nan, np.float32)
        awaiting = np.zeros(idx.size, bool)
        if (solver is not None or collect) and open_hands:
            for j, g in enumerate(idx):
                empty = int((games.batch.owner[g] == -1).sum())
                if choice[j] and games.batch.info[g, PHASE] == PLAY and empty <= config.solver_empty:
                    if collect:
                        awaiting[j] = True
                    else:
                        values[j] = solver.value_of_row(games.batch, int(g))
                    solved += 1
        if awaiting.any():
            labels.append(Batch(*(array[idx[awaiting]] for array in games.batch)))  # copies, before the step
        keep = choice
        records.append(
            (
                idx[keep],
                movers[keep],
                observations[keep],
                masks[keep],
                targets[keep],
                values[keep],
                result.value[keep],
                awaiting[keep],
            )
        )
        step = games.step(actions, games=idx)
        plies[idx] += 1
        ended = idx[step.terminated[idx]]
        outcome[ended] = step.winner[ended]
        active[ended] = False
    ids, movers, observations, masks, policies, values, roots, awaiting = (np.concatenate(p) for p in zip(*records))
    fallback = np.where(outcome[ids] == -1, 0.0, np.where(outcome[ids] == movers, 1.0, -1.0))
    if config.root_value_weight:  # the search's value of the root, for its mover: the game's own estimate
        fallback = (1 - config.root_value_weight) * fallback + config.root_value_weight * roots.astype(np.float64)
    values = np.where(np.isnan(values), fallback, values).astype(np.float32)
    played = SelfPlay(
        observations, masks, policies, values, count, int(plies.sum()), solved, float(np.mean(outcome == first))
    )
    if labels:
        played.to_label = np.flatnonzero(awaiting)
        played.label_positions = Batch(*(np.concatenate(arrays) for arrays in zip(*labels)))
        played.label_games = ids[played.to_label]
    return played
