"""Ratings on a fixed scale (issue 41): ``level:N`` names a ladder agent everywhere, the shipped reference pool's
frozen ratings, and a new agent rated against them with the pool held fixed."""

from __future__ import annotations

import json

import numpy as np
import pytest
from pools import small_pools, write_pool

from trinity_env.agents import ladder
from trinity_env.agents.registry import AgentSpecError
from trinity_env.agents.spec import AgentSpec, make
from trinity_env.cli import main
from trinity_env.core import ArgumentError
from trinity_env.evaluation import anchored
from trinity_env.evaluation.anchored import (
    POOL_FILE,
    POOL_FILES,
    PoolError,
    ReferencePool,
    pool_for,
    rate_against_pool,
    rate_all_against_pool,
)
from trinity_env.evaluation.arena import round_robin
from trinity_env.evaluation.ratings import ELO_SCALE, LIKELIHOOD, ROBUST, fit_against_fixed, fit_elo
from trinity_env.spec.config import make_config

CHEAP = ["random", "mcts:2", "greedy"]
"""Pool members quick enough for tests: the shipped pool cut to them keeps their frozen ratings."""


def _built(agent) -> tuple:
    return type(agent).__name__, getattr(agent, "simulations", None)


# ---------------------------------------------------------------------- level:N


@pytest.mark.parametrize("level", sorted(ladder.LADDER))
def test_level_n_parses_and_builds_the_ladders_agent(level):
    spec = AgentSpec.parse(f"level:{level}")
    underlying = AgentSpec.parse(ladder.LADDER[level])
    assert spec.label == f"level:{level}" and spec.name == "level"
    assert spec.families == underlying.families
    agent = spec.build()
    assert agent.name == f"level:{level}"
    assert _built(agent) == _built(underlying.build())
    assert _built(make(f"level:{level}")) == _built(agent)
    assert spec.sha256() is None  # a ladder agent reads no file


def test_level_names_the_same_agents_as_the_web_ladder():
    from trinity_env.web import catalogue

    assert catalogue.LADDER is ladder.LADDER and catalogue.LEVEL_WORDS is ladder.LEVEL_WORDS
    assert AgentSpec.parse("level:8").families == ("MCTS",) and make("level:8").simulations == 6400


@pytest.mark.parametrize("bad", ["level:0", "level:9", "level:x", "level", "level:03", "level:-1", "level:3.0"])
def test_a_level_outside_1_to_8_is_one_line_listing_the_levels(bad):
    with pytest.raises(AgentSpecError) as caught:
        AgentSpec.parse(bad)
    message = str(caught.value)
    assert "\n" not in message and "level takes one level, 1 to 8" in message
    assert all(f"level:{n} ({spec})" in message for n, spec in ladder.LADDER.items())


def test_level_takes_no_other_argument():
    for bad in ("level:3,4", "level:3,seed=1"):
        with pytest.raises(AgentSpecError, match="bad arguments in agent spec"):
            AgentSpec.parse(bad)


# ---------------------------------------------------------------------- the maximum likelihood against a fixed pool


POOL = np.array([0.0, 130.0, 330.0, 500.0, 670.0, 815.0, 950.0, 1110.0])


def _wins(rating: float, games: int, rng: np.random.Generator) -> np.ndarray:
    p = 1 / (1 + np.exp(-(rating - POOL) / ELO_SCALE))
    return rng.binomial(games, p).astype(float)


@pytest.mark.parametrize("true", [-150.0, 420.0, 1300.0])
def test_the_fit_against_a_fixed_pool_recovers_a_known_rating(true):
    games = np.full(POOL.size, 4000)
    elo, low, high = fit_against_fixed(POOL, _wins(true, 4000, np.random.default_rng(7)), games)
    assert low < true < high and low < elo < high
    assert abs(elo - true) < 15 and high - low < 40


def test_the_interval_covers_the_true_rating_about_95_times_in_100():
    rng, true, games = np.random.default_rng(11), 560.0, np.full(POOL.size, 30)
    covered = 0
    for _ in range(400):
        _, low, high = fit_against_fixed(POOL, _wins(true, 30, rng), games)
        covered += low <= true <= high
    assert 0.91 <= covered / 400 <= 0.99


