"""AlphaZero: the batched search against the core, the hidden-information rule, the network's
checkpoints, the trainer's reproducibility, resume and config errors, and the shipped agent."""

from __future__ import annotations

import json
import random
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
import torch
from trainer_runs import AZ_TWO_ITERATIONS

from trinity_env.agents import make
from trinity_env.agents.az import AZAgent, AZNetwork, load_network, save_network
from trinity_env.agents.networks.ppo_network import CheckpointError
from trinity_env.agents.networks.tactics import tactical_features
from trinity_env.core import GameState
from trinity_env.envs import make_config
from trinity_env.fast.convert import from_states
from trinity_env.fast.games import FastGames
from trinity_env.fast.tactics import tactical_batch
from trinity_env.search.az import BatchedSearch, uniform_evaluate
from trinity_env.search.az.seq_halving import considered_visits
from trinity_env.spec.observation import action_mask, encode_observation
from trinity_env.testing import hidden_twin

from games import random_positions

ROOT = Path(__file__).resolve().parent.parent


def _observation(state: GameState, seat: int, open_hands: bool) -> dict:
    return {"observation": encode_observation(state, seat, open_hands), "action_mask": action_mask(state, seat)}


def _won_in_one() -> GameState:
    """Player 0 holds lane 0's first four tiles: any card on tile 4 wins at once; nothing else does."""
    mine, theirs = {"card": "5555", "owner": 0}, {"card": "5555", "owner": 1}
    return GameState.from_dict(
        {
            "phase": "play",
            "to_move": 0,
            "board": [
                [mine, mine, mine, mine, None],
                [theirs, None, None, theirs, None],
                [None, theirs, None, None, None],
            ],
            "hands": [["1111", "2222", "1212"], ["9999", "8888", "9898"]],
            "max_a_cards": 3,
        }
    )


# ------------------------------------------------------------------------------ the search


@pytest.mark.parametrize("mode", ["gumbel", "puct"])
def test_search_plays_legal_moves_and_its_visits_sum_to_the_budget(mode):
    states = random_positions(24, 1, 14, draft="dealt") + random_positions(8, 2, 14)  # play and draft
    roots = from_states(states)
    search = BatchedSearch(len(states), 24, mode=mode)
    result = search.run(
        roots, uniform_evaluate, np.random.default_rng(0), gumbel_scale=1.0, noise_alpha=0.3, noise_fraction=0.25
    )
    for j, state in enumerate(states):
        legal = set(state.legal_actions())
        assert int(result.action[j]) in legal
        assert result.visits[j].sum() == 24
        assert set(np.flatnonzero(result.visits[j])) <= legal
        assert set(np.flatnonzero(result.policy[j])) == legal
        assert result.policy[j].sum() == pytest.approx(1.0, abs=1e-5)
    assert np.array_equal(roots.owner, from_states(states).owner), "the search must not move the roots"


@pytest.mark.parametrize("mode", ["gumbel", "puct"])
def test_a_root_s_search_does_not_depend_on_the_search_s_room_or_the_other_roots(mode):
    """Self-play searches fewer roots than the search holds once some games have ended: each root's result
    must be what a search of that root alone gives (a scratch row with another game's deck once corrupted
    every root past the first ended game)."""
    states = random_positions(12, 5, 12, draft="dealt") + random_positions(4, 6, 20)  # play and draft
    alone = []
    for state in states:
        result = BatchedSearch(1, 16, mode=mode).run(from_states([state]), _fixed_evaluate)
        alone.append((int(result.action[0]), result.visits[0].tolist(), float(result.value[0])))
    for room in (len(states), len(states) + 5, 64):
        search = BatchedSearch(room, 16, mode=mode)
        for _ in range(2):  # and again, after the search held other roots
            result = search.run(from_states(states), _fixed_evaluate)
            together = [(int(a), v.tolist(), float(x)) for a, v, x in zip(result.action, result.visits, result.value)]
            assert together == alone, f"room {room}"
        search.run(from_states(states[::-1]), _fixed_evaluate)


