"""BenchMARL with no glue (``trinity_env.integrations.benchmarl``): a run from the task and folder the module makes,
player_0's figures in self-play, and the exported actor playing as BenchMARL's.

BenchMARL 1.5 pins ``torchrl<0.12``, older than the ``integrations`` extra's: these tests run in ``.venv-benchmarl``
(``make test-benchmarl``, which ``make test-integrations`` ends with) and skip wherever BenchMARL is not installed.
One short run an algorithm (two iterations of 64 env steps, the pick draft) serves every test of that algorithm:
MAPPO's through ``make_experiment``, IQL's through ``examples/benchmarl_mappo.py``.
"""

from __future__ import annotations

import contextlib
import io
import warnings

import numpy as np
import pytest

pytest.importorskip("benchmarl", reason="BenchMARL is not installed (make test-benchmarl: .venv-benchmarl)")

import torch

from tests.test_integrations import example
from trinity_env.core import ArgumentError
from trinity_env.integrations import benchmarl as tb
from trinity_env.spec.config import ConfigError

ITERATIONS, FRAMES = 2, 64


@pytest.fixture(scope="module", autouse=True)
def one_thread():
    """Torch on one thread: its batches here are a row or a few, and two threads on a busy 2-core machine wait on
    each other (13 ms a layer instead of well under one)."""
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(threads)


def _trained(train) -> dict:
    """``train()``'s experiment and rollouts, and what the run wrote on stdout and stderr."""
    stdout, stderr = io.StringIO(), io.StringIO()
    with warnings.catch_warnings(), contextlib.redirect_stdout(stdout), contextlib.redirect_stderr(stderr):
        warnings.simplefilter("ignore")  # TorchRL's and BenchMARL's deprecations
        experiment, rollouts = train()
    return {"experiment": experiment, "rollouts": rollouts, "stdout": stdout.getvalue(), "stderr": stderr.getvalue()}


@pytest.fixture(scope="module")
def mappo_run(tmp_path_factory):
    """MAPPO trained by ``make_experiment`` into a folder that did not exist, then two games of its policies."""
    folder = tmp_path_factory.mktemp("mappo") / "not" / "there"

    def train():
        assert not folder.parent.exists()
        experiment = tb.make_experiment("mappo", folder=folder, iterations=ITERATIONS, frames=FRAMES)
        experiment.run()
        return experiment, tb.play_games(experiment, 2, seed=1)

    return {"folder": folder, **_trained(train)}


@pytest.fixture(scope="module")
def example_run(tmp_path_factory):
    """IQL trained by ``examples/benchmarl_mappo.py`` (the leaderboard's BenchMARL card is made with it) into a
    folder that did not exist; it plays two games and exports player_0's actor to ``actor.onnx`` beside the folder."""
    root = tmp_path_factory.mktemp("iql")
    folder = root / "not" / "there"
    argv = ["--algorithm", "iql", "--iterations", str(ITERATIONS), "--frames", str(FRAMES), "--draft", "pick"]
    argv += ["--games", "2", "--folder", str(folder), "--export", str(root / "actor.onnx")]
    assert not folder.parent.exists()
    return {"folder": folder, **_trained(lambda: example("benchmarl_mappo").main(argv))}


@pytest.fixture(scope="module", params=["mappo_run", "example_run"])
def run(request):
    return request.getfixturevalue(request.param)


def _turns(rollouts: list, group: str) -> tuple[torch.Tensor, torch.Tensor]:
    """The observations and masks of ``group``'s moves in the rollouts."""
    parts = []
    for key in (("observation", "observation"), ("action_mask",)):
        parts.append(torch.cat([r[(group, *key)][r[group, "mask"].flatten()][:, 0] for r in rollouts]))
    return tuple(parts)


def test_a_run_trains_with_no_glue_into_a_folder_that_did_not_exist(run):
    experiment = run["experiment"]
    assert experiment.n_iters_performed == ITERATIONS and experiment.total_frames == ITERATIONS * FRAMES
    assert experiment.folder_name.parent == run["folder"] and (experiment.folder_name / "config.pkl").is_file()
    assert len(run["rollouts"]) == 2
    for rollout in run["rollouts"]:
        assert rollout["player_0", "observation", "observation"].dtype == torch.float32
        assert tb.illegal_moves(rollout) == 0
        # the game ended by the rules (an illegal move would end it early with termination_code 0)
        assert rollout["next", "done"][-1].item() and len(rollout) == 16 + 15  # the pick draft: picks, a board
        assert rollout["next", "player_0", "info", "termination_code"][-1].item() > 0


