"""The dataset of solved positions: labels are the solver's values, observations are the env's, builds are
deterministic and resume after Ctrl-C, damaged shards are refused naming the file, bad arguments are one line."""

from __future__ import annotations

import io
import json
import os
import re
import signal
import subprocess
import sys
import time
import zipfile
from pathlib import Path

import numpy as np
import pytest
from perfect import value_after

from trinity_env.agents.spec import make
from trinity_env.cli import main as trinity
from trinity_env.cli.common import stop_on_signals
from trinity_env.core import ArgumentError
from trinity_env.evaluation import solved_build as sb
from trinity_env.evaluation import solved_format as sf
from trinity_env.evaluation import solved_positions as sp
from trinity_env.search.solver import Solver
from trinity_env.spec.observation import observation_dict

ROOT = Path(__file__).resolve().parent.parent
SAMPLE = ROOT / "docs" / "dataset"
DEFAULT_BUILD = SAMPLE / "default"
SMALL = {"agent": "mcts:16", "empty": (4, 8), "games_per_shard": 3, "seed": 5, "policy_empty": (5, 7)}


def files(directory: Path) -> dict[str, bytes]:
    return {p.name: p.read_bytes() for p in sorted(directory.iterdir())}


@pytest.fixture(scope="module")
def built(tmp_path_factory) -> Path:
    directory = tmp_path_factory.mktemp("dataset") / "two"
    sb.build(directory, 2, **SMALL)
    return directory


def test_values_are_the_solvers_and_observations_the_envs(built):
    data = sp.load(built)
    assert len(data) == sum(e["positions"] for e in data.manifest["shards"].values()) > 10
    observations, masks, values = data.training_arrays()
    assert observations.shape == (len(data), 339) and observations.dtype == np.int8
    assert masks.shape == (len(data), 256) and masks.dtype == np.int8
    assert values.dtype == np.float32 and set(np.unique(values)) <= {-1.0, 0.0, 1.0}
    solver = Solver()
    for row in range(len(data)):
        state = data.state(row)
        assert solver.value(state) == data.value[row] == values[row]
        assert len(state.empty_tiles()) == data.empty[row]
        view = observation_dict(state, state.to_move, True)
        np.testing.assert_array_equal(observations[row], view["observation"])
        np.testing.assert_array_equal(masks[row], view["action_mask"])
    assert sorted(set(data.empty.tolist())) == list(range(4, 9))


def test_best_moves_are_every_move_that_keeps_the_value_where_recorded(built):
    data = sp.load(built)
    best, has = data.best_masks(), data.has_best()
    assert best.shape == (len(data), 256) and best.dtype == np.int8
    np.testing.assert_array_equal(has, (data.empty >= 5) & (data.empty <= 7))
    solver = Solver()
    for row in np.flatnonzero(has):
        state = data.state(int(row))
        keeps = {a for a in state.legal_actions() if value_after(solver, state, a) >= data.value[row]}
        assert set(np.flatnonzero(best[row]).tolist()) == keeps
    assert not best[~has].any()


@pytest.mark.parametrize(
    "empty, policy, expected",
    [
        ((4, 10), "auto", (4, 9)),
        ((4, 6), "auto", (4, 6)),
        ((10, 12), "auto", None),
        ((4, 8), None, None),
        ((4, 8), (5, 6), (5, 6)),
    ],
)
def test_the_policy_range_defaults_to_the_cheap_counts(empty, policy, expected):
    assert sf.check_policy_empty(policy, empty) == expected


def test_a_policy_range_outside_the_empty_range_is_refused(tmp_path):
    with pytest.raises(ArgumentError, match="must lie within the empty tiles 4-8"):
        sb.build(tmp_path / "never", 1, **dict(SMALL, policy_empty=(8, 9)))
    assert not (tmp_path / "never").exists()


def test_rows_are_the_games_positions_in_play_order(built):
    data = sp.load(built)
    observations = data.observations()
    agent = make(SMALL["agent"])
    rows = 0
    for game in range(2 * SMALL["games_per_shard"]):
        states = sb.game_positions(agent, SMALL["seed"], game, SMALL["empty"])
        mine = np.flatnonzero(data.game == game)
        assert len(mine) == len(states)
        for row, state in zip(mine, states):
            assert data.state(int(row)).to_dict()["board"] == state.to_dict()["board"]
            np.testing.assert_array_equal(
                observations[row], observation_dict(state, state.to_move, True)["observation"]
            )
        assert list(data.empty[mine]) == sorted(data.empty[mine], reverse=True)
        rows += len(states)
    assert rows == len(data)


