"""One invariant suite for every engine, as Pgx's ``api_test`` is one test for every game.

Each engine (the core, ``FastGames``, the AEC env wrapped and raw, the single-agent env,
the vector env, the RLlib env, the JAX engine where the ``jax`` extra is installed) plays
seeded random games through its adapter in ``engines.py``; every invariant below is written
once, as a check of one game's ``Record`` against the core replaying the same actions, and
runs for every engine under
both draft modes (``pick``, ``dealt``) and both reward modes (``win_loss``, ``margin``).
The slow variant runs the same checks on many more games.
"""

from __future__ import annotations

import functools
import random
import warnings
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
import pytest

from trinity_env.agents.view import observation_blocks
from trinity_env.core import GameState, lane_scores
from trinity_env.core.state import DRAFT, IN_HAND, PLAY, PLAYED, UNPICKED
from trinity_env.spec.config import make_config
from trinity_env.spec.observation import encode_observation

from engines import ENGINES, Engine, RandomChooser, Record, ScriptChooser, make_engine

GAMES = 40
"""Games per engine and config in the default run."""
SLOW_GAMES = 300
CONFIGS = [(draft, reward) for draft in ("pick", "dealt") for reward in ("win_loss", "margin")]
MARGIN_SCALE = 15
"""docs: shaping is the change in the lane-score margin divided by 15 (the tiles on the board)."""
TOLERANCE = 1e-5  # the fast engine adds rewards in float32


@pytest.fixture(autouse=True)
def _quiet():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)  # PettingZoo's remarks on dict observations
        yield


@dataclass
class Game:
    """One recorded game, the engine that played it, and the core's replay of its actions."""

    record: Record
    engine: Engine
    reward: str
    draft: str | None
    """``None`` for a game from a loaded position."""
    core: list[GameState]
    """The core's state after 0, 1, ... decisions, from the engine's start."""

    @property
    def end(self) -> int:
        return len(self.record.actions)


def replay(record: Record, engine: Engine, reward: str, draft: str | None) -> Game:
    assert record.start is not None, f"{record.engine} showed no start state"
    core = [record.start]
    for action in record.actions:
        core.append(core[-1].apply(action))  # raises if the engine took an action the core refuses
    return Game(record, engine, reward, draft, core)


def play(engine_name: str, draft: str, reward: str, games: int) -> tuple[Game, ...]:
    if engine_name == "rllib":
        pytest.importorskip("ray", reason="Ray is not installed (the rllib extra)")
    if engine_name == "jax":
        pytest.importorskip("jax", reason="JAX is not installed (the jax extra)")
    engine = make_engine(engine_name, draft=draft, reward=reward)
    return tuple(replay(engine.play(seed, RandomChooser(1000 + seed)), engine, reward, draft) for seed in range(games))


default_games = functools.cache(play)
slow_games = functools.lru_cache(maxsize=1)(play)  # slow records are large: one case at a time


# ---------------------------------------------------------------------------- the invariants


def expected_mask(state: GameState, seat: int) -> list[int]:
    return list(state.legal_actions()) if seat == state.to_move and not state.is_over else []


def check_masks(game: Game) -> None:
    """Masks are the core's legal actions at every step: all zeros for the seat not to move and at the end."""
    record, shown = game.record, set()
    for d, seat, mask in record.masks:
        assert mask.shape == (256,) and set(np.unique(mask)) <= {0, 1}
        assert np.flatnonzero(mask).tolist() == expected_mask(game.core[d], seat), f"{record.engine}: mask at {d}"
        shown.add((d, seat))
    assert {(d, seat) for d, seat in enumerate(record.movers)} <= shown, "every mover was shown its mask"
    if game.engine.shows_terminal_mask:
        assert any(d == game.end for d, _ in shown), f"{record.engine} showed no terminal mask"


def check_observations(game: Game) -> None:
    """Every observation shown is, bit for bit, the encoding of the core's state for that seat."""
    record, shown = game.record, set()
    for d, seat, observation in record.observations:
        expected = encode_observation(game.core[d], seat, record.open_hands)
        assert observation.dtype == np.int8
        assert observation.tobytes() == expected.tobytes(), (
            f"{record.engine}: seat {seat}'s observation after {d} decisions differs at entries "
            f"{np.flatnonzero(observation != expected).tolist()}"
        )
        shown.add((d, seat))
    assert {(d, seat) for d, seat in enumerate(record.movers)} <= shown, "every mover was shown its observation"
    assert any(d == game.end for d, _ in shown), "the end was shown"
    if game.engine.shows_both_seats:
        assert shown == {(d, seat) for d in range(game.end + 1) for seat in (0, 1)}


