"""Ship a trained run as ``ppo-standard`` and measure it: the figures of docs/ppo-standard.md.

    python scripts/make_ppo_standard.py --run runs/standard

1. copies the run's ``best.pt`` (network and step count only) to
   ``trinity_env/agents/data/ppo-standard.pt``, and its ``metrics.csv`` and ``win_rate.png``
   to ``docs/ppo-standard/``;
2. plays the round robin against random, greedy, lookahead and mcts:400 on dealt hands
   (the arena's default), and a drafted round robin under the standard rules;
3. scores the endgame suite; everything lands in ``docs/ppo-standard/``.
"""

from __future__ import annotations

import argparse
import json
import shutil
from pathlib import Path

from trinity_env.agents import make
from trinity_env.agents.networks.ppo_network import load_checkpoint, save_checkpoint
from trinity_env.agents.registry import SHIPPED_DIR
from trinity_env.evaluation.arena import round_robin
from trinity_env.evaluation.endgames import DEFAULT_SUITE, load_suite, score_agent
from trinity_env.spec.config import make_config

ROOT = Path(__file__).resolve().parent.parent
OUT = ROOT / "docs" / "ppo-standard"
DEALT = ["ppo-standard", "random", "greedy", "lookahead", "mcts:400"]
DRAFTED = ["ppo-standard:sample=draft", "random", "greedy", "mcts:400,draft=search"]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--run", default="runs/standard")
    parser.add_argument("--games", type=int, default=200, help="games per pair, dealt hands")
    parser.add_argument("--drafted-games", type=int, default=100, help="games per pair, standard rules")
    args = parser.parse_args()
    run = Path(args.run)
    network, payload = load_checkpoint(run / "best.pt")
    SHIPPED_DIR.mkdir(exist_ok=True)
    save_checkpoint(SHIPPED_DIR / "ppo-standard.pt", network, {"steps": int(payload["steps"])})
    OUT.mkdir(parents=True, exist_ok=True)
    for name in ("metrics.csv", "win_rate.png", "config.json"):
        shutil.copy(run / name, OUT / name)

    dealt = round_robin(DEALT, args.games, seed=0)
    dealt.write(OUT)
    drafted = round_robin(DRAFTED, args.drafted_games, seed=0, config=make_config(None).to_dict())
    drafted.write(OUT / "drafted")
    suite = load_suite(DEFAULT_SUITE)
    summary = {
        "steps": int(payload["steps"]),
        "endgame_suite": score_agent(make("ppo-standard"), suite),
        "dealt": dealt.to_json(),
        "drafted": drafted.to_json(),
    }
    (OUT / "summary.json").write_text(json.dumps(summary, indent=1) + "\n", encoding="utf-8")
    print(dealt.table())
    print(drafted.table())
    print(f"endgame suite: {summary['endgame_suite']:.1%}; trained for {summary['steps']:,} learner steps")


if __name__ == "__main__":
    main()
