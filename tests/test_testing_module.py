"""``trinity_env.testing``: the project's env and agents keep secrets, and the checks catch ones that do not."""

from __future__ import annotations

import importlib.util
import random

import numpy as np
import pytest

import trinity_env
from trinity_env.agents import Agent, make
from trinity_env.core.state import DRAFT, IN_HAND, PLAYED
from trinity_env.envs.aec import raw_env
from trinity_env.spec.config import make_config
from trinity_env.spec.observation import THEIR_CARD_FEATURES, THEIR_DECK_OFFSET, encode_observation
from trinity_env.testing import check_agent_ignores_hidden_information, check_observation_hides_secrets, hidden_twin

SPECS = ["random", "greedy", "lookahead", "mcts:60", "mcts:60,draft=search"]


# ---------------------------------------------------------------------- the project's env and agents pass


@pytest.mark.parametrize("open_hands", [False, True])
@pytest.mark.parametrize("wrapped", [False, True])
def test_the_env_hides_secret_picks_and_hidden_hands(open_hands, wrapped):
    factory = (lambda: trinity_env.env(open_hands=open_hands)) if wrapped else (lambda: raw_env(open_hands=open_hands))
    compared = check_observation_hides_secrets(factory, games=3)
    assert compared > 40  # the twins really differed in something hidden, many times


def test_with_hidden_hands_the_twin_games_are_compared_during_play_too():
    draft_only = check_observation_hides_secrets(lambda: raw_env(open_hands=True), games=3)
    with_play = check_observation_hides_secrets(lambda: raw_env(open_hands=False), games=3)
    assert with_play > draft_only


@pytest.mark.parametrize("spec", SPECS)
def test_the_project_agents_ignore_hidden_information(spec):
    hidden = check_agent_ignores_hidden_information(lambda: make(spec), open_hands=False, games=2)
    drafting = check_agent_ignores_hidden_information(lambda: make(spec), open_hands=True, games=2)
    assert hidden >= 30 and drafting >= 20


@pytest.mark.slow
@pytest.mark.skipif(importlib.util.find_spec("torch") is None, reason="the shipped policy needs torch")
def test_the_shipped_policy_ignores_hidden_information():
    assert check_agent_ignores_hidden_information("ppo-standard", open_hands=False, games=2) >= 30


# ---------------------------------------------------------------------- leaks are caught


class LeakyAgent(Agent):
    """Reads the opponent's hidden cards from the state it is handed: what the check must catch."""

    name = "leaky"

    def act(self, observation, state=None):
        legal = np.flatnonzero(observation["action_mask"])
        if state is None:
            return int(legal[0])
        secret = sum(i * (s == IN_HAND) for i, s in enumerate(state.status[1 - state.to_move]))
        return int(legal[secret % legal.size])


def test_an_agent_that_reads_the_hidden_hand_is_caught():
    with pytest.raises(AssertionError, match=r"agent 'leaky' \(seat ., play phase.*player .'s hidden hand: \["):
        check_agent_ignores_hidden_information(LeakyAgent, open_hands=False, config={"draft": "dealt"})


def test_an_agent_that_reads_secret_picks_is_caught():
    with pytest.raises(AssertionError, match=r"draft phase.*player .'s secret draft picks: \["):
        check_agent_ignores_hidden_information(LeakyAgent, open_hands=True)


def test_without_the_state_the_leaky_agent_has_nothing_to_read():
    assert check_agent_ignores_hidden_information(LeakyAgent, open_hands=False, hand_state=False) > 0


class HandShowingEnv(raw_env):
    """Shows the opponent's hand during play although the config hides it."""

    def observe(self, agent):
        observation = super().observe(agent)
        seat = self.possible_agents.index(agent)
        if self.game_state.phase != DRAFT:
            observation["observation"] = encode_observation(self.game_state, seat, True)
        return observation


class PickShowingEnv(raw_env):
    """Marks the opponent's secret picks during the draft."""

    def observe(self, agent):
        observation = super().observe(agent)
        state = self.game_state
        if state.phase == DRAFT:
            other = 1 - self.possible_agents.index(agent)
            for i, status in enumerate(state.status[other]):
                if status == IN_HAND:
                    observation["observation"][THEIR_DECK_OFFSET + THEIR_CARD_FEATURES * i + 5] = 1
        return observation


def test_an_env_that_shows_the_hidden_hand_is_caught():
    with pytest.raises(AssertionError, match=r"play phase: the observation differs.*their deck card \d+: "):
        check_observation_hides_secrets(lambda: HandShowingEnv(open_hands=False))
    check_observation_hides_secrets(lambda: HandShowingEnv(open_hands=True))  # with open hands that is the rule


def test_an_env_that_shows_secret_picks_is_caught():
    with pytest.raises(AssertionError, match=r"draft phase: the observation differs.*their deck card \d+: in hand"):
        check_observation_hides_secrets(lambda: PickShowingEnv())


# ---------------------------------------------------------------------- the twins


def test_a_hidden_twin_differs_only_in_the_opponents_hidden_cards():
    rng = random.Random(0)
    config = make_config(open_hands=False, max_a_cards=2)
    twins = 0
    for game in range(4):
        state = config.new_game(random.Random(game))
        while not state.is_over:
            seat = state.to_move
            twin = hidden_twin(state, seat, rng, open_hands=False)
            if twin is not None:
                twins += 1
                other = 1 - seat
                assert twin.status[seat] == state.status[seat] and twin.status[other] != state.status[other]
                assert (twin.cards, twin.owners, twin.to_move, twin.phase) == (
                    state.cards,
                    state.owners,
                    state.to_move,
                    state.phase,
                )
                assert len(twin.hand(other)) == len(state.hand(other))
                assert twin.a_cards_held(other) <= 2
                assert [s == PLAYED for s in twin.status[other]] == [s == PLAYED for s in state.status[other]]
                assert (encode_observation(twin, seat, False) == encode_observation(state, seat, False)).all()
            assert hidden_twin(state, seat, rng, open_hands=True) is None or state.phase == DRAFT
            state = state.apply(rng.choice(state.legal_actions()))
    assert twins > 80