def test_the_fit_is_the_maximum_and_the_interval_ends_drop_the_likelihood_by_1_92():
    score, games = np.array([3.0, 5.5, 9.0]), np.array([10.0, 10.0, 10.0])
    fixed = np.array([-100.0, 0.0, 250.0])
    elo, low, high = fit_against_fixed(fixed, score, games, interval=LIKELIHOOD)

    def log_likelihood(r):  # with the prior: half a point in one more game against each opponent
        p = 1 / (1 + np.exp(-(r - fixed) / ELO_SCALE))
        return float(((score + 0.5) * np.log(p) + (games + 1 - score - 0.5) * np.log(1 - p)).sum())

    assert log_likelihood(elo) > max(log_likelihood(elo - 1), log_likelihood(elo + 1))
    assert log_likelihood(elo) - log_likelihood(low) == pytest.approx(1.959963984540054**2 / 2, abs=1e-6)
    assert log_likelihood(elo) - log_likelihood(high) == pytest.approx(1.959963984540054**2 / 2, abs=1e-6)


def test_the_robust_interval_widens_where_the_model_does_not_fit_and_not_where_it_does():
    """A policy that wins half its games against weak and strong alike (the model cannot fit it: it expects near
    certain results at both ends) has results that vary more from seed to seed than the model predicts: the robust
    interval is wider than the likelihood ratio's there, and about as wide where the results follow the model."""
    games = np.full(POOL.size, 20.0)
    odd = np.full(POOL.size, 10.0)
    _, low, high = fit_against_fixed(POOL, odd, games)
    _, low_lr, high_lr = fit_against_fixed(POOL, odd, games, interval=LIKELIHOOD)
    assert high - low > 1.3 * (high_lr - low_lr)
    fitting = _wins(560.0, 20, np.random.default_rng(3))
    _, low, high = fit_against_fixed(POOL, fitting, games, interval=ROBUST)
    _, low_lr, high_lr = fit_against_fixed(POOL, fitting, games, interval=LIKELIHOOD)
    assert 0.9 < (high - low) / (high_lr - low_lr) < 1.3


def test_the_robust_interval_covers_a_misfitting_policy_s_rating_as_often_as_it_says():
    """Results against each opponent drawn at shares the model cannot fit (transitivity broken): the rating the
    games estimate is the fit to the true shares; the robust interval covers it about 95 times in 100 (the
    likelihood ratio's about 80)."""
    rng, shares, games = np.random.default_rng(5), np.array([0.9, 0.2, 0.95, 0.3, 0.7, 0.1, 0.5, 0.05]), 30
    n = np.full(POOL.size, float(games))
    truth, _, _ = fit_against_fixed(POOL, shares * 1e6, np.full(POOL.size, 1e6))
    covered = {ROBUST: 0, LIKELIHOOD: 0}
    for _ in range(400):
        score = rng.binomial(games, shares).astype(float)
        for kind in covered:
            _, low, high = fit_against_fixed(POOL, score, n, interval=kind)
            covered[kind] += low <= truth <= high
    assert covered[ROBUST] / 400 >= 0.91 and covered[LIKELIHOOD] < covered[ROBUST]


def test_winning_or_losing_every_game_still_gives_a_finite_rating_beyond_the_pool():
    games = np.full(POOL.size, 20.0)
    top, bottom = fit_against_fixed(POOL, games, games), fit_against_fixed(POOL, 0 * games, games)
    assert np.isfinite(top).all() and np.isfinite(bottom).all()
    assert top[1] > POOL.max() and bottom[2] < POOL.min()


@pytest.mark.parametrize(
    "fixed, score, games, problem",
    [
        ([0.0], [0.0], [0.0], "no games"),
        ([0.0, 1.0], [1.0], [2.0], "one length"),
        ([0.0], [3.0], [2.0], "between 0 and"),
        ([float("nan")], [1.0], [2.0], "finite"),
    ],
)
def test_bad_results_are_refused_in_one_line(fixed, score, games, problem):
    with pytest.raises(ValueError, match=problem):
        fit_against_fixed(np.array(fixed), np.array(score), np.array(games))


