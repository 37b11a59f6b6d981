"""Write examples/: positions (opening, midgame, endgame) and a replay, files to try every command on.

Run from the repository root: python -m scripts.make_examples  (deterministic: one seeded game between
``mcts:200`` agents with dealt hands; the positions are its states at 15, 9 and 6 empty tiles).
"""

from __future__ import annotations

import json
from pathlib import Path

from trinity_env.agents import make
from trinity_env.core import Replay
from trinity_env.core.board import EMPTY
from trinity_env.evaluation.match import play_game
from trinity_env.spec.config import make_config

ROOT = Path(__file__).resolve().parent.parent
POSITIONS = {"opening": 15, "midgame": 9, "endgame": 6}
"""Each example position and its count of empty tiles."""
SEED = 2


def main(root: Path = ROOT) -> None:
    states = []
    config = make_config(draft="dealt")
    play_game((make("mcts:200,seed=1"), make("mcts:200,seed=2")), config, SEED, on_state=states.append)
    folder = root / "examples" / "positions"
    folder.mkdir(parents=True, exist_ok=True)
    for name, empty in POSITIONS.items():
        state = next(s for s in states if s.phase.name == "PLAY" and s.owners.count(EMPTY) == empty)
        path = folder / f"{name}.json"
        path.write_text(json.dumps(state.to_dict(), indent=1) + "\n", encoding="utf-8")
        print(f"wrote {path} ({empty} empty tiles)")
    replay = root / "examples" / "replays" / "mcts_vs_mcts.json"
    replay.parent.mkdir(parents=True, exist_ok=True)
    replay.write_text(Replay.from_states(states).to_json(indent=1) + "\n", encoding="utf-8")
    print(f"wrote {replay}")


if __name__ == "__main__":
    main()
