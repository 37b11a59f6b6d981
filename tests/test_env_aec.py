"""The PettingZoo AEC env: PettingZoo's own tests, agreement with the core, config, information."""

from __future__ import annotations

import dataclasses
import importlib.util
import random
import warnings

import numpy as np
import pettingzoo
import pytest
from pettingzoo.test import api_test, render_test, seed_test

import trinity_env
from trinity_env.core import GameState, IllegalMoveError, lane_scores, standard_deck
from trinity_env.core.state import IN_HAND, UNPICKED
from trinity_env.envs import ConfigError, make_config, raw_env
from trinity_env.spec.observation import OBSERVATION_SIZE, encode_observation


@pytest.fixture(autouse=True)
def _quiet():
    with warnings.catch_warnings():
        # PettingZoo's api_test warns that dict observations are unusual; the classic games do the same
        warnings.simplefilter("ignore", UserWarning)
        yield


def test_pettingzoo_api_test_passes():
    api_test(trinity_env.env(), num_cycles=1000)
    api_test(trinity_env.env(draft="dealt", open_hands=False, reward="margin"), num_cycles=300)


def test_pettingzoo_seed_test_passes():
    seed_test(trinity_env.env, num_cycles=200)
    seed_test(lambda **kw: trinity_env.env(deck="random", **kw), num_cycles=200)


def test_pettingzoo_render_test_passes(capsys):
    render_test(trinity_env.env)
    assert "player 0 (w)" in capsys.readouterr().out  # the human mode printed boards


def test_metadata_and_agents_follow_the_classic_games():
    env = trinity_env.env()
    assert env.metadata["name"] == "trinity_towers_v0"
    assert env.metadata["render_modes"] == ["human", "ansi", "rgb_array"]
    assert env.metadata["is_parallelizable"] is False and env.metadata["render_fps"] > 0
    assert env.possible_agents == ["player_0", "player_1"]
    assert env.action_space("player_0").n == 256
    assert env.observation_space("player_1")["observation"].shape == (OBSERVATION_SIZE,)
    assert isinstance(env, pettingzoo.utils.wrappers.OrderEnforcingWrapper)
    assert isinstance(env.env, pettingzoo.utils.wrappers.AssertOutOfBoundsWrapper)
    assert isinstance(env.env.env, pettingzoo.utils.wrappers.TerminateIllegalWrapper)
    with pytest.raises(AttributeError, match="before reset"):
        env.agent_selection  # noqa: B018


@pytest.mark.skipif(not hasattr(pettingzoo, "aec_registry"), reason="PettingZoo < 1.27 has no registry")
def test_the_env_is_registered_with_pettingzoo():
    env = pettingzoo.make("aec", "trinity_env/TrinityTowers-v0", draft="dealt", first_player=1)
    env.reset(seed=3)
    assert env.agent_selection == "player_1"
    assert env.unwrapped.game_state.phase == "play"


def _play_against_core(env_kwargs: dict, seed: int) -> int:
    """One random game in the env, mirrored move by move in the core; returns the steps taken."""
    env = trinity_env.env(**env_kwargs)
    env.reset(seed=seed)
    core = env.unwrapped.game_state
    rng = random.Random(seed)
    steps = 0
    for agent in env.agent_iter():
        observation, reward, terminated, truncated, info = env.last()
        seat = int(agent[-1])
        if terminated:
            assert core.is_over
            expected = 0 if core.winner is None else (1 if core.winner == seat else -1)
            assert reward == expected
            env.step(None)
            continue
        assert seat == core.to_move
        legal = core.legal_actions()
        assert np.flatnonzero(observation["action_mask"]).tolist() == list(legal)
        other = env.unwrapped.observe(f"player_{1 - seat}")["action_mask"]
        assert not other.any(), "the agent not to move has an all-zero mask"
        action = rng.choice(legal)
        env.step(action)
        core = core.apply(action)
        assert env.unwrapped.game_state == core
        steps += 1
    return steps