def test_a_rebuild_is_byte_identical(built, tmp_path):
    again = tmp_path / "again"
    sb.build(again, 2, **SMALL)
    assert files(again) == files(built)
    # disjoint ranges in any order (two builders) make the same folder
    split = tmp_path / "split"
    sb.build(split, (1, 1), **SMALL)
    sb.build(split, (0, 0), **SMALL)
    assert files(split) == files(built)


def test_an_interrupted_build_resumes_to_the_same_dataset(built, tmp_path, monkeypatch):
    real = sb.build_shard
    calls = []

    def interrupted(*args, **kwargs):
        calls.append(args[0])
        if len(calls) == 2:
            raise KeyboardInterrupt
        return real(*args, **kwargs)

    monkeypatch.setattr(sb, "build_shard", interrupted)
    directory = tmp_path / "resumed"
    with pytest.raises(KeyboardInterrupt):
        sb.build(directory, 2, **SMALL)
    assert sorted(sf.read_manifest(directory)["shards"]) == ["shard-00000.npz"]
    assert sorted(p.name for p in directory.iterdir()) == ["manifest.json", "shard-00000.npz"]
    monkeypatch.setattr(sb, "build_shard", real)
    report = sb.build(directory, 2, **SMALL)
    assert (report.skipped, report.built) == ([0], [1])
    assert files(directory) == files(built)
    # a positions budget counts the shards already there
    assert sb.build(directory, positions=1, **SMALL).built == []


@pytest.mark.parametrize("signum", [signal.SIGINT, signal.SIGTERM])
def test_a_stop_while_a_shard_is_written_keeps_that_shard(built, tmp_path, monkeypatch, signum):
    """A signal that lands while a finished shard is compressed (inside a zip member: stopped there, the zip raised
    its own error in place of the stop) waits for the shard's file and entry, then stops the build."""
    real = sb.shard_bytes

    def signalled(arrays):
        os.kill(os.getpid(), signum)  # its handler runs at once, here, before the shard's bytes exist
        return real(arrays)

    monkeypatch.setattr(sb, "shard_bytes", signalled)
    directory = tmp_path / "stopped"
    handlers = signal.getsignal(signal.SIGINT), signal.getsignal(signal.SIGTERM)
    with stop_on_signals() as stopped, pytest.raises(KeyboardInterrupt):
        sb.build(directory, 2, **SMALL)
    assert stopped == [signum]
    assert sorted(p.name for p in directory.iterdir()) == ["manifest.json", "shard-00000.npz"]
    assert files(directory)["shard-00000.npz"] == files(built)["shard-00000.npz"]
    assert (signal.getsignal(signal.SIGINT), signal.getsignal(signal.SIGTERM)) == handlers  # both put back


def test_a_damaged_shard_is_rebuilt_by_the_builder(built, tmp_path):
    directory = tmp_path / "repair"
    sb.build(directory, 2, **SMALL)
    shard = directory / "shard-00001.npz"
    shard.write_bytes(shard.read_bytes()[:-10])
    report = sb.build(directory, 2, **SMALL)
    assert (report.skipped, report.built) == ([0], [1])
    assert files(directory) == files(built)


def test_a_folder_built_otherwise_is_refused(built, tmp_path):
    directory = tmp_path / "other"
    sb.build(directory, 1, **SMALL)
    with pytest.raises(sf.DatasetError, match="built with agent mcts:16, seed 5, 4-8 empty"):
        sb.build(directory, 1, **dict(SMALL, seed=6))


# ---------------------------------------------------------------------- damaged files


def copy_of(built: Path, tmp_path: Path) -> Path:
    directory = tmp_path / "copy"
    directory.mkdir()
    for name, data in files(built).items():
        (directory / name).write_bytes(data)
    return directory


