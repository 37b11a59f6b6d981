"""The rating-coverage study (benchmarks/rating_coverage.py): its quick runs are the first games of its full runs,
and docs/benchmark.md shows the table its JSON holds, whose quick protocol's robust intervals cover the reference
at least as often as the study's target."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np

from benchmarks.rating_coverage import TARGET, quick_score, table
from trinity_env.evaluation.anchored import ReferencePool, rate_against_pool

ROOT = Path(__file__).resolve().parent.parent


def test_a_quick_run_read_from_a_full_run_s_games_file_is_the_quick_run_of_its_seed(tmp_path):
    pool = ReferencePool.load().only(["random", "greedy"])
    file = tmp_path / "games.jsonl"
    rate_against_pool("greedy", 40, seed=5, workers=1, pool=pool, games_file=file)
    quick = rate_against_pool("greedy", 20, seed=5, workers=1, pool=pool)
    score, games = quick_score(file, len(pool.agents), 20)
    assert list(score) == list(quick.score) and list(games) == list(quick.games)
    assert np.sum(games) == 40


def test_the_benchmark_page_shows_the_study_s_table_and_the_quick_intervals_cover():
    document = json.loads((ROOT / "docs" / "benchmark" / "rating_coverage.json").read_text(encoding="utf-8"))
    page = (ROOT / "docs" / "benchmark.md").read_text(encoding="utf-8")
    assert table(document["rows"]) in page and document["command"] in page
    assert document["target"] == TARGET and document["quick_robust_coverage_min"] >= TARGET
    for row in document["rows"]:
        assert row["quick"]["robust_coverage"] >= TARGET, row["policy"]


def test_the_benchmark_page_shows_the_interval_study_and_the_robust_interval_covers_in_every_row():
    from benchmarks.rating_interval import TARGET as INTERVAL_TARGET
    from benchmarks.rating_interval import table as interval_table

    document = json.loads((ROOT / "docs" / "benchmark" / "rating_interval.json").read_text(encoding="utf-8"))
    page = (ROOT / "docs" / "benchmark.md").read_text(encoding="utf-8")
    assert interval_table(document["rows"]) in page and document["command"] in page
    assert document["robust_coverage_min"] == min(row["robust_coverage"] for row in document["rows"])
    assert document["robust_coverage_min"] >= INTERVAL_TARGET
    said = f"covers at least {document['robust_coverage_min']:.1%} in every row; the likelihood ratio's alone falls to"
    assert said in " ".join(page.split()) and f"{document['likelihood_coverage_min']:.1%} where" in page


def test_the_robust_interval_widens_where_the_model_does_not_fit_and_covers():
    """Half the points against every member of the dealt pool: the likelihood ratio's interval trusts the model and
    misses the mean rating far more often than 5% of seeds; the robust one covers (sandwich variance)."""
    from benchmarks.rating_interval import scenarios, study

    pool = ReferencePool.load()  # the dealt pool, whole
    shares = scenarios(pool, 0)["half the points against every member"]
    row = study(pool, shares, games=20, seeds=300, seed=1)
    assert row["robust_coverage"] >= 0.9 and row["likelihood_coverage"] < 0.88
    assert row["robust_half_width"] > 1.2 * row["likelihood_half_width"]
