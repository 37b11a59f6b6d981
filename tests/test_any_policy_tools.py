"""Every evaluation tool takes every policy kind (issue 41): the arena, accuracy, puzzles, exploit, review, balance,
play and the web app's list each play an ``Agent``, a function ``(observation, mask) -> action``, a ``BatchedPolicy``,
an ONNX file (``onnx:PATH``), a checkpoint of the project's own network (a path), a bare ``state_dict`` of one
(``state_dict:PATH``) and outside code (``py:``, allowed);
on the command line every command that takes agents parses ``py:`` only with ``--allow-code`` and refuses it in one
line without. Budgets are tiny: this file checks that each tool plays each kind, not how well."""

from __future__ import annotations

import dataclasses
import importlib.util
import io
import json
import textwrap

import numpy as np
import pytest
from terminal_play import FirstLegal

from trinity_env.agents.policies import BatchedPolicy
from trinity_env.agents.spec import AgentSpec, player
from trinity_env.cli import main
from trinity_env.core import GameState, Replay
from trinity_env.evaluation import accuracy, puzzles
from trinity_env.evaluation.arena import round_robin
from trinity_env.evaluation.balance import run_balance
from trinity_env.evaluation.match import play_game
from trinity_env.evaluation.review import review_replay
from trinity_env.play import play_in_terminal
from trinity_env.search.solver import Solver
from trinity_env.spec.agent import Agent
from trinity_env.spec.config import make_config

torch = pytest.importorskip("torch")
pytest.importorskip("onnxruntime")

WEIGHTS = np.random.default_rng(41).normal(size=(339, 256)).astype(np.float32)
MODULE = "any_policy_tools_module"
"""The outside code's module (its own name: ``sys.modules`` caches a module by name for the whole session)."""


def scores(observations: np.ndarray, masks: np.ndarray) -> np.ndarray:
    """A fixed linear policy's legal argmax, for a batch."""
    logits = observations.astype(np.float32) @ WEIGHTS
    return np.where(masks > 0, logits, -np.inf).argmax(axis=1)


def linear(observation: np.ndarray, mask: np.ndarray) -> int:
    return int(scores(observation[None], mask[None])[0])


class LinearAgent(Agent):
    """The same policy as an ``Agent`` subclass."""

    name = "linear-agent"

    def act(self, observation, state=None) -> int:
        return linear(np.asarray(observation["observation"]), np.asarray(observation["action_mask"]))


@pytest.fixture(scope="module")
def files(tmp_path_factory):
    """The policy's ONNX export, a checkpoint of the project's own (tiny) network, a bare ``state_dict`` of a (tiny)
    AlphaZero board network, and a module of outside code."""
    from trinity_env.agents.loaders.onnx_policy import export_policy
    from trinity_env.agents.networks.board_network import BoardNetwork
    from trinity_env.agents.networks.ppo_network import PolicyNetwork, save_checkpoint

    folder = tmp_path_factory.mktemp("policies")
    module = torch.nn.Linear(339, 256, bias=False)
    with torch.no_grad():
        module.weight.copy_(torch.from_numpy(WEIGHTS.T))
    onnx = export_policy(module, folder / "linear.onnx")
    torch.manual_seed(0)
    save_checkpoint(folder / "tiny.pt", PolicyNetwork(8, 1))
    torch.save(BoardNetwork(4, 1).state_dict(), folder / "board.pt")
    (folder / f"{MODULE}.py").write_text(
        textwrap.dedent(
            """
            import numpy as np

            def make():
                def lowest(observation, mask):
                    return int(np.flatnonzero(mask)[0])

                return lowest
            """
        ),
        encoding="utf-8",
    )
    return {"onnx": onnx, "checkpoint": folder / "tiny.pt", "state_dict": folder / "board.pt", "code": folder}


@pytest.fixture
def kinds(files, monkeypatch):
    monkeypatch.syspath_prepend(str(files["code"]))
    return {
        "Agent": LinearAgent(),
        "function": linear,
        "BatchedPolicy": BatchedPolicy(scores, name="linear-batched"),
        "onnx": f"onnx:{files['onnx']}",
        "checkpoint": str(files["checkpoint"]),
        "state_dict": f"state_dict:{files['state_dict']}",
        "py": AgentSpec.parse(f"py:{MODULE}:make", allow_code=True),
    }


