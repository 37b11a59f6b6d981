"""The leaderboard's cards: every listed agent's score card under one protocol, written to docs/benchmark/.

    python -m scripts.make_leaderboard                       # the quick protocol, every agent below
    python -m scripts.make_leaderboard --agents greedy mcts:400 --protocol full
    python -m scripts.make_leaderboard --outside cleanrl-ppo    # train, export and score an outside library's policy
    python -m scripts.make_leaderboard --outside cleanrl-ppo --score-only    # score its model file again
    python -m scripts.make_leaderboard --replot      # draw every card's plot again from its JSON (no games)

Each agent's card goes to ``docs/benchmark/<protocol>/<agent>/`` (``scorecard.json``, ``.md``, ``.png``); an agent
whose card is there already, of the current protocol version (``scorecard.BENCHMARK_VERSION``), is skipped (a
stopped run goes on where it stopped), and a card of an older version is measured again. ``docs/benchmark.md``
shows the cards' headline figures, read from those files by its test (tests/test_docs.py); the tables refuse a card
of an older version, naming it.

Everything is checked before any folder is made or any game played, through the command line's doors: each agent
spec parsed (``AgentSpec.parse``), each card folder checked as ``trinity benchmark --out`` checks it, and every card
the tables will read read as the CLI reads a file (``core.files.read_json``: a named pipe or a device is refused
unread, never waited on), and whole where it is of this version (an older one is for a later run to measure: the
tables refuse it by name). Each problem is one line on stderr, and the status is 2.

``OUTSIDE`` lists the policies trained by outside libraries: each with the command that trained and exported it
(run from the repository root, in the venv its library needs) and the ``trinity benchmark`` command that wrote its
card to ``docs/benchmark/quick/outside/<name>/``; ``--outside NAME`` runs both (``python`` is the interpreter that
runs this script). The model files are in ``docs/benchmark/models/``.

``--upgrade`` turns every benchmark 2 card under ``docs/benchmark/`` into a benchmark 3 card without playing: version
3 plays version 2's games and changes only the ratings' interval (``ratings.ROBUST``), which is refitted from the
points and games against each pool member the card records. The card says so in its notes; it records no file or
code hashes (version 2 did not), so ``trinity benchmark --verify`` asks for it to be measured again.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shlex
import shutil
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

from trinity_env.agents.spec import AgentSpec, format_spec
from trinity_env.arguments import process_count
from trinity_env.cli.benchmark import OUTPUT_FILES
from trinity_env.cli.common import exit_status, say, stop_on_signals
from trinity_env.core import TrinityError
from trinity_env.core.files import one_line, read_json
from trinity_env.core.paths import output_folder, path_kind
from trinity_env.scorecard import BENCHMARK_VERSION, PROTOCOLS, ScoreCard, benchmark

ROOT = Path(__file__).resolve().parent.parent
AGENTS = ("random", "greedy", "lookahead", "mcts:400", "ppo-standard", "az-standard:sims=0", "az-standard")
"""The shipped and built-in agents on the leaderboard, cheapest first."""


@dataclass(frozen=True)
class Outside:
    """A policy trained by an outside library: its card's folder name, the library, the venv it trains in, the
    commands that trained and exported it (``python ...``, or ``cp FROM TO``), the spec it is scored by."""

    name: str
    library: str
    venv: str
    train: tuple[str, ...]
    policy: str

    @property
    def folder(self) -> Path:
        return ROOT / "docs" / "benchmark" / "quick" / "outside" / self.name

    @property
    def score(self) -> str:
        """The command that wrote its card."""
        policy = shlex.quote(self.policy)  # a spec with a quoted path stays one word
        out = f"docs/benchmark/quick/outside/{self.name}"
        return f"trinity benchmark --agent {policy} --protocol quick --out {out} --quiet"


MODELS = "docs/benchmark/models"
OUTSIDE = (
    Outside(
        "sb3-maskable-ppo",
        "SB3 MaskablePPO (sb3-contrib)",
        "`.venv` (the `train` extra)",
        (f"python examples/maskable_ppo.py --steps 60000 --seed 0 --save {MODELS}/sb3-maskable-ppo.zip",),
        f"{MODELS}/sb3-maskable-ppo.zip",
    ),
    Outside(
        "cleanrl-ppo",
        "CleanRL-style PPO (torch, exported to ONNX)",
        "`.venv` (the `train` and `onnx` extras)",
        (
            "python examples/cleanrl_ppo.py --total-timesteps 300000 --threads 1 --seed 1 "
            f"--export {MODELS}/cleanrl-ppo.onnx",
        ),
        format_spec("onnx", [f"{MODELS}/cleanrl-ppo.onnx"]),
    ),
    Outside(
        "tianshou-dqn",
        "Tianshou DQN (exported to ONNX)",
        "`.venv` with the `integrations` extra",
        (
            "python examples/tianshou_dqn.py --epochs 3 --epoch-steps 5000 --draft dealt --eval-games 50 --seed 0 "
            f"--export {MODELS}/tianshou-dqn.onnx",
        ),
        format_spec("onnx", [f"{MODELS}/tianshou-dqn.onnx"]),
    ),
    Outside(
        "rllib-ppo",
        "Ray RLlib PPO (the project's network, its checkpoint)",
        "`.venv` (the `rllib` extra)",
        (
            "python -m training.rllib_selfplay --config docs/benchmark/outside/rllib-ppo.yaml "
            "--run runs/leaderboard-rllib-ppo --overwrite",
            f"cp runs/leaderboard-rllib-ppo/best.pt {MODELS}/rllib-ppo.pt",
        ),
        f"{MODELS}/rllib-ppo.pt",
    ),
    Outside(
        "benchmarl-mappo",
        "BenchMARL MAPPO (player_0's actor, exported to ONNX)",
        "`.venv-benchmarl` (the `benchmarl` extra, with onnx and onnxruntime)",
        (
            "python examples/benchmarl_mappo.py --iterations 3 --frames 512 --games 1 --seed 0 "
            f"--export {MODELS}/benchmarl-mappo.onnx",
        ),
        format_spec("onnx", [f"{MODELS}/benchmarl-mappo.onnx"]),
    ),
)
"""The outside libraries' policies on the leaderboard, each trained at a budget of minutes on one loaded core."""