@pytest.mark.parametrize("games", [400, pytest.param(2000, marks=pytest.mark.e2e)])  # the full count: make test-e2e
def test_the_env_agrees_with_the_core_move_by_move_on_thousands_of_games(games):
    configs = [
        {},
        {"draft": "dealt", "first_player": 1},
        {"open_hands": False, "deck": "random"},
        {"max_a_cards": 2, "decks": ["standard", "random"]},
    ]
    steps = sum(_play_against_core(configs[g % len(configs)], seed=g) for g in range(games))
    assert steps > games * 20


def test_the_loser_receives_minus_one_and_the_winner_plus_one():
    env = trinity_env.env(draft="dealt")
    env.reset(seed=5)
    rng = random.Random(5)
    final = {}
    for agent in env.agent_iter():
        observation, reward, terminated, truncated, info = env.last()
        if terminated:
            final[agent] = (reward, info)
            env.step(None)
        else:
            env.step(int(rng.choice(np.flatnonzero(observation["action_mask"]))))
    winner = final["player_0"][1]["winner"]
    assert sorted(r for r, _ in final.values()) == [-1, 1]
    assert final[f"player_{winner}"][0] == 1


def test_margin_reward_adds_up_to_the_result_plus_the_final_margin():
    for seed in range(20):
        env = raw_env(reward="margin", draft="dealt")
        env.reset(seed=seed)
        totals = {"player_0": 0.0, "player_1": 0.0}
        rng = random.Random(seed)
        while not env.game_state.is_over:
            env.step(rng.choice(env.game_state.legal_actions()))
            for agent in totals:
                totals[agent] += env.rewards[agent]
        zero, one = lane_scores(env.game_state.owners)
        sign = 1 if env.game_state.winner == 0 else -1
        assert totals["player_0"] == pytest.approx(sign + (zero - one) / 15)
        assert totals["player_1"] == pytest.approx(-totals["player_0"])


def test_an_illegal_move_ends_the_game_with_minus_one_for_the_mover():
    env = trinity_env.env()
    env.reset(seed=0)
    observation, *_ = env.last()
    illegal = int(np.flatnonzero(observation["action_mask"] == 0)[0])
    env.step(illegal)
    assert all(env.terminations.values())
    assert env.rewards == {"player_0": -1, "player_1": 0}


def test_raw_env_refuses_an_illegal_move_with_a_message():
    env = raw_env(draft="dealt", first_player=0)
    env.reset(seed=0)
    with pytest.raises(IllegalMoveError, match="player_0: action 3 picks a card"):
        env.step(3)


def test_reset_seeds_everything_random():
    def start(seed):
        env = raw_env(deck="random", draft="dealt")
        env.reset(seed=seed)
        return env.game_state

    assert start(1) == start(1)
    assert len({(start(s).decks, start(s).first_player) for s in range(10)}) == 10
    assert len({start(s).first_player for s in range(20)}) == 2


