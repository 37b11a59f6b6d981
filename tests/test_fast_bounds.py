"""Game indices, seats and actions are checked at the fast engine's edge, before any numba kernel runs.

The kernels index without bounds checks, so before issue 39 ``FastGames(4).random_actions(np.arange(4, 12))``
crashed the interpreter (a segfault or a double free), ``random_actions([-100])`` returned a garbage
action, and ``observations(np.array([0]))`` or ``step(..., final_seats=[9] * 4)`` returned garbage
observations with no error. The four regression tests run each call in a child process, so a crash
fails the test instead of killing pytest. The fuzz test calls every public method of ``FastGames``
with bad arguments in a child compiled with ``NUMBA_BOUNDSCHECK=1`` (an index past an array raises
there instead of reading memory), and checks valid calls against the kernels and the core.
"""

from __future__ import annotations

import copy
import dataclasses
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import numpy as np
import pytest

from trinity_env.core import ArgumentError, GameState, IllegalMoveError, PositionError
from trinity_env.fast import FastGames, TrinityTowersVectorEnv

ROOT = Path(__file__).resolve().parents[1]
REFUSED = (ArgumentError, IllegalMoveError, PositionError)


def _child(body: str, env: dict[str, str] | None = None, timeout: int = 120) -> subprocess.CompletedProcess:
    """Run ``body`` (after the imports) in a fresh interpreter; what it prints comes back."""
    code = "import numpy as np\nfrom trinity_env.fast import FastGames\n" + textwrap.dedent(body)
    return subprocess.run(
        [sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=timeout, env=env
    )


def _refused_in_child(call: str, draft: str = "dealt") -> str:
    """The one-line error ``call`` raises on ``g = FastGames(4, ...)`` in a child process (asserted clean)."""
    body = textwrap.indent(textwrap.dedent(call).strip(), "    ")
    result = _child(
        f"g = FastGames(4, seed=0, draft={draft!r})\ntry:\n{body}\n"
        "except ValueError as error:\n    print('REFUSED', type(error).__name__, str(error))\n"
        "else:\n    print('NO ERROR')\n"
    )
    # a crash shows as a negative return code (a signal) or an abort message on stderr
    assert result.returncode == 0, f"child exited {result.returncode}: {result.stderr[-2000:]}"
    lines = result.stdout.splitlines()
    assert len(lines) == 1 and lines[0].startswith("REFUSED "), result.stdout[-2000:] + result.stderr[-2000:]
    return lines[0].removeprefix("REFUSED ")


# ------------------------------------------------------------------ the four reported breaks


def test_random_actions_past_the_last_game_is_refused_not_a_crash():
    message = _refused_in_child("g.random_actions(np.arange(4, 12))")
    assert message == "ArgumentError games must be game indices 0-3, got 4 (and 7 more outside)"


def test_random_actions_of_a_negative_game_is_refused_not_garbage():
    message = _refused_in_child("print(g.random_actions([-100]))")
    assert message == "ArgumentError games must be game indices 0-3, got -100"


def test_observations_need_one_seat_per_game():
    message = _refused_in_child("print(g.observations(np.array([0]))[:, :9])")
    assert message == "ArgumentError seats must hold one seat per game, shape (4,), got shape (1,)"


def test_final_seats_outside_0_and_1_are_refused_before_a_game_moves():
    # the old code stepped on and, once a game ended, returned its final observation for seat 9 (garbage)
    message = _refused_in_child(
        """
        for _ in range(40):
            result = g.step(g.random_actions(np.arange(4)), final_seats=[9] * 4)
            if result.terminated.any():
                print(result.final_observations[result.terminated][:, :9].tolist())
                break
        """
    )
    assert message == "ArgumentError final_seats must be 0 or 1, got 9 for game 0"


# ------------------------------------------------------------------ the other checks, in process


def _snapshot(games: FastGames) -> list[np.ndarray]:
    return [array.copy() for array in games.batch] + [games.rng.copy()]


def _assert_unchanged(games: FastGames, before: list[np.ndarray]) -> None:
    for old, new in zip(before, _snapshot(games)):
        np.testing.assert_array_equal(old, new)


def _finished_state(seed: int = 0) -> GameState:
    games = FastGames(1, seed=seed, draft="dealt")
    state = games.state(0)
    rng = np.random.default_rng(seed)
    while state.outcome is None:
        state = state.apply(int(rng.choice(state.legal_actions())))
    return state


@pytest.mark.parametrize(
    ("call", "error", "message"),
    [
        (lambda g: g.state(-1), ArgumentError, "game must be an index 0-3, got -1"),
        (lambda g: g.state(4), ArgumentError, "game must be an index 0-3, got 4"),
        (lambda g: g.state(True), ArgumentError, "game must be an integer index 0-3, got True"),
        (lambda g: g.state(1.0), ArgumentError, "game must be an integer index 0-3, got 1.0"),
        (lambda g: g.state(np.zeros((2, 2))), ArgumentError, "got array([[0., 0.], [0., 0.]])"),
        (lambda g: g.set_state(-1, g.state(0)), ArgumentError, "game must be an index 0-3, got -1"),
        (lambda g: g.set_state(0, "a state"), PositionError, "state must be a core GameState, got str"),
        (lambda g: g.restart([[0, 1]]), ArgumentError, "games must be a 1-D array of game indices, got shape (1, 2)"),
        (lambda g: g.restart(np.array([1.0])), ArgumentError, "games must be integers"),
        (lambda g: g.random_actions(np.array([True])), ArgumentError, "games must be integers"),
        (lambda g: g.random_actions(np.array([2**64 - 1], np.uint64)), ArgumentError, "within int64"),
        (lambda g: g.observations([0, 1, 2, 3.0]), ArgumentError, "seats must be integers"),
        (lambda g: g.observations([0, 1, 1, -1]), ArgumentError, "seats must be 0 or 1, got -1 for game 3"),
        (lambda g: g.step(np.zeros((2, 2), np.int64)), IllegalMoveError, "actions must have shape (4,)"),
        (lambda g: g.step([16, 16], games=[0, 1], final_seats=[0]), ArgumentError, "final_seats must hold one seat"),
        (lambda g: g.step([300], games=[2]), IllegalMoveError, "actions must be action ids 0-255, got 300 for game 2"),
        (lambda g: g.step([16, 16], games=[1, 1]), ArgumentError, "games must not repeat a game"),
    ],
)
def test_bad_arguments_are_refused_in_one_line_and_change_nothing(call, error, message):
    games = FastGames(4, seed=0, draft="dealt")
    before = _snapshot(games)
    with pytest.raises(error) as caught:
        call(games)
    assert message in str(caught.value) and "\n" not in str(caught.value)
    _assert_unchanged(games, before)


@pytest.mark.parametrize(
    "change",
    [{"to_move": 5}, {"first_player": -1}, {"owners": (7,) * 15}, {"cards": (None,) * 3}, {"max_a_cards": 99}],
    ids=["to-move", "first-player", "owners", "cards", "max-a"],
)
def test_a_hand_built_state_the_arrays_cannot_hold_is_refused(change):
    """A seat or tile the kernels index by, out of range in a hand-built ``GameState``, is refused by ``set_state``."""
    games = FastGames(2, seed=0, draft="dealt")
    before = _snapshot(games)
    with pytest.raises(PositionError, match="state does not fit the fast engine"):
        games.set_state(0, dataclasses.replace(games.state(1), **change))
    _assert_unchanged(games, before)


def test_a_hand_built_slot_status_out_of_range_is_refused():
    games = FastGames(2, seed=0, draft="dealt")
    state = games.state(1)
    with pytest.raises(PositionError, match="slot status must be 0, 1 or 2"):
        games.set_state(0, dataclasses.replace(state, status=((100,) * 16, state.status[1])))


def test_random_actions_refuse_a_finished_game():
    """A game stored finished has no legal action: the old kernel drew a garbage one from an empty list."""
    games = FastGames(2, seed=0, draft="dealt")
    games.set_state(1, _finished_state())
    with pytest.raises(IllegalMoveError, match="game 1 is over"):
        games.random_actions([0, 1])
    assert games.random_actions([0, 0]).shape == (2,)  # a game listed twice draws twice from its stream


@pytest.mark.parametrize("count", [0, -3, True, 2.5, "4"], ids=["zero", "negative", "bool", "float", "str"])
def test_game_counts_are_whole_numbers_from_one(count):
    with pytest.raises(ArgumentError, match="num_games"):
        FastGames(count)
    with pytest.raises(ArgumentError, match="num_envs"):
        TrinityTowersVectorEnv(count)


@pytest.mark.parametrize(
    "policy_output",
    [lambda n: np.full(n, 16.7), lambda n: np.ones(n, bool), lambda n: np.full(n + 1, 16), lambda n: np.full(n, 999)],
    ids=["float", "bool", "too-many", "outside"],
)
def test_the_vector_envs_opponent_actions_are_checked_not_cast(policy_output):
    """A batch policy's floats were truncated to action ids; now any bad opponent action raises in one line."""
    env = TrinityTowersVectorEnv(4, opponent=lambda observations, masks: policy_output(len(masks)), seat=0)
    env.reset(seed=0)  # seat 0 drafts first: the opponent moves after the learner's first pick
    with pytest.raises(IllegalMoveError, match="opponent actions") as caught:
        env.step(np.flatnonzero(env.action_masks()[0])[:1].repeat(4))
    assert "\n" not in str(caught.value)


def test_the_vector_env_refuses_non_integer_actions_and_treats_out_of_range_ones_as_illegal():
    env = TrinityTowersVectorEnv(2, seat=0)
    env.reset(seed=0)
    with pytest.raises(IllegalMoveError, match="actions must be integers"):
        env.step(np.array([0.0, 1.0]))
    with pytest.raises(IllegalMoveError, match=r"actions must have shape \(2,\)"):
        env.step(np.array([0]))
    _, rewards, terminated, _, infos = env.step(np.array([-100, 2**40]))  # as the single-agent env: illegal
    assert terminated.all() and (rewards == -1).all() and infos["illegal_action"].all()


# ------------------------------------------------------------------ the fuzz, with numba's bounds checks on


def fuzz(examples: int) -> None:
    """Every public method of ``FastGames`` with bad indices, seats and actions: each refused in one line,
    nothing changed; between them valid calls, checked against the kernels called directly and the core.

    Run in a child with ``NUMBA_BOUNDSCHECK=1``: a kernel reaching past an array raises ``IndexError``."""
    from hypothesis import HealthCheck, given, settings
    from hypothesis import strategies as st

    from trinity_env.fast import kernels
    from trinity_env.fast.convert import read_state
    from trinity_env.spec.observation import encode_observation

    size = 4
    pool = {draft: FastGames(size, seed=1, draft=draft) for draft in ("pick", "dealt")}
    finished = _finished_state(3)
    outside = st.one_of(st.integers(-(2**62), -1), st.integers(size, 2**62))
    index_lists = st.lists(st.integers(0, size - 1), max_size=2 * size)
    bad_games = st.one_of(
        st.tuples(index_lists, outside, st.integers(0, 2 * size)).map(lambda t: _put(t[0], t[2], t[1])),
        index_lists.filter(bool).map(lambda g: np.array(g, float)),
        index_lists.filter(bool).map(lambda g: np.array(g, bool)),
        index_lists.filter(bool).map(lambda g: np.array(g).reshape(1, -1)),
        st.sampled_from([np.array(["0"]), np.array([None]), np.array(2**64 - 1, np.uint64).reshape(1)]),
    )
    bad_seats = st.one_of(
        st.lists(st.integers(0, 1), max_size=2 * size).filter(lambda s: len(s) != size),
        st.tuples(st.lists(st.integers(0, 1), min_size=size, max_size=size), st.integers(0, size - 1), outside).map(
            lambda t: _put(t[0][:-1], t[1], t[2] % 7 + 2 if t[2] > 0 else t[2])  # one seat 2-8 or negative
        ),
        st.just(np.full(size, 0.0)),
        st.just(np.zeros(size, bool)),
    )
    bad_actions = st.one_of(st.integers(-(2**62), -1), st.integers(256, 2**62))
    bad_game = st.one_of(outside, st.just(True), st.just(1.0), st.just("1"), st.none())
    bad_state = st.sampled_from([{"to_move": 2}, {"owners": (-2,) * 15}, {"first_player": 3}, {"max_a_cards": -1}])

    def refused(games: FastGames, call) -> None:
        before = _snapshot(games)
        try:
            call()
        except REFUSED as error:
            assert "\n" not in str(error), str(error)
        else:
            raise AssertionError("a bad argument was accepted")
        _assert_unchanged(games, before)

    def valid_calls(games: FastGames, rows: list[int], seats: list[int]) -> None:
        twin = copy.deepcopy(games)
        drawn = games.random_actions(rows)
        expected = np.zeros(len(rows), np.int64)
        kernels.random_actions(
            twin.batch.decks,
            twin.batch.status,
            twin.batch.owner,
            twin.batch.info,
            np.array(rows, np.int64),
            twin.rng,
            expected,
        )
        np.testing.assert_array_equal(drawn, expected)
        observed = games.observations(seats)
        expected = np.zeros_like(observed)
        batch = games.batch
        kernels.observe_batch(
            batch.decks,
            batch.status,
            batch.sides,
            batch.owner,
            batch.info,
            np.array(seats, np.int64),
            games.config.open_hands,
            expected,
        )
        np.testing.assert_array_equal(observed, expected)
        moving = sorted(set(rows))
        cores = {b: read_state(games.batch, b) for b in range(size)}
        for b in range(size):
            assert games.state(b) == cores[b]
            assert observed[b].tobytes() == encode_observation(cores[b], seats[b], games.config.open_hands).tobytes()
        actions = games.random_actions(moving)
        result = games.step(actions, games=moving, final_seats=seats)
        for b in range(size):
            if b not in moving:
                assert games.state(b) == cores[b]
                continue
            after = cores[b].apply(int(actions[moving.index(b)]))
            if after.outcome is None:
                assert not result.terminated[b] and games.state(b) == after
            else:
                winner = -1 if after.outcome.winner is None else after.outcome.winner
                assert result.terminated[b] and result.winner[b] == winner
                assert tuple(result.scores[b]) == after.outcome.scores

    calls = st.sampled_from(
        [
            "random_actions",
            "restart",
            "step_games",
            "step_actions",
            "step_some_actions",
            "final_seats",
            "observations",
            "state",
            "set_state_game",
            "set_state_state",
            "finished",
        ]
    )

    @settings(
        max_examples=examples, deadline=None, derandomize=True, database=None, suppress_health_check=list(HealthCheck)
    )
    @given(
        st.sampled_from(sorted(pool)),
        calls,
        bad_games,
        bad_seats,
        bad_actions,
        bad_game,
        bad_state,
        st.lists(st.integers(0, size - 1), min_size=1, max_size=size),
        st.lists(st.integers(0, 1), min_size=size, max_size=size),
    )
    def check(draft, call, games_arg, seats_arg, action, game, change, rows, seats):
        games = pool[draft]
        every = np.arange(size)
        legal = games.random_actions(every) if call.startswith("step") else None
        bad = {
            "random_actions": lambda: games.random_actions(games_arg),
            "restart": lambda: games.restart(games_arg),
            "step_games": lambda: games.step(np.zeros(np.shape(games_arg)[-1:], np.int64), games=games_arg),
            "step_actions": lambda: games.step(np.where(every == rows[0], action, legal)),
            "step_some_actions": lambda: games.step([action], games=rows[:1]),
            "final_seats": lambda: games.step(legal, final_seats=seats_arg),
            "observations": lambda: games.observations(seats_arg),
            "state": lambda: games.state(game),
            "set_state_game": lambda: games.set_state(game, games.state(0)),
            "set_state_state": lambda: games.set_state(0, dataclasses.replace(games.state(0), **change)),
            "finished": lambda: (games.set_state(rows[0], finished), games.random_actions(rows)),
        }[call]
        if call == "finished":
            _finished_then_restart(games, bad, rows[0])
        else:
            refused(games, bad)
        valid_calls(games, rows, seats)

    check()
    print("FUZZ OK", examples)


def _put(values: list[int], where: int, value: int) -> list[int]:
    """``values`` with ``value`` inserted at ``where``."""
    return [*values[:where], value, *values[where:]]


def _finished_then_restart(games: FastGames, call, row: int) -> None:
    """``random_actions`` refuses a game stored finished; ``restart`` then makes it playable again."""
    with pytest.raises(IllegalMoveError, match=f"game {row} is over"):
        call()
    games.restart([row])


def test_fuzz_bad_arguments():
    """The fuzz below in this process, on the compiled (warm) kernels: every bad argument refused in one line,
    nothing changed. The run with numba's bounds checks on compiles the engine afresh: make test-e2e."""
    fuzz(60)


@pytest.mark.e2e  # compiles the whole engine afresh with bounds checks (about a minute on 2 busy cores): make test-e2e
def test_fuzz_bad_arguments_with_numba_bounds_checks(tmp_path):
    env = {**os.environ, "NUMBA_BOUNDSCHECK": "1", "NUMBA_CACHE_DIR": str(tmp_path / "numba")}
    body = f"""
        import sys
        sys.path.insert(0, {str(ROOT / "tests")!r})
        import numba
        assert numba.config.BOUNDSCHECK, "bounds checks are off"
        from test_fast_bounds import fuzz
        fuzz(60)
        """
    result = _child(body, env=env, timeout=600)
    assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-5000:]
    assert "FUZZ OK 60" in result.stdout