def _fixed_evaluate(observations: np.ndarray, masks: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """A deterministic evaluator that tells positions apart (a uniform one would hide wrong leaves): logits
    and a value from fixed projections of the observation, row by row."""
    weights = np.random.default_rng(0).integers(-3, 4, (observations.shape[1], 257))
    out = (observations.astype(np.int64) @ weights).astype(np.float32) / 64  # integers: exact at any batch size
    return out[:, :256], np.tanh(out[:, 256])


@pytest.mark.parametrize("mode", ["gumbel", "puct"])
def test_search_finds_a_win_in_one_and_values_terminals_truly(mode):
    state = _won_in_one()
    winning = {a for a in state.legal_actions() if state.apply(a).winner == 0}
    assert winning and len(winning) < len(state.legal_actions())
    search = BatchedSearch(1, 64, mode=mode, max_considered=64)
    result = search.run(from_states([state]), uniform_evaluate, np.random.default_rng(0))
    assert int(result.action[0]) in winning
    children = search.trees.edge_child[0, 0, : search.trees.num_edges[0, 0]]
    actions = search.trees.edge_action[0, 0, : search.trees.num_edges[0, 0]]
    for child, action in zip(children, actions):
        if child >= 0 and int(action) in winning:  # a won game: every visit is worth +1 for the mover
            assert search.trees.value_sum[0, child] == search.trees.visits[0, child]
    assert result.value[0] > 0


def test_values_follow_the_player_not_the_depth_when_a_player_passes():
    """Player 1 has no card: player 0 places its last two cards running, and every end is its win
    (lane 0 or the lane majority). Each win must count for player 0 at every node, two plies deep too."""
    mine = {"card": "5555", "owner": 0}
    state = GameState.from_dict(
        {
            "phase": "play",
            "to_move": 0,
            "board": [[mine, mine, mine, None, None], [None] * 5, [None] * 5],
            "hands": [["1111", "2222"], []],
            "max_a_cards": 3,
        }
    )
    search = BatchedSearch(1, 200, mode="puct")
    result = search.run(from_states([state]), uniform_evaluate, np.random.default_rng(0))
    trees = search.trees
    visited = np.flatnonzero(trees.visits[0, 1 : trees.size[0]] >= 2) + 1
    assert visited.size > 3
    for node in visited:
        assert trees.to_move[0, node] == 0 or trees.winner[0, node] == 0
        assert trees.value_sum[0, node] > 0, "a win of player 0 was credited against it"
    assert result.value[0] > 0.5


def test_the_gumbel_schedule_is_mctx_s():
    assert considered_visits(4, 8) == (0, 0, 0, 0, 1, 1, 2, 2)
    assert considered_visits(1, 3) == (0, 1, 2)
    assert len(considered_visits(16, 32)) == 32


def test_compiled_tactical_features_equal_the_tensor_ones():
    games = FastGames(64, seed=3, draft="dealt")
    observations = []
    for _ in range(10):
        observations.append(games.observations())
        games.step(games.random_actions(np.arange(64)))
    obs = np.concatenate(observations)
    assert np.array_equal(tactical_batch(obs), tactical_features(torch.from_numpy(obs)).numpy())


# ------------------------------------------------------------------------------ the hidden-information rule


@pytest.mark.parametrize("open_hands", [True, False])
def test_az_never_reads_what_its_seat_cannot_see(open_hands):
    """Drafts (secret picks) and hidden hands: states differing only in what seat 0 cannot see give one move."""
    config = make_config(open_hands=open_hands)
    rng = random.Random(7)
    network = AZNetwork(32, 1, True)
    compared = 0
    for _ in range(3):
        state = config.new_game(rng)
        while not state.is_over:
            hidden = state.phase == "draft" or not open_hands
            if (
                state.to_move == 0
                and hidden
                and rng.random() < 0.5
                and (other := hidden_twin(state, 0, rng, open_hands=open_hands)) is not None
            ):
                obs = _observation(state, 0, open_hands)
                assert (obs["observation"] == _observation(other, 0, open_hands)["observation"]).all()
                moves = {AZAgent(network, 16, worlds=3, seed=5).act(obs, truth) for truth in (state, other)}
                assert len(moves) == 1
                compared += 1
            state = state.apply(rng.choice(state.legal_actions()))
    assert compared >= 8


# ------------------------------------------------------------------------------ checkpoints and specs


def test_network_checkpoints_round_trip_and_every_fault_names_the_file(tmp_path):
    network = AZNetwork(16, 1, True)
    path = tmp_path / "net.pt"
    save_network(path, network, {"games": 3})
    loaded, payload = load_network(path)
    assert payload["games"] == 3
    for key, tensor in network.state_dict().items():
        assert torch.equal(tensor, loaded.state_dict()[key])
    good = torch.load(path, weights_only=True)
    faults = {
        "truncated.pt": lambda p: p.write_bytes(path.read_bytes()[:100]),
        "text.pt": lambda p: p.write_text("not a checkpoint"),
        "foreign.pt": lambda p: torch.save({"format": "something else"}, p),
        "hidden.pt": lambda p: torch.save(good | {"hidden": "16"}, p),
        "layers.pt": lambda p: torch.save(good | {"layers": 3}, p),
        "tactics.pt": lambda p: torch.save(good | {"tactics": 1}, p),
        "nan.pt": lambda p: torch.save(good | {"model": good["model"] | {"value.bias": torch.tensor([np.nan])}}, p),
        "pickled.pt": lambda p: torch.save(good | {"extra": Path("x")}, p),
    }
    for name, write in faults.items():
        bad = tmp_path / name
        write(bad)
        with pytest.raises(CheckpointError, match=name):
            load_network(bad)
    with pytest.raises(CheckpointError, match=r"missing\.pt"):
        load_network(tmp_path / "missing.pt")


def test_az_specs_play_raw_and_searched_and_refuse_bad_arguments(tmp_path):
    from trinity_env.agents import AgentSpecError
    from trinity_env.evaluation.match import play_game

    save_network(tmp_path / "best.pt", AZNetwork(16, 1, True))
    for spec in (f"az:{tmp_path},sims=0", f"az:{tmp_path / 'best.pt'},sims=8,solver=5"):
        agent = make(spec)
        assert agent.name == spec
        for config in (make_config(None), make_config(draft="dealt", open_hands=False)):
            assert play_game((agent, make("random")), config, seed=1).is_over
    with pytest.raises(AgentSpecError, match="sims"):
        make(f"az:{tmp_path},sims=many")
    with pytest.raises(CheckpointError, match=r"no checkpoint at .*missing\.pt"):  # the file's fault, not the spec's
        make(f"az:{tmp_path / 'missing.pt'}")


def test_the_solver_option_plays_a_winning_move_in_the_endgame():
    state = _won_in_one()
    agent = AZAgent(AZNetwork(16, 1, False), 0, solver=12)
    action = agent.act(_observation(state, 0, True))
    assert state.apply(action).winner == 0


# ------------------------------------------------------------------------------ the trainer

TINY = AZ_TWO_ITERATIONS | {
    "total_games": 24,
    "draft_share": 0.5,
    "eval_every_games": 24,
    "label_workers": 0,  # inline labels: tests/test_labelling.py runs the workers
}


def _weights(run: Path) -> dict:
    return load_network(run / "latest.pt")[0].state_dict()


def _same(a: dict, b: dict) -> bool:
    return a.keys() == b.keys() and all(torch.equal(a[k], b[k]) for k in a)


def test_same_seed_same_weights_and_a_resumed_run_equals_an_unbroken_one(tmp_path):
    from training.alphazero import train
    from training.az_config import AZConfig

    config = AZConfig.from_dict(TINY)
    history = train(config, tmp_path / "a", progress=False)
    assert history[-1]["games"] == 24 and set(history[-1]) == {"games", "learner_steps", "seconds", "results"}
    train(config, tmp_path / "b", progress=False)
    assert _same(_weights(tmp_path / "a"), _weights(tmp_path / "b"))
    train(config, tmp_path / "c", progress=False, stop_at=8)  # a session that stops after one iteration ...
    assert load_network(tmp_path / "c" / "latest.pt")[1]["games"] == 8
    train(config, tmp_path / "c", resume=True, progress=False)  # ... and the rest
    assert _same(_weights(tmp_path / "a"), _weights(tmp_path / "c"))
    # the stop's own measure was for its report only: best.pt is the one the unbroken run chose
    best_a, best_c = load_network(tmp_path / "a" / "best.pt"), load_network(tmp_path / "c" / "best.pt")
    assert best_a[1]["games"] == best_c[1]["games"] and _same(best_a[0].state_dict(), best_c[0].state_dict())

    def rows(run: str) -> list[list[str]]:  # all but the seconds column
        return [row.split(",")[:1] + row.split(",")[2:] for row in (tmp_path / run / "metrics.csv").read_text().split()]

    assert rows("c") == rows("a")
    other = AZConfig.from_dict(TINY | {"seed": 4})
    train(other, tmp_path / "d", progress=False)
    assert not _same(_weights(tmp_path / "a"), _weights(tmp_path / "d"))


def test_a_stop_between_evaluations_is_measured_for_the_report_and_never_chooses_best(tmp_path):
    from training.alphazero import train
    from training.az_config import AZConfig

    config = AZConfig.from_dict(TINY | {"total_games": 32, "eval_every_games": 16})
    history = train(config, tmp_path, progress=False, stop_at=24)
    assert [h["games"] for h in history] == [16, 24]  # the scheduled evaluation, then the stop's
    assert load_network(tmp_path / "best.pt")[1]["games"] == 16  # the same rule as the PPO trainer's


def test_each_evaluation_measures_the_network_against_perfect_play_and_best_ignores_it(tmp_path):
    import csv

    from training.alphazero import train
    from training.az_config import AZConfig
    from training.evaluation import EXACT, selection_score
    from trinity_env.agents.az import numpy_evaluator
    from trinity_env.evaluation.accuracy import score_network, validation_set

    history = train(AZConfig.from_dict(TINY | {"eval_accuracy": True}), tmp_path / "run", progress=False)
    results = history[-1]["results"]
    assert set(results) == {"random", "exact:policy", "exact:value", "exact:policy@10", "exact:value@10"}
    # the rows are the accuracy tool's own figures for the saved network, pooled over the validation set
    network = load_network(tmp_path / "run" / "latest.pt")[0]
    rows = score_network(numpy_evaluator(network), validation_set())
    pooled = sum(r.value_sign.hits for r in rows) / sum(r.value_sign.total for r in rows)
    assert results["exact:value"][0] == pytest.approx(pooled)
    assert all(0 <= low <= rate <= high <= 1 for rate, low, high in results.values())
    with open(tmp_path / "run" / "metrics.csv", newline="") as handle:
        logged = {row[2] for row in csv.reader(handle)}
    assert {"exact:policy", "exact:value@10"} <= logged
    assert selection_score(results) == results["random"][0]
    unmeasured = train(AZConfig.from_dict(TINY | {"eval_accuracy": False}), tmp_path / "off", progress=False)
    assert not any(spec.startswith(EXACT) for spec in unmeasured[-1]["results"])


@pytest.mark.slow
def test_a_run_killed_outright_resumes_from_its_last_checkpoint(tmp_path):
    import time

    config = tmp_path / "tiny.yaml"
    config.write_text(json.dumps(TINY | {"total_games": 400}))  # JSON is YAML
    run = tmp_path / "run"
    command = [sys.executable, "-m", "training.alphazero", "--config", str(config), "--run", str(run)]
    process = subprocess.Popen(command, cwd=ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        deadline = time.time() + 120
        while not (run / "latest.pt").is_file() and time.time() < deadline and process.poll() is None:
            time.sleep(0.2)
    finally:
        process.kill()  # SIGKILL: no handler runs
        process.wait()
    before = load_network(run / "latest.pt")[1]["games"]
    assert 0 < before < 400
    done = subprocess.run([*command, "--resume"], cwd=ROOT, capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr[-2000:]
    assert load_network(run / "latest.pt")[1]["games"] == 400
    assert (run / "report.md").is_file() and (run / "win_rate.png").is_file()


@pytest.mark.parametrize(
    ("field", "value", "message"),
    [
        ("simulations", 0, "'simulations' must be at least 1"),
        ("mode", "beam", "'mode' must be one of"),
        ("solver_empty", 13, "'solver_empty' must be between 0 and 12"),
        ("learning_rate", 0.0, "'learning_rate' must be above 0"),
        ("hidden", True, "'hidden' must be int"),
        ("noise_fraction", 1.5, "'noise_fraction' must be between 0 and 1"),
        ("eval_opponents", ["mcts:lots"], "eval_opponents"),
        ("replay_size", 8, "'replay_size' must be at least batch_size"),
        ("draft_share", 0.5, "draft_share"),
        ("colour", "red", "unknown field"),
    ],
)
def test_bad_configs_name_the_field(field, value, message):
    from training.az_config import AZConfig
    from training.config import TrainConfigError

    data = TINY | {field: value}
    if field == "draft_share":
        data["env"] = {"draft": "pick"}
    with pytest.raises(TrainConfigError, match=message):
        AZConfig.from_dict(data)


def test_the_shipped_configs_load():
    from training.az_config import AZConfig

    for name in ("az-quick", "az-standard"):
        config = AZConfig.load(name)
        assert config.eval_opponents


def test_a_damaged_latest_checkpoint_is_refused_on_resume_naming_it(tmp_path):
    from training.alphazero import train
    from training.az_config import AZConfig

    config = AZConfig.from_dict(TINY | {"total_games": 8, "eval_every_games": 8})
    train(config, tmp_path / "run", progress=False)
    latest = tmp_path / "run" / "latest.pt"
    payload = torch.load(latest, weights_only=True)
    del payload["replay"]
    torch.save(payload, latest)
    with pytest.raises(CheckpointError, match=r"latest\.pt"):
        train(AZConfig.from_dict(TINY), tmp_path / "run", resume=True, progress=False)


def test_the_old_spelling_threads_is_refused_in_one_line_naming_torch_threads(tmp_path):
    """``threads`` was renamed ``torch_threads`` (``TrainConfig``'s spelling): an old YAML file, a mapping or a keyword
    that says ``threads`` (alone or beside ``torch_threads``) is refused naming the new name (0.x: no translation)."""
    from training.az_config import AZConfig
    from training.config import TrainConfigError

    assert "threads" not in AZConfig().to_dict() and AZConfig().torch_threads == 1
    old = tmp_path / "old.yaml"
    old.write_text("seed: 0\nthreads: 2\n")
    both = tmp_path / "both.yaml"
    both.write_text("threads: 1\ntorch_threads: 1\n")
    loads = (
        lambda: AZConfig.load(old),
        lambda: AZConfig.load(old, torch_threads=3),
        lambda: AZConfig.load(both),
        lambda: AZConfig.load("az-quick", threads=2),
        lambda: AZConfig.from_dict(TINY | {"threads": 2}),
        lambda: AZConfig.from_dict(TINY | {"threads": 1, "torch_threads": 2}),
    )
    for load in loads:
        with pytest.raises(
            TrainConfigError, match=r"field 'threads' is an older version's name: rename it 'torch_threads'"
        ) as error:
            load()
        assert "\n" not in str(error.value)


def test_a_run_whose_config_json_says_threads_is_refused_on_resume(tmp_path):
    """A run folder whose ``config.json`` says ``threads`` (written before the rename) is refused in one line naming
    ``torch_threads``, before anything in it is touched."""
    from training.az_config import AZConfig
    from training.config import TrainConfigError
    from training.run_folder import RunFolderError, claim, resume_conflicts

    config = AZConfig.from_dict(TINY)
    run = tmp_path / "run"
    run.mkdir()
    saved = {("threads" if name == "torch_threads" else name): value for name, value in config.to_dict().items()}
    (run / "config.json").write_text(json.dumps(saved))
    with pytest.raises(TrainConfigError, match=r"config\.json: field 'threads' .*rename it 'torch_threads'"):
        resume_conflicts(config, saved)
    with pytest.raises(RunFolderError) as error, claim(run, config, "alphazero", resume=True):
        pass
    message = str(error.value)
    assert "\n" not in message and f"cannot resume {run}: config.json: field 'threads'" in message
    assert json.loads((run / "config.json").read_text()) == saved  # untouched


def test_importing_the_search_does_not_load_torch():
    code = "import sys, trinity_env.search.az; print('torch' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "False"


# ------------------------------------------------------------------------------ the shipped agent and its page

FIGURES = ROOT / "docs" / "alphazero"


def test_az_standard_is_shipped_small_and_plays_everywhere():
    from trinity_env.agents import shipped
    from trinity_env.agents.registry import SHIPPED_DIR
    from trinity_env.evaluation.match import play_game

    path = SHIPPED_DIR / "az-standard.pt"
    assert path.stat().st_size < 5_000_000
    assert "az-standard" in shipped()
    network, payload = load_network(path)
    assert set(payload) == {"format", "network", "hidden", "layers", "tactics", "model", "games"}
    for spec in ("az-standard:sims=0", "az-standard:sims=16,solver=6"):
        agent = make(spec)
        for config in (make_config(None), make_config(draft="dealt"), make_config(open_hands=False)):
            assert play_game((agent, make("random")), config, seed=2).is_over


def _percent(rate: float) -> str:
    return f"{rate:.1%}"


def test_the_page_shows_the_figures_the_tools_wrote():
    page = (ROOT / "docs" / "alphazero.md").read_text(encoding="utf-8")
    arenas = sorted(FIGURES.glob("*/arena.json"))
    assert len(arenas) >= 3
    for path in arenas:
        table = (path.parent / "arena.md").read_text(encoding="utf-8").strip()
        assert table in page, f"docs/alphazero.md does not show {path.parent.name}/arena.md"
    endgames = json.loads((FIGURES / "endgames.json").read_text())
    for spec, share in endgames.items():
        assert f"`{spec}`: {_percent(share)}" in page
    bench = json.loads((FIGURES / "benchmark.json").read_text())
    for key in ("simulations_per_second_1_thread", "simulations_per_second_2_thread"):
        assert f"{bench[key]:,}" in page
    for key in ("self_play_games_per_second_1_thread", "self_play_games_per_second_2_thread"):
        assert f"{bench[key]:,.1f}" in page
    assert (FIGURES / "win_rate.png").is_file() and (FIGURES / "metrics.csv").is_file()


def test_ray_options_are_only_for_the_alphazero_trainer(capsys):
    from trinity_env.cli import main as trinity

    assert trinity(["train", "quick", "--ray"]) == 2
    assert "--ray and --workers are for the alphazero trainer" in capsys.readouterr().err
    assert trinity(["train", "az-quick", "--workers", "0"]) == 2