def folder_of(protocol: str, agent: str) -> Path:
    return ROOT / "docs" / "benchmark" / protocol / re.sub(r"[^A-Za-z0-9.=-]+", "_", agent)


def _cell(share: dict | None) -> str:
    if not share or share.get("share") is None:
        return "-"
    return f"{share['share']:.1%} [{share['low']:.1%}, {share['high']:.1%}]"


def _elo(rating: dict) -> str:
    return f"{rating['elo']:+.0f} [{rating['low']:+.0f}, {rating['high']:+.0f}]"


def _row(card: dict) -> str:
    signs = card["value_sign"] or {}
    return (
        f"{_elo(card['rating'])} | {_elo(card['rating_draft'])} | {_cell(card['accuracy'].get('10'))} | "
        f"{_cell(signs.get('10'))} | {_cell(card['puzzles'])} | {_cell(card['endgames'])} |"
    )


FIGURES = (
    "rating, dealt hands (random = 0) | rating, with the draft (random = 0) | moves keep the value at 10 empty | "
    "value sign at 10 | puzzles | endgames |"
)
RULE = "|---" * (FIGURES.count("|") + 1) + "|"
"""The markdown rule under a header of ``FIGURES`` and the agent's column."""


def _card_json(path: Path) -> dict:
    """The JSON object of the card at ``path``, read as the CLI reads a file (``read_json``: a regular file only, a
    pipe or device refused unread, bounded); one ``TrinityError`` line for anything else."""
    card = read_json(path, "score card", TrinityError)
    if not isinstance(card, dict):
        raise TrinityError(f"score card {path} is not a JSON object")
    return card


def read_card(path: Path) -> dict:
    """A whole card of the current protocol version; an older card is refused, naming it and what measures it again,
    and a cut or damaged one in one line naming it."""
    card = _card_json(path)
    version = card.get("benchmark")
    if version != BENCHMARK_VERSION:
        raise ValueError(
            f"{path} is a benchmark {version} card, not {BENCHMARK_VERSION}: measure it again "
            "(python -m scripts.make_leaderboard [--protocol P --agents A], or --outside NAME --score-only)"
        )
    try:
        if not isinstance(card["agent"], str):
            raise TypeError("its agent is not a string")
        _row(card)  # every figure the tables show
    except (KeyError, TypeError, ValueError, AttributeError) as err:
        raise TrinityError(f"score card {path} is not whole ({type(err).__name__}: {one_line(err)})") from None
    return card


def leaderboard(protocol: str = "quick") -> str:
    """The leaderboard's table, from the cards in ``docs/benchmark/<protocol>/``: best rating first."""
    paths = sorted((ROOT / "docs" / "benchmark" / protocol).glob("*/scorecard.json"))
    cards = [read_card(path) for path in paths]
    cards.sort(key=lambda card: -card["rating"]["elo"])
    lines = ["| agent | " + FIGURES, RULE]
    lines += [f"| `{card['agent']}` | " + _row(card) for card in cards]
    return "\n".join(lines)