# ---------------------------------------------------------------------- the shipped pool


@pytest.mark.parametrize("draft", sorted(POOL_FILES))
def test_each_shipped_pool_is_the_ladder_fitted_once_on_its_draft_mode_with_random_at_0(draft):
    pool = ReferencePool.load(POOL_FILES[draft])
    data = json.loads(POOL_FILES[draft].read_text(encoding="utf-8"))
    assert list(pool.labels) == list(ladder.LADDER.values()) and pool.agents[2] == AgentSpec.parse("mcts:25")
    assert data["levels"] == [f"level:{n}" for n in ladder.LADDER]
    assert pool.anchor.label == "random" and pool.elo[0] == 0.0 and pool.config() == data["config"] == {"draft": draft}
    assert pool.rules == make_config(draft=draft) and pool.name == POOL_FILES[draft].stem
    assert ("--draft pick" in pool.command) == (draft == "pick")
    assert list(pool.elo) == sorted(pool.elo)  # each level above the last
    score, games = np.array(data["score"]), np.array(data["games"])
    assert (games + np.eye(len(pool.agents), dtype=int) * pool.games_per_pair == pool.games_per_pair).all()
    refit = fit_elo(score, games, anchor=0)  # the frozen ratings are the fit of the games the file keeps
    assert [round(float(r), 3) for r in refit] == list(pool.elo)
    assert all(low <= elo <= high for elo, (low, high) in zip(pool.elo, pool.elo_95))
    assert data["command"].startswith("python -m scripts.make_reference_pool")


@pytest.mark.parametrize(
    "change, problem",
    [
        (lambda d: d.update(version=2), "not a reference pool of version 1"),
        (lambda d: d.update(agents="random"), "agents must be a list"),
        (lambda d: d["elo"].pop(), "finite rating"),
        (lambda d: d["elo"].__setitem__(1, "12"), "finite rating"),
        (lambda d: d["elo"].__setitem__(1, float("inf")), "Infinity is not a JSON number"),
        (lambda d: d.update(anchor="greedy"), "anchor must name an agent of the pool rated 0"),
        (lambda d: d.update(config={"draft": "sideways"}), "bad config"),
        (lambda d: d["agents"].__setitem__(1, "mcts:0"), "bad agent: .*simulations must be"),
        (lambda d: d.update(seed=-1), "whole numbers"),
    ],
)
def test_a_bad_pool_file_is_refused_in_one_line(tmp_path, change, problem):
    data = json.loads(POOL_FILE.read_text(encoding="utf-8"))
    change(data)
    path = tmp_path / "pool.json"
    path.write_text(json.dumps(data), encoding="utf-8")
    with pytest.raises(PoolError, match=problem) as caught:
        ReferencePool.load(path)
    assert "\n" not in str(caught.value)


def test_a_pool_cut_keeps_its_ratings_and_refuses_an_agent_it_lacks():
    pool = ReferencePool.load()
    cut = pool.only(["greedy", "random"])
    assert cut.labels == ("random", "greedy") and cut.elo == (pool.elo[0], pool.elo[3])
    with pytest.raises(ValueError, match="holds no agent 'mcts:7'"):
        pool.only(["mcts:7"])


def test_the_default_pool_is_the_dealt_one():
    assert POOL_FILES["dealt"] == POOL_FILE and ReferencePool.load().config() == {"draft": "dealt"}


@pytest.fixture
def pools(tmp_path):
    return small_pools(tmp_path)


def test_the_pool_is_the_one_fitted_on_the_games_rules(pools):
    assert pool_for(make_config(draft="dealt"), pools).name == "reference_pool"
    assert pool_for(make_config("standard"), pools).name == "reference_pool_draft"
    assert pool_for(make_config(draft="pick"), pools).rules == make_config("standard")
    assert pool_for(make_config(draft="dealt", reward="margin"), pools).name == "reference_pool"  # same games
    assert pool_for(make_config(draft="dealt")).config() == {"draft": "dealt"}  # the shipped files by default


