"""The web API's catalogue (``trinity serve`` through Starlette's TestClient): the agents on offer, the
ladder's levels named in plain words with their Elo from the arena's output, and the engine prepared in the
background."""

from __future__ import annotations

import importlib.util
import io
import json
import threading
import time
from pathlib import Path

import pytest

# web_client skips this module without Starlette
from web_client import SMALL, TestClient, new_game

from trinity_env.agents import shipped
from trinity_env.web import catalogue as web_catalogue
from trinity_env.web.app import create_app
from trinity_env.web.catalogue import LADDER, catalog
from trinity_env.web.store import GameStore
from trinity_env.web.warmup import EngineWarmup, families_to_warm

# ---------------------------------------------------------------------- the agents on offer


def test_agents_lists_the_ladder_the_baselines_mcts_and_the_shipped_agents():
    choices = catalog()
    data = TestClient(create_app(GameStore(choices))).get("/api/agents").json()
    names = [a["name"] for a in data["agents"]]
    assert [n for n in names if n.startswith("level:")] == [f"level:{k}" for k in range(1, 9)]
    assert {a["name"]: a["spec"] for a in data["ladder"]} == {f"level:{k}": s for k, s in LADDER.items()}
    assert {"random", "greedy", "lookahead", "mcts:25", "mcts:100", "mcts:400", "mcts:1600"} <= set(names)
    if importlib.util.find_spec("torch") is not None:
        assert set(shipped()) <= set(names)  # ppo-standard, and az-standard once it ships
    assert data["default"] in names
    for agent in data["agents"]:  # names and specs are short words, never paths
        assert "/" not in agent["spec"] and "\\" not in agent["spec"] and not agent["spec"].endswith(".pt")
        assert agent["group"] in ("ladder", "baseline", "search", "trained")


def test_every_ladder_level_builds_and_plays_a_move():
    client = TestClient(create_app(GameStore({c.name: c for c in catalog().values() if c.group == "ladder"})))
    for level in range(1, 9):
        view = new_game(client, opponent=f"level:{level}", seat=1, first="opponent", draft="dealt")
        moved = client.post(f"/api/games/{view['id']}/advance", json={"ply": 0}).json()
        assert moved["moved"] is True and moved["ply"] == 1 and moved["state"]["last"]["kind"] == "place"


# ---------------------------------------------------------------------- the ladder's strength, from the arena's output


ROOT = Path(__file__).resolve().parents[1]


def test_the_shipped_ladder_file_is_the_arena_output_kept_in_docs():
    assert web_catalogue.LADDER_FILE.read_bytes() == (ROOT / "docs" / "web" / "ladder.json").read_bytes()


def test_each_level_is_named_in_plain_words_with_its_elo_from_the_arena_output():
    arena = json.loads((ROOT / "docs" / "web" / "ladder.json").read_text(encoding="utf-8"))
    elo = dict(zip(arena["agents"], arena["elo"]))
    data = TestClient(create_app(GameStore(catalog()))).get("/api/agents").json()
    assert [a["name"] for a in data["ladder"]] == [f"level:{k}" for k in range(1, 9)]
    shown = []
    for level, agent in enumerate(data["ladder"], start=1):
        rating = round(elo[LADDER[level]])
        assert agent["elo"] == rating
        sign = "+" if rating > 0 else "\u2212" if rating < 0 else ""
        assert agent["label"] == f"Level {level} \u2014 {web_catalogue.LEVEL_WORDS[level]} (Elo {sign}{abs(rating)})"
        assert agent["short"] == f"Level {level} \u2014 {web_catalogue.LEVEL_WORDS[level]}"
        assert LADDER[level] not in agent["label"]  # plain words, not the spec
        shown.append(rating)
    assert shown == sorted(shown)  # the levels climb
    assert all(a["elo"] is None for a in data["agents"] if a["group"] != "ladder")


