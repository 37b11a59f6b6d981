"""Outside RL libraries: OpenSpiel, Tianshou, TorchRL, AgileRL, a CleanRL-style PPO loop (``make test-integrations``).

Every test skips when its library is not installed. The OpenSpiel game and the examples
that take seconds (OpenSpiel's MCTS, the CleanRL-style loop in both autoreset modes) run in
the default suite where their library is installed; the Tianshou and AgileRL example runs
are marked slow; TorchRL's wrapper plays whole games in seconds. ``make test-integrations`` installs
the ``integrations`` extra (OpenSpiel, Tianshou and TorchRL; torch stays pinned) and runs this whole
file. AgileRL cannot share the project's environment (it pins ``pettingzoo<1.27``): its test runs in a venv of its own.
Nor can BenchMARL (1.5 pins ``torchrl<0.12``): its tests are tests/test_benchmarl.py, which ``make test-benchmarl``
(``make test-integrations`` ends with it) runs in ``.venv-benchmarl``. The vector envs' masks around an autoreset
(gymnasium's ``AsyncVectorEnv`` and the project's vector env) are held to what docs/evaluate.md says.
"""

from __future__ import annotations

import importlib.util
import pickle
import random
import sys
import warnings
from pathlib import Path
from types import ModuleType

import numpy as np
import pytest

from trinity_env.core import GameState, standard_deck
from trinity_env.core.decks import legal_a_counts
from trinity_env.spec.observation import action_mask, encode_observation

EXAMPLES = Path(__file__).resolve().parent.parent / "examples"


