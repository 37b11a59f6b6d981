"""The board network (trinity_env.agents.networks.board_network): its numpy path equals its torch one, its structure
holds (hands are sets, tiles see their neighbours), its size is known before it is built, its checkpoints round-trip and
name their architecture, and the AlphaZero trainer trains and resumes it."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from trinity_env.agents import make
from trinity_env.agents.az import AZNetwork, BoardNetwork, load_network, make_network, numpy_evaluator, save_network
from trinity_env.agents.loaders.checkpoint import PARAMETERS, CheckpointError, network_size_problem
from trinity_env.core import ArgumentError, GameState
from trinity_env.core.actions import DECK_SIZE
from trinity_env.core.board import TILES
from trinity_env.spec.observation import (
    OWN_CARD_FEATURES,
    OWN_DECK_OFFSET,
    THEIR_CARD_FEATURES,
    THEIR_DECK_OFFSET,
    action_mask,
    encode_observation,
)

from games import random_positions


def _batch(states: list[GameState], open_hands: bool = True) -> tuple[np.ndarray, np.ndarray]:
    observations = np.stack([encode_observation(s, s.to_move, open_hands) for s in states])
    masks = np.stack([action_mask(s, s.to_move) for s in states])
    return observations, masks


@pytest.fixture(scope="module")
def network() -> BoardNetwork:
    torch.manual_seed(0)
    network = BoardNetwork(24, 2, tactics=True).eval()
    with torch.no_grad():  # weights away from their initialisation, so that every part shows in the outputs
        for parameter in network.parameters():
            parameter.add_(torch.randn_like(parameter) * 0.2)
    return network


@pytest.mark.parametrize("draft", ["dealt", "pick"])
def test_the_numpy_path_equals_the_torch_one(network, draft):
    states = random_positions(60, 1, 20, draft=draft)
    for open_hands in (True, False):
        observations, masks = _batch(states, open_hands)
        with torch.no_grad():
            logits, values = network(torch.from_numpy(observations), torch.from_numpy(masks))
        np_logits, np_values = numpy_evaluator(network)(observations, masks)
        legal = masks == 1
        assert np.allclose(np_logits[legal], logits.numpy()[legal], atol=1e-4)
        assert (np_logits[~legal] == -1e9).all()
        assert np.allclose(np_values, values.numpy(), atol=1e-5)
        assert np.abs(values.numpy()).max() <= 1


def _permute_deck(observations: np.ndarray, offset: int, width: int, order: np.ndarray) -> np.ndarray:
    out = observations.copy()
    rows = out[:, offset : offset + DECK_SIZE * width].reshape(len(out), DECK_SIZE, width)
    out[:, offset : offset + DECK_SIZE * width] = rows[:, order].reshape(len(out), -1)
    return out


def test_a_hand_is_a_set_the_order_of_the_deck_changes_only_which_action_is_which(network):
    observations, masks = _batch(random_positions(40, 2, 20, draft="dealt"))
    evaluate = numpy_evaluator(network)
    logits, values = evaluate(observations, np.ones_like(masks))
    order = np.random.default_rng(0).permutation(DECK_SIZE)
    mine = _permute_deck(observations, OWN_DECK_OFFSET, OWN_CARD_FEATURES, order)
    moved, moved_values = evaluate(mine, np.ones_like(masks))
    assert np.allclose(moved_values, values, atol=1e-5)
    assert np.allclose(moved[:, :DECK_SIZE], logits[:, :DECK_SIZE][:, order], atol=1e-4)  # draft picks follow
    placements = logits[:, DECK_SIZE:].reshape(-1, DECK_SIZE, TILES)
    assert np.allclose(moved[:, DECK_SIZE:].reshape(-1, DECK_SIZE, TILES), placements[:, order], atol=1e-4)
    theirs = _permute_deck(observations, THEIR_DECK_OFFSET, THEIR_CARD_FEATURES, order)
    same, same_values = evaluate(theirs, np.ones_like(masks))
    assert np.allclose(same, logits, atol=1e-4) and np.allclose(same_values, values, atol=1e-5)
    # the flat MLP has no such structure: the same permutation changes its value
    torch.manual_seed(0)
    mlp = numpy_evaluator(AZNetwork(32, 1, False).eval())
    assert not np.allclose(mlp(mine, masks)[1], mlp(observations, masks)[1], atol=1e-5)


def test_a_tile_sees_its_neighbours_facing_sides():
    """Changing the side of a card that faces an empty tile changes that tile's placement logits (without the
    tactical features, which would see it too)."""
    state = next(
        s
        for s in random_positions(20, 5, 20, draft="dealt")
        if s.phase == "play" and any(card is not None for card in s.cards)
    )
    observations, masks = _batch([state])
    torch.manual_seed(1)
    evaluate = numpy_evaluator(BoardNetwork(24, 2, tactics=False).eval())  # the structure alone, no tactics head
    before = evaluate(observations, np.ones_like(masks))[0]
    from trinity_env.core.board import NEIGHBOURS
    from trinity_env.spec.observation import BOARD_OFFSET, TILE_FEATURES

    tile, (neighbour, side, back) = next(
        (t, n) for t in range(TILES) for n in NEIGHBOURS[t] if state.cards[t] is None and state.cards[n[0]] is not None
    )
    changed = observations.copy()
    entry = BOARD_OFFSET + neighbour * TILE_FEATURES + 2 + back
    changed[0, entry] = 1 if changed[0, entry] != 1 else 9
    after = evaluate(changed, np.ones_like(masks))[0]
    place = lambda logits: logits[0, DECK_SIZE:].reshape(DECK_SIZE, TILES)[:, tile]  # noqa: E731
    assert not np.allclose(place(after), place(before))


@pytest.mark.parametrize(("hidden", "layers", "tactics"), [(8, 1, False), (24, 2, True), (40, 3, True)])
def test_the_size_table_is_what_building_allocates(hidden, layers, tactics):
    for name, build in (("mlp", AZNetwork), ("board", BoardNetwork)):
        built = sum(p.numel() for p in build(hidden, layers, tactics).parameters())
        assert built == PARAMETERS[name](hidden, layers) + (65 if tactics else 0)
    assert network_size_problem(4096, 16, "board") is not None and network_size_problem(4096, 1, "mlp") is None


def test_checkpoints_name_their_architecture_and_round_trip(tmp_path, network):
    save_network(tmp_path / "board.pt", network, {"games": 3})
    loaded, payload = load_network(tmp_path / "board.pt")
    assert isinstance(loaded, BoardNetwork) and payload["network"] == "board" and payload["games"] == 3
    observations, masks = _batch(random_positions(10, 3, 20))
    assert np.array_equal(
        numpy_evaluator(loaded)(observations, masks)[0], numpy_evaluator(network)(observations, masks)[0]
    )
    agent = make(f"az:{tmp_path / 'board.pt'},sims=8,seed=1")
    assert agent.act({"observation": observations[0], "action_mask": masks[0]}) in np.flatnonzero(masks[0])
    # a file whose weights are another architecture's, or that names an unknown one, is refused naming it
    mlp = AZNetwork(24, 2, True)
    payload = {
        "format": "trinity-towers-az",
        "network": "board",
        "hidden": 24,
        "layers": 2,
        "tactics": True,
        "model": mlp.state_dict(),
    }
    torch.save(payload, tmp_path / "mixed.pt")
    with pytest.raises(CheckpointError, match=r"mixed\.pt does not match the az board network"):
        load_network(tmp_path / "mixed.pt")
    torch.save(payload | {"network": "transformer"}, tmp_path / "other.pt")
    with pytest.raises(CheckpointError, match=r"other\.pt: field 'network' must be one of mlp, board"):
        load_network(tmp_path / "other.pt")
    old = {key: value for key, value in payload.items() if key != "network"}  # files from before the field
    torch.save(old, tmp_path / "old.pt")
    with pytest.raises(CheckpointError, match=r"old\.pt is missing the field 'network' \(one of mlp, board\)$"):
        load_network(tmp_path / "old.pt")
    with pytest.raises(ArgumentError, match="network must be one of mlp, board, got 'cnn'"):
        make_network("cnn", 8, 1, True)


def test_the_trainer_trains_and_resumes_a_board_network(tmp_path):
    from test_alphazero import TINY

    from training.alphazero import train
    from training.az_config import AZConfig
    from training.config import TrainConfigError
    from training.run_folder import RunFolderError

    config = AZConfig.from_dict(TINY | {"network": "board", "hidden": 16})
    train(config, tmp_path / "a", progress=False)
    train(config, tmp_path / "b", progress=False, stop_at=8)
    train(config, tmp_path / "b", resume=True, progress=False)
    a, b = load_network(tmp_path / "a" / "latest.pt")[0], load_network(tmp_path / "b" / "latest.pt")[0]
    assert isinstance(a, BoardNetwork)
    assert all(torch.equal(x, y) for x, y in zip(a.state_dict().values(), b.state_dict().values(), strict=True))
    with pytest.raises(TrainConfigError, match="field 'network' must be one of mlp, board, got 'cnn'"):
        AZConfig.from_dict(TINY | {"network": "cnn"})
    mlp = AZConfig.from_dict(TINY | {"hidden": 16, "total_games": 32})
    with pytest.raises(RunFolderError, match="network"):  # a run keeps its architecture
        train(mlp, tmp_path / "a", resume=True, progress=False)
