"""Pre-training on solved positions (training.pretrain): the targets are the solver's, the policy's are the
value-keeping moves, only open-hand labels of dealt hands are used, and a run is seeded and stoppable."""

from __future__ import annotations

import dataclasses
import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
import torch
from perfect import value_after

from training.pretrain import (
    PretrainConfig,
    Targets,
    check_open_hands,
    load_state,
    losses,
    policy_loss,
    pretrain,
    resume_path,
    save_state,
)
from trinity_env.agents.az import load_network, make_network
from trinity_env.evaluation.solved_positions import DatasetError, load
from trinity_env.search.solver import Solver
from trinity_env.spec.observation import observation_dict

ROOT = Path(__file__).resolve().parent.parent
SAMPLE = ROOT / "docs" / "dataset"


@pytest.fixture(scope="module")
def positions():
    return load(SAMPLE)


@pytest.fixture(scope="module")
def targets(positions):
    return Targets.from_positions(positions, held_per_count=50)


def test_the_targets_are_the_solvers_and_the_inputs_the_movers_view(positions, targets):
    solver = Solver()
    rng = np.random.default_rng(3)
    rows = [int(rng.choice(np.flatnonzero(targets.empty == count))) for count in (4, 5, 6, 7)]
    for row in rows:
        state = positions.state(row)
        assert targets.values[row] == solver.value(state)
        view = observation_dict(state, state.to_move, True)
        np.testing.assert_array_equal(targets.observations[row], view["observation"])
        np.testing.assert_array_equal(targets.masks[row], view["action_mask"])
        assert targets.has_best[row]
        keeps = {a for a in state.legal_actions() if value_after(solver, state, a) >= targets.values[row]}
        assert set(np.flatnonzero(targets.best[row]).tolist()) == keeps


def test_held_out_games_are_whole_and_apart(targets):
    assert len(targets.train) and len(targets.held)
    assert not set(targets.game[targets.held] % 10) - {0}
    assert not (targets.game[targets.train] % 10 == 0).any()


@pytest.mark.parametrize(
    "change, problem",
    [({"draft": "pick"}, "dealt hands"), ({"open_hands": False}, "open hands")],
)
def test_hidden_information_never_reaches_an_open_hand_label(positions, change, problem):
    """A label computed with both hands in view is refused where the mover could not see them."""
    hidden = dataclasses.replace(positions, manifest=positions.manifest | change)
    with pytest.raises(DatasetError, match=problem):
        check_open_hands(hidden)
    with pytest.raises(DatasetError, match=problem):
        Targets.from_positions(hidden)


def test_the_policy_loss_is_minus_log_the_chance_of_a_value_keeping_move():
    logits = torch.tensor([[0.0, 1.0, 2.0, -1e9], [3.0, 0.0, 0.0, 0.0]])
    best = torch.tensor([[1, 0, 1, 0], [0, 1, 1, 0]], dtype=torch.int8)
    has = torch.tensor([True, True])
    p = torch.softmax(logits, dim=1)
    expected = -(torch.log(p[0, 0] + p[0, 2]) + torch.log(p[1, 1] + p[1, 2])) / 2
    assert torch.isclose(policy_loss(logits, best, has), expected)
    assert policy_loss(logits, best, torch.tensor([False, False])) == 0


def _weights(network) -> list[torch.Tensor]:
    return [p.detach().clone() for p in network.parameters()]


def test_pretraining_is_seeded_learns_and_stops_when_asked(targets):
    config = PretrainConfig(steps=24, batch_size=64, eval_every_steps=12, seed=1)
    runs = []
    for _ in range(2):
        torch.manual_seed(0)
        network = make_network("board", 16, 1, True)
        before = losses(network, targets, targets.train[:512])
        curve = pretrain(network, targets, config)
        after = losses(network, targets, targets.train[:512])
        runs.append((_weights(network), curve))
    assert all(torch.equal(a, b) for a, b in zip(runs[0][0], runs[1][0]))
    timeless = [[{k: v for k, v in point.items() if k != "seconds"} for point in curve] for _, curve in runs]
    assert [p["step"] for p in timeless[0]] == [12, 24] and timeless[0] == timeless[1]
    assert float(after[1]) < float(before[1])  # the policy learned the value-keeping moves
    assert set(runs[0][1][-1]["value_sign"]) >= {"4", "all"}
    calls = []
    stopped = pretrain(
        make_network("board", 16, 1, True), targets, config, stop=lambda: len(calls) > 4 or calls.append(1)
    )
    assert stopped[-1]["step"] == 5