@pytest.mark.parametrize(
    "config, rules",
    [
        ("hidden_hands", "open_hands: false"),
        ("random_decks", 'decks: ["random", "random"]'),
        ({"draft": "fixed", "hands": [[5, 6, 7, 8, 9, 10, 11, 12], [5, 6, 7, 8, 9, 10, 11, 12]]}, "draft: fixed"),
        ({"draft": "dealt", "first_player": 0}, "first_player: 0"),
        ({"max_a_cards": 2}, "max_a_cards: 2"),
    ],
)
def test_rules_no_pool_was_fitted_on_are_refused_in_one_line_naming_the_pools(pools, config, rules):
    with pytest.raises(ArgumentError) as caught:
        pool_for(make_config(config), pools)
    message = str(caught.value)
    assert (
        "\n" not in message and message.startswith("no reference pool was fitted on these rules") and rules in message
    )
    assert "reference_pool (the standard rules with draft: dealt)" in message
    assert "reference_pool_draft (the standard rules)" in message


def test_a_missing_pool_file_is_named_where_its_rules_are_refused(pools):
    pools["pick"].unlink()
    with pytest.raises(ArgumentError, match=r"pools exist for: reference_pool \(.*not found: reference_pool_draft"):
        pool_for(make_config("standard"), pools)


# ---------------------------------------------------------------------- rating a new agent


def test_an_agents_anchored_rating_does_not_move_with_the_other_agents_rated():
    """The point of a fixed scale: mcts:50 rated alone and rated beside two other agents gets the same rating,
    where a round robin's mean-zero rating of it moves with the company."""
    pool = ReferencePool.load().only(CHEAP)
    alone = rate_against_pool("mcts:50", 4, seed=5, workers=1, pool=pool)
    crowd = rate_all_against_pool(["lookahead", "mcts:50", "random"], 4, seed=5, workers=1, pool=pool)
    beside = crowd[1]
    assert beside.agent == "mcts:50" and alone.low <= beside.elo <= alone.high
    assert (beside.elo, beside.low, beside.high, beside.score) == (alone.elo, alone.low, alone.high, alone.score)
    assert crowd[0].elo > crowd[2].elo  # lookahead above random, on the same scale


def test_rating_plays_the_games_of_a_round_robin_of_the_pool_with_the_agent_appended():
    pool = ReferencePool.load().only(["random", "greedy"])
    rating = rate_against_pool("mcts:50", 6, seed=3, workers=1, pool=pool)
    assert rating.games == (6, 6) and rating.opponents == ("random", "greedy")
    arena = round_robin(["random", "greedy", "mcts:50"], 6, seed=3, workers=1, progress=False)
    assert rating.score == (arena.score[2, 0], arena.score[2, 1])


def test_rating_is_the_same_with_one_and_two_workers():
    pool = ReferencePool.load().only(["random", "greedy"])
    one = rate_against_pool("mcts:50", 10, seed=3, workers=1, pool=pool)
    assert rate_against_pool("mcts:50", 10, seed=3, workers=2, pool=pool) == one


def test_a_rating_against_the_draft_pool_plays_drafted_games_the_same_with_one_or_two_workers(tmp_path):
    """Against a pool fitted on the draft, every game starts with the draft (the round robin's games on those
    rules, seeded the same way), deterministic for a seed and independent of the worker count."""
    pool = write_pool(tmp_path / "reference_pool_draft.json", "pick")
    one = rate_against_pool("mcts:2", 6, seed=3, workers=1, pool=pool)
    assert rate_against_pool("mcts:2", 6, seed=3, workers=2, pool=pool) == one
    assert rate_against_pool("mcts:2", 6, seed=3, workers=1, pool=pool) == one
    drafted = round_robin(["random", "greedy", "mcts:2"], 6, seed=3, config={"draft": "pick"}, workers=1)
    assert one.games == (6, 6) and one.score == (drafted.score[2, 0], drafted.score[2, 1])
    other = rate_against_pool("mcts:2", 6, seed=4, workers=1, pool=pool)
    assert (other.score, other.elo) != (one.score, one.elo)