def expected_mover(before: GameState, after: GameState, mover: int) -> int:
    """Who moves after ``mover`` acted, by docs/rules.md (written here, not read from the core)."""
    if after.phase == DRAFT:
        return 1 - mover
    if before.phase == DRAFT:
        return after.first_player  # the draft is over: the first mover places
    other = 1 - mover
    return other if IN_HAND in after.status[other] else mover  # a player with no card passes


def check_turns(game: Game) -> None:
    """The seat asked to move is the core's ``to_move``; seats alternate, and a player with no card passes."""
    record, core = game.record, game.core
    for d, state in record.states:
        assert state == core[d], f"{record.engine}: the engine's game after {d} decisions is not the core's"
    for d, seat in enumerate(record.movers):
        assert seat == core[d].to_move, f"{record.engine}: seat {seat} was asked to move after {d} decisions"
        before, after = core[d], core[d + 1]
        if not after.is_over:
            assert after.to_move == expected_mover(before, after, seat)
    start = core[0]
    if not start.is_over:
        assert IN_HAND in start.status[start.to_move] or start.phase == DRAFT, "the player to move has a card"
        if game.draft is not None:
            assert start.to_move == (0 if start.phase == DRAFT else start.first_player)


def _counts(state: GameState, player: int) -> tuple[int, int, int]:
    status = state.status[player]
    return status.count(UNPICKED), status.count(IN_HAND), status.count(PLAYED)


def _check_state(state: GameState, real: bool) -> None:
    occupied = [t for t in range(15) if state.owners[t] != -1]
    assert all((state.cards[t] is None) == (state.owners[t] == -1) for t in range(15))
    assert set(state.owners) <= {-1, 0, 1}
    for player in (0, 1):
        assert len(state.status[player]) == len(state.decks[player]) and sum(_counts(state, player)) == len(
            state.decks[player]
        ), "each deck card is unpicked, in hand or played"
    if real:
        assert len(occupied) == _counts(state, 0)[2] + _counts(state, 1)[2], "the board holds the played cards"
        if state.phase != DRAFT:
            assert all(sum(_counts(state, p)[1:]) == 8 for p in (0, 1)), "8 cards each: in hand or played"


def _check_transition(before: GameState, after: GameState, mover: int) -> None:
    if before.phase == DRAFT:
        assert after.cards == before.cards and after.owners == before.owners, "a pick leaves the board alone"
        assert _counts(after, mover)[1] == _counts(before, mover)[1] + 1
        assert after.status[1 - mover] == before.status[1 - mover]
        return
    new = [t for t in range(15) if before.owners[t] == -1 and after.owners[t] != -1]
    assert len(new) == 1 and after.owners[new[0]] == mover, "a placement puts one card of the mover's"
    assert all(after.cards[t] == before.cards[t] for t in range(15) if t not in new), "cards never move"
    changed = [t for t in range(15) if before.owners[t] != after.owners[t] and t not in new]
    assert all(before.owners[t] == 1 - mover and after.owners[t] == mover for t in changed), "only the mover gains"
    assert _counts(after, mover)[2] == _counts(before, mover)[2] + 1
    assert after.status[1 - mover] == before.status[1 - mover]


def _check_observation(observation: np.ndarray, deck_sizes: tuple[int, int], real: bool) -> None:
    """Conservation as the observation shows it (its own layout: docs/observation.md)."""
    mine, theirs = deck_sizes
    board, own, their = observation_blocks(observation)
    own, their = own[:, 4:], their[:, 4:]  # the status columns
    assert (board[:, 0] + board[:, 1] <= 1).all(), "a tile is mine, theirs or empty"
    assert (own.sum(axis=1) == [1] * mine + [0] * (16 - mine)).all(), "my cards: unpicked, in hand or played"
    assert (their.sum(axis=1) == [1] * theirs + [0] * (16 - theirs)).all(), "their cards: one status each"
    assert observation[7] == own[:, 1].sum(), "my hand size counts my cards in hand"
    if real:
        assert board[:, :2].sum() == own[:, 2].sum() + their[:, 0].sum(), "the board holds the played cards"


