"""A policy's files are held to the hash a run records (issue 50, class 4): every build of a pinned spec
(``AgentSpec.pinned``) hashes the files again once it has read them, and refuses a change in one line.

The break: the policy file replaced while ``trinity benchmark`` ran gave a card (exit 0) naming the first file's
sha256 and the first model's dealt rating, with the second model's draft rating, accuracy and endgames. The walk,
``test_every_run_that_records_a_hash_refuses_files_replaced_after_it``, covers every place in the package that
records the hash of an agent's files (found by reading the code), so a new one cannot skip it.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from pools import small_pools

torch = pytest.importorskip("torch")

from trinity_env import scorecard  # noqa: E402
from trinity_env.agents import registry  # noqa: E402
from trinity_env.agents.loaders.checkpoint import CheckpointError  # noqa: E402
from trinity_env.agents.networks.ppo_network import PolicyNetwork, save_checkpoint  # noqa: E402
from trinity_env.agents.spec import AgentSpec  # noqa: E402
from trinity_env.evaluation import accuracy, anchored  # noqa: E402
from trinity_env.evaluation import solved_build as sb  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent
TINY = scorecard.Protocol("tiny", rating_games=2, accuracy_per_count=2, puzzles=4, endgames=False)
CHANGED = r"the files of .* changed while they were in use \(sha256 [0-9a-f]{12} when the run began"


def network(seed: int) -> PolicyNetwork:
    torch.manual_seed(seed)
    return PolicyNetwork(16, 1)


@pytest.fixture
def models(tmp_path, monkeypatch):
    """``model.pt`` (the first network), ``second.pt`` (another), small rating pools, and ``swap()``: the first
    network's file replaced by the second's bytes."""
    monkeypatch.setattr(anchored, "POOL_FILES", small_pools(tmp_path))
    model, second = tmp_path / "model.pt", tmp_path / "second.pt"
    save_checkpoint(model, network(0))
    save_checkpoint(second, network(1))
    return model, lambda: model.write_bytes(second.read_bytes())


def swapped_at_first_build(monkeypatch, swap) -> None:
    """The file is replaced just before the first build reads it: after the run hashed it."""
    real = registry.build

    def build(spec):
        if not swapped:
            swapped.append(swap())
        return real(spec)

    swapped: list = []
    monkeypatch.setattr(registry, "build", build)


SURFACES = {
    "scorecard.py": lambda spec, tmp: scorecard.benchmark(spec, TINY, workers=1),
    "anchored.py": lambda spec, tmp: anchored.rate_against_pool(spec, 2, workers=1, games_file=tmp / "games.jsonl"),
    "accuracy.py": lambda spec, tmp: accuracy.build_set(tmp / "set.jsonl", per_count=1, empty=(3, 3), agent=spec),
    "solved_build.py": lambda spec, tmp: sb.build(tmp / "dataset", 1, agent=spec, empty=(4, 6), games_per_shard=1),
}
"""Every module that records the hash of an agent's files, and a small run of it."""


RECORDS = re.compile(r"(?<!hashlib)\.sha256\(\)|policy_files\(")
"""How a module records the hash of an agent's files: an ``AgentSpec``'s ``sha256()`` or the card's
``provenance.policy_files``."""


def test_the_walk_knows_every_run_that_records_a_hash():
    recording = {
        path.name
        for path in (ROOT / "trinity_env").rglob("*.py")
        if path.parent.name != "agents"
        and path.name != "provenance.py"  # the hashing itself
        and RECORDS.search(path.read_text(encoding="utf-8"))
    }
    assert recording == set(SURFACES), "add the new run that records a hash to SURFACES"


@pytest.mark.parametrize("surface", sorted(SURFACES))
def test_every_run_that_records_a_hash_refuses_files_replaced_after_it(surface, models, tmp_path, monkeypatch):
    model, swap = models
    swapped_at_first_build(monkeypatch, swap)
    with pytest.raises(CheckpointError, match=CHANGED):
        SURFACES[surface](str(model), tmp_path)


def test_a_policy_replaced_while_its_card_is_measured_is_never_half_the_card(models, monkeypatch):
    """The break itself: replaced after the dealt rating, the card is refused at the next build, not written with
    the first file's hash and the second model's figures."""
    model, swap = models
    real, ratings = scorecard._rating, []

    def rating(*args, **kwargs):
        ratings.append(real(*args, **kwargs))
        if len(ratings) == 1:
            swap()
        return ratings[-1]

    monkeypatch.setattr(scorecard, "_rating", rating)
    with pytest.raises(CheckpointError, match=CHANGED):
        scorecard.benchmark(str(model), TINY, workers=1)
    assert len(ratings) == 1


def test_a_pinned_spec_plays_its_files_and_its_hash_is_the_pinned_one(models):
    model, swap = models
    spec = AgentSpec.parse(str(model)).pinned()
    assert spec.sha256() == AgentSpec.parse(str(model)).sha256() and spec.label == str(model)
    assert spec.pinned() is spec and AgentSpec.parse("greedy").pinned() == AgentSpec.parse("greedy")
    spec.build()
    swap()
    assert spec.sha256() != AgentSpec.parse(str(model)).sha256()  # the hash the run recorded, not the new file's
    with pytest.raises(CheckpointError, match=CHANGED):
        spec.build()
