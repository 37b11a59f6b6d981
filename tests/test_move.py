"""``Move``: one placement type, its text round trip (``Move.parse``/``str``), a ``repr`` that pastes back,
its action id in a state and back, and one-line errors; and no public function still speaks ``(card, tile)``."""

from __future__ import annotations

import ast
import inspect
import random
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import trinity_env
from trinity_env.core import Card, GameState, IllegalMoveError, Move
from trinity_env.search.solver import Solution

from games import random_game

games = st.randoms(use_true_random=False).map(random_game)


@settings(max_examples=60, deadline=None)
@given(games)
def test_every_legal_move_of_random_states_round_trips(states):
    for state in states:
        if state.phase != "play":
            assert state.legal_moves() == []
            continue
        moves = state.legal_moves()
        assert len(set(moves)) == len(moves)
        for move in moves:
            assert Move.parse(str(move)) == move
            assert eval(repr(move), {"Move": Move}) == move
            action = move.to_action(state)
            assert action in state.legal_actions() and Move.from_action(action, state) == move
            assert state.play(move) == state.apply(action)
        # every legal action is one of the moves (identical copies in hand are one move)
        assert {Move.from_action(a, state) for a in state.legal_actions()} == set(moves)


def test_the_text_is_the_card_at_the_tile_and_sorts_as_the_old_pairs():
    move = Move.parse("7a24@3")
    assert move == Move(Card("7A24"), 3) == Move("7A24", 3)
    assert (str(move), repr(move)) == ("7A24@3", "Move.parse('7A24@3')")
    assert move.to_json() == {"card": "7A24", "tile": 3}
    texts = ["A111@0", "7A24@3", "7924@9", "1111@14", "7A24@10", "9999@2"]
    assert [str(m) for m in sorted(map(Move.parse, texts))] == [
        f"{c}@{t}" for c, t in sorted((t.split("@")[0], int(t.split("@")[1])) for t in texts)
    ]


@pytest.mark.parametrize(
    "text, says",
    [
        ("7A24", "'7A24': a move is a card, '@' and a tile 0-14"),
        ("7A24@15", "'7A24@15': a move is a card, '@' and a tile 0-14"),
        ("7A24@x", "'7A24@x': a move is a card"),
        ("7Z24@3", "'7Z24@3': bad card '7Z24': side value 'Z'"),
        ("@3", "bad move '@3': bad card ''"),
        ("7A24 3", "'7A24 3': a move is a card, '@'"),
        ("x" * 10_000 + "@3", "bad move 'xxxx"),
    ],
)
def test_bad_text_is_refused_in_one_line_naming_it(text, says):
    with pytest.raises(IllegalMoveError, match="bad move") as caught:
        Move.parse(text)
    message = str(caught.value)
    assert says in message and "\n" not in message and len(message) < 300


def test_bad_parts_and_ids_are_refused_in_one_line():
    state = _play_position()
    for call, says in [
        (lambda: Move.parse(3), "a move is text like '7A24@3', got 3"),
        (lambda: Move("7A24", 15), "tile is a whole number 0-14, got 15"),
        (lambda: Move("7A24", True), "got True"),
        (lambda: Move("7A2", 3), "bad move card: bad card '7A2'"),
        (lambda: Move.from_action(2, state), "action 2 picks deck card 2: it is no placement"),
        (lambda: Move.from_action(256, state), "outside the layout"),
        (lambda: Move(_not_in_hand(state), 0).to_action(state), "is not in player"),
        (lambda: state.play(state.legal_moves()[0], 3), "takes the move alone"),
    ]:
        with pytest.raises(ValueError, match=says) as caught:
            call()
        assert "\n" not in str(caught.value)
    occupied = state.play(state.legal_moves()[0])
    again = Move(occupied.hand(occupied.to_move)[0], state.legal_moves()[0].tile)
    with pytest.raises(IllegalMoveError, match=f"tile {again.tile} is occupied"):
        again.to_action(occupied)
    with pytest.raises(IllegalMoveError, match="is not legal here"):
        Move.from_action(16 + 15 * _played_index(occupied) + 0, occupied)


def _play_position() -> GameState:
    from trinity_env.spec.config import make_config

    return make_config(draft="dealt").new_game(random.Random(3))


def _not_in_hand(state: GameState) -> Card:
    hand = set(state.hand(state.to_move))
    return next(c for c in map(Card, ("1111", "1112", "1113", "1121")) if c not in hand)


def _played_index(state: GameState) -> int:
    """A deck index of the mover that is not in hand (so no placement of it is legal)."""
    return next(i for i, s in enumerate(state.status[state.to_move]) if s != 1)


def _public_signatures():
    """(file, name, line, annotation text) of every public function's signature and public class field."""
    root = Path(trinity_env.__file__).parent
    for path in sorted(root.rglob("*.py")):
        where = str(path.relative_to(root.parent))
        for node in ast.walk(ast.parse(path.read_text(), where)):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and not node.name.startswith("_"):
                annotations = [a.annotation for a in node.args.args + node.args.kwonlyargs] + [node.returns]
                text = " ".join(ast.unparse(a) for a in annotations if a is not None)
                yield where, node.name, node.lineno, text
            elif isinstance(node, ast.ClassDef) and not node.name.startswith("_"):
                for field in node.body:
                    if isinstance(field, ast.AnnAssign) and isinstance(field.target, ast.Name):
                        yield where, f"{node.name}.{field.target.id}", field.lineno, ast.unparse(field.annotation)


_NOT_MOVES = {
    ("trinity_env/provenance.py", "file_sha256"),  # (digest, size)
    ("trinity_env/integrations/ray_cluster.py", "check_ray_address"),  # (host, port)
    ("trinity_env/agents/loaders/onnx_check.py", "check_contract"),  # an ONNX input's (name, size)
    ("trinity_env/agents/loaders/onnx_check.py", "CheckedModel.observation"),
    ("trinity_env/agents/loaders/onnx_check.py", "CheckedModel.mask"),
}


def test_no_public_function_or_field_speaks_card_tile_pairs():
    """The old move type was a ``(notation, tile)`` pair, annotated ``tuple[str, int]``: no public function or
    class field of ``trinity_env`` has one in its annotations any more (the pairs that are not moves named above)."""
    found = [
        f"{where}:{line} {name}: {text}"
        for where, name, line, text in _public_signatures()
        if "tuple[str, int]" in text and (where, name) not in _NOT_MOVES
    ]
    assert found == []


def test_the_moves_of_the_rules_and_the_solver_are_moves():
    assert inspect.signature(GameState.legal_moves).return_annotation == "list[Move]"
    assert Solution.__annotations__["best_moves"] == "list[Move]"