KINDS = ["Agent", "function", "BatchedPolicy", "onnx", "checkpoint", "state_dict", "py"]


def label(value: object) -> str:
    return player(value).label


@pytest.fixture(scope="module")
def short_replay() -> Replay:
    """A game from a position with 6 empty tiles (a replay of draft 'position'): a few placements to review."""
    from trinity_env.agents import GreedyAgent

    states: list[GameState] = []
    play_game((GreedyAgent(), GreedyAgent()), make_config(draft="dealt"), 5, states.append)
    start = next(s for s in states if len(s.empty_tiles()) == 6)
    game = [GameState.from_dict(start.to_dict())]
    while not game[-1].is_over:
        game.append(game[-1].apply(game[-1].legal_actions()[0]))
    return Replay.from_states(game)


# ---------------------------------------------------------------------- every tool x every kind, in Python


@pytest.mark.parametrize("kind", KINDS)
def test_the_arena(kind, kinds, tmp_path):
    result = round_robin([kinds[kind], "random"], 2, seed=1, workers=1, progress=False, replays=tmp_path)
    assert result.agents == [label(kinds[kind]), "random"] and result.games[0, 1] == 2
    names = {Replay.load(path).agents for path in tmp_path.iterdir()}
    assert names == {(label(kinds[kind]), "random"), ("random", label(kinds[kind]))}


@pytest.fixture(scope="module")
def positions():
    return accuracy.first_per_count(accuracy.load_set(), 1)


@pytest.mark.parametrize("kind", KINDS)
def test_accuracy(kind, kinds, positions):
    result = accuracy.score_agents([kinds[kind]], positions)[0]
    assert result.agent == label(kinds[kind])
    assert sum(row.moves.total for row in result.counts) == sum(p.counts_for_moves for p in positions)


@pytest.mark.parametrize("kind", KINDS)
def test_puzzles(kind, kinds):
    result = puzzles.score_agents([kinds[kind]], puzzles.load_puzzles(puzzles.DEFAULT_SET)[:5])[0]
    figures = result.to_json()
    assert result.agent == label(kinds[kind]) and figures["puzzles"] == 5 and 0 <= figures["solved"] <= 5


@pytest.mark.parametrize("kind", KINDS)
def test_exploit(kind, kinds):
    from trinity_env.evaluation.exploit import EXPLOITER, exploit

    tiny = dataclasses.replace(EXPLOITER, num_games=8, rollout_steps=4, minibatches=2, hidden=16)
    result = exploit(kinds[kind], 32, seed=1, games=2, config=tiny)
    assert result.agent == label(kinds[kind]) and result.steps == 32 and result.games == 2


@pytest.mark.parametrize("kind", KINDS)
def test_review(kind, kinds, short_replay):
    review = review_replay(short_replay, agent=kinds[kind], max_nodes=1, solver=Solver(table_bits=12))
    assert review.agent == label(kinds[kind])
    estimates = [e for e in review.evaluations if e is not None and not e.exact]
    assert estimates and all(label(kinds[kind]) in e.method for e in estimates)


@pytest.mark.parametrize("kind", KINDS)
def test_balance(kind, kinds):
    report = run_balance([kinds[kind]], 2, a_limits=(3,), workers=1, progress=False)
    assert report.agents == [label(kinds[kind])] and report.studies[label(kinds[kind])]["games"] == 2


@pytest.mark.parametrize("kind", KINDS)
def test_play(kind, kinds, monkeypatch, tmp_path):
    out = io.StringIO()
    final = play_in_terminal(
        kinds[kind], seat=0, seed=2, read=FirstLegal(monkeypatch), out=out, save=tmp_path / "game.json"
    )
    assert final.is_over
    assert Replay.load(tmp_path / "game.json").agents == ("human", label(kinds[kind]))