def _command(tmp_path: Path) -> list[str]:
    small = ["--hidden", "16", "--layers", "1", "--steps", "4", "--eval-every-steps", "2"]
    return [str(SAMPLE), str(tmp_path / "pretrained.pt"), *small, "--json", str(tmp_path / "curve.json")]


@pytest.mark.e2e  # the command in its own process (make test-e2e); the fast twin below calls its main in this one
def test_the_command_writes_a_network_the_az_agent_plays(tmp_path):
    done = subprocess.run(
        [sys.executable, "-m", "training.pretrain", *_command(tmp_path)], capture_output=True, text=True, cwd=ROOT
    )
    assert done.returncode == 0, done.stderr
    _check_command(tmp_path, done.stdout)


def test_the_command_s_main_writes_a_network_the_az_agent_plays_in_process(tmp_path, monkeypatch, capsys):
    from training.pretrain import main

    monkeypatch.chdir(tmp_path)
    main(_command(tmp_path))
    _check_command(tmp_path, capsys.readouterr().out)


def _check_command(tmp_path: Path, stdout: str) -> None:
    out = tmp_path / "pretrained.pt"
    assert "step 4/4" in stdout and "held out: value sign" in stdout
    curve = json.loads((tmp_path / "curve.json").read_text())["curve"]
    assert [p["step"] for p in curve] == [2, 4] and "value_sign" in curve[-1]
    network, payload = load_network(out)
    assert payload["pretrain_steps"] == 4 and network.hidden == 16


@pytest.mark.parametrize(
    "arguments",
    [
        ["nothing-here", "out.pt"],
        [str(SAMPLE), "out.pt", "--hidden", "0"],
        [str(SAMPLE), "out.pt", "--steps", "1.5"],
        [str(SAMPLE), "out.pt", "--seed", "-1"],
        [str(SAMPLE), "/proc/nowhere/x.pt"],
        ["nothing-here", "out.pt", "--hidden", "1024", "--layers", "3"],  # 17.9M weights: no loader takes them
        ["nothing-here", "out.pt", "--hidden", "4097"],
    ],
)
def test_bad_input_is_one_line_and_status_2_before_any_step(arguments, tmp_path, monkeypatch, capsys):
    from training.pretrain import main

    monkeypatch.chdir(tmp_path)
    with pytest.raises(SystemExit) as stop:
        main(arguments)
    captured = capsys.readouterr()
    assert stop.value.code == 2 and len(captured.err.strip().splitlines()) == 1, captured.err
    assert captured.err.startswith("python -m training.pretrain: error:") and "pre-training" not in captured.out
    assert not (tmp_path / "out.pt").exists()
    if "--layers" in arguments:  # the size table is checked before the dataset is even looked for
        assert "17,903,618 weights, over the limit of 16,777,216" in captured.err, captured.err


def _settings() -> dict:
    return {"learner": {"seed": 1}}


def test_a_run_resumed_from_its_last_checkpoint_ends_on_the_weights_of_one_never_stopped(targets, tmp_path):
    """A run killed after step 8 (its last checkpoint at step 5) goes on from the resume file to the same weights
    and curve as a run never stopped."""
    config = PretrainConfig(steps=12, batch_size=64, eval_every_steps=4, seed=1)
    torch.manual_seed(0)
    whole = make_network("board", 16, 1, True)
    torch.manual_seed(0)
    killed = make_network("board", 16, 1, True)
    expected = pretrain(whole, targets, config)
    state = tmp_path / "run.resume.pt"

    def kill() -> bool:
        if len(steps) == 8:
            raise SystemExit("killed")  # nothing after the last checkpoint is written
        steps.append(1)
        return False

    steps: list[int] = []
    with pytest.raises(SystemExit, match="killed"):
        pretrain(
            killed,
            targets,
            config,
            stop=kill,
            save=lambda done: save_state(state, killed, done, _settings(), config.steps),
            checkpoint_every_steps=5,
        )
    network, snapshot, settings, total = load_state(state)
    assert snapshot.progress.step == 5 and settings == _settings() and total == 12
    curve = pretrain(network, targets, config, resume=snapshot)
    assert all(torch.equal(a, b) for a, b in zip(_weights(whole), _weights(network)))
    timeless = [[{k: v for k, v in point.items() if k != "seconds"} for point in c] for c in (expected, curve)]
    assert timeless[0] == timeless[1] and [p["step"] for p in curve] == [4, 8, 12]


