"""``AgentSpec``: a spec is parsed and checked once, without building the agent; the value travels down, pickles,
and builds the same agent ``make`` does."""

from __future__ import annotations

import pickle

import pytest

from trinity_env.agents import registry
from trinity_env.agents.loaders.checkpoint import CheckpointError
from trinity_env.agents.mcts import MCTSAgent
from trinity_env.agents.spec import AgentSpec, Player, make, player
from trinity_env.core import ArgumentError

GOOD = ["random", "random:7", "greedy", "lookahead", "mcts:400", " mcts:25,seed=3,c=1.2 ", "mcts:16,draft=search"]


@pytest.mark.parametrize("text", GOOD)
def test_a_spec_round_trips_and_pickles(text):
    spec = AgentSpec.parse(text)
    assert str(spec) == spec.label == text.strip()
    assert AgentSpec.parse(spec) is spec
    again = pickle.loads(pickle.dumps(spec))
    assert again == spec and hash(again) == hash(spec)
    with pytest.raises(AttributeError):
        spec.text = "greedy"  # frozen


@pytest.mark.parametrize("text", GOOD)
def test_build_makes_what_make_makes(text):
    built, made = AgentSpec.parse(text).build(), make(text)
    assert type(built) is type(made) and built.name == made.name == text.strip()


@pytest.mark.parametrize(
    "text, problem",
    [
        ("", "an agent spec is a string"),
        ("nope", "no agent named 'nope'"),
        ("mcts:abc", "simulations must be an integer"),
        ("mcts:2000000", "simulations must be a whole number from 1"),
        ("mcts:400,worlds=100000", "worlds must be a whole number"),
        ("mcts:400,bogus=1", "takes no argument"),
        ("mcts:4,5", "too many positional arguments"),
        ("random:1,2", "too many positional arguments"),
        ("random:-1", "seed must be a whole number"),
        ("greedy:3", "too many positional arguments"),
        ("ppo-standard:bogus=1", r"takes no argument .bogus. \(it takes sample, seed\)"),
        ("mcts:400,simulations=5", "got simulations twice"),
        ("az", "az needs a checkpoint"),
        ("az:no/such/file.pt", "no checkpoint at"),
        ("az-standard:sims=-1", "sims must be a whole number"),
        ("az-standard:sims=40000,worlds=64", "worlds x sims"),
        ("az-standard:search=puct", "az-standard's argument search= is now mode="),
        ("az-standard:mode=beam", "mode must be one of puct, gumbel, got 'beam'"),
        ("ppo-standard:sample=maybe", "sample must be none, all or draft"),
        ("./no/such/run", "no checkpoint at"),
        ("x" * 2000, "at most 1000 characters"),
        ("file:a\x00b", "NUL"),
    ],
)
def test_a_bad_spec_is_one_line_and_nothing_is_built(monkeypatch, text, problem):
    def never(*args, **kwargs):
        raise AssertionError("an agent was built while checking a spec")

    monkeypatch.setattr(MCTSAgent, "__init__", never)
    with pytest.raises((registry.AgentSpecError, CheckpointError), match=problem) as caught:
        AgentSpec.parse(text)
    assert "\n" not in str(caught.value)


def test_checking_a_spec_allocates_no_tree_and_reads_no_checkpoint(monkeypatch):
    loads = []
    import trinity_env.agents.az as az

    real = az.load_network
    monkeypatch.setattr(az, "load_network", lambda path: loads.append(path) or real(path))
    monkeypatch.setattr(MCTSAgent, "__init__", lambda *a, **k: (_ for _ in ()).throw(AssertionError("built")))
    for text in ("mcts:1000000", "az-standard", "az-standard:sims=0", "ppo-standard"):
        AgentSpec.parse(text)
    assert loads == []
    spec = AgentSpec.parse("az-standard:sims=0")
    spec.build()
    spec.build()
    assert len(loads) == 2  # each build reads it once, parsing never