def test_the_progress_line_gives_player_0_s_results_where_benchmarl_s_bar_gives_the_zero_sum_mean(run):
    experiment, stderr = run["experiment"], run["stderr"]
    assert experiment.mean_return == 0.0  # BenchMARL's bar: the mean of both players' returns
    figures = experiment.callbacks[-1].figures
    assert len(figures) == ITERATIONS
    for iteration, batch in enumerate(figures, 1):
        assert batch["games"] >= 1 and batch["won"] + batch["drawn"] + batch["lost"] == batch["games"]
        # two readings of the same games: the returns BenchMARL summed, the winners the env reported
        assert batch["mean_return"] == pytest.approx((batch["won"] - batch["lost"]) / batch["games"])
        assert batch["win_share"] == (batch["won"] + batch["drawn"] / 2) / batch["games"]
        assert tb.progress_line(iteration, batch) in stderr
    assert stderr.count("player_0 won ") == ITERATIONS
    # the task's log_info: the same figures in BenchMARL's csv logger
    [shares] = experiment.folder_name.rglob("collection_player_0_win_share.csv")
    logged = [float(line.split(",")[1]) for line in shares.read_text().splitlines()]
    assert logged == [batch["win_share"] for batch in figures]


def test_the_exported_actor_plays_as_benchmarl_s_actor(run, tmp_path):
    """On the observations of the games played, ``onnx:`` picks what BenchMARL's actor picks with deterministic
    actions, and it plays whole games: MAPPO's player_1 exported from the whole policy, IQL's player_0 as the
    example exported it (from the experiment)."""
    pytest.importorskip("onnxruntime", reason="the onnx extra is not installed")
    from tensordict import TensorDict
    from torchrl.envs.utils import ExplorationType, set_exploration_type

    from trinity_env.agents import make
    from trinity_env.evaluation.match import play_game
    from trinity_env.spec.config import make_config

    experiment = run["experiment"]
    if experiment.algorithm_name == "mappo":
        group, path = "player_1", tb.export_actor(experiment.policy, tmp_path / "actor.onnx", group="player_1")
    else:
        group, path = "player_0", run["folder"].parent.parent / "actor.onnx"
    observations, masks = _turns(run["rollouts"], group)
    assert len(observations) >= 2 * (8 + 7)  # two games of 8 picks and 7 or 8 placements each
    inputs = {group: {"observation": {"observation": observations[:, None]}, "action_mask": masks[:, None]}}
    with set_exploration_type(ExplorationType.DETERMINISTIC), torch.no_grad():
        actions = experiment.group_policies[group](TensorDict(inputs, batch_size=[len(observations)]))
    agent = make(f"onnx:{path}")
    played = agent.act_batch(observations.numpy().astype(np.int8), masks.numpy().astype(np.int8))
    assert (played == actions[group, "action"][:, 0].numpy()).all()
    for seat in (0, 1):  # whole games through the core, which refuses an illegal move
        seats = (agent, make("random")) if seat == 0 else (make("random"), agent)
        assert play_game(seats, make_config(), seed=seat).is_over


def test_bad_inputs_are_one_line_errors(tmp_path):
    (tmp_path / "file").write_text("")
    cases = [
        (lambda: tb.make_task(observation_dtype="int8"), ArgumentError, "float32 observations only"),
        (lambda: tb.make_task(draft="nope"), ConfigError, "draft"),
        (lambda: tb.make_experiment("nope", folder=tmp_path), ArgumentError, "unknown BenchMARL algorithm 'nope'"),
        (lambda: tb.make_experiment(folder=tmp_path, iterations=0), ArgumentError, "iterations must be"),
        (lambda: tb.make_experiment(folder=tmp_path / "file" / "x"), ArgumentError, "cannot create the save folder"),
        (lambda: tb.export_actor(torch.nn.Linear(2, 2), tmp_path / "x.onnx"), ArgumentError, "found 0 actors"),
        (lambda: tb.export_actor(torch.nn.Linear(2, 2), tmp_path / "x.onnx", "player_2"), ArgumentError, "group"),
    ]
    for call, kind, message in cases:
        with pytest.raises(kind, match=message) as caught:
            call()
        assert "\n" not in str(caught.value)
    assert not (tmp_path / "x.onnx").exists()


def test_the_example_trains_plays_and_exports(example_run):
    """``examples/benchmarl_mappo.py``: its run, its games (every move inside the mask) and its ONNX file."""
    stdout, folder = example_run["stdout"], example_run["folder"]
    assert f"wrote {folder.parent.parent / 'actor.onnx'}" in stdout and stdout.count("illegal moves 0") == 2
    assert [path.name for path in folder.iterdir()] == [example_run["experiment"].folder_name.name]
