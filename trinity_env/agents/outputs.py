"""The output contract of every policy: checked at load on a probe batch of real positions, and again in play.

A policy's outputs are read in two places: a legal action's logit (the move it plays, or a search's prior) and
its value (a search's leaf values; ``trinity accuracy`` scores it). Whatever the policy's form (``onnx:``,
``az:`` and the shipped networks, ``state_dict:``, a PPO ``.pt``, an SB3 zip, a training run's
``initial_network``), the contract is:

- every legal action's logit is finite; an illegal action's logit is never read, whatever it holds (NaN and
  infinities included);
- every value is finite, and in [-1, 1] where the policy's value is bounded (AlphaZero's networks and ONNX
  policies; PPO's value estimates are returns, unbounded).

Each loader runs its agent's evaluation on ``probe_positions()`` (``probe``) before it hands the agent over, so a
network that breaks the contract (finite weights that overflow to NaN, a value head out of range) is refused at
load in one ``CheckpointError`` line naming the file; and each agent's evaluation passes through ``checked`` in
play, so an output that turns bad on a later position is one such line too, never a move off the board.
"""

from __future__ import annotations

import random
from collections.abc import Callable
from functools import cache

import numpy as np

from trinity_env.agents.loaders.checkpoint import CheckpointError

PROBE_POSITIONS = 48
"""Positions in the probe batch: drafts and placements of random games of the default rules, seen by either seat."""

Evaluate = Callable[[np.ndarray, np.ndarray], tuple[np.ndarray, np.ndarray | None]]
"""An evaluation: int8 observations [B, 339] and masks [B, 256] to logits [B, 256] and values [B] (or ``None``)."""


@cache
def _probe() -> tuple[bytes, bytes]:
    from trinity_env.spec.config import make_config
    from trinity_env.spec.observation import observation_dict

    config, rng = make_config(), random.Random(0)
    observations, masks = [], []
    step = 0
    while len(observations) < PROBE_POSITIONS:
        state = config.new_game(rng)
        while not state.is_over and len(observations) < PROBE_POSITIONS:
            if step % 3 == 0:  # every third position: the draft, early and late placements of several games
                view = observation_dict(state, state.to_move, config.open_hands)
                observations.append(view["observation"])
                masks.append(view["action_mask"])
            step += 1
            state = state.apply(rng.choice(state.legal_actions()))
    return np.stack(observations).astype(np.int8).tobytes(), np.stack(masks).astype(np.int8).tobytes()


def probe_positions() -> tuple[np.ndarray, np.ndarray]:
    """The probe batch: int8 observations [``PROBE_POSITIONS``, 339] and masks [``PROBE_POSITIONS``, 256] of the
    player to move (every one with a legal action), the same every call (a fresh copy)."""
    observations, masks = _probe()
    return np.frombuffer(observations, np.int8).reshape(PROBE_POSITIONS, -1).copy(), np.frombuffer(
        masks, np.int8
    ).reshape(PROBE_POSITIONS, -1).copy()


def output_problem(logits: np.ndarray, values: np.ndarray | None, masks: np.ndarray, bounded: bool) -> str | None:
    """What breaks the contract in one evaluation (one phrase), or ``None``: a legal action's logit that is not
    finite, a value that is not finite or (``bounded``) outside [-1, 1]. Illegal actions' logits are not read."""
    legal = np.asarray(logits)[np.asarray(masks) != 0]
    if not np.isfinite(legal).all():
        return f"gave a legal action the logit {legal[~np.isfinite(legal)][0]}: a legal action's logit must be finite"
    if values is not None:
        values = np.asarray(values)
        bad = ~np.isfinite(values) | (np.abs(values) > 1) if bounded else ~np.isfinite(values)
        if bad.any():
            wanted = "in [-1, 1]" if bounded else "finite"
            return f"gave the value {values[bad][0]}: a value must be {wanted}"
    return None


def check_outputs(
    name: str,
    logits: np.ndarray,
    values: np.ndarray | None,
    masks: np.ndarray,
    bounded: bool,
    error: type[Exception] = CheckpointError,
) -> None:
    """``error`` in one line naming ``name`` (the file) when ``output_problem`` finds one."""
    problem = output_problem(logits, values, masks, bounded)
    if problem is not None:
        raise error(f"{name} {problem}")


def checked(name: str, evaluate: Evaluate, bounded: bool, error: type[Exception] = CheckpointError) -> Evaluate:
    """``evaluate`` with every call's outputs checked (``check_outputs``): what an agent plays through."""

    def evaluate_checked(observations: np.ndarray, masks: np.ndarray) -> tuple[np.ndarray, np.ndarray | None]:
        with np.errstate(over="ignore", invalid="ignore", divide="ignore"):  # what overflows is refused just below
            logits, values = evaluate(observations, masks)
        check_outputs(name, logits, values, masks, bounded, error)
        return logits, values

    return evaluate_checked


def probe(name: str, evaluate: Evaluate, bounded: bool, error: type[Exception] = CheckpointError) -> None:
    """Run ``evaluate`` on the probe batch and check its outputs: the load's check of the contract."""
    observations, masks = probe_positions()
    with np.errstate(over="ignore", invalid="ignore", divide="ignore"):  # what overflows is refused just below
        logits, values = evaluate(observations, masks)
    check_outputs(name, logits, values, masks, bounded, error)


__all__ = ["PROBE_POSITIONS", "check_outputs", "checked", "output_problem", "probe", "probe_positions"]
