"""The AlphaZero trainer's exact labels in worker processes (``training.labelling``): the workers' values are the
solver's; a run with workers is reproducible and resumes exactly with labels pending; without workers the trainer
is bit for bit what it was; the workers survive no trainer (normal end, fault, Ctrl-C, SIGKILL); the fallback
target mixes the game's result with the search's root value."""

from __future__ import annotations

import hashlib
import json
import os
import random
import signal
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest
import torch

from trinity_env.agents.az import load_network
from trinity_env.core import GameState
from trinity_env.fast.convert import from_states
from trinity_env.search.solver import Solver
from trinity_env.spec.config import make_config

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(Path(__file__).resolve().parent))
from test_alphazero import TINY  # noqa: E402

LABELLED = TINY | {
    "solver_empty": 8,
    "label_workers": 1,
    "total_games": 16,
    "eval_every_games": 16,
    "eval_accuracy": False,
}
"""Two iterations of 8 games with labelling workers: iteration 0's labels reach the buffer before learner 1."""


def _positions(count: int, seed: int, low: int = 4, high: int = 10) -> list[GameState]:
    """Open-hand play positions with ``low`` to ``high`` empty tiles, reached by random legal moves."""
    config = make_config(draft="dealt", open_hands=True)
    rng = random.Random(seed)
    states = []
    while len(states) < count:
        state = config.new_game(rng)
        target = low + len(states) % (high - low + 1)
        while not state.is_over and (state.phase != "play" or state.owners.count(-1) > target):
            state = state.apply(rng.choice(state.legal_actions()))
        if not state.is_over:
            states.append(state)
    return states


def _weights(run: Path) -> dict:
    return load_network(run / "latest.pt")[0].state_dict()


def _same(a: dict, b: dict) -> bool:
    return a.keys() == b.keys() and all(torch.equal(a[k], b[k]) for k in a)


def _digest(run: Path) -> str:
    digest = hashlib.sha256()
    for name, tensor in _weights(run).items():
        digest.update(name.encode())
        digest.update(tensor.numpy().tobytes())
    return digest.hexdigest()