def test_config_keywords_and_yaml_files(tmp_path):
    assert make_config("hidden_hands").open_hands is False
    assert make_config("standard") == make_config()
    path = tmp_path / "mine.yaml"
    path.write_text("draft: fixed\nfirst_player: 1\nhands: [[0, 5, 6, 7, 8, 9, 10, 11], [5, 6, 7, 8, 9, 10, 11, 12]]\n")
    env = raw_env(config=path)
    env.reset(seed=0)
    assert env.game_state.phase == "play" and env.game_state.to_move == 1
    assert env.game_state.hand(0)[0] == standard_deck()[0]
    assert raw_env(config=path, first_player=0).config.first_player == 0  # keywords override the file
    cards = [str(c) for c in standard_deck()]
    fixed = raw_env(draft="fixed", hands=[cards[5:13], cards[8:]], first_player=0)
    fixed.reset()
    assert [str(c) for c in fixed.game_state.hand(1)] == cards[8:]


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"draft": "auction"}, "draft"),
        ({"first_player": 2}, "first_player"),
        ({"open_hands": "yes"}, "open_hands"),
        ({"max_a_cards": 9}, "max_a_cards"),
        ({"reward": "score"}, "reward"),
        ({"deck": "nope"}, "deck: no deck named 'nope'"),
        ({"deck": ["1111"] * 15}, "deck: a deck has exactly 16 cards"),
        ({"deck": ["1111"] * 15 + ["X"]}, "X"),
        ({"decks": ["standard"]}, "decks"),
        ({"deck": "standard", "decks": ["standard", "standard"]}, "either deck"),
        ({"draft": "fixed"}, "needs hands"),
        ({"draft": "fixed", "hands": [["A235"] * 8, ["5555"] * 8]}, "hands[0]"),
        ({"hands": [[0] * 8, [0] * 8]}, "only used with draft 'fixed'"),
        ({"colour": "red"}, "unexpected keyword argument 'colour'"),
        ({"render_mode": "window"}, "render_mode"),
    ],
)
def test_bad_config_values_are_named(kwargs, message):
    with pytest.raises(ConfigError) as err:
        raw_env(**kwargs)
    assert message in str(err.value)
    assert isinstance(err.value, ValueError)


def test_rules_md_spelling_draft_random_is_read_as_dealt(tmp_path):
    """RULES.md §2 (the spec) calls dealt hands ``draft: "random"``; the project's name is ``dealt`` (issue 40).
    Wherever a config enters, the spec's spelling is read as ``dealt``: the same config, the same games."""
    from trinity_env.fast.games import FastGames
    from trinity_env.spec.config import EnvConfig

    (tmp_path / "spec.yaml").write_text("draft: random\n")
    dealt = make_config(draft="dealt")
    assert make_config(draft="random") == make_config(tmp_path / "spec.yaml") == dealt
    assert EnvConfig(draft="random") == EnvConfig(draft="dealt")  # built by hand, past make_config
    assert raw_env(draft="random").config == raw_env(draft="dealt").config
    assert FastGames(2, draft="random").config == FastGames(2, draft="dealt").config
    if importlib.util.find_spec("torch") is not None:  # the trainers' configs (make test-lowest has no torch)
        from training.config import TrainConfig

        spelt = TrainConfig.from_dict({"env": {"draft": "random"}})
        assert spelt.env == TrainConfig.from_dict({"env": {"draft": "dealt"}}).env
    assert make_config(draft="random").new_game(random.Random(0)) == dealt.new_game(random.Random(0))
    with pytest.raises(ConfigError, match=r"draft must be one of 'pick', 'dealt', 'fixed' \(RULES.md's 'random'"):
        make_config(draft="deal")
    from trinity_env.spec.config import draft_mode  # the one check, public for the integrations (OpenSpiel)

    assert [draft_mode(d) for d in ("random", "dealt", "pick", "fixed")] == ["dealt", "dealt", "pick", "fixed"]


def test_bad_config_files_are_named(tmp_path):
    bad = tmp_path / "bad.yaml"
    bad.write_text("draft: [\n")
    with pytest.raises(ConfigError, match="not valid YAML"):
        raw_env(config=bad)
    bad.write_text("- a list\n")
    with pytest.raises(ConfigError, match="mapping"):
        raw_env(config=bad)
    with pytest.raises(ConfigError, match="cannot read"):
        raw_env(config=tmp_path / "missing.yaml")


# ------------------------------------------------------- information (docs/rules.md: what each player knows)


def _draft_game(picks_of_player_1: list[int]) -> GameState:
    state = GameState.new_game()
    for mine, theirs in zip([5, 6, 7], picks_of_player_1):
        state = state.apply(mine).apply(theirs)
    return state


