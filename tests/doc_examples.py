"""The positions drawn in docs/rules.md, built here so a test keeps the pictures true."""

from __future__ import annotations

from trinity_env.core import GameState

from drawn import state


def capture() -> tuple[GameState, GameState]:
    before = state(
        """
        .  .      b1141  .      .
        .  b1411  .      b1114  .
        .  .      b4111  .      .
        """,
        hands=(["5535"], ["2222"]),
    )
    return before, before.play("5535", 7)


def domino() -> tuple[GameState, GameState]:
    before = state(
        """
        .  b1914  b1213  b1111  .
        .  b5111  .      .      .
        .  .      .      .      .
        """,
        hands=(["1511"], ["2222"]),
    )
    return before, before.play("1511", 0)


def lane_control() -> tuple[GameState, GameState]:
    before = state(
        """
        w2222  w1111  b1111  w6464  w4646
        .      .      .      b3333  .
        b9999  b9999  .      b9999  .
        """,
        hands=(["5111", "7373"], ["8282", "2828"]),
    )
    return before, before.play("5111", 7)


def full_board() -> tuple[GameState, GameState]:
    before = state(
        """
        w5555  w9146  b6914  b4691  w1469
        b7373  b3737  w8282  b2828  b6464
        w4646  b5555  w9146  w6914  .
        """,
        hands=(["4691"], ["1111"]),
    )
    return before, before.play("4691", 14)


EXAMPLES = {"capture": capture, "domino": domino, "lane_control": lane_control, "full_board": full_board}