def check_conservation(game: Game) -> None:
    """Cards are conserved (board + hands + unpicked = decks) and only the mover gains tiles in a placement."""
    record, core, real = game.record, game.core, game.draft is not None
    for _, state in record.states:
        _check_state(state, real)
    for state in core:
        _check_state(state, real)
    shown = dict(record.states)
    for d, mover in enumerate(record.movers):
        _check_transition(core[d], core[d + 1], mover)
        if d in shown and d + 1 in shown:
            _check_transition(shown[d], shown[d + 1], mover)
    sizes = tuple(len(deck) for deck in core[0].decks)
    for _, seat, observation in record.observations:
        _check_observation(observation, (sizes[seat], sizes[1 - seat]), real)
    if real:  # a new game: an empty board, and the draft to come or the hands dealt
        start = core[0]
        assert start.owners == (-1,) * 15 and sizes == (16, 16)
        if game.draft == "pick":
            assert start.phase == DRAFT and start.status == ((UNPICKED,) * 16,) * 2
        else:
            assert start.phase == PLAY and all(_counts(start, p) == (8, 8, 0) for p in (0, 1))
            assert all(start.a_cards_held(p) <= start.max_a_cards for p in (0, 1))


def check_length(game: Game) -> None:
    """A game ends within 15 placements (after 16 picks in draft mode), exactly when the core's does."""
    record, core = game.record, game.core
    assert record.ended == game.end and core[-1].is_over, f"{record.engine} ended when the core did not"
    assert not any(state.is_over for state in core[:-1])
    picks = sum(state.phase == DRAFT for state in core[:-1])
    placements = game.end - picks
    if game.draft is None:
        assert picks == 0 and placements <= core[0].owners.count(-1)
    else:
        assert picks == (16 if game.draft == "pick" else 0) and 5 <= placements <= 15


def expected_rewards(game: Game) -> list[tuple[float, float]]:
    """Each seat's reward summed over the first d decisions, for every d, by the documented reward modes."""
    totals, cumulative = [0.0, 0.0], [(0.0, 0.0)]
    for before, after in zip(game.core, game.core[1:]):
        if game.reward == "margin" and before.phase == PLAY:
            change = (_margin(after) - _margin(before)) / MARGIN_SCALE
            totals = [totals[0] + change, totals[1] - change]
        if after.is_over and after.winner is not None:
            totals = [t + (1.0 if seat == after.winner else -1.0) for seat, t in enumerate(totals)]
        cumulative.append((totals[0], totals[1]))
    return cumulative


def _margin(state: GameState) -> int:
    zero, one = lane_scores(state.owners)
    return zero - one


def check_rewards(game: Game) -> None:
    """Rewards are the core's at every step, sum to result (+ final margin / 15 under margin), stop at the end."""
    record, expected, end = game.record, expected_rewards(game), game.end
    final = game.core[-1]
    result = [0.0 if final.winner is None else (1.0 if seat == final.winner else -1.0) for seat in (0, 1)]
    margin = (final.scores[0] - final.scores[1] - _margin(game.core[0])) / MARGIN_SCALE  # a real game starts at 0
    if game.reward != "margin":
        margin = 0.0
    assert expected[end] == pytest.approx((result[0] + margin, result[1] - margin), abs=TOLERANCE)
    assert record.rewards, f"{record.engine} delivered no rewards"
    for channel, events in record.rewards.items():
        for seat in {seat for _, seat, _ in events}:
            total, last = 0.0, -1
            for d, _, reward in (event for event in events if event[1] == seat):
                total += reward
                assert d >= last
                last = d
                assert total == pytest.approx(expected[d][seat], abs=TOLERANCE), (
                    f"{record.engine} ({channel}): seat {seat} has {total} after {d} decisions, "
                    f"the core {expected[d][seat]}"
                )
            assert last == end, f"{record.engine} ({channel}): seat {seat}'s rewards stop before the end"
    assert record.after_end is None or all(reward == 0 for reward in record.after_end), "a dead step paid"
    assert record.refuses_after_end is not False, f"{record.engine} took a step after the end"


INVARIANTS: list[Callable[[Game], None]] = [
    check_masks,
    check_observations,
    check_turns,
    check_conservation,
    check_length,
    check_rewards,
]

KNOWN_BUGS: dict = {}


def cases(invariants: list[Callable[[Game], None]]) -> list:
    params = []
    for engine in ENGINES:
        for draft, reward in CONFIGS:
            for invariant in invariants:
                bug = KNOWN_BUGS.get((invariant, engine, draft, reward))
                marks = [pytest.mark.xfail(strict=True, reason=bug)] if bug else []
                ids = f"{invariant.__name__.removeprefix('check_')}-{engine}-{draft}-{reward}"
                params.append(pytest.param(invariant, engine, draft, reward, marks=marks, id=ids))
    return params


