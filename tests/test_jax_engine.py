"""The JAX engine (``trinity_env.jax``, the ``jax`` extra) held to the core move by move, and to Pgx's API.

Every game here is played in both engines at once: after each action the JAX state converted back
(``to_state``) equals the core's, both seats' observations equal the env encoder's bit for bit,
the rules' mask equals the core's, Pgx's mask is that mask (all True once over), and the rewards
are the core's reward module's. The invariant suite (tests/test_invariants.py) runs the engine too.
Skipped where jax is not installed: ``make test-jax`` installs the extra and runs this file.
"""

from __future__ import annotations

import functools
import random
import re
import subprocess
import sys
import typing
from pathlib import Path

import numpy as np
import pytest

jax = pytest.importorskip("jax", reason="JAX is not installed (the jax extra)")
import jax.numpy as jnp  # noqa: E402
from hypothesis import given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402
from test_invariants import loaded_positions  # noqa: E402

from trinity_env.core import ArgumentError, GameState  # noqa: E402
from trinity_env.core.decks import legal_a_counts  # noqa: E402
from trinity_env.core.rewards import transition_rewards  # noqa: E402
from trinity_env.jax import ENV_ID, TrinityTowers, from_state, legal_mask, to_state  # noqa: E402
from trinity_env.spec.config import make_config  # noqa: E402
from trinity_env.spec.observation import encode_observation  # noqa: E402

CONFIGS = {
    "pick": {},
    "pick-margin-hidden": {"reward": "margin", "open_hands": False},
    "dealt-margin": {"draft": "dealt", "reward": "margin"},
    "dealt-hidden-first1": {"draft": "dealt", "open_hands": False, "first_player": 1},
    "pick-first0-max1": {"first_player": 0, "max_a_cards": 1},
    "dealt-max0": {"draft": "dealt", "max_a_cards": 0},
    "random-decks": {"deck": "random", "draft": "dealt", "reward": "margin"},
    "two-decks": {"decks": ["standard", "random"]},
    "fixed": {"draft": "fixed", "hands": [[0, 1, 5, 6, 7, 8, 9, 10], list(range(2, 10))], "open_hands": False},
}


class Runner:
    """One env with its functions jitted once: init, step, both seats' observations and the rules' mask."""

    def __init__(self, **config):
        self.config = make_config(**config)
        self.env = env = TrinityTowers(self.config)
        self.init, self.step = jax.jit(env.init), jax.jit(env.step)
        self.show = jax.jit(lambda s: (jax.vmap(lambda p: env.observe(s, p))(jnp.arange(2)), legal_mask(s)))

    def check(self, state, core: GameState) -> None:
        """The JAX state is the core's, as every field shows it."""
        assert to_state(state) == core
        observations, mask = (np.asarray(a) for a in self.show(state))
        for seat in (0, 1):
            expected = encode_observation(core, seat, self.config.open_hands)
            assert observations[seat].dtype == np.int8
            assert observations[seat].tobytes() == expected.tobytes(), np.flatnonzero(observations[seat] != expected)
        assert np.array_equal(np.asarray(state.observation), observations[int(state.current_player)])
        assert mask.astype(np.int8).tolist() == core.action_mask()
        pgx_mask = np.asarray(state.legal_action_mask)
        assert pgx_mask.tolist() == ([True] * 256 if core.is_over else [bool(m) for m in core.action_mask()])
        assert int(state.current_player) == core.to_move and bool(state.terminated) == core.is_over
        assert not bool(state.truncated)
        assert int(state._x.termination) == (core.outcome.termination.code if core.is_over else 0)

    def play(self, state, core: GameState, rng: random.Random) -> int:
        """Random moves in both engines to the end, checked after each; then a step after the end. The actions."""
        self.check(state, core)
        moves = 0
        while not core.is_over:
            action = rng.choice(core.legal_actions())
            before, core = core, core.apply(action)
            state = self.step(state, action)
            self.check(state, core)
            paid = transition_rewards(self.config.reward, before, core) or (0.0, 0.0)
            assert np.asarray(state.rewards) == pytest.approx(paid, abs=1e-6)
            assert int(state._step_count) == moves + 1
            moves += 1
        after = self.step(state, 16)
        assert np.asarray(after.rewards).tolist() == [0.0, 0.0] and to_state(after) == core
        assert int(after._step_count) == moves
        return moves


@functools.cache
def runner(name: str) -> Runner:
    return Runner(**CONFIGS[name])


BATCH = 8
"""The vmapped tests' one batch size (the hook's test's too): each config's batched functions compile once."""