def _alive(pid: int) -> bool:
    """Whether ``pid`` runs (a zombie, dead but not yet reaped by whoever adopted it, does not)."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return False
    return stat.rsplit(")", 1)[1].split()[0] != "Z"


def _children(pid: int) -> set[int]:
    try:
        text = Path(f"/proc/{pid}/task/{pid}/children").read_text()
    except OSError:
        return set()
    return {int(child) for child in text.split()}


# ------------------------------------------------------------------------------ the labeller


def test_the_workers_values_are_the_solvers_on_random_positions():
    from training.labelling import Labeller, split

    states = _positions(20, seed=11)
    assert {state.owners.count(-1) for state in states} == set(range(4, 11))
    positions = from_states(states)
    groups = np.arange(len(states)) // 3  # three positions a "game"
    shares = split(positions, groups, 2)
    assert sorted(np.concatenate(shares).tolist()) == list(range(len(states)))
    owners = [{int(groups[i]) for i in share} for share in shares]
    assert owners[0] and owners[1] and not owners[0] & owners[1]  # a game's positions go to one worker
    with Labeller(2) as labeller:
        labeller.submit(positions, groups)
        assert labeller.busy
        values = labeller.collect()
        assert not labeller.busy and labeller.restarts == 0 and labeller.seconds > 0
        labeller.submit(from_states(states[:1]))  # the next batch
        assert labeller.collect().tolist() == values[:1].tolist()
    solver = Solver()
    assert values.dtype == np.int8
    assert values.tolist() == [solver.value(state) for state in states]


def test_a_worker_that_dies_is_started_again_and_its_work_redone():
    from training.labelling import Labeller

    states = _positions(8, seed=12, low=9, high=10)
    with Labeller(1) as labeller:
        labeller.submit(from_states(states))
        first = labeller.pids()[0]
        os.kill(first, signal.SIGKILL)
        values = labeller.collect()
        assert labeller.restarts == 1 and labeller.pids()[0] != first
    solver = Solver()
    assert values.tolist() == [solver.value(state) for state in states]


def test_a_fault_in_a_worker_is_one_clear_exception_and_ends_the_workers():
    from training.labelling import Labeller, LabellingError

    draft = make_config(draft="pick", open_hands=True).new_game(random.Random(1))
    assert draft.phase == "draft"
    labeller = Labeller(1)
    pids = labeller.pids()
    labeller.submit(from_states([draft]))
    with pytest.raises(LabellingError, match=r"(?s)worker 0 .* failed.*PositionError.*draft"):
        labeller.collect()
    assert not any(_alive(pid) for pid in pids)
    with pytest.raises(LabellingError, match="closed"):
        labeller.submit(from_states(_positions(1, seed=3)))


def test_the_workers_ignore_ctrl_c_and_end_with_the_labeller():
    from training.labelling import Labeller

    states = _positions(4, seed=13, high=6)
    with Labeller(1) as labeller:
        (pid,) = labeller.pids()
        assert os.getsid(pid) == pid != os.getsid(0)  # a session of its own: the terminal's Ctrl-C never reaches it
        labeller.submit(from_states(states[:1]))
        labeller.collect()  # started and serving
        for _ in range(3):  # one sent to it directly is ignored too
            os.kill(pid, signal.SIGINT)
            time.sleep(0.2)
        labeller.submit(from_states(states))
        assert labeller.collect().tolist() == [Solver().value(state) for state in states]
        assert labeller.restarts == 0 and labeller.pids() == [pid]
    assert not _alive(pid)


# ------------------------------------------------------------------------------ the replay buffer's pending labels


def test_rows_overwritten_before_their_label_arrives_keep_their_new_position(tmp_path):
    from training.replay_buffer import ReplayBuffer

    def add(replay: ReplayBuffer, values: list[float]) -> np.ndarray:
        n = len(values)
        return replay.add(
            np.zeros((n, replay.observations.shape[1]), np.int8),
            np.ones((n, 256), np.int8),
            np.ones((n, 256), np.float16),
            np.array(values, np.float32),
        )

    replay = ReplayBuffer(10)
    rows = add(replay, [0.5] * 6)
    assert rows.tolist() == [0, 1, 2, 3, 4, 5]
    positions = from_states(_positions(4, seed=14, high=6))
    replay.await_labels(positions, rows[2:6], np.arange(4))
    assert add(replay, [0.25] * 8).tolist() == [6, 7, 8, 9, 0, 1, 2, 3]  # rows 2 and 3 now hold new positions
    assert replay.awaiting.rows.tolist() == [-1, -1, 4, 5]
    saved = replay.state_dict()
    assert saved["awaiting"]["rows"].tolist() == [4, 5]  # only what can still be written is kept and redone
    restored = ReplayBuffer(10)
    restored.load_state_dict(saved, tmp_path / "latest.pt")
    assert restored.awaiting.rows.tolist() == [4, 5]
    assert np.array_equal(restored.awaiting.positions.owner, positions.owner[2:])
    assert replay.patch(np.array([1, 1, -1, 0], np.int8)) == 2
    assert replay.values.tolist() == [0.25] * 4 + [-1.0, 0.0] + [0.25] * 4
    assert replay.awaiting is None
    assert add(replay, [1.0] * 13).tolist() == [-1, -1, -1, 7, 8, 9, 0, 1, 2, 3, 4, 5, 6]  # more than a buffer


# ------------------------------------------------------------------------------ the trainer


_TRAIN_TINY_RUNS = """
import json, sys
from pathlib import Path
from training.alphazero import train
from training.az_config import AZConfig
for name, data in json.loads(sys.argv[2]).items():
    config = AZConfig.from_dict(data | {"label_workers": 0, "eval_accuracy": False})
    train(config, Path(sys.argv[1]) / name, progress=False)