def outside_table() -> str:
    """The outside libraries' policies (``OUTSIDE``, in its order): each card's figures, then the commands that
    trained and scored it."""
    lines = ["| library | policy | " + FIGURES, "|---" + RULE]
    commands = []
    for entry in OUTSIDE:
        card = read_card(entry.folder / "scorecard.json")
        link = f"[`{card['agent']}`](benchmark/quick/outside/{entry.name}/scorecard.md)"
        lines.append(f"| {entry.library} | {link} | " + _row(card))
        commands += [f"**{entry.library}**, trained in {entry.venv}, scored in `.venv`:", "", "```bash"]
        commands += [*entry.train, entry.score, "```", ""]
    return "\n".join(lines) + "\n\n" + "\n".join(commands).rstrip() + "\n"


def run_outside(entry: Outside, train: bool = True) -> None:
    """Train, export and score one outside policy: its training commands (``python`` is this script's interpreter;
    left out where ``train`` is false, the model file kept), then its ``trinity benchmark`` command in this
    process."""
    from trinity_env.cli import main as trinity

    for command in entry.train if train else ():
        print("$", command, flush=True)
        words = shlex.split(command)
        if words[0] == "cp":
            shutil.copyfile(ROOT / words[1], ROOT / words[2])
        else:
            subprocess.run([sys.executable, *words[1:]], cwd=ROOT, check=True)
    print("$", entry.score, flush=True)
    if trinity(shlex.split(entry.score)[1:]):
        raise SystemExit(f"{entry.score} failed")


def problems(args: argparse.Namespace) -> list[str]:
    """Everything wrong with the run ``args`` asks for, one line each, found before any folder is made: the agents'
    specs, their card folders, and every card the tables will read (a card about to be measured again aside)."""
    found: list[str] = []

    def check(what: str, work) -> object:
        try:
            return work()
        except (TrinityError, ValueError, OSError) as err:
            found.append(f"{what}: {one_line(err)}" if what else one_line(err))
            return None

    measured: set[Path] = set()  # cards each checked once: those of the agents named, then the rest of the table
    if args.outside:
        chosen = [entry for entry in OUTSIDE if entry.name in args.outside]
        for entry in chosen:
            check(f"--outside {entry.name}", lambda entry=entry: _card_folder(entry.folder))
            if args.score_only:
                check(f"--outside {entry.name}", lambda entry=entry: AgentSpec.parse(entry.policy))
            measured.add(entry.folder / "scorecard.json")
        cards = [entry.folder / "scorecard.json" for entry in OUTSIDE]
    else:
        for agent in args.agents:
            if check(f"agent {agent!r}", lambda agent=agent: AgentSpec.parse(agent)) is None:
                continue
            folder = folder_of(args.protocol, agent)
            measured.add(folder / "scorecard.json")
            if check(f"agent {agent!r}", lambda folder=folder: _card_folder(folder)) is not None:
                _version(folder / "scorecard.json", check)
        cards = sorted((ROOT / "docs" / "benchmark" / args.protocol).glob("*/scorecard.json"))
    for path in cards:  # an older card may be measured by a later run: the tables refuse it by name at the end
        if path not in measured:
            _version(path, check)
    return found


def _card_folder(folder: Path) -> bool:
    """``True`` where ``folder`` may hold a card (as ``trinity benchmark --out`` checks it), checked without making
    it; else ``TrinityError`` naming what is in the way."""
    output_folder(str(folder), "its card folder")
    for name in OUTPUT_FILES:
        target = folder / name
        if os.path.islink(target) or (os.path.lexists(target) and not os.path.isfile(target)):
            kind = "a symbolic link" if os.path.islink(target) else "a folder" if target.is_dir() else path_kind(target)
            raise TrinityError(f"{target} is in the way: it is {kind}, not a regular file (refused unread)")
    return True


UPGRADE_NOTE = (
    "measured under benchmark 2 (the same games); its ratings' intervals refitted from its recorded games under "
    "benchmark 3 (python -m scripts.make_leaderboard --upgrade); no file or code hashes recorded"
)