def test_draft_picks_are_secret():
    one = _draft_game([0, 1, 2])
    other = _draft_game([9, 12, 15])
    for open_hands in (True, False):
        assert (encode_observation(one, 0, open_hands) == encode_observation(other, 0, open_hands)).all()
    # ... while player 1 does see its own picks
    assert (encode_observation(one, 1, True) != encode_observation(other, 1, True)).any()


def _swap_hidden(state: GameState, player: int, rng: random.Random) -> GameState:
    """The same state with ``player``'s unplayed deck cards dealt differently between hand and deck."""
    status = list(state.status[player])
    unplayed = [i for i, s in enumerate(status) if s in (IN_HAND, UNPICKED)]
    in_hand = sum(1 for i in unplayed if status[i] == IN_HAND)
    chosen = set(rng.sample(unplayed, in_hand))
    new = tuple(IN_HAND if i in chosen else UNPICKED if i in unplayed else s for i, s in enumerate(status))
    both = list(state.status)
    both[player] = new
    return dataclasses.replace(state, status=tuple(both), last=None)


def test_hidden_hands_observations_do_not_depend_on_the_opponents_hidden_cards():
    rng = random.Random(0)
    checked = 0
    for seed in range(200):
        env = raw_env(open_hands=False, draft="dealt")
        env.reset(seed=seed)
        while not env.game_state.is_over:
            state = env.game_state
            for seat in (0, 1):
                swapped = _swap_hidden(state, 1 - seat, rng)
                if swapped.status != state.status:
                    checked += 1
                assert (encode_observation(state, seat, False) == encode_observation(swapped, seat, False)).all()
            env.step(rng.choice(state.legal_actions()))
    assert checked > 1000
    # with open hands the same swap is visible
    state = env.game_state
    swapped = _swap_hidden(state, 0, random.Random(1))
    if swapped.status != state.status:
        assert (encode_observation(state, 1, True) != encode_observation(swapped, 1, True)).any()


def test_the_state_is_the_core_state_and_gives_the_position_format():
    env = raw_env(draft="dealt", first_player=0)
    env.reset(seed=0)
    assert isinstance(env.game_state, GameState)
    assert GameState.from_dict(env.game_state.to_dict()).to_dict() == env.game_state.to_dict()


def test_infos_keep_one_schema_from_reset_to_the_end():
    """Replay buffers (Tianshou's) allocate columns from the first step: no key may appear late."""
    env = trinity_env.env()
    env.reset(seed=5)
    schemas = set()
    for _agent in env.agent_iter():
        observation, _, termination, truncation, info = env.last()
        schemas.add(tuple(sorted((key, type(value).__name__) for key, value in info.items())))
        env.step(None if termination or truncation else int(np.flatnonzero(observation["action_mask"])[0]))
        if termination or truncation:
            final = info
    assert schemas == {(("scores", "tuple"), ("termination_code", "int"), ("winner", "int"))}
    assert final["winner"] in (0, 1) and sum(final["scores"]) > 0
    ended = env.unwrapped.game_state.outcome.termination
    assert ended in ("lane_control", "full_board") and final["termination_code"] == ended.code


def test_infos_are_numbers_with_a_documented_termination_code():
    """TorchRL and BenchMARL make a tensor of every info value: no strings (issue 26)."""
    from trinity_env.core import Termination
    from trinity_env.envs import aec

    assert [t.code for t in Termination] == [1, 2, 3]
    assert [(t.value, t.code) for t in Termination] == [("lane_control", 1), ("full_board", 2), ("no_moves", 3)]
    for code, name in ((0, ""), (1, "lane_control"), (2, "full_board"), (3, "no_moves")):
        assert f"| {code} " in aec.__doc__ and (not name or f"`{name}`" in aec.__doc__)
    env = trinity_env.env(draft="dealt")
    env.reset(seed=2)
    for agent in env.agent_iter():
        observation, _, termination, truncation, info = env.last()
        kinds = {key: np.asarray(value).dtype.kind for key, value in env.infos[agent].items()}
        assert kinds == {"winner": "i", "scores": "i", "termination_code": "i"}  # what torch.as_tensor takes
        env.step(None if termination or truncation else int(np.flatnonzero(observation["action_mask"])[0]))
        if termination or truncation:
            assert info["termination_code"] == env.unwrapped.game_state.outcome.termination.code != 0