def example(name: str) -> ModuleType:
    """Load ``examples/<name>.py`` as a module (the examples folder is not a package)."""
    spec = importlib.util.spec_from_file_location(f"examples_{name}", EXAMPLES / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


def openspiel():
    """pyspiel with the game registered, or a skip."""
    pyspiel = pytest.importorskip("pyspiel", reason="OpenSpiel is not installed (the openspiel extra)")
    import trinity_env.integrations.openspiel as tos

    return pyspiel, tos


def play_randomly(state, rng: random.Random):
    """Play ``state`` to its end: chance by its probabilities, players uniformly; yields every state on the way."""
    while not state.is_terminal():
        yield state
        if state.is_chance_node():
            outcomes, probabilities = zip(*state.chance_outcomes())
            state.apply_action(rng.choices(outcomes, weights=probabilities)[0])
        else:
            state.apply_action(rng.choice(state.legal_actions()))
    yield state


# ---------------------------------------------------------------------- OpenSpiel: the game


GAME_PARAMS = [
    {},
    {"draft": "dealt"},
    {"draft": "dealt", "open_hands": False},
    {"open_hands": False, "first_player": 1},
    {"draft": "dealt", "first_player": 0, "max_a_cards": 2},
]


@pytest.mark.parametrize("params", GAME_PARAMS, ids=str)
def test_openspiel_random_sim_test_passes(params):
    pyspiel, tos = openspiel()
    game = pyspiel.load_game(tos.GAME_NAME, params)
    assert game.num_distinct_actions() == 256 and game.num_players() == 2
    assert game.information_state_tensor_size() == tos.INFO_STATE_SIZE
    assert game.observation_tensor_size() == 339
    pyspiel.random_sim_test(game, num_sims=5, serialize=True, verbose=False)


def test_openspiel_random_sim_test_passes_on_a_loaded_position():
    pyspiel, tos = openspiel()
    game = tos.endgame_game(tos.sample_endgame(6, seed=3))
    assert game.max_chance_outcomes() == 0 and game.max_game_length() == 6
    pyspiel.random_sim_test(game, num_sims=5, serialize=True, verbose=False)


def test_openspiel_bad_parameters_are_refused():
    pyspiel, tos = openspiel()
    bad = [
        ({"draft": "fixed"}, "draft must be 'pick' or 'dealt'"),
        ({"first_player": 2}, "first_player must be -1"),
        ({"max_a_cards": 9}, "max_a_cards"),
        ({"deck": "nope"}, "no deck named 'nope'"),
        ({"position": "0/./-/-"}, "expected 15 tiles"),
    ]
    for params, message in bad:
        with pytest.raises(ValueError, match=message):
            pyspiel.load_game(tos.GAME_NAME, params)
    with pytest.raises(pyspiel.SpielError, match="Wrong type"):
        pyspiel.load_game(tos.GAME_NAME, {"first_player": "random"})  # OpenSpiel checks types: -1 is random


def test_openspiel_every_legal_hand_is_dealt_with_the_same_probability():
    _, tos = openspiel()
    deck = standard_deck()
    a_cards = sum(card.is_a_card for card in deck)
    legal_hands = sum(legal_a_counts(a_cards, len(deck) - a_cards, 8, 3)[1])
    rng = random.Random(0)
    from trinity_env.core import random_hand

    for _ in range(30):
        hand = random_hand(deck, 3, rng)
        probability = 1.0
        for dealt in range(8):
            outcomes = dict(tos.deal_outcomes(deck, hand[:dealt], 3))
            assert sum(outcomes.values()) == pytest.approx(1.0)
            probability *= outcomes[hand[dealt]]
        assert probability == pytest.approx(1 / legal_hands)


@pytest.mark.parametrize("open_hands", [True, False])
def test_openspiel_states_agree_with_the_core(open_hands):
    pyspiel, tos = openspiel()
    game = pyspiel.load_game(tos.GAME_NAME, {"open_hands": open_hands})
    rng = random.Random(1)
    for _ in range(3):
        for state in play_randomly(game.new_initial_state(), rng):
            core = state.game_state
            if core is None:
                assert state.is_chance_node()
                continue
            if state.is_terminal():
                winner = core.winner
                assert state.returns() == ([1.0, -1.0] if winner == 0 else [-1.0, 1.0])
                break
            assert state.current_player() == core.to_move
            assert state.legal_actions() == list(core.legal_actions())
            assert np.flatnonzero(action_mask(core, core.to_move)).tolist() == state.legal_actions()
            for player in (0, 1):
                expected = encode_observation(core, player, open_hands)
                np.testing.assert_array_equal(state.observation_tensor(player), expected)
                np.testing.assert_array_equal(state.information_state_tensor(player)[:339], expected)


def _draft(game, picks: list[int]):
    state = game.new_initial_state()
    for action in picks:
        state.apply_action(action)
    return state


def test_openspiel_the_opponents_picks_are_hidden_in_the_information_state():
    pyspiel, tos = openspiel()
    for open_hands in (True, False):
        game = pyspiel.load_game(tos.GAME_NAME, {"first_player": 0, "open_hands": open_hands})
        # player 0 picks 0, 1, 2 (its 3 A cards) and 5; player 1 picks other cards in the two histories
        first = _draft(game, [0, 6, 1, 7, 2, 8, 5, 9])
        second = _draft(game, [0, 10, 1, 11, 2, 12, 5, 13])
        assert first.information_state_string(0) == second.information_state_string(0)
        assert first.information_state_tensor(0) == second.information_state_tensor(0)
        assert first.observation_string(0) == second.observation_string(0)
        assert first.information_state_string(1) != second.information_state_string(1)
        # the order of one's own picks is part of one's information state (perfect recall)
        reordered = _draft(game, [1, 6, 0, 7, 2, 8, 5, 9])
        assert reordered.information_state_string(0) != first.information_state_string(0)
        assert reordered.information_state_tensor(0) != first.information_state_tensor(0)
        assert reordered.information_state_string(1) == first.information_state_string(1)
        # once play starts, open hands show the opponent's hand; hidden hands do not
        rest = [12, 0, 13, 5, 14, 14, 15, 15]  # legal after both histories (slots 0-4 are the A cards)
        first = _draft(game, [0, 6, 1, 7, 2, 8, 5, 9, *rest])
        second = _draft(game, [0, 10, 1, 11, 2, 12, 5, 13, *rest])
        assert first.game_state.phase == "play"
        assert (first.information_state_string(0) == second.information_state_string(0)) is not open_hands


def test_openspiel_resampling_keeps_the_information_state_and_redraws_hidden_cards():
    pyspiel, tos = openspiel()
    rng = random.Random(2)
    for params in ({"draft": "dealt", "open_hands": False}, {"open_hands": False}, {}):
        game = pyspiel.load_game(tos.GAME_NAME, params)
        seen_hands = set()
        for state in play_randomly(game.new_initial_state(), rng):
            if state.is_chance_node() or state.is_terminal():
                continue
            player = state.current_player()
            for _ in range(3):
                sample = state.resample_from_infostate(player, pyspiel.UniformProbabilitySampler(0.0, 1.0))
                assert sample.information_state_string(player) == state.information_state_string(player)
                assert sample.information_state_tensor(player) == state.information_state_tensor(player)
                assert sample.legal_actions() == state.legal_actions()
                seen_hands.add(sample.game_state.status[1 - player])
        if params.get("open_hands", True) is False:
            assert len(seen_hands) > 10  # the opponent's hidden cards were redrawn


def test_openspiel_games_and_states_pickle_and_serialize():
    pyspiel, tos = openspiel()
    position = tos.sample_endgame(5, seed=4)
    for game in (
        pyspiel.load_game(tos.GAME_NAME, {"draft": "dealt", "open_hands": False}),
        tos.endgame_game(position),
    ):
        assert str(pickle.loads(pickle.dumps(game))) == str(game)
        state = game.new_initial_state()
        for _ in range(10):
            if state.is_terminal():
                break
            state.apply_action(
                state.legal_actions()[0] if not state.is_chance_node() else state.chance_outcomes()[0][0]
            )
        copy = pickle.loads(pickle.dumps(state))
        assert str(copy) == str(state) and copy.history() == state.history()
        new_game, new_state = pyspiel.deserialize_game_and_state(pyspiel.serialize_game_and_state(game, state))
        assert str(new_game) == str(game) and str(new_state) == str(state)
        clone = state.clone()
        assert (
            clone.game_state is state.game_state and clone.history() == state.history()
        )  # cloning shares the core state


def test_openspiel_position_strings_round_trip():
    _, tos = openspiel()
    for seed in range(5):
        position = tos.sample_endgame(1 + seed * 3, seed=seed)
        text = tos.position_string(position)
        assert "," not in text and "=" not in text and "(" not in text
        assert tos.parse_position_string(text) == GameState.from_dict(position.to_dict())
    with pytest.raises(Exception, match="tile"):
        tos.parse_position_string("0/" + " ".join(["x7A24"] * 15) + "/-/-")


# ---------------------------------------------------------------------- OpenSpiel: algorithms


def test_openspiel_mcts_bot_plays_full_games_and_beats_random():
    pyspiel, tos = openspiel()
    from open_spiel.python.algorithms import mcts
    from open_spiel.python.bots import uniform_random

    play = example("openspiel_mcts").play  # chance sampled from rng, the bots' moves otherwise
    game = pyspiel.load_game(tos.GAME_NAME, {"draft": "dealt"})  # open hands: nothing hidden once dealt
    rng = np.random.RandomState(0)
    evaluator = mcts.RandomRolloutEvaluator(1, np.random.RandomState(1))
    wins = 0
    for number in range(4):
        seat = number % 2
        bot = mcts.MCTSBot(game, 2.0, 60, evaluator, random_state=np.random.RandomState(number))
        bots = [bot, uniform_random.UniformRandomBot(1, np.random.RandomState(number))]
        if seat == 1:
            bots = [uniform_random.UniformRandomBot(0, np.random.RandomState(number)), bot]
        returns = play(game, bots, rng)
        assert sorted(returns) == [-1.0, 1.0]
        wins += returns[seat] > 0
    assert wins >= 3


def test_openspiel_ismcts_bot_plays_hidden_hands():
    pyspiel, tos = openspiel()
    from open_spiel.python.algorithms import ismcts, mcts
    from open_spiel.python.bots import uniform_random

    play = example("openspiel_mcts").play
    rng = np.random.RandomState(3)
    evaluator = mcts.RandomRolloutEvaluator(1, np.random.RandomState(4))
    for params in ({"draft": "dealt", "open_hands": False}, {"open_hands": False}):  # dealt, then drafted
        game = pyspiel.load_game(tos.GAME_NAME, params)
        bot = ismcts.ISMCTSBot(game, evaluator, 2.0, 40, random_state=np.random.RandomState(5))
        # the bot asserts that every resampled state has the root's information state
        returns = play(game, [bot, uniform_random.UniformRandomBot(1, np.random.RandomState(6))], rng)
        assert sorted(returns) == [-1.0, 1.0]


def test_openspiel_cfr_solves_a_small_endgame_and_exploitability_is_exact():
    pyspiel, tos = openspiel()
    from open_spiel.python import policy as policy_lib
    from open_spiel.python.algorithms import cfr, expected_game_score, exploitability

    from trinity_env.search.solver import Solver

    position = tos.sample_endgame(4, seed=1)  # 4 empty tiles, open hands: a few hundred states
    game = tos.endgame_game(position)
    assert exploitability.nash_conv(game, policy_lib.UniformRandomPolicy(game)) > 0.5
    solver = cfr.CFRPlusSolver(game)
    for _ in range(20):
        solver.evaluate_and_update_policy()
    average = solver.average_policy()
    assert exploitability.nash_conv(game, average) < 0.02
    value = expected_game_score.policy_value(game.new_initial_state(), [average, average])[position.to_move]
    assert value == pytest.approx(Solver().value(position), abs=0.05)  # the exact solver agrees


# ---------------------------------------------------------------------- the examples


def test_openspiel_mcts_example_runs():
    openspiel()
    rate = example("openspiel_mcts").main(["--games", "2", "--simulations", "30"])
    assert 0.0 <= rate <= 1.0


@pytest.mark.e2e  # a whole example training run (make test-e2e, make test-integrations); the default suite runs the
# same example on the same fast vector env in tests/test_outside_exports.py (its export test checks this one's figures)
def test_cleanrl_ppo_example_runs_on_the_fast_vector_env(capsys):
    pytest.importorskip("torch", reason="the train extra is not installed")
    rate = example("cleanrl_ppo").main(
        ["--total-timesteps", "1024", "--num-envs", "16", "--num-steps", "16", "--eval-games", "16"]
    )
    assert 0.0 <= rate <= 1.0
    assert "against random" in capsys.readouterr().out


@pytest.mark.e2e  # a whole example training run: make test-e2e (and make test-integrations)
def test_cleanrl_ppo_example_handles_next_step_autoreset(monkeypatch):
    pytest.importorskip("torch", reason="the train extra is not installed")
    from gymnasium.vector import AutoresetMode, SyncVectorEnv

    from trinity_env.envs.single_agent import TrinityTowersEnv

    module = example("cleanrl_ppo")
    made = []

    def next_step_env(num_envs, opponent="random", **config):
        """gymnasium's own vector env in NEXT_STEP mode over the single-agent env (masks in infos)."""
        env = SyncVectorEnv(
            [lambda: TrinityTowersEnv(opponent=opponent, **config) for _ in range(num_envs)],
            autoreset_mode=AutoresetMode.NEXT_STEP,
        )
        made.append(env)
        return env

    monkeypatch.setattr(module, "TrinityTowersVectorEnv", next_step_env)
    rate = module.main(["--total-timesteps", "512", "--num-envs", "4", "--num-steps", "32", "--eval-games", "8"])
    assert made and all(env.metadata["autoreset_mode"] == AutoresetMode.NEXT_STEP for env in made)
    assert 0.0 <= rate <= 1.0


@pytest.mark.slow
def test_tianshou_dqn_example_runs(capsys):
    pytest.importorskip("tianshou", reason="Tianshou is not installed (the integrations extra)")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        rate = example("tianshou_dqn").main(
            ["--epochs", "1", "--epoch-steps", "200", "--eval-games", "8", "--train-envs", "2", "--test-envs", "2"]
        )
    assert 0.0 <= rate <= 1.0
    assert "against random" in capsys.readouterr().out


@pytest.mark.slow
def test_agilerl_dqn_example_runs(capsys):
    pytest.importorskip("agilerl", reason="AgileRL is not installed (it needs a venv of its own: pettingzoo<1.27)")
    pytest.importorskip("peft", reason="agilerl.algorithms imports peft, which only AgileRL's LLM extras install")
    rate = example("agilerl_dqn").main(["--games", "6", "--eval-games", "6", "--batch-size", "16"])
    assert 0.0 <= rate <= 1.0
    assert "against random" in capsys.readouterr().out


# ---------------------------------------------------------------------- what PettingZoo and gymnasium clients assume


def test_the_aec_metadata_is_a_plain_dict_whose_get_answers_like_any_pettingzoo_envs():
    """A custom ``get`` raised on ``metadata.get("is_parallelizable")``: a script reading it stopped (issue 51)."""
    import trinity_env

    for env in (trinity_env.env(), trinity_env.env().unwrapped):
        assert type(env.metadata) is dict
        assert env.metadata.get("is_parallelizable") is False
        assert env.metadata.get("is_parallelizable", True) is False and env.metadata.get("render_fps") == 2


def test_an_unknown_keyword_to_gymnasium_make_is_a_type_error_as_pythons_own_is():
    """TorchRL's ``GymEnv`` tries ``frameskip=`` and retries without it only on Python's usual TypeError."""
    import gymnasium

    import trinity_env  # registers the env
    from trinity_env.spec.config import ConfigError

    for make in (
        lambda: gymnasium.make("trinity_env/TrinityTowers-v0", frameskip=1),
        lambda: gymnasium.make_vec("trinity_env/TrinityTowers-v0", 2, "vector_entry_point", frameskip=1),
        lambda: trinity_env.env(frameskip=1),
    ):
        with pytest.raises(TypeError, match=r"unexpected keyword argument 'frameskip'") as caught:
            make()
        assert isinstance(caught.value, ConfigError) and "\n" not in str(caught.value)


# ---------------------------------------------------------------------- TorchRL (BenchMARL wraps it: test_benchmarl.py)


def torchrl_env(**keywords):
    """The AEC env in TorchRL's ``PettingZooWrapper`` (one group per player, masks on) and the raw env under it, or a
    skip."""
    pytest.importorskip("torchrl", reason="TorchRL is not installed (the integrations extra)")
    from torchrl.envs.libs.pettingzoo import PettingZooWrapper

    import trinity_env

    aec = trinity_env.env(**keywords)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # "PettingZoo in TorchRL is tested using version == 1.24.3"
        return PettingZooWrapper(env=aec, use_mask=True, categorical_actions=True, seed=0), aec.unwrapped


def test_torchrl_gym_env_by_id_plays_whole_games():
    """``GymEnv(id)`` passes ``frameskip=``; our TypeError lets it retry without (it stopped at a ConfigError)."""
    pytest.importorskip("torchrl", reason="TorchRL is not installed (the integrations extra)")
    import torch
    from torchrl.envs import GymEnv

    import trinity_env  # noqa: F401  (registers the env)

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        env = GymEnv("trinity_env/TrinityTowers-v0", opponent="greedy")
    env.set_seed(0)
    for _ in range(2):
        td, steps = env.reset(), 0
        while True:
            legal = np.flatnonzero(env._env.unwrapped.action_masks())
            td["action"] = env.action_spec.encode(int(legal[0]))
            td = env.step(td)["next"]
            steps += 1
            if td["done"].item():
                break
        assert steps <= 16 and td["reward"].item() in (-1.0, 0.0, 1.0)
    assert torch.is_tensor(td["observation"]) and td["observation"].shape == (339,)


def test_torchrl_pettingzoo_wrapper_takes_the_aec_env_and_its_specs_check():
    """TorchRL makes a tensor of every info value: the string ``termination`` refused the env (issue 26)."""
    env, _ = torchrl_env(draft="pick")  # skips first where TorchRL is not installed
    from torchrl.envs.utils import check_env_specs

    assert env.group_map == {"player_0": ["player_0"], "player_1": ["player_1"]}
    check_env_specs(env)
    info = env.observation_spec["player_0", "info"]
    assert set(info.keys()) == {"winner", "scores", "termination_code"}


@pytest.mark.parametrize("draft", ["pick", "dealt"])
def test_torchrl_plays_whole_games_with_random_legal_actions(draft):
    import torch

    from trinity_env.core import lane_scores

    env, game = torchrl_env(draft=draft)
    rng = torch.Generator().manual_seed(1)
    for _ in range(3):
        td = env.reset()
        returns, steps = dict.fromkeys(env.group_map, 0.0), 0
        while steps < 40:
            steps += 1
            acting = [group for group in env.group_map if td[group, "mask"].item()]
            assert acting == [game.agent_selection]  # one player at a time, the one the game says
            for group in env.group_map:
                legal = td[group, "action_mask"][0]
                if group == acting[0]:  # the acting player's mask is the game's own
                    assert torch.equal(legal, torch.as_tensor(game.observe(group)["action_mask"], dtype=torch.bool))
                choice = torch.multinomial(legal.float(), 1, generator=rng)
                td[group, "action"] = choice
            td = env.step(td)["next"]
            for group in env.group_map:
                returns[group] += td[group, "reward"].item()
            if td["done"].item():
                break
            assert not any(td[group, "done"].item() for group in env.group_map)
        state = game.game_state
        assert state.is_over, "a move was illegal: the game ended without an outcome"
        assert steps <= (16 + 15 if draft == "pick" else 15)
        assert all(td[group, key].item() for group in env.group_map for key in ("done", "terminated"))
        assert not td["truncated"].item() and td["terminated"].item()
        outcome = state.outcome
        expected = {"player_0": 0.0, "player_1": 0.0}
        if outcome.winner is not None:
            expected[f"player_{outcome.winner}"], expected[f"player_{1 - outcome.winner}"] = 1.0, -1.0
        assert returns == expected and sum(returns.values()) == 0.0
        for group in env.group_map:
            info = td[group, "info"]
            assert info["termination_code"].item() == outcome.termination.code
            assert info["winner"].item() == (-1 if outcome.winner is None else outcome.winner)
            assert info["scores"][0].tolist() == list(lane_scores(state.owners))


# ---------------------------------------------------------------------- vector envs: the mask around an autoreset


def _vector_envs():
    """gymnasium's ``AsyncVectorEnv`` over the single-agent env and the project's vector env, both NEXT_STEP."""
    import gymnasium
    from gymnasium.vector import AsyncVectorEnv

    import trinity_env  # noqa: F401  (registers the env)

    yield (
        "AsyncVectorEnv",
        AsyncVectorEnv([lambda: gymnasium.make("trinity_env/TrinityTowers-v0", draft="dealt") for _ in range(2)]),
    )
    yield (
        "TrinityTowersVectorEnv",
        gymnasium.make_vec(
            "trinity_env/TrinityTowers-v0", num_envs=2, vectorization_mode="vector_entry_point", draft="dealt"
        ),
    )


def test_next_step_autoreset_the_mask_to_act_on_is_all_zeros_and_the_action_is_ignored():
    """What docs/evaluate.md and the vector env's docstring say: after the step that ends a game, that env's
    ``infos["action_mask"]`` is all zeros (the game is over; a sampler must not draw from it); the next step, the
    autoreset step, ignores that env's action (even an illegal one) and returns a new game's first observation with
    reward 0, not terminated, and a mask with legal moves."""
    from gymnasium.vector import AutoresetMode

    for name, env in _vector_envs():
        assert env.metadata["autoreset_mode"] == AutoresetMode.NEXT_STEP, name
        _, info = env.reset(seed=0)
        rng, ended, autoresets = np.random.default_rng(0), np.zeros(2, bool), 0
        for _ in range(60):
            masks = info["action_mask"]
            assert masks.dtype == np.int8
            assert (~masks.any(axis=1) == ended).all(), name  # all zeros exactly where a game just ended
            actions = np.array([int(rng.choice(np.flatnonzero(m))) if m.any() else -1 for m in masks])
            _, rewards, terminated, truncated, info = env.step(actions)
            # the autoreset step: the illegal -1 was ignored, a new game started
            assert (rewards[ended] == 0).all() and not terminated[ended].any(), name
            assert info["action_mask"][ended].any(axis=1).all() and (info["termination_code"][ended] == 0).all()
            autoresets += int(ended.sum())
            assert not truncated.any()
            assert (info["termination_code"][terminated] > 0).all()
            ended = terminated.copy()
        assert autoresets >= 4, name
        env.close()


def test_same_step_autoreset_gives_the_new_games_mask_and_the_final_one_in_final_info():
    from gymnasium.vector import AutoresetMode

    from trinity_env.fast.vector_env import TrinityTowersVectorEnv

    env = TrinityTowersVectorEnv(2, autoreset_mode=AutoresetMode.SAME_STEP, draft="dealt")
    _, info = env.reset(seed=1)
    rng, finished = np.random.default_rng(1), 0
    for _ in range(40):
        masks = info["action_mask"]
        assert masks.any(axis=1).all()  # SAME_STEP: always the running game's mask, never all zeros
        actions = np.array([int(rng.choice(np.flatnonzero(m))) for m in masks])
        _, _, terminated, _, info = env.step(actions)
        if terminated.any():
            final = info["final_info"]
            assert (~final["action_mask"][terminated].any(axis=1)).all()  # the ended game's mask: all zeros
            finished += int(terminated.sum())
    assert finished >= 4