@functools.cache
def batched(name: str):
    """Config ``name``'s ``init`` and ``step`` under ``vmap``, jitted once."""
    env = runner(name).env
    return jax.jit(jax.vmap(env.init)), jax.jit(jax.vmap(env.step))


def _rows(states) -> list[np.ndarray]:
    return [np.asarray(leaf) for leaf in jax.tree_util.tree_leaves(states)]


@pytest.mark.parametrize("name", sorted(CONFIGS))
def test_games_match_the_core_move_by_move(name):
    run, rng = runner(name), random.Random(name)
    firsts = set()
    for seed in range(6):
        state = run.init(jax.random.PRNGKey(seed))
        core = to_state(state)
        assert core.owners == (-1,) * 15 and core.outcome is None
        firsts.add(core.first_player)
        assert run.play(state, core, rng) >= 5
    if run.config.first_player == "random":
        assert firsts == {0, 1}, "both seats place first"


@pytest.mark.parametrize("name", ["pick", "pick-margin-hidden", "pick-first0-max1"])
def test_games_from_every_phase_of_the_draft_and_the_play(name):
    """Core games stopped after 0-30 actions (mid-draft, the last pick, mid-play) go on in the JAX engine."""
    run, rng = runner(name), random.Random(7)
    for cut in range(0, 31, 3):
        core = run.config.new_game(rng)
        for _ in range(cut):
            if core.is_over:
                break
            core = core.apply(rng.choice(core.legal_actions()))
        run.play(from_state(core, run.env), core, rng)


@pytest.mark.parametrize("name", ["pick", "pick-margin-hidden"])
def test_loaded_positions_with_short_hands_and_passes(name):
    run, rng = runner(name), random.Random(3)
    for core in loaded_positions(12, seed=11):
        run.play(from_state(core, run.env), core, rng)


def _tree_equal(a, b) -> bool:
    return all(np.array_equal(x, y) for x, y in zip(jax.tree_util.tree_leaves(a), jax.tree_util.tree_leaves(b)))


@pytest.mark.parametrize("name", ["pick", "dealt-margin", "random-decks"])
def test_vmapped_batches_equal_the_same_games_played_one_by_one(name):
    run, batch = runner(name), BATCH
    keys = jax.random.split(jax.random.PRNGKey(42), batch)
    init, step = batched(name)
    states = init(keys)
    singles = [run.init(k) for k in keys]
    rng = np.random.default_rng(0)
    for _ in range(34):  # past the longest game: finished games are stepped too
        masks = np.asarray(states.legal_action_mask)
        actions = np.array([rng.choice(np.flatnonzero(m)) for m in masks])
        states = step(states, jnp.asarray(actions))
        singles = [run.step(s, int(a)) for s, a in zip(singles, actions)]  # a Python int, as play's
        rows = _rows(states)
        for b in range(batch):
            assert all(np.array_equal(row[b], leaf) for row, leaf in zip(rows, _rows(singles[b]), strict=True))
    assert bool(states.terminated.all())


def test_a_key_deals_the_same_game_and_different_keys_differ():
    run = runner("random-decks")
    first, again = run.init(jax.random.PRNGKey(5)), run.init(jax.random.PRNGKey(5))
    assert _tree_equal(first, again)
    others = [to_state(run.init(jax.random.PRNGKey(k))) for k in range(6)]
    assert len({(g.decks, g.status) for g in others}) == 6


def test_dealt_hands_are_drawn_uniformly_from_the_legal_hands():
    """The count of A cards follows the number of legal hands holding it (the core's rule), and within each kind
    every deck card is dealt as often: 8,192 dealt hands, bounds far outside sampling noise."""
    run, (init, _) = runner("dealt-margin"), batched("dealt-margin")
    keys = np.asarray(jax.random.split(jax.random.PRNGKey(1), 8192)).reshape(-1, BATCH, 2)
    status = np.concatenate([np.asarray(init(k)._x.status)[:, 0] for k in keys])  # player 0's hands
    core = to_state(run.init(jax.random.PRNGKey(0)))
    a_card = np.array([card.is_a_card for card in core.decks[0]])
    assert ((status == 1).sum(axis=1) == 8).all()
    counts, weights = legal_a_counts(int(a_card.sum()), int((~a_card).sum()), 8, 3)
    expected = np.array(weights) / sum(weights)
    seen = np.bincount((status[:, a_card] == 1).sum(axis=1), minlength=len(counts))[: len(counts)] / len(status)
    assert np.abs(seen - expected).max() < 0.03
    for kind in (a_card, ~a_card):
        share = (status[:, kind] == 1).mean(axis=0)
        assert share.max() - share.min() < 0.05