@pytest.mark.parametrize(("invariant", "engine", "draft", "reward"), cases(INVARIANTS))
def test_invariant(invariant, engine, draft, reward):
    for game in default_games(engine, draft, reward, GAMES):
        invariant(game)


@pytest.mark.slow
@pytest.mark.parametrize(("invariant", "engine", "draft", "reward"), cases(INVARIANTS))
def test_invariant_on_many_games(invariant, engine, draft, reward):
    for game in slow_games(engine, draft, reward, SLOW_GAMES):
        invariant(game)


# ---------------------------------------------------------------------------- across engines


def _by_step(record: Record, what: list[tuple[int, int, object]]) -> dict[tuple[int, int], set]:
    shown: dict[tuple[int, int], set] = {}
    for d, seat, value in what:
        shown.setdefault((d, seat), set()).add(value.tobytes() if isinstance(value, np.ndarray) else value)
    return shown


def check_same_game(reference: Record, replayed: Record) -> None:
    """Two engines that played the same actions showed the same observations and paid the same rewards."""
    assert replayed.actions == reference.actions and replayed.movers == reference.movers
    assert replayed.ended == reference.ended
    for field in ("observations", "masks"):
        ours, theirs = _by_step(reference, getattr(reference, field)), _by_step(replayed, getattr(replayed, field))
        common = set(ours) & set(theirs)
        assert {(d, seat) for d, seat in enumerate(reference.movers)} <= common
        for key in sorted(common):
            assert len(ours[key]) == len(theirs[key]) == 1 and ours[key] == theirs[key], (
                f"{reference.engine} and {replayed.engine}: seat {key[1]}'s {field} after {key[0]} decisions differ"
            )
    ours = {(d, seat): reward for d, seat, reward in reference.rewards["step"]}
    theirs = {(d, seat): reward for d, seat, reward in replayed.rewards["step"]}
    assert set(ours) == set(theirs) == {(d, seat) for d in range(1, len(reference.actions) + 1) for seat in (0, 1)}
    for key in sorted(ours):
        assert ours[key] == pytest.approx(theirs[key], abs=TOLERANCE), f"rewards differ at {key}"


@pytest.mark.parametrize("open_hands", [True, False], ids=["open", "hidden"])
@pytest.mark.parametrize(("draft", "reward"), CONFIGS)
def test_engines_agree_on_the_same_game(draft, reward, open_hands):
    """Games of the AEC env replayed move by move in the core and in ``FastGames``: bit for bit, both seats."""
    config = {"draft": draft, "reward": reward, "open_hands": open_hands}
    reference = make_engine("aec", **config)
    replays = [make_engine(name, **config) for name in ("core", "fast")]
    for seed in range(GAMES // 2):
        record = reference.play(seed, RandomChooser(seed))
        for engine in replays:
            replayed = engine.play(seed, ScriptChooser(record.actions), start=record.start)
            check_same_game(record, replayed)
            for invariant in INVARIANTS:
                invariant(replay(replayed, engine, reward, draft))


# ---------------------------------------------------------------------------- the pass rule


def loaded_positions(count: int, seed: int) -> list[GameState]:
    """Positions taken from random games, one player's hand cut to 0-2 cards: passes (and draws) happen."""
    rng, config, positions = random.Random(seed), make_config(draft="dealt"), []
    while len(positions) < count:
        state = config.new_game(rng)
        for _ in range(rng.randint(0, 10)):
            state = state.apply(rng.choice(state.legal_actions()))
        if state.is_over:
            continue
        data = state.to_dict()
        player = rng.randint(0, 1)
        data["hands"][player] = data["hands"][player][: rng.randint(0, 2)]
        positions.append(GameState.from_dict(data))
    return positions


@pytest.mark.parametrize("reward", ["win_loss", "margin"])
@pytest.mark.parametrize("engine_name", ["core", "fast", "jax"])
def test_loaded_positions_with_passes(engine_name, reward):
    """The engines that load positions keep every invariant where players pass (docs/rules.md, how a game ends)."""
    if engine_name == "jax":
        pytest.importorskip("jax", reason="JAX is not installed (the jax extra)")
    engine = make_engine(engine_name, reward=reward)
    assert engine.loads
    passes = 0
    for seed, start in enumerate(loaded_positions(2 * GAMES, seed=7)):
        game = replay(engine.play(seed, RandomChooser(seed), start=start), engine, reward, None)
        for invariant in INVARIANTS:
            invariant(game)
        passes += sum(a == b for a, b in zip(game.record.movers, game.record.movers[1:]))
    assert passes > 0, "no player passed: the positions do not test the pass rule"
