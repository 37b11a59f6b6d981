"""The board network's fast evaluation (trinity_env.agents.networks.board_fast): it gives the torch forward pass's
logits and values to float rounding on real positions (placements, drafts, empty boards, hidden hands; one position and
batches past a chunk), and the search plays the same moves with it. With bfloat16 products and with int8 ones: within
their stated tolerances of the forward pass, and the search's moves agree; the int8 path loads no torch; the precision
is chosen by the processor's flags and the libraries installed, and the search uses the fastest but
bfloat16."""

from __future__ import annotations

import importlib.util
import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
import torch

from trinity_env.agents.az import BoardNetwork, evaluator, forward_evaluator, load_network, numpy_evaluator
from trinity_env.agents.networks import precision
from trinity_env.agents.networks.board_fast import CHUNK, FastBoardEvaluator
from trinity_env.agents.networks.board_int8 import WEIGHT_LEVELS, Int8Linear, quantize_columns
from trinity_env.agents.networks.precision import (
    BFLOAT16_LOGIT_TOLERANCE,
    BFLOAT16_VALUE_TOLERANCE,
    INT8_LOGIT_TOLERANCE,
    INT8_VALUE_TOLERANCE,
    PRECISIONS,
    fastest_precision,
    precision_for,
    search_precision,
)
from trinity_env.core.actions import DECK_SIZE
from trinity_env.fast.games import FastGames
from trinity_env.fast.tactics import tactical_batch
from trinity_env.search.az import BatchedSearch
from trinity_env.spec.observation import action_mask, encode_observation

from games import random_positions

SHIPPED = Path(__file__).resolve().parent.parent / "trinity_env" / "agents" / "data" / "az-standard.pt"

LOGIT_TOLERANCE = 1e-4
"""Float32 sums taken in another order: measured at most 1.2e-5 on the shipped network's logits (up to about 20)."""
VALUE_TOLERANCE = 1e-5


def _positions(count: int, seed: int, draft: str, open_hands: bool) -> tuple[np.ndarray, np.ndarray]:
    states = random_positions(count, seed, 20, draft=draft)
    observations = np.stack([encode_observation(s, s.to_move, open_hands) for s in states])
    return observations, np.stack([action_mask(s, s.to_move) for s in states])


needs_onnxruntime = pytest.mark.skipif(
    importlib.util.find_spec("onnxruntime") is None or importlib.util.find_spec("onnx") is None,
    reason="the int8 precision needs the onnx extra (onnxruntime, onnx)",
)


@pytest.fixture(scope="module")
def shipped() -> BoardNetwork:
    network, _ = load_network(SHIPPED)
    assert isinstance(network, BoardNetwork)
    return network.eval()


def _bfloat16(network: BoardNetwork) -> FastBoardEvaluator:
    return _precision(network, "bfloat16")


def _precision(network: BoardNetwork, precision: str) -> FastBoardEvaluator:
    weights = {key: tensor.detach().numpy() for key, tensor in network.state_dict().items()}
    return FastBoardEvaluator(weights, network.layers, network.tactics, precision)


def _assert_equal(
    network: BoardNetwork,
    observations: np.ndarray,
    masks: np.ndarray,
    evaluate=None,
    tolerances: tuple[float, float] = (LOGIT_TOLERANCE, VALUE_TOLERANCE),
) -> tuple[float, float]:
    with torch.no_grad():
        logits, values = network(torch.from_numpy(observations), torch.from_numpy(masks))
    fast_logits, fast_values = (evaluate or numpy_evaluator(network))(observations, masks)
    legal = masks == 1
    assert fast_logits.dtype == np.float32 and fast_logits.shape == logits.shape
    errors = np.abs(fast_logits[legal] - logits.numpy()[legal]).max(), np.abs(fast_values - values.numpy()).max()
    assert errors[0] <= tolerances[0]
    assert (fast_logits[~legal] == -1e9).all()
    assert errors[1] <= tolerances[1]
    return errors


@pytest.mark.parametrize("draft", ["dealt", "pick"])
@pytest.mark.parametrize("open_hands", [True, False])
def test_the_fast_evaluation_equals_the_forward_pass_on_the_shipped_network(shipped, draft, open_hands):
    observations, masks = _positions(2 * CHUNK + 22, 3, draft, open_hands)  # past two chunks, a partial last one
    if draft == "pick":
        assert (masks[:, :16].any(axis=1)).any() and (observations[:, 9:99] == 0).all(axis=1).any()
    _assert_equal(shipped, observations, masks)
    for size in (1, 2, 5):
        _assert_equal(shipped, observations[:size], masks[:size])