def test_random_decks_follow_the_core_rule():
    run = runner("random-decks")
    for k in range(20):
        game = to_state(run.init(jax.random.PRNGKey(k)))
        deck = game.decks[0]
        assert game.decks[1] == deck, "deck 'random' gives both players one deck"
        assert len(set(deck)) == 16 and sum(c.is_a_card for c in deck) == 5 and {sum(c) for c in deck} == {20}
    two = runner("two-decks")
    game = to_state(two.init(jax.random.PRNGKey(0)))
    assert game.decks[0] == make_config().decks[0] and game.decks[1] != game.decks[0]


# ---------------------------------------------------------------------------- Pgx's semantics


def test_illegal_and_out_of_range_actions_end_the_game_as_pgx_has_it():
    """An illegal action: terminated, -1 to its taker and +1 to the other, the board untouched; an id outside
    0-255 is illegal; a step from a terminal state pays zero and changes nothing."""
    run = runner("pick")
    state = run.init(jax.random.PRNGKey(0))
    for action in (16, -1, 256, 10**6):
        ended = run.step(state, action)
        assert bool(ended.terminated) and np.asarray(ended.rewards).tolist() == [-1.0, 1.0]
        assert _tree_equal(ended._x, state._x) and np.asarray(ended.legal_action_mask).all()
        again = run.step(ended, 0)
        assert np.asarray(again.rewards).tolist() == [0.0, 0.0] and _tree_equal(again._x, ended._x)
    core = run.config.new_game(random.Random(0))
    for _ in range(16):
        core = core.apply(core.legal_actions()[0])
    mover = core.to_move
    ended = run.step(from_state(core, run.env), 3)  # a pick during the play
    assert float(ended.rewards[mover]) == -1.0 and float(ended.rewards[1 - mover]) == 1.0
    with pytest.raises(ArgumentError, match="illegal action"):
        to_state(ended)


def test_step_is_pgx_own_step():
    """``TrinityTowers.step`` against ``pgx.core.Env.step`` itself on the same states and actions, legal,
    illegal and after the end, in batches: 64 games, 20 actions each."""
    pgx_core = pytest.importorskip("pgx.core")
    run, (init, ours) = runner("dealt-margin"), batched("dealt-margin")
    theirs = jax.jit(jax.vmap(lambda s, a: pgx_core.Env.step(run.env, s, a)))
    rng = np.random.default_rng(3)
    for keys in jax.random.split(jax.random.PRNGKey(3), 64).reshape(-1, BATCH, 2):
        states = init(keys)
        for _ in range(20):
            masks = np.asarray(states.legal_action_mask)
            legal = np.array([rng.choice(np.flatnonzero(m)) for m in masks])
            actions = jnp.asarray(np.where(rng.random(BATCH) < 0.05, rng.integers(0, 256, BATCH), legal))
            mine = ours(states, actions)
            assert _tree_equal(mine, theirs(states, actions))
            states = mine


def test_pgx_hook_moves_by_the_step_own_rules(monkeypatch):
    """Pgx's hook ``_step`` makes its move through the rules ``step`` uses (``rules.advance`` and the mask of its
    words), not a second path: with ``rules.apply`` and ``rules.legal_mask`` gone, ``pgx.core.Env.step`` still
    equals ``step`` on legal and illegal actions."""
    pgx_core = pytest.importorskip("pgx.core")
    env = TrinityTowers(draft="dealt", reward="margin")
    states = jax.jit(jax.vmap(env.init))(jax.random.split(jax.random.PRNGKey(5), 8))
    actions = jnp.argmax(states.legal_action_mask, axis=-1).at[0].set(3)  # a pick during the play: illegal
    from trinity_env.jax import rules

    def gone(*args, **kwargs):
        raise AssertionError("a second path through the rules")

    monkeypatch.setattr(rules, "apply", gone)
    monkeypatch.setattr(rules, "legal_mask", gone)
    theirs = jax.jit(jax.vmap(lambda s, a: pgx_core.Env.step(env, s, a)))(states, actions)
    assert _tree_equal(jax.jit(jax.vmap(env.step))(states, actions), theirs)
    assert float(theirs.rewards[0, int(states.current_player[0])]) == -1.0


def test_pgx_api_test_batch_passes_as_it_is():
    api_test = pytest.importorskip("pgx._src.api_test")
    api_test.api_test_batch(TrinityTowers(), num=10)