def test_state_is_pettingzoos_method_and_the_game_is_game_state():
    """``state()`` is AECEnv's global-state method (not implemented, as in the classic games);
    the core position is ``game_state``."""
    env = trinity_env.env()
    env.reset(seed=0)
    assert isinstance(env.unwrapped.game_state, GameState)
    with pytest.raises(NotImplementedError):
        env.unwrapped.state()


# ---------------------------------------------------------------------- observation_dtype, the parallel API


def _random_games(env, games: int, seed: int):
    """Every (agent, observation) of ``games`` games of random legal moves, both agents observed at each step."""
    rng = np.random.default_rng(seed)
    for game in range(games):
        env.reset(seed=seed + game)
        for agent in env.agent_iter():
            yield {name: env.observe(name) for name in env.agents}
            _, _, termination, truncation, _ = env.last()
            mask = env.observe(agent)["action_mask"]
            env.step(None if termination or truncation else int(rng.choice(np.flatnonzero(mask))))


def test_float32_observations_are_the_int8_ones_cast_with_the_mask_unchanged():
    as_int8, as_float32 = trinity_env.env(), trinity_env.env(observation_dtype="float32")
    space = as_float32.observation_space("player_0")
    assert space["observation"].dtype == np.float32 and space["action_mask"].dtype == np.int8
    assert as_int8.observation_space("player_0")["observation"].dtype == np.int8
    steps = 0
    for small, wide in zip(_random_games(as_int8, 3, seed=5), _random_games(as_float32, 3, seed=5)):
        assert small.keys() == wide.keys()
        for agent in small:
            assert wide[agent]["observation"].dtype == np.float32 and wide[agent]["action_mask"].dtype == np.int8
            np.testing.assert_array_equal(wide[agent]["observation"], small[agent]["observation"].astype(np.float32))
            np.testing.assert_array_equal(wide[agent]["action_mask"], small[agent]["action_mask"])
            assert space.contains(wide[agent])
        steps += 1
    assert steps > 3 * 15
    api_test(trinity_env.env(observation_dtype="float32"), num_cycles=100)


def test_the_single_agent_env_takes_observation_dtype_too():
    import gymnasium
    from gymnasium.utils.env_checker import check_env

    small = gymnasium.make("trinity_env/TrinityTowers-v0", opponent="random")
    wide = gymnasium.make("trinity_env/TrinityTowers-v0", opponent="random", observation_dtype=np.float32)
    assert wide.observation_space.dtype == np.float32 and small.observation_space.dtype == np.int8
    for game in range(2):
        (a, a_info), (b, b_info) = small.reset(seed=game), wide.reset(seed=game)
        while True:
            assert b.dtype == np.float32 and b_info["action_mask"].dtype == np.int8
            np.testing.assert_array_equal(b, a.astype(np.float32))
            np.testing.assert_array_equal(b_info["action_mask"], a_info["action_mask"])
            action = int(np.flatnonzero(a_info["action_mask"])[0])
            a, _, done, _, a_info = small.step(action)
            b, _, _, _, b_info = wide.step(action)
            if done:
                break
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        check_env(wide.unwrapped, skip_render_check=True)


@pytest.mark.parametrize("bad", ["float64", "f4", "Int8", None, 5, np.float64, True])
def test_a_bad_observation_dtype_is_one_line_naming_it(bad):
    with pytest.raises(ConfigError, match=r"^observation_dtype must be 'int8' or 'float32', got ") as caught:
        trinity_env.env(observation_dtype=bad)
    assert "\n" not in str(caught.value)


