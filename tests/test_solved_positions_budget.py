"""The solved-positions dataset under a node budget (``max_nodes``, ``trinity dataset build --max-nodes N``): a
position is kept only where its exact solve finishes within the budget, the others are left out and counted per
empty count in the manifest, kept labels are a full solve's, the budget is part of the dataset's identity, bad
budgets are one line, and a build without a budget writes what it always did."""

from __future__ import annotations

import hashlib
import json
import shutil
from pathlib import Path

import numpy as np
import pytest

from trinity_env.agents.spec import make
from trinity_env.cli import main as trinity
from trinity_env.core import ArgumentError
from trinity_env.evaluation import solved_build as sb
from trinity_env.evaluation import solved_format as sf
from trinity_env.evaluation import solved_positions as sp
from trinity_env.search.solver import Solver

SMALL = {"agent": "mcts:16", "empty": (5, 9), "games_per_shard": 4, "seed": 5, "policy_empty": (5, 6)}
BUDGET = 3000
"""Solver nodes: at 5-7 empty tiles every position of these games fits, at 8-9 most do not."""


def files(directory: Path) -> dict[str, bytes]:
    return {p.name: p.read_bytes() for p in sorted(directory.iterdir())}


def by_position(data: sp.SolvedPositions) -> dict[tuple[int, int], int]:
    """(game, empty tiles) -> row: a game has one position at each empty count."""
    return {(int(g), int(e)): row for row, (g, e) in enumerate(zip(data.game, data.empty))}


@pytest.fixture(scope="module")
def full(tmp_path_factory) -> Path:
    directory = tmp_path_factory.mktemp("budget") / "full"
    sb.build(directory, 2, **SMALL)
    return directory


@pytest.fixture(scope="module")
def budgeted(tmp_path_factory) -> Path:
    directory = tmp_path_factory.mktemp("budget") / "budgeted"
    report = sb.build(directory, 2, **SMALL, max_nodes=BUDGET)
    manifest = sf.read_manifest(directory)
    over = {count: sum(e["over_budget"][str(count)] for e in manifest["shards"].values()) for count in range(5, 10)}
    assert report.over_budget == over
    return directory


def test_positions_past_the_budget_are_left_out_and_counted(full, budgeted):
    manifest = sf.read_manifest(budgeted)
    assert manifest["max_nodes"] == BUDGET
    whole, kept = sp.load(full), sp.load(budgeted)
    left_out = 0
    for name, entry in sorted(manifest["shards"].items()):
        low, high = entry["games"]
        assert list(entry["over_budget"]) == ["5", "6", "7", "8", "9"]
        for count in range(5, 10):
            everything = ((whole.game >= low) & (whole.game < high) & (whole.empty == count)).sum()
            labelled = ((kept.game >= low) & (kept.game < high) & (kept.empty == count)).sum()
            assert labelled + entry["over_budget"][str(count)] == everything, (name, count)
        left_out += sum(entry["over_budget"].values())
    assert left_out > 0 and len(kept) > 0 and len(kept) + left_out == len(whole)
    info = sp.summary(budgeted)
    assert info["max_nodes"] == BUDGET and sum(info["over_budget"].values()) == left_out
    assert info["over_budget"]["8"] > 0 and info["over_budget"]["5"] == 0
    # a game's first position is solved with an empty table: kept exactly where a fresh solver settles it in budget
    rows = by_position(kept)
    agent = make(SMALL["agent"])
    settled = []
    for game in range(8):
        first = sb.game_positions(agent, SMALL["seed"], game, SMALL["empty"])[0]
        fits = sb.label(Solver(), first, SMALL["policy_empty"], BUDGET) is not None
        assert fits == ((game, len(first.empty_tiles())) in rows), game
        settled.append(fits)
    assert not all(settled)


def test_kept_labels_are_a_full_solves(full, budgeted):
    whole, kept = sp.load(full), sp.load(budgeted)
    rows = by_position(whole)
    for row in range(len(kept)):
        same = rows[int(kept.game[row]), int(kept.empty[row])]
        for name in sf.ARRAYS:
            value = getattr(kept.batch, name) if name in sf.BATCH_ARRAYS else getattr(kept, name)
            other = getattr(whole.batch, name) if name in sf.BATCH_ARRAYS else getattr(whole, name)
            np.testing.assert_array_equal(value[row], other[same], err_msg=name)
    solver = Solver()
    for row in range(len(kept)):
        assert solver.value(kept.state(row)) == kept.value[row]
    np.testing.assert_array_equal(kept.has_best(), kept.empty <= 6)