def _perturbed_network() -> BoardNetwork:
    """A small board network without tactics, its weights moved off their initial values (seeded)."""
    torch.manual_seed(1)
    network = BoardNetwork(16, 3, tactics=False).eval()
    with torch.no_grad():
        for parameter in network.parameters():
            parameter.add_(torch.randn_like(parameter) * 0.2)
    return network


def test_every_action_legal_and_a_network_without_tactics_still_match():
    network, (observations, masks) = _perturbed_network(), _positions(40, 4, "pick", True)
    _assert_equal(network, observations, masks)
    _assert_equal(network, observations, np.ones_like(masks))  # draft and placement heads on every position


def test_the_search_evaluates_the_board_network_without_its_forward_pass(shipped, monkeypatch):
    observations, masks = _positions(8, 5, "dealt", True)
    expected = forward_evaluator(shipped)(observations, masks)
    evaluate = evaluator(shipped)
    assert isinstance(evaluate, FastBoardEvaluator) and evaluate.precision == "float32"  # the default: reproducible
    assert evaluator(shipped, "fastest").precision == search_precision()

    def refuse(*_):
        raise AssertionError("the torch forward pass ran")

    monkeypatch.setattr(BoardNetwork, "forward", refuse)
    logits, values = evaluate(observations, masks)
    assert np.allclose(values, expected[1], atol=VALUE_TOLERANCE)
    assert np.allclose(logits, expected[0], atol=LOGIT_TOLERANCE)


def test_the_search_plays_the_same_moves_with_either_evaluation(shipped):
    games = FastGames(24, seed=6, draft="dealt")
    for _ in range(3):
        games.step(games.random_actions(np.arange(24)))
    search = BatchedSearch(24, 16)
    results = [
        search.run(games.batch, evaluate, np.random.default_rng(0), gumbel_scale=1.0)
        for evaluate in (forward_evaluator(shipped), _precision(shipped, "float32"))
    ]
    assert (results[0].action == results[1].action).all()
    assert (results[0].visits == results[1].visits).all()
    assert np.abs(results[0].policy - results[1].policy).max() < 1e-4


@pytest.mark.parametrize("draft", ["dealt", "pick"])
def test_bfloat16_products_stay_within_their_tolerance_of_the_forward_pass(shipped, draft):
    observations, masks = _positions(2 * CHUNK + 22, 3, draft, True)
    bfloat16 = _bfloat16(shipped)
    errors = _assert_equal(shipped, observations, masks, bfloat16, (BFLOAT16_LOGIT_TOLERANCE, BFLOAT16_VALUE_TOLERANCE))
    if draft == "dealt":  # the products are rounded: not the float32 path's figures (which are within 1e-4)
        assert errors[0] > LOGIT_TOLERANCE
    _assert_equal(shipped, observations[:1], masks[:1], bfloat16, (BFLOAT16_LOGIT_TOLERANCE, BFLOAT16_VALUE_TOLERANCE))


def test_the_search_plays_the_same_moves_with_bfloat16_products(shipped):
    """Measured on these seeds: every move the same, the visit counts of 47 of 48 roots the same, the improved
    policies within 0.013; the test allows two moves in 48 to differ and 0.05 in a policy."""
    actions, policies = [], []
    for seed in (6, 7):
        games = FastGames(24, seed=seed, draft="dealt")
        for _ in range(3):
            games.step(games.random_actions(np.arange(24)))
        search = BatchedSearch(24, 16)
        for evaluate in (forward_evaluator(shipped), _bfloat16(shipped)):
            result = search.run(games.batch, evaluate, np.random.default_rng(0), gumbel_scale=1.0)
            actions.append(result.action)
            policies.append(result.policy)
    assert (actions[0] != actions[1]).sum() + (actions[2] != actions[3]).sum() <= 2
    assert max(np.abs(policies[0] - policies[1]).max(), np.abs(policies[2] - policies[3]).max()) < 0.05


@needs_onnxruntime
@pytest.mark.parametrize("draft", ["dealt", "pick"])
@pytest.mark.parametrize("open_hands", [True, False])
def test_int8_products_stay_within_their_tolerance_of_the_forward_pass(shipped, draft, open_hands):
    observations, masks = _positions(2 * CHUNK + 22, 11, draft, open_hands)
    int8 = _precision(shipped, "int8")
    tolerances = (INT8_LOGIT_TOLERANCE, INT8_VALUE_TOLERANCE)
    errors = _assert_equal(shipped, observations, masks, int8, tolerances)
    assert errors[0] > LOGIT_TOLERANCE  # the products are rounded: not the float32 path's figures
    _assert_equal(shipped, observations[:1], masks[:1], int8, tolerances)


