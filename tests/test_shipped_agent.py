"""The agent shipped in the package: it loads by name, plays both phases, and is the one measured."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from trinity_env.agents import Agent, AgentSpecError, make, shipped
from trinity_env.core import HAND_SIZE
from trinity_env.envs import make_config
from trinity_env.evaluation.endgames import DEFAULT_SUITE, load_suite, score_agent
from trinity_env.evaluation.match import play_game
from trinity_env.spec.observation import SCALAR_NAMES

ROOT = Path(__file__).resolve().parent.parent
FIGURES = ROOT / "docs" / "ppo-standard"


DRAFT_FLAG = SCALAR_NAMES.index("phase_draft")


class Watched(Agent):
    """Hands every decision to ``inner`` and notes the phase its observation says it was asked in."""

    def __init__(self, inner: Agent):
        self.inner, self.name, self.phases = inner, inner.name, []

    def reset(self, seed=None):
        self.inner.reset(seed)

    def act(self, observation, state=None):
        self.phases.append("draft" if observation["observation"][DRAFT_FLAG] else "play")
        return self.inner.act(observation, state)


def test_ppo_standard_is_shipped_and_plays_drafted_and_dealt_games():
    assert "ppo-standard" in shipped()
    agent = make("ppo-standard")
    assert agent.name == "ppo-standard" and agent.network.tactics
    wins = 0
    for config, picks in ((make_config(None), HAND_SIZE), (make_config(draft="dealt"), 0)):  # the standard rules draft
        for seed in range(4):
            for seat in (0, 1):
                watched = Watched(agent)
                players = [make("random")]
                players.insert(seat, watched)
                final = play_game(tuple(players), config, seed=seed)
                assert watched.phases.count("draft") == picks and "play" in watched.phases
                wins += final.winner == seat
    assert wins >= 14, f"ppo-standard won {wins} of 16 games against random"  # 98% in docs/ppo-standard.md
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