def test_a_budgeted_build_is_the_same_whatever_was_built_before(budgeted, tmp_path):
    """Each game gets a fresh solver: shard 1 built alone, then shard 0, gives the files of one build of both."""
    split = tmp_path / "split"
    sb.build(split, (1, 1), **SMALL, max_nodes=BUDGET)
    sb.build(split, (0, 0), **SMALL, max_nodes=BUDGET)
    assert files(split) == files(budgeted)


def test_a_resumed_build_with_another_budget_is_refused(full, budgeted, tmp_path):
    directory = tmp_path / "resume"
    shutil.copytree(budgeted, directory)
    assert sb.build(directory, 2, **SMALL, max_nodes=BUDGET).skipped == [0, 1]
    for other, problem in [
        (2 * BUDGET, f"labels only within {BUDGET} nodes, not .*labels only within {2 * BUDGET} nodes"),
        (None, f"labels only within {BUDGET} nodes, not .*every position labelled"),
    ]:
        with pytest.raises(sf.DatasetError, match=problem) as caught:
            sb.build(directory, 3, **SMALL, max_nodes=other)
        assert "\n" not in str(caught.value)
    assert files(directory) == files(budgeted)
    unbudgeted = tmp_path / "unbudgeted"
    shutil.copytree(full, unbudgeted)
    with pytest.raises(sf.DatasetError, match=r"every position labelled, not .*labels only within 3000 nodes"):
        sb.build(unbudgeted, 3, **SMALL, max_nodes=BUDGET)
    assert files(unbudgeted) == files(full)


@pytest.mark.parametrize("budget", [0, -1, 1.5, True, "100", 10**11 + 1, 2**70])
def test_a_bad_budget_is_refused_in_one_line(tmp_path, budget):
    with pytest.raises(ArgumentError, match=r"max_nodes must be a whole number from 1 to 100000000000") as caught:
        sb.build(tmp_path / "never", 1, **SMALL, max_nodes=budget)
    assert "\n" not in str(caught.value)
    assert not (tmp_path / "never").exists()