@pytest.mark.parametrize(
    ("content", "words"),
    [
        ('{"agents": ["random"]}', "not the arena's JSON output"),
        ('{"agents": ["random", "greedy"], "elo": [1.0]}', "not the arena's JSON output"),
        ("[1, 2]", "not the arena's JSON output"),
        ('{"agents": ["random"], "elo": ["high"]}', "has no finite Elo"),
        ('{"agents": ["random"], "elo": [NaN]}', "has no finite Elo"),
        ('{"agents": [3], "elo": [1.0]}', "has no finite Elo"),
    ],
)
def test_a_ladder_file_that_is_not_arena_output_is_refused(tmp_path, content, words):
    path = tmp_path / "ladder.json"
    path.write_text(content, encoding="utf-8")
    with pytest.raises(ValueError, match=words):
        web_catalogue.ladder_elo(path)


def test_a_ladder_file_without_a_levels_agent_is_refused(monkeypatch, tmp_path):
    path = tmp_path / "ladder.json"
    path.write_text('{"agents": ["random", "mcts:2"], "elo": [-10.0, 10.0]}', encoding="utf-8")
    monkeypatch.setattr(web_catalogue, "LADDER_FILE", path)
    monkeypatch.setattr(web_catalogue.ladder_elo, "__defaults__", (path,))
    with pytest.raises(ValueError, match="rates no agent 'mcts:25'"):
        catalog()


# ---------------------------------------------------------------------- the engine, prepared in the background


def test_the_engine_endpoint_says_when_the_background_compile_is_done():
    release = threading.Event()
    ran = []

    def run(name: str) -> None:
        ran.append(name)
        if name == "MCTS":
            release.wait(10)
        if name == "exact solver":
            raise RuntimeError("no\ncompiler")

    warmup = EngineWarmup(["baselines", "MCTS", "exact solver"], run=run)
    client = TestClient(create_app(GameStore(dict(SMALL)), warmup=warmup))
    before = client.get("/api/engine").json()
    assert before["ready"] is False and before["started"] is False and before["done"] == 0
    warmup.start()
    deadline = time.monotonic() + 10
    while client.get("/api/engine").json()["preparing"] != "MCTS":
        assert time.monotonic() < deadline
        time.sleep(0.01)
    during = client.get("/api/engine").json()
    assert during["ready"] is False and during["done"] == 1
    assert [f["state"] for f in during["families"]] == ["ready", "preparing", "waiting"]
    assert client.get("/api/agents").status_code == 200  # the server answers meanwhile
    release.set()
    assert warmup.wait(10)
    after = client.get("/api/engine").json()
    assert after["ready"] is True and after["done"] == 3 and after["preparing"] is None
    assert [f["state"] for f in after["families"]] == ["ready", "ready", "failed"]
    assert after["families"][2]["error"] == "RuntimeError: no compiler"  # one line
    assert ran == ["baselines", "MCTS", "exact solver"]
    warmup.start()  # once only
    assert ran == ["baselines", "MCTS", "exact solver"]


def test_an_app_without_a_warmup_prepares_nothing_and_says_ready(client):
    engine = client.get("/api/engine").json()
    assert engine == {"ready": True, "started": False, "preparing": None, "done": 0, "families": []}


def test_the_families_to_warm_put_the_default_opponents_first_and_the_solver_last():
    specs = [choice.spec for choice in catalog().values()]
    families = families_to_warm(specs, ["mcts:25"])
    assert families[0] == "MCTS" and families[-1] == "exact solver"
    assert "baselines" in families and len(families) == len(set(families))
    assert families_to_warm(["random"]) == ["exact solver"]
    with pytest.raises(ValueError, match="unknown kernel family 'turbo'"):
        EngineWarmup(["turbo"])


def test_a_real_warmup_compiles_the_families_it_names():
    warmup = EngineWarmup(["baselines"], out=io.StringIO()).start()
    assert warmup.wait(300)
    family = warmup.view()["families"][0]
    assert family["state"] == "ready" and family["seconds"] >= 0