def _act_randomly(key, legal_action_mask):
    """pgx.experimental's ``act_randomly`` with its one bug mended: it samples along axis 1, which a single
    game's 1-D mask lacks (``api_test_single`` fails on Pgx's own ``connect_four`` too); the last axis serves both."""
    logits = jnp.log(legal_action_mask.astype(jnp.float32))
    return jax.random.categorical(key, logits=logits, axis=-1)


def test_pgx_api_test_single_passes_with_its_act_randomly_mended(monkeypatch):
    """Pgx's single-game checks, unchanged but for two mends: ``act_randomly``'s axis, and the id check,
    which accepts only Pgx's own games' ids (``EnvId``) and so is widened by exactly this env's id."""
    api_test = pytest.importorskip("pgx._src.api_test")
    monkeypatch.setattr(api_test, "act_randomly", jax.jit(_act_randomly))
    monkeypatch.setattr(api_test, "get_args", lambda kind: (*typing.get_args(kind), ENV_ID))
    for config in ({}, {"draft": "dealt", "reward": "margin", "open_hands": False}):
        api_test.api_test_single(TrinityTowers(**config), num=5)


def test_the_env_is_a_pgx_env_with_pgx_fields():
    pgx = pytest.importorskip("pgx")
    env = runner("pick").env
    state = runner("pick").init(jax.random.PRNGKey(0))
    assert isinstance(env, pgx.Env) and isinstance(state, pgx.State)
    assert env.id == state.env_id == ENV_ID and env.num_players == 2
    assert env.num_actions == 256 and env.observation_shape == (339,)
    assert state.observation.dtype == jnp.int8 and state.rewards.shape == (2,)
    assert "<svg" in state.to_svg()


def test_conversion_refusals_are_one_line():
    run = runner("pick")
    batch = jax.vmap(run.env.init)(jax.random.split(jax.random.PRNGKey(0), 2))
    with pytest.raises(ArgumentError, match="one game"):
        to_state(batch)
    with pytest.raises(ArgumentError, match="GameState"):
        from_state({"phase": "play"})


# ---------------------------------------------------------------------------- fuzz


@settings(max_examples=60, deadline=None)
@given(
    name=st.sampled_from(["pick", "pick-margin-hidden", "dealt-margin", "dealt-hidden-first1"]),
    seed=st.integers(0, 2**31 - 1),
    choices=st.lists(st.integers(0, 10**6), max_size=40),
    illegal_at=st.one_of(st.none(), st.integers(0, 40)),
)
def test_fuzz_random_games_and_an_illegal_move(name, seed, choices, illegal_at):
    """Hypothesis picks the key and the moves (an index into the legal moves), and maybe one illegal move."""
    run = runner(name)
    state = run.init(jax.random.PRNGKey(seed))
    core = to_state(state)
    for d, choice in enumerate(choices):
        if core.is_over:
            break
        if d == illegal_at:
            illegal = sorted(set(range(256)) - set(core.legal_actions()))
            ended = run.step(state, illegal[choice % len(illegal)])
            mover = core.to_move
            assert bool(ended.terminated) and float(ended.rewards[mover]) == -1.0
            assert _tree_equal(ended._x, state._x)
            return
        legal = core.legal_actions()
        action = legal[choice % len(legal)]
        core = core.apply(action)
        state = run.step(state, action)
        run.check(state, core)


def test_it_works_without_pgx_installed():
    """With pgx hidden, the env keeps its interface (own base classes) and still plays the core's game."""
    code = """
import random, sys
sys.modules["pgx"] = None
import jax
from trinity_env.jax import TrinityTowers, to_state
env = TrinityTowers(draft="dealt", reward="margin")
step = jax.jit(env.step)
state = jax.jit(env.init)(jax.random.PRNGKey(0))
core, rng = to_state(state), random.Random(0)
while not core.is_over:
    action = rng.choice(core.legal_actions())
    core, state = core.apply(action), step(state, action)
    assert to_state(state) == core
assert type(env).__mro__[1] is object and "pgx" not in str(type(state).__mro__)
print("ok", float(state.rewards[0]))
"""
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300)
    assert result.returncode == 0 and result.stdout.startswith("ok"), result.stderr[-2000:]


def test_the_docs_example_runs():
    """docs/jax.md's ``py`` blocks (``python`` blocks run in the default suite, which has no jax) run in order."""
    page = Path(__file__).resolve().parents[1] / "docs" / "jax.md"
    blocks = re.findall(r"```py\n(.*?)```", page.read_text(encoding="utf-8"), flags=re.S)
    assert blocks
    namespace: dict = {}
    for block in blocks:
        exec(compile(block, "docs/jax.md", "exec"), namespace)
    assert namespace["first"].is_over