@needs_onnxruntime
def test_int8_products_of_another_network_every_action_legal():
    network, (observations, masks) = _perturbed_network(), _positions(40, 4, "pick", True)
    int8 = _precision(network, "int8")
    _assert_equal(network, observations, np.ones_like(masks), int8, (INT8_LOGIT_TOLERANCE, INT8_VALUE_TOLERANCE))


def test_the_tactical_features_of_the_legal_placements_only():
    observations, masks = _positions(30, 8, "dealt", True)
    every, legal_only = tactical_batch(observations), tactical_batch(observations, masks)
    legal = masks[:, DECK_SIZE:].reshape(every.shape[:3]) == 1
    assert legal.any() and (~legal).any()
    assert np.array_equal(legal_only[legal], every[legal]) and (legal_only[~legal] == 0).all()
    assert (every[~legal] != 0).any()  # the features of illegal placements exist: they were skipped


def test_tactical_features_refuse_masks_of_another_width():
    observations, masks = _positions(3, 1, "dealt", True)
    with pytest.raises(ValueError, match=r"masks must be \[B, 256\] for 3 observations"):
        tactical_batch(observations, masks[:, :100])


@needs_onnxruntime
def test_an_int8_layer_is_its_float32_layer_to_the_rounding_of_its_inputs_and_weights():
    rng = np.random.default_rng(3)
    weight, bias = rng.standard_normal((128, 40)).astype(np.float32) * 0.1, rng.standard_normal(40).astype(np.float32)
    x = np.maximum(rng.standard_normal((70, 128)).astype(np.float32), 0)
    x[5] = 0  # a row of zeros: scale 1, the bias alone
    exact = x @ weight + bias
    layer = Int8Linear((weight, bias))
    assert np.allclose(layer(x), exact, atol=0.05) and not np.allclose(layer(x), exact, atol=1e-4)
    assert np.array_equal(layer(x, relu=True), np.maximum(layer(x), 0)) and np.array_equal(layer(x)[5], bias)


def test_weights_are_quantized_per_column_to_half_a_step():
    weight = np.random.default_rng(0).standard_normal((64, 8)).astype(np.float32) * np.arange(1, 9, dtype=np.float32)
    weight[:, 3] = 0  # a zero column: scale 1, every entry 0
    q, scale = quantize_columns(weight)
    assert q.dtype == np.int8 and np.abs(q).max() == WEIGHT_LEVELS and (q[:, 3] == 0).all() and scale[3] == 1
    assert (np.abs(q * scale - weight) <= scale / 2 + 1e-7).all()
    assert np.allclose(scale[[0, 7]], np.abs(weight[:, [0, 7]]).max(axis=0) / WEIGHT_LEVELS)


@needs_onnxruntime
def test_the_search_plays_the_same_moves_with_int8_products(shipped):
    """Measured on 3,145 distinct positions (256 trees x 32 simulations; dealt and drafted games, 0 to 14 plies in):
    int8 chose float32's move in 98.3% of them (bfloat16 in 99.4%; int8 trunk layers too, tried: 91%). Here 48
    positions: at most three moves may differ."""
    differ = 0
    for seed in (6, 7):
        games = FastGames(24, seed=seed, draft="dealt")
        for _ in range(3):
            games.step(games.random_actions(np.arange(24)))
        search = BatchedSearch(24, 16)
        results = [
            search.run(games.batch, evaluate, np.random.default_rng(0))
            for evaluate in (_precision(shipped, "float32"), _precision(shipped, "int8"))
        ]
        differ += (results[0].action != results[1].action).sum()
    assert differ <= 3


@needs_onnxruntime
def test_the_int8_path_loads_no_torch(shipped, tmp_path):
    weights = {key: tensor.detach().numpy() for key, tensor in shipped.state_dict().items()}
    np.savez(tmp_path / "weights.npz", **weights)
    observations, masks = _positions(5, 2, "dealt", True)
    np.savez(tmp_path / "positions.npz", observations=observations, masks=masks)
    expected = _precision(shipped, "int8")(observations, masks)
    script = f"""
import sys
import numpy as np
from trinity_env.agents.networks.board_fast import FastBoardEvaluator
weights = dict(np.load({str(tmp_path / "weights.npz")!r}))
positions = np.load({str(tmp_path / "positions.npz")!r})
logits, values = FastBoardEvaluator(weights, {shipped.layers}, {shipped.tactics}, "int8")(
    positions["observations"], positions["masks"]
)
np.save({str(tmp_path / "logits.npy")!r}, logits)
assert "torch" not in sys.modules, "torch was imported"
"""
    subprocess.run([sys.executable, "-c", script], check=True, cwd=Path(__file__).resolve().parent.parent)
    assert np.array_equal(np.load(tmp_path / "logits.npy"), expected[0])


