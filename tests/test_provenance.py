"""A score card's provenance, checkable by standard tools: each file the policy reads by name and plain sha256 (what
``sha256sum`` prints), a label that is one normalised spec however the policy was named, the code that measured it;
``trinity benchmark --verify CARD`` re-checks them (exit 1 on a mismatch, 0 when all agree, 2 for a bad card)."""

from __future__ import annotations

import hashlib
import json
import shutil
import subprocess
import textwrap
from pathlib import Path

import pytest
from pools import write_pool

from trinity_env import provenance, scorecard
from trinity_env.agents.spec import AgentSpec
from trinity_env.cli import main as trinity
from trinity_env.evaluation import anchored

ROOT = Path(__file__).resolve().parent.parent
MODEL = ROOT / "docs" / "benchmark" / "models" / "cleanrl-ppo.onnx"
TINY = scorecard.Protocol("tiny", rating_games=2, accuracy_per_count=2, puzzles=4)


@pytest.fixture
def model(tmp_path, monkeypatch):
    """An ONNX policy copied into a folder that is the working directory: ``x.onnx``."""
    pytest.importorskip("onnxruntime")
    shutil.copyfile(MODEL, tmp_path / "x.onnx")
    monkeypatch.chdir(tmp_path)
    return tmp_path / "x.onnx"


def card_of(spec: str) -> dict:
    """The provenance part of the card ``benchmark`` writes for ``spec`` (its files and code, as it records them)."""
    who = AgentSpec.parse(spec)
    return {"benchmark": scorecard.BENCHMARK_VERSION, "files": provenance.policy_files(who, who.build()),
            "code": provenance.code_provenance()}  # fmt: skip


def test_a_card_s_file_hash_is_the_file_s_plain_sha256_as_sha256sum_prints_it(model):
    files = card_of("onnx:x.onnx")["files"]
    data = model.read_bytes()
    assert files == [{"name": "x.onnx", "sha256": hashlib.sha256(data).hexdigest(), "bytes": len(data)}]
    if shutil.which("sha256sum"):
        printed = subprocess.run(["sha256sum", "x.onnx"], capture_output=True, text=True, check=True).stdout
        assert printed.split()[0] == files[0]["sha256"]
    # renamed for release, the file keeps its hash (the old agent_sha256 hashed the name and size too)
    model.rename(model.with_name("release.onnx"))
    assert card_of("onnx:release.onnx")["files"][0]["sha256"] == files[0]["sha256"]


def test_a_shipped_network_is_named_inside_the_package_and_hashed_plainly():
    pytest.importorskip("torch")
    files = card_of("ppo-standard")["files"]
    assert [f["name"] for f in files] == ["trinity_env/agents/data/ppo-standard.pt"]
    path = provenance.PACKAGE / "agents" / "data" / "ppo-standard.pt"
    assert files[0]["sha256"] == hashlib.sha256(path.read_bytes()).hexdigest()


def test_one_policy_has_one_label_however_it_was_named(model, tmp_path, monkeypatch):
    label = provenance.policy_label
    same = ["onnx:x.onnx", "onnx:./x.onnx", f"onnx:{model}", f"onnx:{tmp_path}/../{tmp_path.name}/x.onnx"]
    assert {label(AgentSpec.parse(spec)) for spec in same} == {"onnx:x.onnx"}
    assert label(AgentSpec.parse(f"onnx:{model},threads=1")) == "onnx:x.onnx,threads=1"
    assert label(AgentSpec.parse("mcts:400,seed=3")) == "mcts:400,seed=3"
    assert label(AgentSpec.parse("level:5")) == label(AgentSpec.parse("lookahead")) == "lookahead"
    elsewhere = tmp_path / "deep" / "models"
    elsewhere.mkdir(parents=True)
    shutil.copyfile(model, elsewhere / "y.onnx")
    (tmp_path / "work").mkdir()
    monkeypatch.chdir(
        tmp_path / "work"
    )  # the file outside the working directory: its name alone, no path of this machine
    assert label(AgentSpec.parse(f"onnx:{elsewhere}/y.onnx")) == "onnx:y.onnx"
    assert str(tmp_path) not in json.dumps(card_of(f"onnx:{elsewhere}/y.onnx")["files"])


def test_a_python_function_and_the_factory_that_returns_it_have_one_label(tmp_path, monkeypatch):
    (tmp_path / "myheur.py").write_text(
        textwrap.dedent("""
        def heuristic(observation, mask):
            return int(mask.argmax())

        def make():
            return heuristic
        """)
    )
    monkeypatch.syspath_prepend(str(tmp_path))
    import myheur

    from trinity_env.agents.spec import player

    direct = player(myheur.heuristic)
    by_path = AgentSpec.parse("py:myheur:make", allow_code=True)
    labels = {provenance.policy_label(direct, direct.build()), provenance.policy_label(by_path, by_path.build())}
    assert labels == {"py:myheur:heuristic"}
    files = provenance.policy_files(by_path, by_path.build())  # the code it runs: its module's source file
    assert files[0]["name"] == "myheur.py"
    assert files[0]["sha256"] == hashlib.sha256((tmp_path / "myheur.py").read_bytes()).hexdigest()