@pytest.mark.parametrize("kind", KINDS)
def test_the_web_apps_list(kind, kinds):
    pytest.importorskip("starlette")
    if importlib.util.find_spec("httpx2") is None and importlib.util.find_spec("httpx") is None:
        pytest.skip("starlette's TestClient needs httpx2 (or httpx): install the dev extra")
    from starlette.testclient import TestClient

    from trinity_env.web.app import create_app
    from trinity_env.web.catalogue import catalog
    from trinity_env.web.store import GameStore

    name = label(kinds[kind])
    client = TestClient(create_app(GameStore(catalog([kinds[kind]]))))
    listed = {agent["name"]: agent for agent in client.get("/api/agents").json()["agents"]}
    assert listed[name]["group"] == "added"
    view = client.post("/api/games", json={"mode": "watch", "agents": [name, "random"], "seed": 3, "draft": "dealt"})
    view = view.json()
    while not view["state"]["outcome"]:
        view = client.post(f"/api/games/{view['id']}/advance", json={"ply": view["ply"]}).json()
    assert Replay.from_json(client.get(f"/api/games/{view['id']}/replay").text).agents == (name, "random")


def test_the_web_list_refuses_a_name_already_listed_and_takes_an_onnx_folder(files, tmp_path):
    from trinity_env.agents.loaders.checkpoint import CheckpointError
    from trinity_env.core import ArgumentError
    from trinity_env.web.catalogue import catalog, onnx_folder

    with pytest.raises(ArgumentError, match="'greedy' is already on the list"):
        catalog(["greedy"])
    assert "onnx:linear" in catalog(onnx_folder(files["onnx"].parent))  # linear.onnx: by its file name
    (tmp_path / "broken.onnx").write_bytes(b"not a model")
    with pytest.raises(CheckpointError) as refused:
        catalog(onnx_folder(tmp_path))  # built once as the list is made: before any server starts
    assert "broken.onnx" in str(refused.value) and "\n" not in str(refused.value)
    for bad in (tmp_path / "broken.onnx", "/dev/zero"):
        with pytest.raises(ArgumentError, match="not a folder"):
            onnx_folder(bad)
    with pytest.raises(ArgumentError, match="NUL"):
        onnx_folder(f"{tmp_path}/a\x00b")


def test_a_folder_model_is_named_by_its_file_name_never_by_its_path_on_the_server(files):
    """The list a browser reads and the replays it downloads name linear.onnx ``onnx:linear``, not its full path."""
    pytest.importorskip("starlette")
    if importlib.util.find_spec("httpx2") is None and importlib.util.find_spec("httpx") is None:
        pytest.skip("starlette's TestClient needs httpx2 (or httpx): install the dev extra")
    from starlette.testclient import TestClient

    from trinity_env.web.app import create_app
    from trinity_env.web.catalogue import catalog, onnx_folder
    from trinity_env.web.store import GameStore

    client = TestClient(create_app(GameStore(catalog(onnx_folder(files["onnx"].parent)))))
    listing = client.get("/api/agents").text
    assert '"name":"onnx:linear"' in listing.replace(" ", "") and str(files["onnx"].parent) not in listing
    view = client.post("/api/games", json={"mode": "watch", "agents": ["onnx:linear", "random"], "seed": 3}).json()
    while not view["state"]["outcome"]:
        view = client.post(f"/api/games/{view['id']}/advance", json={"ply": view["ply"]}).json()
    replay = client.get(f"/api/games/{view['id']}/replay").text
    assert Replay.from_json(replay).agents == ("onnx:linear", "random") and str(files["onnx"].parent) not in replay


def test_balance_builds_its_agents_once_a_chunk_and_plays_as_agents_built_afresh(monkeypatch):
    """The lab reuses each chunk's agents (a model file read once), reset by each game's seed, as the arena does:
    the same games as agents built afresh for every game."""
    from trinity_env.evaluation.balance import _summarise, play_recorded

    spec = "mcts:20,draft=search"
    built = []
    real = AgentSpec.build
    monkeypatch.setattr(AgentSpec, "build", lambda self: built.append(self.text) or real(self))
    report = run_balance([spec], 3, seed=2, a_limits=(3,), workers=1, progress=False)
    assert built == [spec, spec]  # one chunk: two seats, built once
    standard = make_config(None).to_dict()
    fresh = [play_recorded((spec, spec), standard, 2 * 1_000_003 + k) for k in range(3)]  # run_balance's seeds
    deck = list(make_config(None).decks[0])
    assert report.studies[spec] == _summarise(fresh, deck) | {"max_a_cards": standard["max_a_cards"]}


