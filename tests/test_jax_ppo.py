"""The JAX self-play trainer (training/jax_ppo.py): its pieces against references written out here, its games
against the rules, its ONNX file against its network, and (marked e2e) the short config learning past its bar.

Each function is compiled once: the positions, the noisy parameters and the jitted network are cached, and the
games and updates are ``jax-quick``'s own (``QUICK``), whose compiled reset and update the trainer's run then
finds in the compilation cache that ``make test-jax`` keeps (``JAX_COMPILATION_CACHE_DIR``)."""

from __future__ import annotations

import dataclasses
import functools
import os
import signal
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

jax = pytest.importorskip("jax")
pytest.importorskip("pgx")
import jax.numpy as jnp  # noqa: E402

from training.config import TrainConfigError  # noqa: E402
from training.jax_ppo import (  # noqa: E402
    JaxPPOConfig,
    Transition,
    gae,
    init_params,
    initial_state,
    load_params,
    make_selfplay,
    make_update,
    masked_log_probs,
    policy_fn,
    ppo_loss,
    train,
)
from trinity_env.evaluation.ratings import wilson_interval  # noqa: E402
from trinity_env.jax import TrinityTowers  # noqa: E402
from trinity_env.jax.players import random_action  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent
SMALL = JaxPPOConfig(num_envs=12, rollout_steps=4, minibatches=2, epochs=2, total_steps=96, eval_games=8)
QUICK = JaxPPOConfig.load(ROOT / "configs" / "train" / "jax-quick.yaml")
"""The short config: the tests' games and updates are its own, compiled once for them and the trainer's run."""
POLICY = jax.jit(policy_fn(2))


@functools.cache
def _positions(games: int = 16, seed: int = 0, draft: str = "pick"):
    """Observations and masks of every position of ``games`` random games (the draft and the play)."""
    env = TrinityTowers(draft=draft)

    @jax.jit
    def play(key):
        def one(state, key):
            action = jax.vmap(random_action)(state, jax.random.split(key, games))
            return jax.vmap(env.step)(state, action), (state.observation, state.legal_action_mask, state.terminated)

        init_key, play_key = jax.random.split(key)
        state = jax.vmap(env.init)(jax.random.split(init_key, games))
        return jax.lax.scan(one, state, jax.random.split(play_key, 31))[1]  # a game ends within 31 actions

    observations, masks, over = (np.asarray(a).reshape(-1, *a.shape[2:]) for a in play(jax.random.PRNGKey(seed)))
    return observations[~over], masks[~over]


@functools.cache
def _noisy_params(hidden: int = 32, layers: int = 2, seed: int = 3):
    @jax.jit
    def noisy(key):
        params = init_params(key, hidden, layers)
        keys = jax.random.split(jax.random.fold_in(key, 1), len(params))
        return {
            name: v + 0.3 * jax.random.normal(k, v.shape) for k, (name, v) in zip(keys, params.items(), strict=True)
        }

    return noisy(jax.random.PRNGKey(seed))


def test_illegal_actions_get_no_probability_and_are_never_sampled():
    observations, masks = _positions()
    logits, values = POLICY(_noisy_params(), observations, masks)
    log_probs = np.asarray(masked_log_probs(logits))
    probabilities = np.exp(log_probs)
    assert np.all(probabilities[~masks] == 0.0) and np.allclose(probabilities.sum(1), 1.0, atol=1e-5)
    assert np.all(np.isfinite(log_probs)) and np.all(np.abs(np.asarray(values)) <= 1.0)
    for seed in range(20):
        drawn = np.asarray(jax.random.categorical(jax.random.PRNGKey(seed), logits))
        assert masks[np.arange(len(masks)), drawn].all()