@pytest.mark.parametrize("budget", ["0", "-5", "1.5", "1e7", "100000000001", "99999999999999999999", "many", ""])
def test_the_command_line_refuses_a_bad_budget_in_one_line(tmp_path, monkeypatch, capsys, budget):
    monkeypatch.chdir(tmp_path)
    assert trinity(["dataset", "build", "D", "--shards", "1", "--empty", "11-12", "--max-nodes", budget]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and err.startswith("trinity dataset") and "--max-nodes" in err, err
    assert "expected a whole number 1-100000000000" in err, err
    assert not (tmp_path / "D").exists()


def test_the_command_line_builds_with_a_budget_and_says_what_it_left_out(budgeted, tmp_path, capsys):
    directory = tmp_path / "cli"
    argv = ["dataset", "build", str(directory), "--agent", "mcts:16", "--seed", "5", "--empty", "5-9"]
    argv += ["--games-per-shard", "4", "--policy-empty", "5-6", "--max-nodes", str(BUDGET), "--shards", "2", "--quiet"]
    assert trinity(argv) == 0
    over = sp.summary(budgeted)["over_budget"]
    expected = ", ".join(f"{over[str(c)]} at {c} empty" for c in range(5, 10))
    assert f"over the budget of {BUDGET} nodes, left out of the shards built: {expected}" in capsys.readouterr().out
    assert files(directory) == files(budgeted)
    assert trinity(["dataset", "info", str(directory), "--json", str(tmp_path / "info.json")]) == 0
    out = capsys.readouterr().out
    assert f"within {BUDGET} nodes" in out and "over budget" in out
    info = json.loads((tmp_path / "info.json").read_text())
    assert info["max_nodes"] == BUDGET and info["over_budget"] == over


def test_a_damaged_budget_in_the_manifest_is_refused(budgeted, full, tmp_path):
    directory = tmp_path / "copy"
    shutil.copytree(budgeted, directory)
    manifest = json.loads((directory / sf.MANIFEST).read_text())
    first = "shard-00000.npz"
    for change, problem in [
        (lambda m: m.update(max_nodes=0), "max_nodes must be"),
        (lambda m: m.update(max_nodes="3000"), "max_nodes must be"),
        (lambda m: m.pop("max_nodes"), "expected games, positions, bytes, sha256 and arrays_sha256"),
        (lambda m: m["shards"][first].pop("over_budget"), "and over_budget"),
        (lambda m: m["shards"][first]["over_budget"].pop("9"), "over_budget must count the positions at each of 5-9"),
        (lambda m: m["shards"][first]["over_budget"].update({"9": -1}), "over_budget must be"),
        (lambda m: m["shards"][first]["over_budget"].update({"9": 1.5}), "over_budget must be"),
        (lambda m: m["shards"][first]["over_budget"].update({"9": 20}), "positions and over_budget must be"),
    ]:
        broken = json.loads(json.dumps(manifest))
        change(broken)
        (directory / sf.MANIFEST).write_text(json.dumps(broken))
        with pytest.raises(sf.DatasetError, match=problem) as caught:
            sp.load(directory)
        assert "manifest.json" in str(caught.value) and "\n" not in str(caught.value)
    # a manifest without a budget takes no over_budget
    plain = json.loads((full / sf.MANIFEST).read_text())
    plain["shards"][first]["over_budget"] = {str(c): 0 for c in range(5, 10)}
    (directory / sf.MANIFEST).write_text(json.dumps(plain))
    with pytest.raises(sf.DatasetError, match="expected games, positions, bytes, sha256 and arrays_sha256"):
        sf.read_manifest(directory)


def test_a_build_without_a_budget_writes_what_it_always_did(tmp_path):
    """The files of a small build without a budget, byte for byte those the builder wrote before budgets existed
    (its manifest's sha256 as built then; the manifest holds every shard's sha256)."""
    directory = tmp_path / "plain"
    report = sb.build(directory, 2, agent="mcts:16", empty=(4, 8), games_per_shard=3, seed=5, policy_empty=(5, 7))
    assert report.over_budget is None
    text = (directory / sf.MANIFEST).read_bytes()
    assert b"max_nodes" not in text and b"over_budget" not in text
    assert hashlib.sha256(text).hexdigest() == "416c702c09ed1d1427bbd8c6f45ecd9d647a9bfd2a640be00bd5dee5d32abc40"


def test_the_dataset_page_quotes_the_deep_budget_table_the_benchmark_wrote():
    """docs/dataset.md's table of budgets is benchmarks.dataset_deep's, as it wrote it in deep_budget.json (its
    rows, and the table made from them: never typed in), and the page's command builds what it says."""
    from benchmarks.dataset_deep import table

    root = Path(__file__).resolve().parent.parent
    document = json.loads((root / "docs" / "dataset" / "deep_budget.json").read_text(encoding="utf-8"))
    assert table(document["rows"]) == document["table"]
    page = (root / "docs" / "dataset.md").read_text(encoding="utf-8")
    assert document["table"] in page
    assert f"python -m benchmarks.dataset_deep --games {document['games']} --write" in page
    assert {row["empty"] for row in document["rows"]} == {11, 12, "11-12"}
    assert f"--empty 11-12 --max-nodes {max(document['budgets'])}" in page


def test_the_deep_budget_benchmark_labels_as_a_budgeted_build_does(tmp_path):
    """benchmarks.dataset_deep on two games: its counts are those of a build of the same games and budget."""
    from benchmarks.dataset_deep import measure, table

    rows = measure(2, (200_000,))
    assert [row["empty"] for row in rows] == [12, 11, "11-12"]
    built = tmp_path / "deep"
    sb.build(built, 1, empty=(11, 12), games_per_shard=2, max_nodes=200_000)
    entry = sf.read_manifest(built)["shards"]["shard-00000.npz"]
    for row in rows[:2]:
        assert row["positions"] - row["settled"] == entry["over_budget"][str(row["empty"])]
    assert rows[2]["settled"] == entry["positions"] and table(rows).count("\n") == 4