def replace_shard(directory: Path, name: str, data: bytes, arrays: dict[str, np.ndarray] | None = None) -> None:
    """Put ``data`` in place of shard ``name`` and make the manifest agree with it (size, sha256, and the
    arrays' hash when they are given): what a crafted dataset would do."""
    (directory / name).write_bytes(data)
    manifest = json.loads((directory / sf.MANIFEST).read_text())
    entry = manifest["shards"][name]
    entry["bytes"] = len(data)
    entry["sha256"] = sf._sha256(data)
    if arrays is not None:
        entry["arrays_sha256"] = sf.arrays_sha256(arrays)
    (directory / sf.MANIFEST).write_text(sf.manifest_text(manifest))


def arrays_of(directory: Path, name: str) -> dict[str, np.ndarray]:
    with np.load(directory / name, allow_pickle=False) as loaded:
        return {k: loaded[k] for k in sf.ARRAYS}


def npz(arrays: dict[str, object], allow_pickle: bool = False) -> bytes:
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED) as archive:
        for key, array in arrays.items():
            member = io.BytesIO()
            np.lib.format.write_array(member, np.asarray(array), allow_pickle=allow_pickle)
            archive.writestr(f"{key}.npy", member.getvalue())
    return out.getvalue()


def damaged(kind: str, directory: Path) -> None:
    name = "shard-00001.npz"
    path = directory / name
    arrays = arrays_of(directory, name)
    n = len(arrays["value"])
    if kind == "hash mismatch":
        data = bytearray(path.read_bytes())
        data[len(data) // 2] ^= 0xFF
        path.write_bytes(bytes(data))
    elif kind == "truncated, manifest updated":
        replace_shard(directory, name, path.read_bytes()[:-40])
    elif kind == "truncated to nothing":
        path.write_bytes(b"")
    elif kind == "missing":
        path.unlink()
    elif kind == "wrong dtype":
        replace_shard(directory, name, npz(dict(arrays, value=arrays["value"].astype(np.int16))))
    elif kind == "pickle inside":
        objects = np.empty(n, object)
        objects[:] = [int(v) for v in arrays["value"]]
        replace_shard(directory, name, npz(dict(arrays, value=objects), allow_pickle=True))
    elif kind == "wrong shape":
        replace_shard(directory, name, npz(dict(arrays, owner=arrays["owner"][:, :14])))
    elif kind == "a member missing":
        replace_shard(directory, name, npz({k: v for k, v in arrays.items() if k != "marks"}))
    elif kind == "a member more":
        replace_shard(directory, name, npz(dict(arrays, extra=np.zeros(3, np.int8))))
    elif kind == "a huge declared shape":
        member = io.BytesIO()
        np.lib.format.write_array_header_1_0(member, {"descr": "<i4", "fortran_order": False, "shape": (2**40,)})
        data = npz({k: v for k, v in arrays.items() if k != "game"})
        with zipfile.ZipFile(buffer := io.BytesIO(data), "a") as archive:
            archive.writestr("game.npy", member.getvalue() + arrays["game"].tobytes())
        replace_shard(directory, name, buffer.getvalue())
    elif kind == "more positions than the manifest says":
        bigger = {k: np.concatenate([v, v]) for k, v in arrays.items()}
        replace_shard(directory, name, npz(bigger))
    elif kind == "values out of range":
        value = arrays["value"].copy()
        value[0] = 3
        replace_shard(directory, name, npz(dict(arrays, value=value)), dict(arrays, value=value))
    elif kind == "status out of range":  # a kernel would index past the observation with it
        status = arrays["status"].copy()
        status[0, 0, 0] = 40
        replace_shard(directory, name, npz(dict(arrays, status=status)), dict(arrays, status=status))
    elif kind == "empty count wrong":
        count = arrays["empty"] + 1
        replace_shard(directory, name, npz(dict(arrays, empty=count)), dict(arrays, empty=count))
    elif kind == "another shard's games":
        game = arrays["game"] - 3
        replace_shard(directory, name, npz(dict(arrays, game=game)), dict(arrays, game=game))
    elif kind == "a corrupt deflate stream":
        data = bytearray(path.read_bytes())
        for i in range(60, 400, 7):
            data[i] ^= 0x55
        replace_shard(directory, name, bytes(data))
    elif kind == "best moves not legal":
        best = arrays["best"].copy()
        best[:, 0] |= 1  # action 0 is a pick: never legal in the play phase
        replace_shard(directory, name, npz(dict(arrays, best=best)), dict(arrays, best=best))
    elif kind == "best moves missing":
        best = np.zeros_like(arrays["best"])
        replace_shard(directory, name, npz(dict(arrays, best=best)), dict(arrays, best=best))
    elif kind == "not a zip":
        replace_shard(directory, name, b"PK\x03\x04" + b"\x00" * 100)
    else:
        raise AssertionError(kind)


DAMAGE = {
    "hash mismatch": "sha256 differs",
    "truncated, manifest updated": "not a zip",
    "truncated to nothing": "0 bytes",
    "missing": "cannot read it",
    "wrong dtype": "value.npy: dtype int16",
    "pickle inside": "value.npy: dtype object",
    "wrong shape": "owner.npy: shape",
    "a member missing": "members",
    "a member more": "members",
    "a huge declared shape": "game.npy: shape \\(1099511627776,\\)",
    "more positions than the manifest says": "shape",
    "values out of range": "value out of range",
    "status out of range": "status out of range",
    "empty count wrong": "empty out of range",
    "another shard's games": "game out of range",
    "a corrupt deflate stream": "not a readable shard",
    "not a zip": "not a zip",
    "best moves not legal": "best moves that are not legal",
    "best moves missing": "best moves missing",
}


@pytest.mark.parametrize("kind", DAMAGE)
def test_a_damaged_shard_is_refused_naming_the_file(built, tmp_path, kind):
    directory = copy_of(built, tmp_path)
    damaged(kind, directory)
    with pytest.raises(sf.DatasetError, match=DAMAGE[kind]) as caught:
        sp.load(directory)
    message = str(caught.value)
    assert "shard-00001.npz" in message and "\n" not in message, message
    assert trinity(["dataset", "info", str(directory)]) == 2


def test_a_damaged_manifest_is_refused(built, tmp_path):
    directory = copy_of(built, tmp_path)
    manifest = json.loads((directory / sf.MANIFEST).read_text())
    for change, problem in [
        (lambda m: m["shards"].update({"../shard-00000.npz": m["shards"]["shard-00000.npz"]}), "not a shard name"),
        (lambda m: m.update(version=1), "version 1; this loader reads version 2"),
        (lambda m: m.update(draft="pick"), "draft must be 'dealt'"),
        (lambda m: m.update(policy_empty=[3, 7]), "within the empty tiles"),
        (lambda m: m.update(agent_sha256="abc"), "agent_sha256"),
        (lambda m: m.update(empty=[0, 3]), "within 1-14"),
        (lambda m: m["shards"]["shard-00000.npz"].update(positions=10**9), "positions"),
        (lambda m: m["shards"]["shard-00000.npz"].update(games=[7, 10]), "not shard 0's"),
        (lambda m: m["arrays"]["game"].update(dtype="|O"), "layout"),
    ]:
        broken = json.loads(json.dumps(manifest))
        change(broken)
        (directory / sf.MANIFEST).write_text(json.dumps(broken))
        with pytest.raises(sf.DatasetError, match=problem) as caught:
            sp.load(directory)
        assert "manifest.json" in str(caught.value)
    with pytest.raises(sf.DatasetError, match=r"no manifest\.json"):
        sp.load(tmp_path)


def test_loading_is_bounded_before_any_shard_is_read(built):
    with pytest.raises(sf.DatasetError, match="more than max_positions=3"):
        sp.load(built, max_positions=3)
    parts = list(sp.iter_shards(built))
    assert [len(p) for p in parts] == [e["positions"] for _, e in sorted(sf.read_manifest(built)["shards"].items())]


def test_loading_named_shards_gives_those_shards_alone_and_refuses_an_unfinished_one(built):
    whole, parts = sp.load(built), list(sp.iter_shards(built))
    second = sp.load(built, shards=[1])
    np.testing.assert_array_equal(second.game, parts[1].game)
    np.testing.assert_array_equal(second.value, parts[1].value)
    both = sp.load(built, shards=[1, 0])  # in shard order, whatever the order asked
    np.testing.assert_array_equal(both.game, whole.game)
    np.testing.assert_array_equal(both.observations(), whole.observations())
    with pytest.raises(sf.DatasetError, match="shard 2 is not finished"):
        sp.load(built, shards=[0, 2])
    for bad, problem in (([], "at least one shard"), ([1.5], "a shard must be a whole number"), ([True], "whole")):
        with pytest.raises(ValueError, match=problem):
            sp.load(built, shards=bad)


def test_the_study_reads_shard_lists_and_refuses_bad_ones_in_one_line():
    import argparse

    from benchmarks.value_scaling import shard_list, shard_text

    assert shard_list("0-2,5") == [0, 1, 2, 5] and shard_text([5, 0, 1, 2]) == "0-2,5"
    for bad, problem in (("3-", "like 0-90"), ("a", "like 0-90"), ("5-2", "from a lower number to a higher one")):
        with pytest.raises(argparse.ArgumentTypeError, match=problem):
            shard_list(bad)


# ---------------------------------------------------------------------- arguments and the command line


@pytest.mark.parametrize(
    "call, problem",
    [
        (lambda d: sb.build(d, "3"), "shards must be a whole number"),
        (lambda d: sb.build(d, -1), "shards must be a whole number"),
        (lambda d: sb.build(d, 2.0), "shards must be a whole number"),
        (lambda d: sb.build(d, (3, 1)), "lower number to a higher"),
        (lambda d: sb.build(d), "give a budget"),
        (lambda d: sb.build(d, 1, positions=5), "give a budget"),
        (lambda d: sb.build(d, positions=0), "positions must be"),
        (lambda d: sb.build(d, 1, empty=(0, 3)), "within 1-14"),
        (lambda d: sb.build(d, 1, empty=(5, 15)), "within 1-14"),
        (lambda d: sb.build(d, 1, empty=(8, 4)), "within 1-14"),
        (lambda d: sb.build(d, 1, seed=-1), "seed must be"),
        (lambda d: sb.build(d, 1, seed=1.5), "seed must be"),
        (lambda d: sb.build(d, 1, games_per_shard=0), "games_per_shard must be"),
        (lambda d: sb.build(d, 1, agent="nope"), "nope"),
        (lambda d: sb.build(d, 1, policy_empty=(3, 4)), "must lie within"),
        (lambda d: sb.build(d, 1, policy_empty="all"), "within 1-14"),
    ],
)
def test_bad_arguments_raise_one_line(tmp_path, call, problem):
    with pytest.raises((ArgumentError, ValueError), match=problem) as caught:
        call(tmp_path / "never")
    assert "\n" not in str(caught.value)
    assert not (tmp_path / "never").exists()


@pytest.mark.parametrize(
    "argv",
    [
        ["build", "D", "--shards", "x"],
        ["build", "D", "--shards", "-1"],
        ["build", "D", "--shards", "0"],
        ["build", "D", "--shards", "3-1"],
        ["build", "D", "--shards", "1.5"],
        ["build", "D", "--positions", "0"],
        ["build", "D", "--empty", "0-3"],
        ["build", "D", "--shards", "1", "--empty", "5-15"],
        ["build", "D", "--shards", "1", "--empty", "8-4"],
        ["build", "D", "--shards", "1", "--seed", "1.5"],
        ["build", "D", "--shards", "1", "--seed", "-2"],
        ["build", "D", "--shards", "1", "--games-per-shard", "0"],
        ["build", "D"],
        ["build", "D", "--shards", "1", "--positions", "9"],
        ["build", "D", "--shards", "1", "--agent", "nope"],
        ["build", "D", "--shards", "1", "--bogus"],
        ["info"],
        ["info", "D"],
        [],
        ["build", "D", "--shards", "1", "--policy-empty", "3-9"],
        ["build", "D", "--shards", "1", "--policy-empty", "x"],
    ],
)
def test_the_command_line_says_bad_input_in_one_line(tmp_path, monkeypatch, capsys, argv):
    monkeypatch.chdir(tmp_path)
    assert trinity(["dataset", *argv]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and err.startswith("trinity dataset"), err
    assert not (tmp_path / "D").exists()


def test_the_command_line_builds_resumes_and_reports(built, tmp_path, capsys):
    directory = tmp_path / "cli"
    argv = [
        "build",
        str(directory),
        "--agent",
        "mcts:16",
        "--seed",
        "5",
        "--empty",
        "4-8",
        "--games-per-shard",
        "3",
        "--policy-empty",
        "5-7",
    ]
    assert trinity(["dataset", *argv, "--shards", "0-1", "--quiet"]) == 0
    assert "built 2 shard(s)" in capsys.readouterr().out
    assert trinity(["dataset", *argv, "--shards", "2", "--quiet"]) == 0
    assert "built 0 shard(s)" in capsys.readouterr().out
    assert files(directory) == files(built)
    assert trinity(["dataset", "info", str(directory), "--json", str(tmp_path / "info.json")]) == 0
    capsys.readouterr()
    info = json.loads((tmp_path / "info.json").read_text())
    assert info["positions"] == len(sp.load(built)) and info["shards"] == 2 and info["games"] == 6
    assert trinity(["dataset", "info", str(directory)]) == 0
    assert "all checked" in capsys.readouterr().out


# ---------------------------------------------------------------------- the committed sample and its page


def test_the_committed_sample_loads_and_its_labels_are_exact():
    data = sp.load(SAMPLE)
    manifest = data.manifest
    assert (manifest["agent"], manifest["seed"], manifest["empty"]) == (sf.DEFAULT_AGENT, 0, list(sf.DEFAULT_EMPTY))
    assert manifest["games_per_shard"] == sf.DEFAULT_GAMES_PER_SHARD
    assert sum(p.stat().st_size for p in SAMPLE.iterdir()) < 400_000
    observations = data.observations()
    rng = np.random.default_rng(0)
    solver = Solver()
    cheap = np.flatnonzero(data.empty <= 7)
    for row in rng.choice(cheap, 40, replace=False):
        state = data.state(int(row))
        assert solver.value(state) == data.value[row]
        np.testing.assert_array_equal(observations[row], observation_dict(state, state.to_move, True)["observation"])


def test_the_dataset_page_snippets_run_and_its_figures_are_the_samples():
    page = (ROOT / "docs" / "dataset.md").read_text(encoding="utf-8")
    blocks = re.findall(r"```py\n(.*?)```", page, flags=re.S)
    assert blocks
    namespace: dict = {}
    for block in blocks:
        exec(compile(block, "docs/dataset.md", "exec"), namespace)
    info = sp.summary(SAMPLE)
    assert f"{info['positions']:,} positions" in page
    assert f"{info['bytes_per_position']:.1f} bytes a position" in page
    # the cost table is what benchmarks.dataset measured and wrote, not typed in
    assert (ROOT / "docs" / "dataset" / "cost.md").read_text(encoding="utf-8").strip() in page


@pytest.mark.parametrize("signum, status", [(signal.SIGINT, 130), (signal.SIGTERM, 143)])
def test_a_background_build_stops_on_ctrl_c_and_sigterm_keeping_its_shards(tmp_path, signum, status):
    """A shell's background job starts with SIGINT ignored: the builder still stops on it (and on SIGTERM),
    says so in one line, and keeps every finished shard; the same command resumes."""
    directory = tmp_path / "stopped"
    argv = [
        sys.executable,
        "-m",
        "trinity_env.cli",
        "dataset",
        "build",
        str(directory),
        "--shards",
        "0-999",
        "--agent",
        "mcts:16",
        "--empty",
        "4-8",
        "--games-per-shard",
        "1",
        "--quiet",
    ]
    process = subprocess.Popen(
        argv,
        cwd=ROOT,
        stderr=subprocess.PIPE,
        text=True,
        preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_IGN),
    )
    try:
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline and process.poll() is None:
            if (directory / sf.MANIFEST).exists() and len(sf.read_manifest(directory)["shards"]) >= 2:
                break
            time.sleep(0.2)
        process.send_signal(signum)
        _, err = process.communicate(timeout=30)
    finally:
        process.kill()
    assert process.returncode == status, err
    assert err.strip().count("\n") == 0 and "interrupted; finished shards are kept" in err
    kept = sf.read_manifest(directory)["shards"]
    assert len(kept) >= 2 and len(sp.load(directory)) > 0