@pytest.mark.parametrize(
    "call, problem",
    [
        (lambda pool: rate_against_pool("mcts:50", 0, pool=pool), "games per opponent must be a whole number"),
        (lambda pool: rate_against_pool("level:9", 2, pool=pool), "level takes one level"),
        (lambda pool: rate_against_pool("greedy", 2, workers=0, pool=pool), "workers must be a whole number"),
        (lambda pool: rate_all_against_pool([], 2, pool=pool), "nothing to rate"),
        (lambda pool: rate_against_pool("greedy", 2, seed=-1, pool=pool), "seed must be a whole number"),
        (lambda pool: rate_against_pool("greedy", 2, seed=1.5, pool=pool), "seed must be a whole number"),
    ],
)
def test_rating_checks_its_arguments_before_playing(call, problem):
    with pytest.raises(ValueError, match=problem):
        call(ReferencePool.load().only(CHEAP))


# ---------------------------------------------------------------------- trinity arena --anchored


def test_trinity_arena_anchored_adds_columns_and_leaves_the_plain_json_as_it_was(tmp_path, capsys):
    common = ["arena", "--agents", "random", "greedy", "--games", "2", "--seed", "1", "--quiet", "--workers", "1"]
    assert main([*common, "--out", str(tmp_path / "plain"), "--json", str(tmp_path / "plain.json")]) == 0
    plain = json.loads((tmp_path / "plain.json").read_text(encoding="utf-8"))
    assert sorted(plain) == ["agents", "elo", "elo_95", "games", "win_rate"]
    assert not (tmp_path / "plain" / "anchored.json").exists()
    assert main([*common, "--anchored", "--out", str(tmp_path / "a"), "--json", str(tmp_path / "a.json")]) == 0
    anchored = json.loads((tmp_path / "a.json").read_text(encoding="utf-8"))
    assert {k: v for k, v in anchored.items() if not k.startswith("anchored_")} == plain
    assert len(anchored["anchored_elo"]) == 2 and len(anchored["anchored_elo_95"]) == 2
    document = json.loads((tmp_path / "a" / "anchored.json").read_text(encoding="utf-8"))
    assert [r["agent"] for r in document["ratings"]] == ["random", "greedy"]
    assert all(r["games"] == [2] * 8 for r in document["ratings"])
    assert "anchored Elo (95% CI)" in capsys.readouterr().out


def test_trinity_arena_anchored_with_the_draft_rates_against_the_draft_pool(pools, monkeypatch, tmp_path):
    """``--config standard`` (the draft): the round robin is drafted, and so are the anchored games, against the
    pool fitted on the draft, seeded as ``rate_all_against_pool`` seeds them."""
    monkeypatch.setattr(anchored, "POOL_FILES", pools)
    args = ["arena", "--agents", "random", "mcts:2", "--games", "2", "--seed", "1", "--quiet", "--workers", "1"]
    assert main([*args, "--config", "standard", "--anchored", "--out", str(tmp_path / "a")]) == 0
    document = json.loads((tmp_path / "a" / "anchored.json").read_text(encoding="utf-8"))
    assert document["pool_name"] == "reference_pool_draft" and document["config"] == {"draft": "pick"}
    expected = rate_all_against_pool(["random", "mcts:2"], 2, 1, 1, pool=ReferencePool.load(pools["pick"]))
    assert [r["score"] for r in document["ratings"]] == [list(r.score) for r in expected]
    assert [r["elo"] for r in document["ratings"]] == [r.elo for r in expected]


@pytest.mark.parametrize("config", ["hidden_hands", "random_decks"])
def test_trinity_arena_anchored_refuses_rules_without_a_pool_before_any_game(config, tmp_path, capsys, monkeypatch):
    def no_games(*args, **kwargs):
        raise AssertionError("a game was played")

    monkeypatch.setattr("trinity_env.evaluation.arena.round_robin", no_games)
    out = tmp_path / "out"
    args = ["arena", "--agents", "random", "greedy", "--anchored", "--config", config, "--out", str(out)]
    assert main(args) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and err.startswith("trinity arena: --anchored: no reference pool was fitted on")
    assert "reference_pool (the standard rules with draft: dealt)" in err and not out.exists()
