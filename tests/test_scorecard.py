"""The score card: policies learned outside the project (an SB3 MaskablePPO zip, a plain torch module exported to
ONNX, a Python function) each get a card through Python and through ``trinity benchmark``; the card is versioned,
seeded, and independent of the worker count; outside code runs only behind its flag."""

from __future__ import annotations

import json
import textwrap

import numpy as np
import pytest
from pools import write_pool

import trinity_env
from trinity_env import scorecard
from trinity_env.agents.registry import AgentSpecError
from trinity_env.agents.spec import AgentSpec
from trinity_env.cli import main as trinity
from trinity_env.evaluation import anchored

TINY = scorecard.Protocol("tiny", rating_games=2, accuracy_per_count=3, puzzles=8)
"""A protocol small enough for a test: two games against each pool member, 3 positions a count, 8 puzzles."""

WEIGHTS = np.random.default_rng(1).normal(size=(339, 256)).astype(np.float32)


@pytest.fixture(autouse=True)
def draft_pool(tmp_path, monkeypatch):
    """The cards' rating with the draft is against a small draft pool written here (``random`` and ``greedy``, so the
    tests stay quick); the dealt rating against the shipped pool. test_anchored_ratings checks the shipped draft
    pool itself."""
    pool = write_pool(tmp_path / "reference_pool_draft.json", "pick")
    monkeypatch.setattr(anchored, "POOL_FILES", {"dealt": anchored.POOL_FILE, "pick": tmp_path / f"{pool.name}.json"})
    return pool


def linear(observation: np.ndarray, mask: np.ndarray) -> int:
    logits = observation.astype(np.float32) @ WEIGHTS
    return int(np.where(mask > 0, logits, -np.inf).argmax())


@pytest.fixture(scope="module")
def outside(tmp_path_factory):
    """The three outside policies: an SB3 zip (trained briefly), a torch module exported to ONNX, a function in a
    module of its own (named by py:policy_module:make)."""
    torch = pytest.importorskip("torch")
    pytest.importorskip("sb3_contrib")
    pytest.importorskip("onnxruntime")
    from sb3_contrib import MaskablePPO

    from trinity_env.agents.loaders.onnx_policy import export_policy
    from trinity_env.envs.single_agent import TrinityTowersEnv

    folder = tmp_path_factory.mktemp("outside")
    model = MaskablePPO(
        "MlpPolicy",
        TrinityTowersEnv(opponent="random", draft="dealt"),
        n_steps=64,
        batch_size=64,
        n_epochs=1,
        seed=0,
        policy_kwargs={"net_arch": [32]},
    )
    model.learn(64)
    model.save(folder / "sb3.zip")
    torch.manual_seed(0)
    module = torch.nn.Sequential(torch.nn.Linear(339, 64), torch.nn.ReLU(), torch.nn.Linear(64, 256))
    export_policy(module, folder / "torch.onnx")
    (folder / "policy_module.py").write_text(
        textwrap.dedent("""
        import numpy as np

        WEIGHTS = np.random.default_rng(1).normal(size=(339, 256)).astype(np.float32)

        def act(observation, mask):
            logits = observation.astype(np.float32) @ WEIGHTS
            return int(np.where(mask > 0, logits, -np.inf).argmax())

        def make():
            return act
    """)
    )
    return folder


def check_card(data: dict, agent: str) -> None:
    assert data["benchmark"] == scorecard.BENCHMARK_VERSION and data["env"] == trinity_env.ENV_ID
    assert data["agent"] == agent and data["protocol"]["name"] == "tiny"
    for key, name, config in [
        ("rating", "reference_pool", {"draft": "dealt"}),
        ("rating_draft", "reference_pool_draft", {"draft": "pick"}),
    ]:
        rating = data[key]
        assert rating["low"] <= rating["elo"] <= rating["high"] and rating["games"] == 2 * len(rating["opponents"])
        assert rating["pool_name"] == name and rating["config"] == config and rating["pool"] == anchored.POOL_VERSION
    assert set(data["accuracy"]) >= {"4", "10"} and all(c["total"] <= 3 for c in data["accuracy"].values())
    assert data["puzzles"]["total"] == 8 and data["endgames"]["total"] > 0


def test_every_outside_policy_kind_gets_a_card_through_python(outside, monkeypatch):
    monkeypatch.syspath_prepend(str(outside))
    cards = {
        "sb3": trinity_env.benchmark(f"{outside}/sb3.zip", TINY, workers=1),
        "onnx": trinity_env.benchmark(f"onnx:{outside}/torch.onnx", TINY, workers=1),
        "function": trinity_env.benchmark(linear, TINY, workers=1),
        "code": trinity_env.benchmark(AgentSpec.parse("py:policy_module:make", allow_code=True), TINY, workers=1),
    }
    check_card(cards["sb3"].to_json(), "sb3.zip")  # outside the working directory: the file's name alone
    check_card(cards["onnx"].to_json(), "onnx:torch.onnx")
    check_card(cards["function"].to_json(), f"py:{__name__}:linear")
    assert [f["name"] for f in cards["onnx"].files] == ["torch.onnx"]
    # the same function by import path plays the same moves: the same card but for its name and source file
    same = {k: v for k, v in cards["code"].to_json().items() if k not in ("agent", "files")}
    assert same == {k: v for k, v in cards["function"].to_json().items() if k not in ("agent", "files")}


