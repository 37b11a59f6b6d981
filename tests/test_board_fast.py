"""The board network's fast evaluation (trinity_env.agents.board_fast): it gives the torch forward pass's logits and
values to float rounding on real positions (placements, drafts, empty boards, hidden hands; one position and
batches past a chunk), it is what the search uses, and the search plays the same moves with it. With bfloat16
products: within its stated tolerance of the forward pass, and the search's moves agree; the precision is chosen
by the processor's flags."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
import torch

from trinity_env.agents.az import BoardNetwork, evaluator, forward_evaluator, load_network, numpy_evaluator
from trinity_env.agents.board_fast import (
    BFLOAT16_LOGIT_TOLERANCE,
    BFLOAT16_VALUE_TOLERANCE,
    CHUNK,
    PRECISIONS,
    FastBoardEvaluator,
    fastest_precision,
    precision_for,
)
from trinity_env.fast.games import FastGames
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


@pytest.fixture(scope="module")
def shipped() -> BoardNetwork:
    network, _ = load_network(SHIPPED)
    assert isinstance(network, BoardNetwork)
    return network.eval()


def _bfloat16(network: BoardNetwork) -> FastBoardEvaluator:
    weights = {key: tensor.detach().numpy() for key, tensor in network.state_dict().items()}
    return FastBoardEvaluator(weights, network.layers, network.tactics, "bfloat16")


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


def test_every_action_legal_and_a_network_without_tactics_still_match():
    torch.manual_seed(1)
    network = BoardNetwork(16, 3, tactics=False).eval()
    with torch.no_grad():
        for parameter in network.parameters():
            parameter.add_(torch.randn_like(parameter) * 0.2)
    observations, masks = _positions(40, 4, "pick", True)
    _assert_equal(network, observations, masks)
    _assert_equal(network, observations, np.ones_like(masks))  # draft and placement heads on every position


def test_the_search_evaluates_the_board_network_without_its_forward_pass(shipped, monkeypatch):
    observations, masks = _positions(8, 5, "dealt", True)
    expected = forward_evaluator(shipped)(observations, masks)
    evaluate = evaluator(shipped)
    assert isinstance(evaluate, FastBoardEvaluator)

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
        for evaluate in (forward_evaluator(shipped), evaluator(shipped))
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


def test_the_precision_is_chosen_by_the_processor_and_checked():
    assert precision_for(["fpu", "avx2", "avx512f", "avx512_vnni"]) == "float32"  # no native bfloat16 products
    assert precision_for(["avx2", "avx512_bf16"]) == "bfloat16"
    assert precision_for(["amx_bf16", "amx_tile"]) == "bfloat16"
    assert fastest_precision() in PRECISIONS
    weights = {key: tensor.detach().numpy() for key, tensor in BoardNetwork(8, 1).state_dict().items()}
    with pytest.raises(ValueError, match="precision must be one of float32, bfloat16, not 'float16'"):
        FastBoardEvaluator(weights, 1, True, "float16")


def test_the_speed_section_shows_the_figures_the_benchmark_wrote():
    root = Path(__file__).resolve().parent.parent
    figures = json.loads((root / "docs" / "alphazero" / "evaluators.json").read_text(encoding="utf-8"))
    page = (root / "docs" / "alphazero.md").read_text(encoding="utf-8")
    for key in ("fast_simulations_per_cpu_second", "reference_simulations_per_cpu_second"):
        assert f"**{figures[key]:,}**" in page
    assert f"**{figures['cpu_ratio']:.2f}x**" in page and f"{figures['ratio']:.2f}x)" in page
    assert f"load average {figures['load_before']:.1f} on {figures['cpu_count']} cores" in page
    if figures["fastest_precision"] == "bfloat16":
        assert f"**{figures['bfloat16_simulations_per_cpu_second']:,}**" in page
        assert f"**{figures['bfloat16_cpu_ratio']:.2f}x**" in page and f"{figures['bfloat16_ratio']:.2f}x wall" in page
