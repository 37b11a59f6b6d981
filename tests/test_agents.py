"""Agents: legal play in every phase and mode, honest search, specs, and strength order."""

from __future__ import annotations

import random

import numpy as np
import pytest

from trinity_env.agents import AgentSpecError, GreedyAgent, MCTSAgent, RandomAgent, make, visible_state
from trinity_env.agents.view import decode, determinise
from trinity_env.core import GameState
from trinity_env.core.state import IN_HAND, UNPICKED
from trinity_env.envs import make_config
from trinity_env.evaluation.match import seat_swapped_points
from trinity_env.spec.observation import action_mask, encode_observation
from trinity_env.testing import hidden_twin

SPECS = ["random", "greedy", "lookahead", "mcts:60"]


def _observation(state: GameState, seat: int, open_hands: bool) -> dict:
    return {"observation": encode_observation(state, seat, open_hands), "action_mask": action_mask(state, seat)}


@pytest.mark.parametrize("spec", SPECS)
@pytest.mark.parametrize(
    "config", [{}, {"open_hands": False}, {"draft": "dealt"}, {"deck": "random", "max_a_cards": 1}]
)
def test_every_agent_drafts_and_plays_only_legal_actions(spec, config):
    env_config = make_config(config)
    rng = random.Random(0)
    agent = make(spec)
    for game in range(3):
        agent.reset(game)
        state = env_config.new_game(rng)
        while not state.is_over:
            seat = state.to_move
            if seat == 0:
                action = agent.act(
                    _observation(state, seat, env_config.open_hands), visible_state(state, env_config.open_hands)
                )
                assert action in state.legal_actions(), f"{spec} chose illegal action {action}"
            else:
                action = rng.choice(state.legal_actions())
            state = state.apply(action)


def test_mcts_never_reads_hidden_cards():
    """Swapping the opponent's hidden cards changes nothing MCTS decides, even if handed the true state."""
    config = make_config(open_hands=False)
    rng = random.Random(5)
    compared = 0
    for _ in range(6):
        state = config.new_game(rng)
        while not state.is_over:
            if (
                state.to_move == 0
                and rng.random() < 0.5
                and (other := hidden_twin(state, 0, rng, open_hands=False)) is not None
            ):
                obs = _observation(state, 0, False)
                assert (obs["observation"] == _observation(other, 0, False)["observation"]).all()
                decisions = set()
                for truth in (state, other):
                    agent = MCTSAgent(simulations=80, worlds=4, seed=11)
                    decisions.add(agent.act(obs, truth))
                assert len(decisions) == 1
                compared += 1
            state = state.apply(rng.choice(state.legal_actions()))
    assert compared > 20


def test_determinised_worlds_respect_what_is_known():
    config = make_config(open_hands=False, max_a_cards=2)
    rng = random.Random(2)
    state = config.new_game(rng)
    for _ in range(21):  # the draft and a few placements
        state = state.apply(rng.choice(state.legal_actions()))
    view = decode(encode_observation(state, 0, False))
    assert view.unknown.size > 0
    for seed in range(30):
        world = determinise(view, np.random.default_rng(seed))
        status = world.status[0, 1]
        assert (status == IN_HAND).sum() == len(state.hand(1))
        picked_a = ((world.decks[0, 1] == 10).any(axis=1) & (status != UNPICKED) & (status != 3)).sum()
        assert picked_a <= 2
        assert (status[view.unknown] != 2).all()


def test_mcts_reuses_its_tree_in_open_hand_play():
    config = make_config(draft="dealt", first_player=0)
    state = config.new_game(random.Random(1))
    agent = MCTSAgent(simulations=300, seed=0)
    reports = []
    while not state.is_over and len(reports) < 4:
        state = state.apply(agent.act(_observation(state, 0, True), state))
        reports.append(agent.last_search)
        if not state.is_over:
            state = state.apply(state.legal_actions()[0])
    assert len(reports) >= 2
    assert [r.reused for r in reports] == [False] + [True] * (len(reports) - 1)
    assert all(r.root_visits.sum() >= 299 for r in reports)  # every simulation passes through a root child


def test_specs_name_agents_and_bad_specs_say_why():
    assert isinstance(make("random:seed=3"), RandomAgent)
    assert isinstance(make("greedy"), GreedyAgent)
    mcts = make("mcts:250,c=0.8,worlds=2")
    assert (mcts.simulations, mcts.c, mcts.worlds, mcts.name) == (250, 0.8, 2, "mcts:250,c=0.8,worlds=2")
    for bad, message in [
        ("alphazero", "no agent named"),
        ("mcts:lots", "bad arguments"),
        ("", "agent spec"),
        ("mcts:0", "simulations"),
        ("greedy:depth=2", "bad arguments"),
    ]:
        with pytest.raises(AgentSpecError if message != "simulations" else ValueError, match=message):
            make(bad)


def test_stronger_baselines_beat_weaker_ones():
    config = make_config()

    def score(a: str, b: str, games: int) -> float:
        points = seat_swapped_points(make(a), make(b), config, range(games), lambda k: k)
        return points / games

    assert score("greedy", "random", 40) > 0.65
    assert score("lookahead", "greedy", 20) > 0.65
    assert score("mcts:200", "random", 10) > 0.8


def test_the_batched_greedy_kernel_plays_exactly_like_greedy():
    from trinity_env.fast.convert import from_states
    from trinity_env.search.baselines import greedy_batch

    rng = random.Random(0)
    states = []
    while len(states) < 200:
        state = GameState.new_game(first_player=rng.randint(0, 1))
        for _ in range(rng.randint(0, 28)):
            if not state.is_over:
                state = state.apply(rng.choice(state.legal_actions()))
        if not state.is_over:
            states.append(state)
    out = np.zeros(len(states), np.int64)
    greedy_batch(*from_states(states), np.arange(len(states)), out)
    agent = GreedyAgent()
    assert [agent.act(_observation(s, s.to_move, True)) for s in states] == out.tolist()


def test_spec_defaults_are_the_constructors_and_unknown_arguments_are_named():
    """Defaults are declared once, in the agents; the registry only maps spec names to keywords."""
    from trinity_env.agents.registry import AGENTS
    from trinity_env.agents.spec_arguments import AZ_ARGUMENTS, MCTS_ARGUMENTS

    built, plain = make("mcts"), MCTSAgent()
    assert (built.simulations, built.c, built.worlds) == (plain.simulations, plain.c, plain.worlds)
    assert make("mcts:123,c=1.5").simulations == 123 and make("mcts:123,c=1.5").c == 1.5
    assert {keyword for keyword, _ in AZ_ARGUMENTS.values()} == {
        "simulations",
        "solver",
        "worlds",
        "seed",
        "mode",
        "max_considered",
    }
    assert all(name == keyword for name, (keyword, _) in MCTS_ARGUMENTS.items())
    with pytest.raises(AgentSpecError, match=r"mcts takes no argument 'bogus' \(it takes simulations, c, "):
        make("mcts:400,bogus=1")
    assert "mcts" in AGENTS
