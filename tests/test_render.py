"""The text board."""

from __future__ import annotations

from trinity_env.core import render_text

from drawn import state


def test_the_text_board_shows_sides_owners_towers_and_the_last_move():
    s = state(
        """
        .  b1914  b1213  b1111  .
        .  .      .      .      .
        .  .      .      .      .
        """,
        hands=(["1511", "2222"], ["3333"]),
    ).play("1511", 0)
    text = render_text(s)
    assert text == str(s)
    lines = text.splitlines()
    # lane 0's middle row: left side, owner, right side of each card, towers W and B at the ends
    assert lines[3] == " 0 W 1 w 5 | 4 w 9 | 3 w 2 | 1 b 1 |   .   B"
    # the placed card (+), its capture (*) and the domino flip (~) are marked
    assert lines[4] == "    |   1  +|   1  *|   1  ~|   1   |       |"
    assert "player 0 (w) hand: 2222" in text
    assert "player 1 (b) hand: 3333" in text
    assert text.endswith("player 1 (b) to move")


def test_the_text_board_says_how_the_game_ended():
    s = state(
        """
        w1111  w1111  w1111  w1111  .
        .      .      .      .      .
        .      .      .      .      .
        """,
        hands=(["2222"], ["3333"]),
    ).play("2222", 4)
    assert str(s).endswith("game over: player 0 (w) wins by controlling lane 0, lane scores 5-0")