"""


def _has_amx() -> bool:
    """Whether this x86 processor has AMX tiles (Sapphire Rapids and later), by its flags in /proc/cpuinfo."""
    try:
        return "amx_tile" in Path("/proc/cpuinfo").read_text(encoding="utf-8").split()
    except OSError:
        return False


def test_without_workers_the_trainer_is_bit_for_bit_what_it_was(tmp_path):
    """Weights saved by the trainer before labelling workers existed (torch 2.13.0+cpu), for two tiny configs.

    They were made with torch's AVX2 kernels; an AVX-512 machine rounds some sums differently, so the runs
    are trained in a child process held to AVX2 (``ATEN_CPU_CAPABILITY``), the same on every AVX2 and AVX-512
    machine seen. A processor with AMX (Sapphire Rapids and later) still rounds MKL's sums its own way (neither
    ``MKL_ENABLE_INSTRUCTIONS`` nor ``MKL_CBWR`` gives the AVX2 figures back), so it has its own reference
    weights: the same code (7142434, before this round's changes) trained them on such a machine."""
    if torch.__version__ != "2.13.0+cpu":
        pytest.skip(f"the reference weights were made with torch 2.13.0+cpu, not {torch.__version__}")
    if torch.backends.cpu.get_cpu_capability() not in ("AVX2", "AVX512"):
        pytest.skip("the reference weights were made with torch's AVX2 kernels, which this CPU lacks")
    amx = _has_amx()  # MKL's sgemm takes other kernels on these, whatever ATEN_CPU_CAPABILITY says
    before = {
        "tiny": (
            TINY,
            "51588d5a8051568940d9275ad0824d1a7b09119e48e8e7167b0d73b50b2ff58b"
            if amx
            else "f0e0958797596cf14237ae3e395cc73be018e76ec18cb7d97e75a9e4aa83ad82",
        ),
        "puct": (
            TINY | {"solver_empty": 8, "mode": "puct", "total_games": 16, "eval_every_games": 16, "replay_size": 40},
            "62b9b097140c79b7f9982954ae4f931ccab7cc2fc50fe60516d0105de071c21e"
            if amx
            else "d297f2653874ebccfa7d8a1c1cd90b27d120248a2fa08fa9e6b959ce142edb85",
        ),
    }
    root = Path(__file__).resolve().parent.parent
    env = os.environ | {"ATEN_CPU_CAPABILITY": "avx2", "PYTHONPATH": os.pathsep.join([str(root), str(root / "tests")])}
    configs = json.dumps({name: data for name, (data, _) in before.items()})
    subprocess.run([sys.executable, "-c", _TRAIN_TINY_RUNS, str(tmp_path), configs], check=True, env=env, cwd=root)
    for name, (_, digest) in before.items():
        assert _digest(tmp_path / name) == digest, name


@pytest.fixture(scope="module")
def unbroken(tmp_path_factory) -> Path:
    """A run of two iterations with a labelling worker."""
    from training.alphazero import train
    from training.az_config import AZConfig

    run = tmp_path_factory.mktemp("labelled") / "a"
    train(AZConfig.from_dict(LABELLED), run, progress=False)
    return run


@pytest.fixture(scope="module")
def stopped(tmp_path_factory) -> Path:
    """The same run stopped after its first iteration (its labels submitted, not yet written); ``stopped.pt`` keeps
    that checkpoint."""
    from training.alphazero import train
    from training.az_config import AZConfig

    run = tmp_path_factory.mktemp("labelled") / "c"
    train(AZConfig.from_dict(LABELLED), run, progress=False, stop_at=8)
    (run.parent / "stopped.pt").write_bytes((run / "latest.pt").read_bytes())
    return run


def test_with_workers_the_same_seed_gives_the_same_weights_with_any_number_of_workers(unbroken, tmp_path):
    from training.alphazero import train
    from training.az_config import AZConfig

    train(AZConfig.from_dict(LABELLED | {"label_workers": 2}), tmp_path / "b", progress=False)
    assert _same(_weights(unbroken), _weights(tmp_path / "b"))


def test_a_run_stopped_with_labels_pending_resumes_as_if_unbroken(unbroken, stopped):
    from training.alphazero import train
    from training.az_config import AZConfig

    run = stopped
    payload = torch.load(run / "latest.pt", weights_only=True)
    assert payload["games"] == 8 and len(payload["replay"]["awaiting"]["rows"]) > 0  # submitted, not yet written
    train(AZConfig.from_dict(LABELLED), run, resume=True, progress=False)
    assert _same(_weights(unbroken), _weights(run))

    def rows(folder: Path) -> list[list[str]]:  # all but the seconds column
        return [row.split(",")[:1] + row.split(",")[2:] for row in (folder / "metrics.csv").read_text().split()]

    assert rows(run) == rows(unbroken)


def test_a_run_resumes_with_another_positive_count_of_workers_as_if_unbroken_but_not_without_workers(
    unbroken, stopped, tmp_path
):
    """The labels are exact and one iteration late with any positive count, so the count may change on resume;
    labels inline (0 workers) have no lag, so a run cannot move to or from them."""
    from training.alphazero import train
    from training.az_config import AZConfig
    from training.run_folder import RunFolderError

    run = tmp_path / "moved"
    run.mkdir()
    for name in ("config.json", "metrics.csv"):
        (run / name).write_bytes((stopped / name).read_bytes())
    (run / "latest.pt").write_bytes((stopped.parent / "stopped.pt").read_bytes())
    with pytest.raises(RunFolderError, match="label_workers: 1 -> 0"):
        train(AZConfig.from_dict(LABELLED | {"label_workers": 0}), run, resume=True, progress=False)
    train(AZConfig.from_dict(LABELLED | {"label_workers": 2}), run, resume=True, progress=False)
    assert _same(_weights(unbroken), _weights(run))


def test_the_labels_written_are_the_ones_the_inline_solver_gives(unbroken, stopped, tmp_path):
    """Iteration 0 plays the same games with or without workers (the same untrained network): once its labels are
    written (before learner 1), its rows of the buffer are the inline run's, exact values included; before, they
    held the fallback (what learner 0 saw: the documented lag)."""
    from training.alphazero import train
    from training.az_config import AZConfig

    train(AZConfig.from_dict(LABELLED | {"label_workers": 0}), tmp_path / "inline", progress=False, stop_at=8)
    inline = torch.load(tmp_path / "inline" / "latest.pt", weights_only=True)
    n = inline["positions"]  # iteration 0's, rows 0 to n - 1
    before = torch.load(stopped.parent / "stopped.pt", weights_only=True)
    after = torch.load(unbroken / "latest.pt", weights_only=True)
    assert n == before["positions"] and "awaiting" not in inline["replay"]
    waiting = before["replay"]["awaiting"]["rows"]
    assert 0 < len(waiting) < n and int(waiting.max()) < n
    assert torch.equal(inline["replay"]["observations"], after["replay"]["observations"][:n])
    assert torch.equal(inline["replay"]["values"], after["replay"]["values"][:n])
    assert not torch.equal(inline["replay"]["values"], before["replay"]["values"])  # exact values replaced some


def test_the_fallback_target_mixes_the_result_and_the_root_value():
    from training.az_config import AZConfig
    from training.az_selfplay import make_search, play_games
    from trinity_env.agents.az import AZNetwork
    from trinity_env.fast.games import FastGames

    network = AZNetwork(16, 1, True)
    roots: list[np.ndarray] = []

    def values(weight: float, record: bool = False) -> np.ndarray:
        config = AZConfig.from_dict(TINY | {"solver_empty": 0, "root_value_weight": weight})
        search = make_search(config)
        if record:  # every searched root with a choice, in the trainer's order: the search's value for its mover
            run = search.run
            search.run = lambda *a, **k: (r := run(*a, **k), roots.append(r.value[(r.policy > 0).sum(1) > 1]))[0]
        games = FastGames(config.games_per_iteration, draft_share=config.draft_share, config=config.env)
        games.reset(seed=5)
        return play_games(network, config, search, games, np.random.default_rng(5), None).values

    z, q, mixed = values(0.0), values(1.0, record=True), values(0.25)
    assert set(np.unique(z)) <= {-1.0, 0.0, 1.0}
    assert np.array_equal(q, np.concatenate(roots)) and len(np.unique(q)) > 3
    assert np.allclose(mixed, 0.75 * z + 0.25 * q, atol=1e-6)


@pytest.mark.parametrize(
    ("field", "value", "message"),
    [
        ("label_workers", -1, "'label_workers' must be at least 0"),
        ("root_value_weight", 1.5, "'root_value_weight' must be between 0 and 1"),
        ("solver_empty", 13, "'solver_empty' must be between 0 and 12"),
    ],
)
def test_bad_labelling_fields_are_refused_naming_them(field, value, message):
    from training.az_config import AZConfig
    from training.config import TrainConfigError

    with pytest.raises(TrainConfigError, match=message):
        AZConfig.from_dict(TINY | {field: value})


# ------------------------------------------------------------------------------ no worker outlives the trainer


def _start_trainer(tmp_path: Path, **fields: object) -> tuple[subprocess.Popen, Path]:
    config = tmp_path / "tiny.yaml"
    config.write_text(json.dumps(LABELLED | {"total_games": 4000, "eval_every_games": 4000} | fields))  # JSON is YAML
    run = tmp_path / "run"
    command = [sys.executable, "-m", "training.alphazero", "--config", str(config), "--run", str(run)]
    process = subprocess.Popen(
        command, cwd=ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True, start_new_session=True
    )
    return process, run


def _wait_for_workers(process: subprocess.Popen, run: Path, checkpointed: bool) -> set[int]:
    """The trainer's children (its labelling workers) once it has started them, or (``checkpointed``) once it has
    checkpointed an iteration too (its labels then went to the workers)."""
    deadline = time.time() + 60
    while time.time() < deadline and process.poll() is None:
        if (not checkpointed or (run / "latest.pt").is_file()) and (children := _children(process.pid)):
            return children
        time.sleep(0.1)
    raise AssertionError(f"the trainer started no workers: {process.poll()}")


def _gone(pids: set[int], seconds: float) -> bool:
    deadline = time.time() + seconds
    while any(_alive(pid) for pid in pids) and time.time() < deadline:
        time.sleep(0.1)
    return not any(_alive(pid) for pid in pids)


CHILD = """
import random, sys, time
from trinity_env.fast.convert import from_states
from trinity_env.spec.config import make_config
from training.labelling import Labeller

config, rng, states = make_config(open_hands=True), random.Random(15), []
while len(states) < 4:  # some 20 seconds of solving each
    state = config.new_game(rng)
    while not state.is_over and (state.phase != "play" or state.owners.count(-1) > 12):
        state = state.apply(rng.choice(state.legal_actions()))
    states += [] if state.is_over else [state]
labeller = Labeller(1)
labeller.submit(from_states(states))
print(labeller.pids()[0], flush=True)
time.sleep(300)
"""


def test_a_worker_exits_on_its_own_when_its_parent_is_killed_mid_solve():
    process = subprocess.Popen([sys.executable, "-c", CHILD], cwd=ROOT, stdout=subprocess.PIPE, text=True)
    try:
        worker = int(process.stdout.readline())

        def solving() -> bool:
            return len(os.listdir(f"/proc/{worker}/task")) >= 3  # a solver thread runs

        deadline = time.time() + 120  # generous: at load 11 on 2 cores 30 s and 1 s found 2 threads, no solve
        while not solving() and time.time() < deadline:
            time.sleep(0.05)
        time.sleep(1.0)  # past the start-up's small solve: on the 12-empty batch
        while not solving() and time.time() < deadline:  # on busy cores the batch's thread may start later
            time.sleep(0.05)
        assert _alive(worker) and solving()
    finally:
        process.kill()  # SIGKILL: the labeller's close() never runs
        process.communicate()
    assert _gone({worker}, 5)


def test_no_worker_outlives_a_trainer_killed_outright(tmp_path):
    """Killed while its worker is deep in a solve: iteration 0's positions of up to 12 empty tiles take minutes."""
    process, run = _start_trainer(tmp_path, solver_empty=12)
    try:
        children = _wait_for_workers(process, run, checkpointed=True)
    finally:
        process.kill()  # SIGKILL: nothing of the trainer runs
        process.communicate()
    assert _gone(children, 10), [pid for pid in children if _alive(pid)]


def test_ctrl_c_stops_the_trainer_as_before_and_ends_its_workers(tmp_path):
    from training.session import EXIT_INTERRUPTED

    process, run = _start_trainer(tmp_path)
    try:
        children = _wait_for_workers(process, run, checkpointed=False)
        os.killpg(process.pid, signal.SIGINT)  # what a terminal does: the whole process group, workers included
        _, errors = process.communicate(timeout=60)
    finally:
        if process.poll() is None:
            process.kill()
            process.communicate()
    assert process.returncode == EXIT_INTERRUPTED, errors
    assert "interrupted: saved" in errors and "Traceback" not in errors, errors
    assert _gone(children, 5), [pid for pid in children if _alive(pid)]