def test_every_outside_policy_kind_gets_a_card_through_the_command_line(outside, monkeypatch, tmp_path, capsys):
    monkeypatch.syspath_prepend(str(outside))
    monkeypatch.setitem(scorecard.PROTOCOLS, "quick", TINY)
    for policy, extra in [
        (f"{outside}/sb3.zip", []),
        (f"onnx:{outside}/torch.onnx", []),
        ("py:policy_module:make", ["--allow-code"]),
    ]:
        out = tmp_path / policy.replace("/", "_").replace(":", "_")
        argv = [
            "benchmark",
            "--agent",
            policy,
            "--workers",
            "1",
            "--quiet",
            "--out",
            str(out),
            "--json",
            str(out) + ".json",
        ]
        assert trinity([*argv, *extra]) == 0
        printed = capsys.readouterr().out
        label = {"py:policy_module:make": "py:policy_module:act"}.get(policy, policy.replace(f"{outside}/", ""))
        assert f"### `{label}`" in printed and "| puzzles solved (8) |" in printed
        assert "| rating, with the draft (reference pool, 4 games) |" in printed
        data = json.loads((out / "scorecard.json").read_text())
        check_card({**data, "protocol": {**data["protocol"], "name": "tiny"}}, label)
        assert json.loads((tmp_path / (out.name + ".json")).read_text()) == data
        assert (out / "scorecard.md").read_text().startswith(f"### `{label}`") and (
            out / "scorecard.png"
        ).stat().st_size


def test_outside_code_is_refused_without_its_flag(outside, monkeypatch, capsys):
    monkeypatch.syspath_prepend(str(outside))
    assert trinity(["benchmark", "--agent", "py:policy_module:make", "--quiet"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("trinity benchmark: ") and "--allow-code" in err and err.count("\n") == 1
    with pytest.raises(AgentSpecError, match="imports and runs outside code"):
        AgentSpec.parse("py:policy_module:make")
    for bad in ("py:", "py:a b:c", "py:module", "py:1x:f"):
        with pytest.raises(AgentSpecError, match=r"needs package\.module:factory"):
            AgentSpec.parse(bad, allow_code=True)


def test_a_card_depends_on_the_seed_alone_not_on_the_workers():
    one = scorecard.benchmark("greedy", TINY, seed=3, workers=1).to_json()
    two = scorecard.benchmark("greedy", TINY, seed=3, workers=2).to_json()
    assert one == two
    other = scorecard.benchmark("greedy", TINY, seed=4, workers=1).to_json()
    assert other["rating"]["score"] != one["rating"]["score"] or other["rating"]["elo"] != one["rating"]["elo"]
    assert other["rating_draft"]["score"] != one["rating_draft"]["score"]


def test_a_card_carries_both_ratings_the_draft_one_against_the_draft_pool(draft_pool):
    """Since version 2: the rating on dealt hands and the rating with the draft, each from the same number of games
    against each member of its own pool, seeded alike; both in the JSON and in the markdown card (version 3: with
    the robust interval)."""
    assert scorecard.BENCHMARK_VERSION == 3
    card = scorecard.benchmark("greedy", TINY, seed=3, workers=1)
    data = card.to_json()
    assert data["benchmark"] == 3 and sorted(data["rating_draft"]) == sorted(data["rating"])
    assert data["rating"]["interval"] == data["rating_draft"]["interval"] == "robust"
    dealt = anchored.rate_against_pool("greedy", 2, seed=3, workers=1, pool=anchored.ReferencePool.load())
    drafted = anchored.rate_against_pool("greedy", 2, seed=3, workers=1, pool=draft_pool)
    for key, rating in (("rating", dealt), ("rating_draft", drafted)):
        assert data[key]["opponents"] == list(rating.opponents) and data[key]["score"] == list(rating.score)
        assert (data[key]["elo"], data[key]["low"], data[key]["high"]) == (rating.elo, rating.low, rating.high)
    text = card.markdown()
    assert "Trinity Towers benchmark 3," in text
    positions = " | ".join(str(data["accuracy"][c]["total"]) for c in sorted(data["accuracy"], key=int))
    assert f"| positions scored (the set's positions of that count that are not lost) | {positions} |" in text
    assert f"| rating, dealt hands (reference pool, {2 * 8} games) | {dealt.elo:+.0f} [{dealt.low:+.0f}, " in text
    assert f"| rating, with the draft (reference pool, 4 games) | {drafted.elo:+.0f} [{drafted.low:+.0f}, " in text


def test_a_card_is_refused_before_any_game_where_a_pool_is_missing(monkeypatch, tmp_path):
    monkeypatch.setattr(anchored, "POOL_FILES", {"dealt": anchored.POOL_FILE, "pick": tmp_path / "none.json"})
    monkeypatch.setattr(anchored, "rate_against_pool", lambda *args, **kwargs: pytest.fail("a game was played"))
    from trinity_env.core import ArgumentError

    with pytest.raises(ArgumentError, match=r"no reference pool was fitted on these rules \(the standard rules\)"):
        scorecard.benchmark("greedy", TINY, seed=0, workers=1)


def test_a_bad_protocol_is_one_line():
    from trinity_env.core import ArgumentError

    with pytest.raises(ArgumentError, match="protocol must be one of full, quick"):
        scorecard.check_protocol("medium")


def test_a_card_s_exploitability_keeps_the_half_points_of_draws(monkeypatch):
    """What the best response won, draws counting half: 2.5 of 4 games, not 2 (the points were rounded once)."""
    import trinity_env.evaluation.exploit
    from trinity_env.evaluation.ratings import Share

    found = trinity_env.evaluation.exploit.Exploitability("greedy", steps=1024, games=4, points=2.5, seconds=0.0)
    monkeypatch.setattr(trinity_env.evaluation.exploit, "exploit", lambda agent, steps, **kwargs: found)
    card = scorecard.benchmark("greedy", TINY, seed=0, workers=1, exploit_steps=1024)
    assert card.exploitability == {"steps": 1024, "games": 4, **Share(2.5, 4).to_json()}
    assert card.exploitability["hits"] == 2.5 and card.exploitability["share"] == 0.625