def upgrade(path: Path) -> bool:
    """The benchmark 2 card at ``path`` made a benchmark 3 card (see the module): its JSON, markdown and plot
    rewritten; ``False`` for a card of another version, left as it is."""
    import numpy as np

    from trinity_env.core.writes import write_text
    from trinity_env.evaluation.anchored import POOL_FILES, ReferencePool
    from trinity_env.evaluation.ratings import ROBUST, fit_against_fixed
    from trinity_env.scorecard import ScoreCard

    data = json.loads(path.read_text(encoding="utf-8"))
    if data.get("benchmark") != 2:
        return False
    pools = {Path(file).stem: file for file in POOL_FILES.values()}
    for key in ("rating", "rating_draft"):
        rating = data[key]
        pool = ReferencePool.load(pools[rating["pool_name"]])
        if list(pool.labels) != rating["opponents"]:
            raise ValueError(f"{path}: {key}'s opponents are not the pool {pool.name}'s")
        elo, low, high = fit_against_fixed(
            np.array(pool.elo),
            np.array(rating["score"]),
            np.full(len(pool.agents), rating["games"] // len(pool.agents)),
        )
        if abs(elo - rating["elo"]) > 1e-6:
            raise ValueError(f"{path}: {key} refits to {elo}, the card says {rating['elo']}")
        rating.update(low=low, high=high, interval=ROBUST)
    data["benchmark"] = BENCHMARK_VERSION
    data["notes"] = [*data.get("notes", []), UPGRADE_NOTE]
    card = ScoreCard.from_json(data)
    write_text(path, json.dumps(data, indent=1) + "\n")
    write_text(path.with_suffix(".md"), card.markdown())
    card.plot(path.with_suffix(".png"))
    return True


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="make_leaderboard", description=__doc__.splitlines()[0])
    parser.error = lambda message: parser.exit(2, f"{parser.prog}: error: {message}\n")  # one line, no usage
    parser.add_argument("--agents", nargs="+", default=list(AGENTS))
    parser.add_argument("--protocol", choices=sorted(PROTOCOLS), default="quick")
    parser.add_argument("--workers", type=process_count, default=1)
    parser.add_argument(
        "--outside", nargs="+", choices=[entry.name for entry in OUTSIDE], help="train and score these instead"
    )
    parser.add_argument(
        "--score-only", action="store_true", help="with --outside: score the model files already trained, no training"
    )
    parser.add_argument(
        "--upgrade", action="store_true", help="make every benchmark 2 card a benchmark 3 card (no games: see above)"
    )
    parser.add_argument(
        "--replot", action="store_true", help="draw every card's scorecard.png again from its JSON (no games)"
    )
    args = parser.parse_args(argv)
    if args.replot:
        for path in sorted((ROOT / "docs" / "benchmark").rglob("scorecard.json")):
            ScoreCard.from_json(json.loads(path.read_text(encoding="utf-8"))).plot(path.with_suffix(".png"))
            print(f"drew {path.with_suffix('.png').relative_to(ROOT)}", flush=True)
        return
    if args.upgrade:
        for path in sorted((ROOT / "docs" / "benchmark").rglob("scorecard.json")):
            if upgrade(path):
                print(f"upgraded {path.relative_to(ROOT)}", flush=True)
        return
    if args.score_only and not args.outside:
        parser.error("--score-only goes with --outside NAME")
    found = problems(args)
    if found:
        for problem in found:
            say(parser.prog, problem)
        raise SystemExit(2)
    if args.outside:
        for entry in OUTSIDE:
            if entry.name in args.outside:
                run_outside(entry, train=not args.score_only)
        _table(parser.prog, outside_table)
        return
    for agent in args.agents:
        folder = folder_of(args.protocol, agent)
        if _version(folder / "scorecard.json") == BENCHMARK_VERSION:
            print(f"{agent}: already there ({folder})", flush=True)
            continue
        folder.mkdir(parents=True, exist_ok=True)
        with stop_on_signals() as stopped:  # SIGTERM too ends between two records of the games kept
            try:
                card = benchmark(agent, args.protocol, workers=args.workers, games_folder=folder)
            except KeyboardInterrupt:
                say(parser.prog, f"{agent}: interrupted; its finished rating games are kept in {folder}")
                raise SystemExit(exit_status(stopped)) from None
        card.write(folder)
        print(f"{agent}: rating {card.rating['elo']:+.0f}, wrote {folder}", flush=True)
    _table(parser.prog, lambda: leaderboard(args.protocol))


def _table(prog: str, table) -> None:
    """Print ``table()``; a card it refuses (of an older version, measured by no run yet) is one line, exit 2."""
    try:
        print(table())
    except (TrinityError, ValueError) as err:
        say(prog, f"the cards are written, but the table refuses one: {one_line(err)}")
        raise SystemExit(2) from None


def _version(path: Path, check=None) -> object:
    """The protocol version of the card at ``path`` (``benchmark``), ``None`` where there is no card; read through
    ``read_json``'s door. ``check(what, work)`` (``problems``'s) records a card that cannot be read, else it raises."""
    if not os.path.lexists(path):
        return None
    card = _card_json(path) if check is None else check("", lambda: _card_json(path))
    version = None if card is None else card.get("benchmark")
    if version == BENCHMARK_VERSION and check is not None:
        check("", lambda: read_card(path))  # a card kept as it is must be whole
    return version


if __name__ == "__main__":
    main()