def test_the_code_hash_is_the_defined_hash_over_the_package_s_source_and_names_the_commit():
    anchored.source_sha256.cache_clear()  # computed once a process: the files may have been edited since
    digest = hashlib.sha256()
    for path in sorted(provenance.PACKAGE.rglob("*.py")):
        relative = path.relative_to(provenance.PACKAGE).as_posix()
        digest.update(relative.encode() + b"\0" + path.read_bytes() + b"\0")
    code = provenance.code_provenance()
    assert code["source_sha256"] == digest.hexdigest()
    if (ROOT / ".git").exists() and shutil.which("git"):
        head = subprocess.run(["git", "-C", str(ROOT), "rev-parse", "HEAD"], capture_output=True, text=True)
        assert code["git_commit"] == head.stdout.strip() and isinstance(code["git_dirty"], bool)


def test_verify_passes_an_untouched_card_and_names_an_edited_file(model, tmp_path, capsys):
    card = tmp_path / "card.json"
    card.write_text(json.dumps(card_of("onnx:x.onnx")))
    assert trinity(["benchmark", "--verify", str(card)]) == 0
    assert "all 1 files and the code agree" in capsys.readouterr().out
    model.write_bytes(model.read_bytes() + b"\0")  # one byte more
    assert trinity(["benchmark", "--verify", str(card)]) == 1
    out = capsys.readouterr().out.splitlines()
    assert len(out) == 1 and out[0].startswith(f"{card}: x.onnx: sha256 ") and "the card records" in out[0]
    model.unlink()
    assert trinity(["benchmark", "--verify", str(card)]) == 1
    assert "x.onnx: not found" in capsys.readouterr().out


def test_verify_names_code_that_is_not_the_card_s(model, tmp_path, capsys):
    data = card_of("onnx:x.onnx")
    data["code"]["source_sha256"] = "0" * 64
    card = tmp_path / "card.json"
    card.write_text(json.dumps(data))
    assert trinity(["benchmark", "--verify", str(card)]) == 1
    out = capsys.readouterr().out.splitlines()
    assert len(out) == 1 and "code: source_sha256 " in out[0]


@pytest.mark.parametrize(
    "content, problem",
    [
        ("not json", "score card"),
        ('{"agent": "x"}', "not a score card"),
        ('{"benchmark": 2, "agent": "x", "agent_sha256": null}', "without file and code hashes"),
        ('{"benchmark": 3, "files": [{"name": "/etc/passwd", "sha256": "0"}], "code": {"source_sha256": "0"}}',
         "relative"),
        ('{"benchmark": 3, "files": "x", "code": {}}', "files must be a list"),
    ],
)  # fmt: skip
def test_verify_refuses_a_bad_card_in_one_line_with_status_2(tmp_path, capsys, content, problem):
    card = tmp_path / "card.json"
    card.write_text(content)
    assert trinity(["benchmark", "--verify", str(card)]) == 2
    err = capsys.readouterr().err
    assert problem in err and err.count("\n") == 1
    assert trinity(["benchmark", "--verify", str(card), "--agent", "greedy"]) == 2
    assert "give no --agent" in capsys.readouterr().err


def test_a_card_written_by_benchmark_records_its_files_label_and_code_and_verifies(model, tmp_path, monkeypatch):
    """End to end: ``trinity benchmark --agent onnx:./x.onnx`` writes a card whose label is normalised, whose files are
    the model's plain sha256 and whose code is this package's; ``--verify`` passes it."""
    pool = write_pool(tmp_path / "reference_pool_draft.json", "pick")
    monkeypatch.setattr(anchored, "POOL_FILES", {"dealt": anchored.POOL_FILE, "pick": tmp_path / f"{pool.name}.json"})
    monkeypatch.setitem(scorecard.PROTOCOLS, "quick", TINY)
    assert trinity(["benchmark", "--agent", "onnx:./x.onnx", "--workers", "1", "--quiet", "--out", "card"]) == 0
    data = json.loads((tmp_path / "card" / "scorecard.json").read_text())
    assert data["agent"] == "onnx:x.onnx" and data["benchmark"] == scorecard.BENCHMARK_VERSION
    assert data["files"] == card_of("onnx:x.onnx")["files"]
    code = provenance.code_provenance()  # the commit may move while the test runs (others commit): its form
    assert data["code"]["source_sha256"] == code["source_sha256"] and data["code"]["package"] == code["package"]
    assert isinstance(data["code"]["git_commit"], type(code["git_commit"])) and "agent_sha256" not in data
    assert data["files"][0]["sha256"] in (tmp_path / "card" / "scorecard.md").read_text()
    assert trinity(["benchmark", "--verify", "card/scorecard.json"]) == 0
