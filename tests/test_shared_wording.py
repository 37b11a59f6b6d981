"""Words written once: the image's header is the text board's status line, and a bad card in a
position's hand is named as ``parse_cards`` names a bad card in any list of cards."""

from __future__ import annotations

import pytest

from trinity_env.core import GameState
from trinity_env.core.errors import PositionError
from trinity_env.core.render import status_line

from drawn import position

image = pytest.importorskip("trinity_env.envs.image", reason="Pillow is not installed (the envs extra)")


def _stalemate_won_by_black() -> GameState:
    """A finished game with the longest kind of status line: a win when neither player could place."""
    return GameState.from_dict(
        position(
            """
            b1111  b1111  b1111  b1111  .
            b1111  b1111  b1111  b1111  .
            w1111  w1111  w1111  .      .
            """
        )
        | {"phase": "over"}
    )


def test_the_image_header_is_the_text_boards_status_line_and_fits_the_image(monkeypatch):
    state = _stalemate_won_by_black()
    line = status_line(state)
    assert line == "game over: player 1 (b) wins when neither player could place, lane scores 3-8"
    assert str(state).endswith(line)
    # the longest line a game can end with (two-digit scores) fits between the image's margins
    longest = "game over: player 1 (b) wins when neither player could place, lane scores 10-10"
    assert image._font(image.STATUS_SIZE).getlength(longest) <= image.WIDTH - 2 * image.MARGIN
    shown = []
    monkeypatch.setattr(image, "status_line", lambda s: shown.append(s) or line)
    picture = image.render_rgb(state)
    assert shown == [state]
    assert picture.shape == (image.HEIGHT, image.WIDTH, 3)


def test_a_bad_card_in_a_position_hand_is_named_as_in_any_list_of_cards():
    data = position(
        """
        .  .  .  .  .
        .  .  .  .  .
        .  .  .  .  .
        """,
        hands=(["1111", "12345"], ["2222"]),
    )
    with pytest.raises(PositionError, match=r"^hands\[0\]: card 1: bad card '12345'"):
        GameState.from_dict(data)
