"""The example files the README's commands run on: what the script writes, loadable, of the sizes promised."""

from __future__ import annotations

from pathlib import Path

from scripts.make_examples import POSITIONS, main
from trinity_env.core import GameState, Replay
from trinity_env.core.board import EMPTY
from trinity_env.core.files import read_json
from trinity_env.search.solver import Solver

ROOT = Path(__file__).resolve().parent.parent


def test_the_examples_are_what_the_script_writes(tmp_path):
    main(tmp_path)
    for path in sorted((tmp_path / "examples").rglob("*.json")):
        shipped = ROOT / path.relative_to(tmp_path)
        assert shipped.read_bytes() == path.read_bytes(), f"{shipped} differs from what scripts/make_examples writes"


def test_the_example_positions_load_and_the_endgame_solves():
    for name, empty in POSITIONS.items():
        state = GameState.from_dict(read_json(ROOT / "examples" / "positions" / f"{name}.json"))
        assert state.owners.count(EMPTY) == empty and not state.is_over
    endgame = GameState.from_dict(read_json(ROOT / "examples" / "positions" / "endgame.json"))
    assert Solver(table_bits=16).solve(endgame, max_nodes=10_000_000).best_moves
    assert Replay.load(ROOT / "examples" / "replays" / "mcts_vs_mcts.json").final_state().is_over