def test_observation_dtype_survives_pickling_and_takes_numpy_types():
    import pickle

    for value in ("float32", np.float32, np.dtype("float32")):
        env = pickle.loads(pickle.dumps(raw_env(observation_dtype=value, draft="dealt")))
        env.reset(seed=0)
        assert env.observation_dtype == "float32" and env.observe("player_0")["observation"].dtype == np.float32


def test_aec_to_parallel_is_refused_by_pettingzoos_own_assertion():
    """The metadata is a plain dict saying False, so PettingZoo's usual AssertionError refuses the conversion."""
    from pettingzoo.utils.conversions import aec_to_parallel

    for env in (trinity_env.env(), raw_env()):
        with pytest.raises(AssertionError, match="is_parallelizable"):
            aec_to_parallel(env)


def test_pettingzoos_turn_based_conversion_works_as_the_docs_say():
    from pettingzoo.test import parallel_api_test
    from pettingzoo.utils.conversions import turn_based_aec_to_parallel

    parallel_api_test(turn_based_aec_to_parallel(trinity_env.env()), num_cycles=100)
    env = turn_based_aec_to_parallel(trinity_env.env(draft="dealt"))
    observations, _ = env.reset(seed=3)
    rng, steps = np.random.default_rng(3), 0
    while env.agents:
        movers = [agent for agent in env.agents if observations[agent]["action_mask"].any()]
        assert len(movers) == 1  # one agent acts at a time: the other's mask is all zeros
        actions = {agent: 0 for agent in env.agents}
        actions[movers[0]] = int(rng.choice(np.flatnonzero(observations[movers[0]]["action_mask"])))
        observations, rewards, terminations, _, infos = env.step(actions)
        steps += 1
    assert steps <= 15 and sorted(rewards.values()) in ([-1.0, 1.0], [0.0, 0.0])
    assert infos["player_0"]["termination_code"] > 0


@pytest.mark.parametrize("draft", ["dealt", "pick"])
def test_the_direct_wrappers_play_exactly_as_pettingzoo_s_own(draft):
    """``trinity_env.envs.wrappers`` keeps PettingZoo's wrappers' behaviour while reading their private state
    (``_prev_obs``, ``_has_updated``, ``_cumulative_rewards``) for speed: played beside PettingZoo's own chain on
    the same raw env, every step (legal and illegal actions, after the end too) gives the same ``last()``, rewards,
    terminations and errors. A PettingZoo release that renames that state fails here, under every PettingZoo the
    project supports (``make test-lowest`` runs this file under 1.23)."""
    from pettingzoo.utils import wrappers

    def stock(**kwargs):
        inner = wrappers.TerminateIllegalWrapper(raw_env(**kwargs), illegal_reward=-1)
        return wrappers.OrderEnforcingWrapper(wrappers.AssertOutOfBoundsWrapper(inner))

    def state(env):
        observation, reward, terminated, truncated, info = env.last()
        seen = None if observation is None else {k: np.asarray(v).tolist() for k, v in observation.items()}
        return (
            seen,
            reward,
            terminated,
            truncated,
            info,
            env.agent_selection,
            dict(env.rewards),
            dict(env.terminations),
            dict(env._cumulative_rewards),
            list(env.agents),
        )

    rng = random.Random(7)
    for game in range(12):
        ours, theirs = trinity_env.env(draft=draft), stock(draft=draft)
        ours.reset(seed=game)
        theirs.reset(seed=game)
        for _ in range(60):
            assert list(ours.agents) == list(theirs.agents)
            if not ours.agents:
                break
            assert state(ours) == state(theirs)
            observation, _, terminated, truncated, _ = ours.last()
            legal = np.flatnonzero(observation["action_mask"])
            if terminated or truncated:
                action = None
            elif rng.random() < 0.04:  # an illegal action ends the game with -1 for the mover
                action = int(rng.choice(np.flatnonzero(observation["action_mask"] == 0)))
            else:
                action = int(rng.choice(legal))
            ours.step(action)
            theirs.step(action)
        assert not ours.agents and not theirs.agents
