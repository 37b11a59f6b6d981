"""AlphaZero on Ray (``training.alphazero_ray``) on a local cluster: the same run as one process.

Needs the rllib extra (Ray); ``make test-rllib`` installs it and runs this module. One local cluster
(``ray.init(num_cpus=2)``) serves the module.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path
from types import SimpleNamespace

import pytest

pytestmark = pytest.mark.ray  # make test-rllib runs them on a local cluster
ray = pytest.importorskip("ray")
torch = pytest.importorskip("torch")

from test_alphazero import TINY, _same, _weights  # noqa: E402

from training.alphazero import train  # noqa: E402
from training.alphazero_ray import RaySelfPlay, backend, cluster, main, merge, shares, train_on_ray  # noqa: E402
from training.az_config import AZConfig  # noqa: E402
from trinity_env.core import ArgumentError  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent


@pytest.fixture(scope="module", autouse=True)
def local_cluster():
    ray.init(num_cpus=2, include_dashboard=False, logging_level="ERROR", log_to_driver=False)
    yield
    ray.shutdown()


def _metrics_without_seconds(run: Path) -> list[list[str]]:
    rows = [line.split(",") for line in (run / "metrics.csv").read_text().splitlines()]
    return [row[:1] + row[2:] for row in rows]


def test_one_actor_is_the_single_process_run_game_for_game_and_weight_for_weight(tmp_path):
    config = AZConfig.from_dict(TINY)
    train(config, tmp_path / "local", progress=False)
    train_on_ray(config, tmp_path / "ray", actors=1, progress=False)
    assert _same(_weights(tmp_path / "local"), _weights(tmp_path / "ray"))
    local = _metrics_without_seconds(tmp_path / "local")
    assert len(local) > 1 and local == _metrics_without_seconds(tmp_path / "ray")


def test_labelling_actors_give_the_labelling_processes_values(tmp_path):
    config = AZConfig.from_dict(TINY | {"label_workers": 1, "solver_empty": 6})
    train(config, tmp_path / "local", progress=False)
    train_on_ray(config, tmp_path / "ray", actors=1, progress=False)
    assert _same(_weights(tmp_path / "local"), _weights(tmp_path / "ray"))


def test_a_run_moves_between_ray_and_one_process_at_a_checkpoint(tmp_path):
    config = AZConfig.from_dict(TINY)
    train(config, tmp_path / "whole", progress=False)
    train_on_ray(config, tmp_path / "moved", actors=1, progress=False, stop_at=16)
    train(config, tmp_path / "moved", resume=True, progress=False)
    assert _same(_weights(tmp_path / "whole"), _weights(tmp_path / "moved"))


def test_an_actor_killed_mid_iteration_is_restarted_and_the_run_does_not_change(tmp_path):
    class Killing(RaySelfPlay):
        kills = 0

        def play(self, *arguments, **keywords):
            actors = self.actors

            def get(calls):  # the calls are submitted: kill the first actor while it plays
                Killing.kills += 1
                ray.kill(actors[0], no_restart=False)
                return ray.get(calls)

            self.ray = SimpleNamespace(get=get, put=ray.put, kill=ray.kill)
            try:
                return super().play(*arguments, **keywords)
            finally:
                self.ray = ray

    config = AZConfig.from_dict(TINY)
    train(config, tmp_path / "local", progress=False)
    killing = backend(1)
    killing.selfplay = lambda c: Killing(c, 1)
    with cluster("local"):
        train(config, tmp_path / "killed", progress=False, backend=killing)
    assert Killing.kills == 3  # every iteration
    assert _same(_weights(tmp_path / "local"), _weights(tmp_path / "killed"))


def test_two_actors_share_the_games_and_a_seed_gives_one_run(tmp_path):
    config = AZConfig.from_dict(TINY)
    for name in ("a", "b"):
        history = train_on_ray(config, tmp_path / name, actors=2, progress=False)
        assert history[-1]["games"] == config.total_games
    assert _same(_weights(tmp_path / "a"), _weights(tmp_path / "b"))
    train(config, tmp_path / "local", progress=False)
    assert not _same(_weights(tmp_path / "a"), _weights(tmp_path / "local"))  # other deals: another run


def test_merge_offsets_each_actor_s_games_and_positions():
    from training.az_selfplay import LocalSelfPlay
    from trinity_env.agents.az import make_network

    config = AZConfig.from_dict(TINY | {"games_per_iteration": 4, "solver_empty": 8, "label_workers": 1})
    network = make_network(config.network, config.hidden, config.layers, config.tactics).eval()
    import numpy as np

    parts = []
    for seed in (1, 2):
        local = LocalSelfPlay(config)
        parts.append(local.play(network, seed, np.random.default_rng(seed), None, collect=True))
    played = merge(parts)
    assert played.games == 8 and len(played.values) == sum(len(p.values) for p in parts)
    assert played.label_positions.size == played.to_label.size == sum(p.to_label.size for p in parts)
    assert set(played.label_games[parts[0].to_label.size :]) <= set(range(4, 8))
    first = len(parts[0].values)
    assert np.array_equal(played.observations[first + parts[1].to_label], parts[1].observations[parts[1].to_label])
    assert shares(10, 3) == [4, 3, 3] and shares(8, 1) == [8]


def test_more_actors_than_games_and_a_bad_address_are_one_line(tmp_path, capsys):
    with pytest.raises(ArgumentError, match="more than the 8 games an iteration"):
        RaySelfPlay(AZConfig.from_dict(TINY), 9)
    config = ROOT / "configs" / "train" / "az-quick.yaml"
    argv = ["--config", str(config), "--run", str(tmp_path / "run"), "--actors", "10000"]
    with pytest.raises(SystemExit) as exit_:
        main(argv)
    assert exit_.value.code == 2
    assert "more than the 256 games an iteration" in capsys.readouterr().err
    assert not (tmp_path / "run").exists()


def test_a_cluster_that_cannot_be_reached_is_one_line_and_exit_2(tmp_path):
    script = (
        "import sys; from training.alphazero_ray import main; "
        "main(['--config', 'az-quick', '--run', sys.argv[1], '--ray', '127.0.0.1:1'])"
    )
    done = subprocess.run(
        [sys.executable, "-c", script, str(tmp_path / "run")], capture_output=True, text=True, cwd=ROOT, timeout=300
    )
    assert done.returncode == 2, done.stderr
    lines = [line for line in done.stderr.splitlines() if line.strip()]
    assert len(lines) == 1 and "cannot reach a Ray cluster at '127.0.0.1:1'" in lines[0], done.stderr
    assert not (tmp_path / "run" / "latest.pt").exists()
    trinity = Path(sys.executable).parent / "trinity"
    done = subprocess.run(
        [str(trinity), "train", "az-quick", "--run", str(tmp_path / "cli"), "--ray", "127.0.0.1:1"],
        capture_output=True,
        text=True,
        cwd=ROOT,
        timeout=300,
    )
    assert done.returncode == 2 and "cannot reach a Ray cluster at '127.0.0.1:1'" in done.stderr, done.stderr


def _ray_daemons() -> set[int]:
    found = set()
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                name = (entry / "comm").read_text().strip()
            except OSError:
                continue
            if name in ("raylet", "gcs_server"):
                found.add(int(entry.name))
    return found


def test_ctrl_c_stops_the_cluster_job_and_leaves_a_resumable_run(tmp_path):
    config = tmp_path / "tiny.yaml"
    config.write_text(json.dumps(TINY | {"total_games": 4000, "eval_every_games": 4000}))  # YAML reads JSON
    run = tmp_path / "run"
    before = _ray_daemons()
    process = subprocess.Popen(
        [sys.executable, "-m", "training.alphazero_ray", "--config", str(config), "--run", str(run), "--actors", "2"],
        cwd=ROOT,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,
    )
    deadline = time.monotonic() + 300
    while not (run / "latest.pt").exists():
        assert process.poll() is None, process.communicate()
        assert time.monotonic() < deadline, "the run never checkpointed"
        time.sleep(1)
    time.sleep(5)  # into the iterations
    os.killpg(process.pid, signal.SIGINT)  # as a terminal's Ctrl-C: the whole foreground group
    _, err = process.communicate(timeout=120)
    assert process.returncode == 130, err
    for _ in range(30):  # the local cluster it started is shut down
        if _ray_daemons() <= before:
            break
        time.sleep(1)
    assert _ray_daemons() <= before
    games = int(torch.load(run / "latest.pt", weights_only=True)["games"])
    history = train(AZConfig.load(str(config), budget={"total_games": games + 8}), run, resume=True, progress=False)
    assert history[-1]["games"] == games + 8