def test_kill_9_loses_only_the_steps_since_the_last_checkpoint_and_resume_goes_on(tmp_path, monkeypatch, capsys):
    """The command line: a run killed with SIGKILL leaves a whole resume file; a fresh start over it is refused in
    one line (exit 2); --resume ends on the weights of a run never stopped; a larger --steps extends a finished run."""
    import os
    import signal
    import time

    from training.pretrain import main

    killed = tmp_path / "killed.pt"
    state = resume_path(killed)
    assert state == tmp_path / "killed.resume.pt"
    small = ["--hidden", "16", "--layers", "1", "--eval-every-steps", "1000", "--seed", "3"]
    command = [sys.executable, "-m", "training.pretrain", str(SAMPLE), str(killed), *small]
    run = subprocess.Popen(
        [*command, "--steps", "100000", "--checkpoint-every-steps", "4"],
        cwd=ROOT,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
    )
    try:
        deadline = time.monotonic() + 120
        while not state.exists() and run.poll() is None and time.monotonic() < deadline:
            time.sleep(0.2)
        time.sleep(0.5)
        os.kill(run.pid, signal.SIGKILL)
    finally:
        run.wait()
    assert run.returncode == -signal.SIGKILL, run.stderr.read()
    _, snapshot, _, _ = load_state(state)  # whole: written atomically
    kept = snapshot.progress.step
    assert kept >= 4 and kept % 4 == 0 and not killed.exists()
    monkeypatch.chdir(tmp_path)
    with pytest.raises(SystemExit) as refused:
        main([str(SAMPLE), str(killed), *small, "--steps", str(kept + 3)])
    err = capsys.readouterr().err
    assert refused.value.code == 2 and len(err.strip().splitlines()) == 1 and "--resume" in err, err
    main([str(SAMPLE), str(killed), *small, "--steps", str(kept + 3), "--resume"])
    assert f"from step {kept:,}" in capsys.readouterr().out
    main([str(SAMPLE), str(tmp_path / "whole.pt"), *small, "--steps", str(kept + 3)])
    resumed, payload = load_network(killed)
    whole, _ = load_network(tmp_path / "whole.pt")
    assert payload["pretrain_steps"] == kept + 3
    assert all(torch.equal(a, b) for a, b in zip(resumed.state_dict().values(), whole.state_dict().values()))
    main([str(SAMPLE), str(killed), *small, "--steps", str(kept + 3), "--resume"])
    assert "already holds" in capsys.readouterr().out
    with pytest.raises(SystemExit) as other:
        main([str(SAMPLE), str(killed), *small[:-1], "4", "--steps", str(kept + 5), "--resume"])
    assert other.value.code == 2 and "other settings (learner)" in capsys.readouterr().err


def test_self_play_starts_from_the_pretrained_network(tmp_path):
    """AlphaZero's ``initial_network``: a new run starts from the pre-trained weights; another shape is refused."""
    from trainer_runs import AZ_TWO_ITERATIONS

    from training.alphazero import initial_network
    from training.az_config import AZConfig, pretrained_weights
    from trinity_env.agents.az import save_network
    from trinity_env.agents.networks.ppo_network import CheckpointError

    torch.manual_seed(5)
    pretrained = make_network("board", 16, 1, True)
    save_network(tmp_path / "pretrained.pt", pretrained)
    config = AZConfig.from_dict(
        AZ_TWO_ITERATIONS | {"network": "board", "initial_network": str(tmp_path / "pretrained.pt")}
    )
    started = initial_network(config, pretrained_weights(config))
    assert all(torch.equal(a, b) for a, b in zip(started.state_dict().values(), pretrained.state_dict().values()))
    fresh_config = AZConfig.from_dict(AZ_TWO_ITERATIONS | {"network": "board"})
    assert pretrained_weights(fresh_config) is None
    fresh = initial_network(fresh_config)
    assert not all(torch.equal(a, b) for a, b in zip(fresh.state_dict().values(), pretrained.state_dict().values()))
    wider = AZConfig.from_dict(
        AZ_TWO_ITERATIONS | {"network": "board", "hidden": 32, "initial_network": str(tmp_path / "pretrained.pt")}
    )
    with pytest.raises(CheckpointError, match=r"a board network of hidden 16, layers 1, tactics True; the config asks"):
        pretrained_weights(wider)


def test_a_missing_initial_network_is_refused_before_the_run_folder_is_touched(tmp_path):
    from trainer_runs import AZ_TWO_ITERATIONS

    from training.alphazero import train
    from training.az_config import AZConfig
    from trinity_env.agents.networks.ppo_network import CheckpointError

    config = AZConfig.from_dict(AZ_TWO_ITERATIONS | {"network": "board", "initial_network": str(tmp_path / "no.pt")})
    with pytest.raises(CheckpointError, match=r"no\.pt"):
        train(config, tmp_path / "run", progress=False)
    assert not (tmp_path / "run").exists()
