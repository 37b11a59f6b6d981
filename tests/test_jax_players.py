"""The baseline players as JAX functions (``trinity_env.jax.players``) against the shipped agents, move by move."""

from __future__ import annotations

import random
from pathlib import Path

import numpy as np
import pytest

jax = pytest.importorskip("jax", reason="JAX is not installed (the jax extra)")

from trinity_env.agents.baselines import GreedyAgent  # noqa: E402
from trinity_env.jax import TrinityTowers, from_state, to_state  # noqa: E402
from trinity_env.jax.players import greedy_action, random_action  # noqa: E402
from trinity_env.spec.config import make_config  # noqa: E402
from trinity_env.spec.observation import observation_dict  # noqa: E402


@pytest.mark.parametrize("config", [{}, {"open_hands": False, "draft": "dealt"}], ids=["open", "hidden-dealt"])
def test_greedy_is_the_greedy_agent_at_every_decision(config):
    """Games of greedy against random moves, both seats greedy in turn: at every decision of the draft and the
    play the jitted greedy picks the agent's action from that seat's observation."""
    env = TrinityTowers(**config)
    init, step, greedy = jax.jit(env.init), jax.jit(env.step), jax.jit(greedy_action)
    agent, rng, decisions = GreedyAgent(), random.Random(0), 0
    for seed in range(6):
        state = init(jax.random.PRNGKey(seed))
        core = to_state(state)
        while not core.is_over:
            expected = agent.act(observation_dict(core, core.to_move, env.config.open_hands), core)
            chosen = int(greedy(state))
            assert chosen == expected, f"game {seed}, {len(core.status)}: greedy {chosen}, the agent {expected}"
            decisions += 1
            action = chosen if core.to_move == seed % 2 else rng.choice(core.legal_actions())
            core, state = core.apply(action), step(state, action)
    assert decisions > 60


def test_greedy_is_the_agent_on_loaded_positions():
    from test_invariants import loaded_positions

    env = TrinityTowers()
    greedy, agent = jax.jit(greedy_action), GreedyAgent()
    for core in loaded_positions(20, seed=11):
        if not core.is_over:
            assert int(greedy(from_state(core, env))) == agent.act(observation_dict(core, core.to_move, True), core)


def test_random_action_is_uniform_over_the_legal_actions():
    env = TrinityTowers(draft="dealt")
    state = jax.jit(env.init)(jax.random.PRNGKey(0))
    state = jax.jit(env.step)(state, int(np.flatnonzero(np.asarray(state.legal_action_mask))[7]))
    keys = jax.random.split(jax.random.PRNGKey(1), 60_000)
    actions = np.asarray(jax.jit(jax.vmap(random_action, in_axes=(None, 0)))(state, keys))
    legal = np.flatnonzero(np.asarray(state.legal_action_mask))
    assert set(actions) == set(legal)
    shares = np.bincount(actions, minlength=256)[legal] / actions.size
    assert np.abs(shares * legal.size - 1).max() < 0.25  # 60,000 draws over ~112 actions: ~535 each, sd ~23


def _positions() -> tuple[np.ndarray, np.ndarray]:
    """Every position of eight random games (the draft and the play), both seats, open and hidden hands."""
    rng, config = random.Random(4), make_config(open_hands=False)
    observations, masks = [], []
    for _ in range(8):
        core = config.new_game(rng)
        while not core.is_over:
            for seat in (0, 1):
                shown = observation_dict(core, seat, seat == 0)
                observations.append(shown["observation"])
                masks.append(shown["action_mask"] if seat == core.to_move else np.array(core.action_mask(), np.int8))
            core = core.apply(rng.choice(core.legal_actions()))
    return np.stack(observations), np.stack(masks)


@pytest.mark.parametrize("name", ["az-standard", "ppo-standard"])
def test_the_shipped_networks_in_jax_equal_torch_within_1e_5(name):
    """The shipped networks' logits and values against torch's ``forward`` (the tactical features computed in JAX
    against the numba kernel's too): values within 1e-5, logits within 1e-5 of each logit's size (at least 1)."""
    torch = pytest.importorskip("torch", reason="reading the checkpoint needs torch (the train extra)")
    from trinity_env.agents.az import load_network
    from trinity_env.agents.networks.ppo_network import load_checkpoint
    from trinity_env.agents.networks.tactics import tactical_features as numba_tactics
    from trinity_env.jax.networks import board_network, mlp_network, tactical_features

    path = Path(__file__).resolve().parents[1] / "trinity_env" / "agents" / "data" / f"{name}.pt"
    if name == "az-standard":
        (params, apply), (network, _) = board_network(), load_network(path)
    else:
        (params, apply), (network, _) = mlp_network(), load_checkpoint(path)
    assert network.tactics
    observations, masks = _positions()
    ours_tactics = np.asarray(jax.jit(jax.vmap(tactical_features))(observations))
    assert np.array_equal(ours_tactics, numba_tactics(observations).numpy())
    batched = jax.jit(jax.vmap(apply, in_axes=(None, 0, 0)))
    logits, values = (np.asarray(a) for a in batched(params, observations, masks))
    with torch.no_grad():
        expected_logits, expected_values = (
            t.numpy() for t in network(torch.from_numpy(observations), torch.from_numpy(masks))
        )
    assert len(observations) > 400
    legal = masks.astype(bool)
    assert np.array_equal(logits[~legal], expected_logits[~legal])
    # float32 sums in another order: within 1e-5 of each logit's size (at least 1)
    scale = np.maximum(1.0, np.abs(expected_logits[legal]))
    assert (np.abs(logits[legal] - expected_logits[legal]) <= 1e-5 * scale).all()
    assert np.abs(values - expected_values).max() <= 1e-5