def test_the_int8_precision_without_onnxruntime_says_what_to_install(shipped, monkeypatch):
    monkeypatch.setitem(sys.modules, "onnxruntime", None)  # its import fails
    with pytest.raises(
        ImportError, match=r"^the int8 precision needs onnxruntime and onnx: pip install 'trinity-towers\[onnx\]'$"
    ):
        _precision(shipped, "int8")


def test_the_precision_is_chosen_by_the_processor_and_checked(monkeypatch):
    assert precision_for(["fpu", "avx2", "avx512f"]) == "float32"  # no VNNI, no native bfloat16 products
    assert precision_for(["avx2", "avx512_bf16"]) == "bfloat16"
    assert precision_for(["amx_bf16", "amx_tile"]) == "bfloat16"
    assert precision_for(["avx2", "avx512_vnni", "avx512_bf16"]) == "int8"
    assert precision_for(["avx_vnni"]) == "int8"
    assert precision_for(["avx512_vnni", "avx512_bf16"], installed=["torch"]) == "bfloat16"  # no onnxruntime
    assert precision_for(["avx512_vnni", "avx512_bf16"], installed=[]) == "float32"
    assert fastest_precision() in PRECISIONS
    assert search_precision() == (fastest_precision() if fastest_precision() != "bfloat16" else "float32")
    monkeypatch.setattr(precision, "fastest_precision", lambda: "bfloat16")
    assert search_precision() == "float32"  # torch's products wait on numba's threads
    weights = {key: tensor.detach().numpy() for key, tensor in BoardNetwork(8, 1).state_dict().items()}
    with pytest.raises(ValueError, match="precision must be one of float32, bfloat16, int8, not 'float16'"):
        FastBoardEvaluator(weights, 1, True, "float16")


def test_the_speed_section_shows_the_figures_the_benchmark_wrote():
    root = Path(__file__).resolve().parent.parent
    figures = json.loads((root / "docs" / "alphazero" / "evaluators.json").read_text(encoding="utf-8"))
    page = (root / "docs" / "alphazero.md").read_text(encoding="utf-8")
    for key in ("fast_simulations_per_cpu_second", "reference_simulations_per_cpu_second"):
        assert f"**{figures[key]:,}**" in page
    assert f"**{figures['cpu_ratio']:.2f}x**" in page and f"{figures['ratio']:.2f}x)" in page
    assert f"load average {figures['load_before']:.1f} on {figures['cpu_count']} cores" in page
    for name in ("bfloat16", "int8"):  # where the benchmark timed them
        if f"{name}_simulations_per_cpu_second" in figures:
            assert f"**{figures[f'{name}_simulations_per_cpu_second']:,}**" in page
            assert (
                f"**{figures[f'{name}_cpu_ratio']:.2f}x**" in page and f"{figures[f'{name}_ratio']:.2f}x wall" in page
            )


def test_the_search_precision_is_chosen_explicitly_and_checked(shipped):
    from trinity_env.core import ArgumentError

    with pytest.raises(ArgumentError, match="precision must be one of float32, bfloat16, int8, fastest, got 'fp8'"):
        evaluator(shipped, "fp8")
    pytest.importorskip("onnxruntime")
    assert evaluator(shipped, "int8").precision == "int8"


def test_self_play_searches_in_its_configs_precision(monkeypatch):
    """``AZConfig.precision`` reaches the search's evaluation (float32 unless a config says otherwise), and a bad
    one is refused in one line before any game."""
    from training import az_selfplay
    from training.az_config import AZConfig
    from training.config import TrainConfigError

    assert AZConfig().precision == "float32"
    with pytest.raises(TrainConfigError, match="field 'precision' must be one of float32, bfloat16, int8, fastest"):
        AZConfig(network="board", precision="half").check()
    with pytest.raises(TrainConfigError, match="field 'precision' 'int8' needs network 'board'"):
        AZConfig(network="mlp", precision="int8").check()
    asked = []
    real = az_selfplay.evaluator
    monkeypatch.setattr(
        az_selfplay, "evaluator", lambda network, precision: asked.append(precision) or real(network, precision)
    )
    config = AZConfig(
        network="board",
        hidden=16,
        layers=1,
        games_per_iteration=4,
        simulations=4,
        max_considered=4,
        solver_empty=0,
        precision="bfloat16",
    )
    config.check()
    from training.az_selfplay import make_search, play_games
    from trinity_env.agents.az import make_network
    from trinity_env.fast.games import FastGames

    network = make_network("board", 16, 1, True)
    games = FastGames(4, seed=0, draft="dealt")
    play_games(network, config, make_search(config), games, np.random.default_rng(0), None)
    assert asked == ["bfloat16"]
