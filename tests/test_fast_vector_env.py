"""The gymnasium vector env on the fast engine."""

from __future__ import annotations

import numpy as np
import pytest
from gymnasium.vector import AutoresetMode

from trinity_env.agents import AgentSpecError, RandomAgent
from trinity_env.core import IllegalMoveError
from trinity_env.envs import ConfigError
from trinity_env.registration import vector_env as TrinityTowersVectorEnv  # takes agent specs too


def _random_legal(masks: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """A random legal action per env; 0 where the mask is empty (an env about to restart ignores it)."""
    return np.array([rng.choice(np.flatnonzero(m)) if m.any() else 0 for m in masks])


def _ended_winners(infos: dict, terminated: np.ndarray, mode: str) -> np.ndarray:
    """The winners of the episodes that ended this step, where the mode puts them."""
    source = infos["final_info"] if mode == "same_step" and terminated.any() else infos
    return source["winner"]


def _run(env: TrinityTowersVectorEnv, steps: int, seed: int):
    mode = "same_step" if env.metadata["autoreset_mode"] == AutoresetMode.SAME_STEP else "next_step"
    observations, infos = env.reset(seed=seed)
    rng = np.random.default_rng(seed)
    history = []
    restarting = np.zeros(env.num_envs, bool)
    for _ in range(steps):
        masks = infos["action_mask"]
        assert (masks.any(axis=1) == ~restarting).all(), "every running game waits on the learner"
        assert observations.shape == (env.num_envs, 339) and observations.dtype == np.int8
        assert (observations[~restarting, 3] == 1).all(), "the observation is the learner's, on its turn"
        seats = env.seats.copy()
        observations, rewards, terminated, truncated, infos = env.step(_random_legal(masks, rng))
        history.append((rewards.copy(), terminated.copy(), _ended_winners(infos, terminated, mode).copy(), seats))
        restarting = terminated if mode == "next_step" else np.zeros(env.num_envs, bool)
    return history, infos


@pytest.mark.parametrize("mode", ["next_step", "same_step"])
def test_episodes_end_with_the_learners_own_result(mode):
    env = TrinityTowersVectorEnv(16, draft="dealt", autoreset_mode=mode)
    history, _ = _run(env, 120, seed=0)
    seats_seen = set()
    ended = 0
    for rewards, terminated, winner, seats in history:
        assert (rewards[~terminated] == 0).all()
        expected = np.where(winner == seats, 1.0, -1.0)
        assert (rewards[terminated] == expected[terminated]).all()
        ended += terminated.sum()
        seats_seen.update(seats.tolist())
    assert ended > 40
    assert seats_seen == {0, 1}


def test_final_observations_and_infos_come_with_same_step_autoreset():
    env = TrinityTowersVectorEnv(8, autoreset_mode=AutoresetMode.SAME_STEP)
    observations, infos = env.reset(seed=1)
    rng = np.random.default_rng(1)
    for _ in range(200):
        observations, rewards, terminated, truncated, infos = env.step(_random_legal(infos["action_mask"], rng))
        if terminated.any():
            final = np.stack(infos["final_obs"][terminated])
            assert all(x is None for x in infos["final_obs"][~terminated])
            assert (final[:, 2] == 1).all(), "the final observation shows the game over"
            assert (observations[terminated][:, 2] == 0).all(), "the returned observation starts the next game"
            assert (infos["_final_obs"] == terminated).all() and (infos["_final_info"] == terminated).all()
            ended = infos["final_info"]
            assert (ended["_winner"] == terminated).all()
            assert set(ended["termination"][terminated]) <= {"lane_control", "full_board"}
            assert (ended["action_mask"][terminated] == 0).all()
            return
    raise AssertionError("no game ended")


def test_next_step_autoreset_shows_the_end_then_starts_a_new_game_ignoring_the_action():
    env = TrinityTowersVectorEnv(8, autoreset_mode="next_step", draft="dealt")
    observations, infos = env.reset(seed=2)
    rng = np.random.default_rng(2)
    for _ in range(200):
        observations, rewards, terminated, truncated, infos = env.step(_random_legal(infos["action_mask"], rng))
        if terminated.any():
            break
    else:
        raise AssertionError("no game ended")
    assert (observations[terminated][:, 2] == 1).all(), "the step that ends a game returns its final observation"
    assert (infos["action_mask"][terminated] == 0).all()
    assert set(infos["termination"][terminated]) <= {"lane_control", "full_board"}
    actions = _random_legal(infos["action_mask"], rng)
    actions[terminated] = 255  # illegal anywhere: ignored by an env that restarts
    after, rewards, again, _, infos = env.step(actions)
    assert (rewards[terminated] == 0).all() and not again[terminated].any()
    assert (after[terminated][:, 2] == 0).all() and (after[terminated][:, 3] == 1).all()
    assert (infos["action_mask"][terminated].sum(axis=1) > 0).all()
    assert (infos["winner"][terminated] == -1).all()


def test_gymnasium_observation_wrappers_accept_the_default_mode():
    from gymnasium.wrappers.vector import DtypeObservation, NormalizeObservation

    env = NormalizeObservation(DtypeObservation(TrinityTowersVectorEnv(4), np.float32))
    observations, infos = env.reset(seed=0)
    observations, *_ = env.step(_random_legal(infos["action_mask"], np.random.default_rng(0)))
    assert observations.dtype == np.float32 and observations.shape == (4, 339)


def test_gymnasium_make_vec_reaches_the_vector_env():
    import gymnasium

    import trinity_env

    env = gymnasium.make_vec(trinity_env.ENV_ID, num_envs=3, vectorization_mode="vector_entry_point", draft="dealt")
    assert isinstance(env.unwrapped, TrinityTowersVectorEnv) and env.num_envs == 3
    observations, infos = env.reset(seed=0)
    assert observations.shape == (3, 339)


@pytest.mark.parametrize("mode", ["next_step", "same_step"])
def test_infos_are_shaped_like_a_sync_vector_env_of_the_single_agent_env(mode):
    import gymnasium
    from gymnasium.vector import SyncVectorEnv

    from trinity_env.envs.single_agent import TrinityTowersEnv

    ours = TrinityTowersVectorEnv(3, draft="dealt", autoreset_mode=mode)
    sync = SyncVectorEnv(
        [lambda: TrinityTowersEnv(draft="dealt") for _ in range(3)],
        autoreset_mode=AutoresetMode.NEXT_STEP if mode == "next_step" else AutoresetMode.SAME_STEP,
    )
    rng = np.random.default_rng(0)

    def layout(infos):
        return {k: (v.dtype, v.shape) if isinstance(v, np.ndarray) else type(v) for k, v in infos.items()}

    (_, ours_infos), (_, sync_infos) = ours.reset(seed=0), sync.reset(seed=0)
    assert layout(ours_infos) == layout(sync_infos)
    seen_final = False
    for _ in range(60):
        ours_step = ours.step(_random_legal(ours_infos["action_mask"], rng))
        sync_step = sync.step(_random_legal(sync_infos["action_mask"], rng))
        ours_infos, sync_infos = ours_step[4], sync_step[4]
        for ours_part, sync_part in zip(ours_step[:4], sync_step[:4]):
            assert ours_part.dtype == sync_part.dtype and ours_part.shape == sync_part.shape
        if "final_info" in ours_infos and "final_info" in sync_infos:
            assert layout(ours_infos["final_info"]) == layout(sync_infos["final_info"])
            seen_final = True
        assert set(ours_infos) - {"final_obs", "_final_obs", "final_info", "_final_info"} == set(sync_infos) - {
            "final_obs",
            "_final_obs",
            "final_info",
            "_final_info",
        }
    assert seen_final or mode == "next_step"
    assert isinstance(gymnasium.spaces.Box, type)


@pytest.mark.parametrize("mode", ["next_step", "same_step"])
def test_an_illegal_action_ends_the_episode_at_minus_one(mode):
    env = TrinityTowersVectorEnv(2, draft="dealt", autoreset_mode=mode)
    observations, infos = env.reset(seed=4)
    actions = _random_legal(infos["action_mask"], np.random.default_rng(4))
    illegal = int(np.flatnonzero(infos["action_mask"][0] == 0)[0])
    actions[0] = illegal
    _, rewards, terminated, _, infos = env.step(actions)
    assert rewards[0] == -1.0 and terminated[0]
    flagged = infos["final_info"]["illegal_action"] if mode == "same_step" else infos["illegal_action"]
    assert flagged[0] and not flagged[1]
    with pytest.raises(IllegalMoveError, match="integers"):
        env.step(np.array([0.5, 1.0]))


def test_same_seed_same_run_and_opponents_of_every_kind():
    def total(seed, opponent="random"):
        history, _ = _run(TrinityTowersVectorEnv(6, opponent=opponent, deck="random"), 60, seed)
        return np.array([r for r, _, _, _ in history])

    assert (total(3) == total(3)).all()
    first_legal = lambda obs, masks: masks.argmax(axis=1)  # noqa: E731
    assert total(3, first_legal).shape == (60, 6)
    assert total(3, RandomAgent(0)).shape == (60, 6)
    assert total(3, "greedy").shape == (60, 6)  # any agent spec, as in the single-agent env


def test_bad_arguments_are_named():
    with pytest.raises(ConfigError, match="seat"):
        TrinityTowersVectorEnv(2, seat=3)
    with pytest.raises(ConfigError, match="opponent"):
        TrinityTowersVectorEnv(2, opponent=42)
    with pytest.raises(AgentSpecError, match="no agent named 'nobody'"):
        TrinityTowersVectorEnv(2, opponent="nobody")
    with pytest.raises(ConfigError, match="draft"):
        TrinityTowersVectorEnv(2, draft="auction")


@pytest.mark.parametrize(
    "given, mode",
    [
        ("SAME_STEP", AutoresetMode.SAME_STEP),
        ("SameStep", AutoresetMode.SAME_STEP),
        ("same_step", AutoresetMode.SAME_STEP),
        ("AutoresetMode.SAME_STEP", AutoresetMode.SAME_STEP),
        ("NEXT_STEP", AutoresetMode.NEXT_STEP),
        (AutoresetMode.NEXT_STEP, AutoresetMode.NEXT_STEP),
    ],
)
def test_autoreset_mode_takes_the_string_forms_of_gymnasiums_enum(given, mode):
    """``"SAME_STEP"`` was refused with a message naming that very value (issue 51)."""
    env = TrinityTowersVectorEnv(2, draft="dealt", autoreset_mode=given)
    assert env.autoreset_mode is mode and env.metadata["autoreset_mode"] is mode


@pytest.mark.parametrize("bad", ["DISABLED", AutoresetMode.DISABLED, "same-step", 1, ["SAME_STEP"]])
def test_an_autoreset_mode_the_env_does_not_implement_is_refused_in_one_line(bad):
    with pytest.raises(ConfigError, match=r"^autoreset_mode must be AutoresetMode.NEXT_STEP or SAME_STEP") as caught:
        TrinityTowersVectorEnv(2, draft="dealt", autoreset_mode=bad)
    assert "\n" not in str(caught.value)