# ---------------------------------------------------------------------- the command line: py: with and without its flag


@pytest.fixture
def cli_inputs(files, tmp_path, monkeypatch, short_replay):
    monkeypatch.syspath_prepend(str(files["code"]))
    replay = tmp_path / "game.json"
    short_replay.save(replay)
    few = tmp_path / "puzzles.jsonl"
    few.write_text("".join(puzzles.DEFAULT_SET.read_text(encoding="utf-8").splitlines(keepends=True)[:3]))
    return {"tmp": tmp_path, "replay": str(replay), "puzzles": str(few)}


CODE = f"py:{MODULE}:make"


def commands(inputs: dict) -> dict[str, list[str]]:
    """Each command that takes agents, naming the outside code, with tiny budgets."""
    tmp = inputs["tmp"]
    return {
        "arena": ["arena", "--agents", CODE, "random", "--games", "2", "--workers", "1", "--out", f"{tmp}/arena"],
        "accuracy": ["accuracy", "score", "--agents", CODE, "--empty", "4", "--limit", "2"],
        "puzzles": ["puzzles", "score", inputs["puzzles"], "--agents", CODE],
        "exploit": ["exploit", "--agent", CODE, "--steps", "1", "--games", "2", "--json", f"{tmp}/exploit.json"],
        "review": ["review", inputs["replay"], "--agent", CODE, "--max-nodes", "1"],
        "balance": ["balance", "--agents", CODE, "--games", "2", "--a-limits", "3", "--workers", "1"],
        "play": ["play", "--opponent", CODE, "--seat", "0", "--seed", "1"],
        "benchmark": ["benchmark", "--agent", CODE, "--out", f"{tmp}/benchmark"],
        "serve": ["serve", "--agents", CODE],
    }


@pytest.mark.parametrize("command", ["arena", "accuracy", "puzzles", "exploit", "review", "balance", "play", "serve"])
def test_every_command_plays_outside_code_with_allow_code(command, cli_inputs, capsys, monkeypatch):
    argv = [*commands(cli_inputs)[command], "--allow-code", "--quiet"]
    if command == "balance":
        monkeypatch.chdir(cli_inputs["tmp"])  # its --out folder, balance/
    if command in ("play", "serve"):
        argv.remove("--quiet")
    if command == "play":
        monkeypatch.setattr("sys.stdin", io.StringIO("quit\n"))
    served = []
    if command == "serve":
        monkeypatch.setattr("trinity_env.web.app.serve", lambda *args, **kwargs: served.append(kwargs["agents"]))
    assert main(argv) in (0, None), capsys.readouterr().err
    out = capsys.readouterr().out
    if command == "serve":
        assert served == [[AgentSpec.parse(CODE, allow_code=True)]]
    elif command == "exploit":
        assert json.loads((cli_inputs["tmp"] / "exploit.json").read_text())["agent"] == CODE
    else:
        assert CODE in out


@pytest.mark.parametrize("command", list(commands({"tmp": "x", "replay": "x", "puzzles": "x"})))
def test_every_command_refuses_outside_code_without_its_flag_in_one_line(command, cli_inputs, capsys, monkeypatch):
    monkeypatch.setattr("sys.stdin", io.StringIO("quit\n"))
    monkeypatch.setattr("trinity_env.web.app.serve", lambda *args, **kwargs: pytest.fail("served"))
    assert main(commands(cli_inputs)[command]) == 2
    captured = capsys.readouterr()
    assert captured.err.startswith(f"trinity {command}: ") and captured.err.count("\n") == 1
    assert "--allow-code" in captured.err and "Traceback" not in captured.err
    assert not any(path.name in ("arena", "benchmark") for path in cli_inputs["tmp"].iterdir())
