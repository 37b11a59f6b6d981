"""The agent shipped in the package: it loads by name, plays both phases, and is the one measured."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from trinity_env.agents import AgentSpecError, make, shipped
from trinity_env.envs import make_config
from trinity_env.evaluation.endgames import DEFAULT_SUITE, load_suite, score_agent
from trinity_env.evaluation.match import play_game

ROOT = Path(__file__).resolve().parent.parent
FIGURES = ROOT / "docs" / "ppo-standard"


def test_ppo_standard_is_shipped_and_plays_drafted_and_dealt_games():
    assert "ppo-standard" in shipped()
    agent = make("ppo-standard")
    assert agent.name == "ppo-standard" and agent.network.tactics
    for config in (make_config(None), make_config(draft="random")):  # the standard rules draft
        final = play_game((agent, make("random")), config, seed=4)
        assert final.is_over
    sampler = make("ppo-standard:sample=draft,seed=2")
    assert sampler.sample == "draft"
    with pytest.raises(AgentSpecError, match="bad arguments"):
        make("ppo-standard:sample=sometimes")


def test_the_shipped_file_is_the_one_the_figures_describe():
    summary = json.loads((FIGURES / "summary.json").read_text())
    assert score_agent(make("ppo-standard"), load_suite(DEFAULT_SUITE)) == pytest.approx(summary["endgame_suite"])


def test_the_page_shows_the_measured_tables():
    page = (ROOT / "docs" / "ppo-standard.md").read_text(encoding="utf-8")
    for table in (FIGURES / "arena.md", FIGURES / "drafted" / "arena.md"):
        assert table.read_text(encoding="utf-8").strip() in page, f"docs/ppo-standard.md does not show {table}"
    summary = json.loads((FIGURES / "summary.json").read_text())
    assert f"{summary['endgame_suite']:.1%}" in page