def test_gae_matches_the_recursion_written_out():
    rng = np.random.default_rng(0)
    steps, games, gamma, lam = 7, 5, 0.97, 0.9
    values, rewards = rng.normal(size=(steps, games)), rng.normal(size=(steps, games))
    dones, last = rng.random((steps, games)) < 0.3, rng.normal(size=games)
    advantages, returns = gae(*(jnp.asarray(a, jnp.float32) for a in (values, rewards)), dones, last, gamma, lam)
    expected = np.zeros((steps, games))
    for g in range(games):
        following, next_value = 0.0, last[g]
        for t in reversed(range(steps)):
            alive = 0.0 if dones[t, g] else 1.0
            delta = rewards[t, g] + gamma * next_value * alive - values[t, g]
            following = delta + gamma * lam * alive * following
            expected[t, g], next_value = following, values[t, g]
    np.testing.assert_allclose(np.asarray(advantages), expected, rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(np.asarray(returns), expected + values, rtol=1e-5, atol=1e-5)


def test_ppo_loss_is_the_clipped_objective_written_out():
    observations, masks = _positions()
    params, config = _noisy_params(), dataclasses.replace(SMALL, layers=2, entropy=0.05, value_coef=0.7)
    logits, values = POLICY(params, observations, masks)
    log_probs = np.asarray(masked_log_probs(logits), np.float64)
    rng = np.random.default_rng(1)
    actions = np.array([rng.choice(np.flatnonzero(m)) for m in masks])
    old = log_probs[np.arange(len(actions)), actions] + rng.normal(0, 0.4, len(actions))  # some ratios clipped
    advantages, returns = rng.normal(size=len(actions)), rng.uniform(-1, 1, len(actions))
    batch = Transition(observations, masks, jnp.asarray(actions, jnp.int32), jnp.asarray(old, jnp.float32), 0, 0, 0)
    loss, (policy, value, entropy) = jax.jit(lambda *a: ppo_loss(*a, config))(
        params, batch, jnp.asarray(advantages), jnp.asarray(returns)
    )
    ratio = np.exp(log_probs[np.arange(len(actions)), actions] - old)
    normal = (advantages - advantages.mean()) / (advantages.std() + 1e-8)
    clipped = np.clip(ratio, 1 - config.clip, 1 + config.clip)
    want_policy = -np.minimum(ratio * normal, clipped * normal).mean()
    want_value = (0.5 * (np.asarray(values, np.float64) - returns) ** 2).mean()
    probabilities = np.exp(log_probs)
    want_entropy = -np.sum(np.where(probabilities > 0, probabilities * log_probs, 0.0), axis=1).mean()
    assert np.any(clipped != ratio)
    np.testing.assert_allclose([policy, value, entropy], [want_policy, want_value, want_entropy], rtol=2e-4, atol=2e-5)
    np.testing.assert_allclose(loss, want_policy + 0.7 * want_value - 0.05 * want_entropy, rtol=2e-4, atol=2e-5)


def test_the_learner_always_sees_its_own_turn_and_the_results_of_its_games():
    config = QUICK  # its games play all three opponents: a past self, greedy and random
    assert all(config.groups)
    selfplay = make_selfplay(config)
    params = _noisy_params(config.hidden, config.layers)
    games = jax.jit(selfplay.reset)(jax.random.PRNGKey(0), params)
    step, rules_step = jax.jit(selfplay.step), jax.jit(jax.vmap(selfplay.env.step))
    random_actions = jax.jit(lambda state, key: jax.vmap(random_action)(state, jax.random.split(key, config.num_envs)))
    key, finished = jax.random.PRNGKey(1), 0
    for _ in range(40):
        state = games.state
        assert not np.asarray(state.terminated).any()
        assert (np.asarray(state.current_player) == np.asarray(games.seat)).all()
        key, act_key, step_key = jax.random.split(key, 3)
        actions = random_actions(state, act_key)
        # the reference: the same learner's move, then the opponents' moves, in the rules' own steps
        after = rules_step(state, actions)
        games, reward, done = step(games, actions, params, step_key)
        reward, done = np.asarray(reward), np.asarray(done)
        assert set(np.unique(reward)) <= {-1.0, 0.0, 1.0} and not reward[~done].any()
        ended_now = np.asarray(after.terminated)
        assert done[ended_now].all()  # a game the learner's move ended is done, and paid as the rules pay it
        seats = np.asarray(state.current_player)
        np.testing.assert_array_equal(reward[ended_now], np.asarray(after.rewards)[ended_now, seats[ended_now]])
        finished += done.sum()
    assert finished >= 5 * config.num_envs  # a dealt game lasts 8 of the learner's moves at most: 5 in 40 each


def test_a_step_and_a_reset_deal_one_batch_of_new_games(monkeypatch):
    """A restart takes its row of one deal per step (a game ends at most once a step), not a new deal in every pass
    of the opponents' loop: traced, the step and the reset each deal once."""
    selfplay = make_selfplay(SMALL)
    deals = []
    dealt = selfplay.new_games
    monkeypatch.setattr(selfplay, "new_games", lambda key: deals.append(key) or dealt(key))
    params = init_params(jax.random.PRNGKey(0), SMALL.hidden, SMALL.layers)
    games = jax.eval_shape(selfplay.reset, jax.random.PRNGKey(0), params)
    assert len(deals) == 1
    actions = jnp.zeros(SMALL.num_envs, jnp.int32)
    jax.make_jaxpr(selfplay.step)(games, actions, params, jax.random.PRNGKey(1))
    assert len(deals) == 2


def test_an_update_is_deterministic_for_a_seed_and_a_checkpoint_resumes_it_exactly(tmp_path):
    """Two runs of two updates from one seed end in the same state; the second is saved to ``latest.npz`` after its
    first update and read back (the whole state: network, Adam, pool, games, key) before its second."""
    from training.jax_checkpoint import load_checkpoint, save_checkpoint

    config = QUICK  # the trainer's own update and reset: compiled once, here and in its run
    selfplay = make_selfplay(config)
    update = make_update(config, selfplay)
    template = jax.eval_shape(lambda: initial_state(config, selfplay))
    runs = []
    for resumed in (False, True):
        state = initial_state(config, selfplay)
        for index in range(2):
            state, metrics = update(state)
            if resumed and index == 0:
                save_checkpoint(tmp_path / "latest.npz", state, {"steps": config.steps_per_update})
                state, progress = load_checkpoint(tmp_path / "latest.npz", template)
                assert progress == {"steps": config.steps_per_update}
        runs.append(jax.tree_util.tree_map(np.asarray, state))
        assert all(np.isfinite(float(v)) for v in metrics.values())
    first = jax.jit(init_params, static_argnums=(1, 2))
    before = first(jax.random.split(jax.random.PRNGKey(config.seed), 3)[1], config.hidden, config.layers)
    leaves = [jax.tree_util.tree_leaves(run) for run in runs]
    assert all(a.dtype == b.dtype and np.array_equal(a, b) for a, b in zip(*leaves, strict=True))
    assert any(not np.array_equal(runs[0].params[name], np.asarray(before[name])) for name in before)


def test_a_checkpoint_not_of_this_run_is_refused_in_one_line(tmp_path):
    from training.jax_checkpoint import load_checkpoint, save_checkpoint
    from training.run_folder import RunFolderError

    template = {"a": jax.ShapeDtypeStruct((2, 3), jnp.float32), "b": jax.ShapeDtypeStruct((4,), jnp.int32)}
    path = tmp_path / "latest.npz"
    save_checkpoint(path, {"a": np.ones((2, 3), np.float32), "b": np.arange(5, dtype=np.int32)}, {})
    with pytest.raises(RunFolderError, match=r"entry leaf_001 is int32\[5\], this run's state has int32\[4\]$"):
        load_checkpoint(path, template)
    np.savez(path, leaf_000=np.zeros(3))
    with pytest.raises(RunFolderError, match="holds 1 entries, not this run's training state"):
        load_checkpoint(path, template)


def test_a_second_trainer_on_the_run_folder_is_refused_in_one_line(tmp_path, capsys):
    """The trainer claims its run folder as every trainer does: while one holds it, a second is refused at once."""
    import threading

    from training.jax_ppo import main
    from training.run_folder import claim

    config = tmp_path / "small.yaml"
    config.write_text("total_steps: 96\nnum_envs: 12\nrollout_steps: 4\nminibatches: 2\neval_games: 8\n")
    held, done = threading.Event(), threading.Event()

    def hold():
        with claim(tmp_path / "run", SMALL, "jax_ppo"):
            held.set()
            done.wait(120)

    holder = threading.Thread(target=hold)
    holder.start()
    try:
        assert held.wait(30)
        with pytest.raises(SystemExit) as stop:
            main(["--config", str(config), "--run", str(tmp_path / "run")])
    finally:
        done.set()
        holder.join()
    assert stop.value.code == 2
    err = capsys.readouterr().err.strip()
    assert "is in use by jax_ppo" in err and "one trainer per run folder" in err and "\n" not in err, err


def test_the_onnx_file_computes_the_network_and_plays_as_an_onnx_agent(tmp_path):
    onnxruntime = pytest.importorskip("onnxruntime")
    from training.jax_onnx import export_onnx
    from trinity_env.agents.loaders.onnx_policy import OnnxPolicyAgent

    params = _noisy_params()
    path = export_onnx({k: np.asarray(v) for k, v in params.items()}, 2, tmp_path / "policy.onnx")
    observations, masks = _positions()
    logits, values = POLICY(params, observations, np.ones_like(masks))
    session = onnxruntime.InferenceSession(path.read_bytes(), providers=["CPUExecutionProvider"])
    onnx_logits, onnx_values = session.run(None, {"observation": observations})
    np.testing.assert_allclose(onnx_logits, np.asarray(logits), rtol=1e-5, atol=1e-4)
    np.testing.assert_allclose(onnx_values, np.asarray(values), rtol=1e-5, atol=1e-5)
    agent = OnnxPolicyAgent.from_file(path)  # the project's checks, then its contract on the probe positions
    chosen = agent.act_batch(list(observations[:64]), list(masks[:64]))
    expected = np.argmax(np.where(masks[:64], np.asarray(logits)[:64], -np.inf), axis=1)
    np.testing.assert_array_equal(np.asarray(chosen), expected)


def test_a_bad_config_is_one_line():
    with pytest.raises(TrainConfigError, match=r"unknown field\(s\) num_env"):
        JaxPPOConfig.from_dict({"num_env": 3})
    with pytest.raises(TrainConfigError, match="'eval_games' must be even"):
        JaxPPOConfig.from_dict({"eval_games": 401})
    with pytest.raises(TrainConfigError, match="field 'hidden' must be int"):
        JaxPPOConfig.from_dict({"hidden": "wide"})
    assert JaxPPOConfig.load(ROOT / "configs" / "train" / "jax-quick.yaml").total_steps > 0


def test_an_evaluation_result_holds_the_project_share():
    from training.jax_eval import Result
    from trinity_env.evaluation.ratings import Share

    result = Result("greedy", wins=250, draws=10, losses=140)
    assert result.share == Share(255, 400) and result.games == 400
    assert (
        result.to_dict() == {"opponent": "greedy", "wins": 250, "draws": 10, "losses": 140} | Share(255, 400).to_json()
    )
    assert result.line() == f"vs greedy {Share(255, 400).text()} (250-10-140)"


def test_trinity_train_runs_the_jax_trainer_for_jax_configs(tmp_path, capsys):
    from trinity_env.cli import main

    with pytest.raises(SystemExit) as stop:  # the trainer's own command line: its one line, status 2
        main(["train", "jax-quick", "--resume", "--run", str(tmp_path / "run")])
    assert stop.value.code == 2
    assert "trinity train: error: nothing to resume: " in capsys.readouterr().err
    assert main(["train", "jax-quick", "--total-games", "5", "--run", str(tmp_path / "run")]) == 2
    assert "its budget is --total-steps N" in capsys.readouterr().err
    assert not (tmp_path / "run").exists()


@pytest.mark.slow  # a trainer compiled in a process of its own: a minute or two
def test_ctrl_c_stops_after_an_update_and_writes_the_policy(tmp_path):
    config = tmp_path / "long.yaml"
    config.write_text("total_steps: 100000000\nnum_envs: 16\nrollout_steps: 4\neval_games: 8\n")
    command = [sys.executable, "-m", "training.jax_ppo", "--config", str(config), "--run", str(tmp_path / "run")]
    trainer = subprocess.Popen(command, cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    try:
        first = trainer.stdout.readline()  # the first update's line: compiled and training
        assert first.startswith("update 1/"), first
        trainer.send_signal(signal.SIGINT)
        output, _ = trainer.communicate(timeout=300)
    finally:
        if trainer.poll() is None:
            trainer.kill()
    assert "stopped after update" in output and trainer.returncode == 130, output
    params = load_params(tmp_path / "run" / "params.npz")
    assert set(params) == set(init_params(jax.random.PRNGKey(0), 128, 2))
    assert (tmp_path / "run" / "policy.onnx").is_file() and (tmp_path / "run" / "summary.json").is_file()
    # --resume continues from latest.npz: one more update to a budget just past where it stopped
    done = int(output.split("stopped after update ")[1].split(":")[0])
    again = [*command, "--resume", "--total-steps", str((done + 1) * 16 * 4)]
    resumed = subprocess.run(again, cwd=ROOT, capture_output=True, text=True, timeout=600)
    assert resumed.returncode == 0, resumed.stdout + resumed.stderr
    assert f"after update {done} " in resumed.stdout and f"update {done + 1}/{done + 1}:" in resumed.stdout


@pytest.mark.e2e  # make test-jax runs it: the short config trained to its bar, as python -m benchmarks.jax_selfplay
def test_the_quick_config_learns_past_its_bar(tmp_path):
    """``jax-quick`` evaluated every 100,000 learner steps (400 seat-swapped games against the jitted random and
    greedy players) stops at the first evaluation that clears its bar, within its budget: the shares are counted
    again here from the games' wins, draws and losses, each with its 95% Wilson interval in the message."""
    config = dataclasses.replace(QUICK, eval_every_steps=100_000, stop_at_target=True)
    summary = train(config, tmp_path, log=print)
    reached = summary["reached_target"]
    assert reached is not None, f"the bar was not reached in {summary['steps']:,} steps: {summary['final']}"
    assert reached["steps"] <= config.total_steps
    for name, target in (("random", config.target_random), ("greedy", config.target_greedy)):
        counts = reached[name]
        games, won = counts["wins"] + counts["draws"] + counts["losses"], counts["wins"] + counts["draws"] / 2
        low, high = wilson_interval(won, games)
        message = f"vs {name}: {won / games:.1%} [{low:.1%}, {high:.1%}] of {games} games after {reached['steps']:,}"
        assert games == config.eval_games == 400, message
        assert won / games >= target, message
        print(message)
    assert os.path.getsize(tmp_path / "policy.onnx") > 0