def test_families_name_the_kernels_each_agent_runs_on():
    assert AgentSpec.parse("random").families == ()
    assert AgentSpec.parse("greedy").families == ("baselines",)
    assert AgentSpec.parse("mcts:8").families == ("MCTS",)
    assert AgentSpec.parse("az-standard").families == ("tactical features", "AlphaZero search")
    assert AgentSpec.parse("ppo-standard").families == ()


def test_a_path_spec_keeps_its_path_and_a_builtin_name_is_never_a_file(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "greedy.pt").write_bytes(b"not a checkpoint")
    assert AgentSpec.parse("greedy").name == "greedy"
    spec = AgentSpec.parse("./greedy.pt")
    assert (spec.name, spec.path) == ("file:", "greedy.pt")
    assert AgentSpec.parse("file:greedy").path == "greedy.pt"


def test_player_takes_specs_and_players_and_refuses_the_rest():
    assert player("greedy") == AgentSpec.parse("greedy")
    spec = AgentSpec.parse("mcts:8")
    assert player(spec) is spec and isinstance(spec, Player)
    with pytest.raises(ArgumentError, match="an agent is given as a spec"):
        player(42)


def test_the_arena_checks_without_building_and_builds_each_agent_once_a_process(monkeypatch):
    """``az:`` checkpoints are read once per process, not once per 10-game chunk nor again to check the spec."""
    import trinity_env.agents.az as az
    from trinity_env.evaluation.arena import check_arena, round_robin

    loads = []
    real = az.load_network
    monkeypatch.setattr(az, "load_network", lambda path: loads.append(path) or real(path))
    players = check_arena(["az-standard:sims=0", "random"], 30)
    assert players == [AgentSpec.parse("az-standard:sims=0"), AgentSpec.parse("random")] and loads == []
    result = round_robin(players, 30, seed=1, workers=1, progress=False)
    assert len(loads) == 1 and result.games[0, 1] == 30  # three chunks, one load
    assert result.agents == ["az-standard:sims=0", "random"]


def test_an_onnx_policy_is_named_by_onnx_path_and_plays_in_the_arena(tmp_path):
    torch = pytest.importorskip("torch")
    pytest.importorskip("onnxruntime")
    from trinity_env.agents.loaders.onnx_policy import OnnxPolicyAgent, export_policy
    from trinity_env.evaluation.arena import round_robin

    torch.manual_seed(0)
    module = torch.nn.Sequential(torch.nn.Linear(339, 32), torch.nn.ReLU(), torch.nn.Linear(32, 256))
    path = export_policy(module, tmp_path / "policy.onnx")
    text = f"onnx:{path}"
    spec = AgentSpec.parse(text)
    assert (spec.name, spec.path, spec.families) == ("onnx", str(path), ())
    assert isinstance(spec.build(), OnnxPolicyAgent)
    result = round_robin([text, "random"], 4, seed=2, workers=1, progress=False)
    assert result.agents == [text, "random"] and result.games[0, 1] == 4
    for bad, problem in [
        ("onnx", "onnx needs a model file"),
        (f"onnx:{tmp_path}", "is a folder"),
        (f"onnx:{tmp_path / 'missing.onnx'}", "no checkpoint at"),
        (f"onnx:{path},threads=0", "threads must be a whole number"),
    ]:
        with pytest.raises((registry.AgentSpecError, CheckpointError), match=problem):
            AgentSpec.parse(bad)


def test_outside_code_by_import_path_runs_only_when_allowed_and_rebuilds_in_workers():
    text = "py:trinity_env.agents.baselines:GreedyAgent"
    with pytest.raises(registry.AgentSpecError, match="--allow-code"):
        AgentSpec.parse(text)
    spec = AgentSpec.parse(text, allow_code=True)
    assert spec.allow_code and spec.build().name == text
    forged = AgentSpec(text, "py", ("trinity_env.agents.baselines:GreedyAgent",))  # built by hand, not allowed
    with pytest.raises(registry.AgentSpecError, match="not allowed"):
        forged.build()
    from trinity_env.evaluation.arena import round_robin

    result = round_robin([spec, "greedy"], 20, seed=0, workers=2, progress=False)  # workers import it by its path
    assert result.agents == [text, "greedy"] and result.games[0, 1] == 20
