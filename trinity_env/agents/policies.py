"""Policies learned anywhere, as players the project's tools take: a function, a batched function, an agent.

A researcher's policy reaches the evaluation tools in one of these forms (``player`` in
``trinity_env.agents.spec`` turns each into a ``Player``; a spec string such as ``onnx:PATH`` or
``mcts:400`` is parsed by ``AgentSpec``):

- ``Policy(fn)``: ``fn(observation, mask) -> action`` for one position: ``observation`` int8 [339] (the AEC
  env's ``observation``, docs/observation.md), ``mask`` int8 [256] (its ``action_mask``), an action id back.
- ``BatchedPolicy(fn)``: ``fn(observations, masks) -> actions`` for many positions at once: int8 [B, 339] and
  [B, 256] in, B action ids out. The tools that score many positions (``trinity_env.evaluation.accuracy``,
  ``trinity_env.evaluation.puzzles``) call it once for all of them: the fast path for a network.
- any ``Agent`` (``trinity_env.spec.agent``): used as it is.

Seats, hidden information and batching are the tools' business: a policy sees only what its seat may see
(the observation already hides the rest) and answers for the player to move. Every action a policy returns
is checked: an integer id that is legal in that position, else one ``IllegalMoveError`` line naming the
policy, the position's index in the batch and the action.

``Policy`` and ``BatchedPolicy`` are deterministic (``stateless``: the same observation gets the same action,
whatever seed a game gives), which is what lets the tools batch them.
"""

from __future__ import annotations

import copy
import inspect
from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np

from trinity_env.core import ArgumentError, GameState, IllegalMoveError
from trinity_env.core.files import short
from trinity_env.spec.agent import Agent, Observation
from trinity_env.spec.observation import OBSERVATION_SIZE

ACTIONS = 256


def _label(fn: Callable, name: str | None) -> str:
    if name is not None:
        if not isinstance(name, str) or not name.strip():
            raise ArgumentError(f"a policy's name is a non-empty string, got {short(name)}")
        return name.strip()
    return getattr(fn, "__name__", type(fn).__name__)


def checked_actions(actions: object, masks: np.ndarray, name: str) -> np.ndarray:
    """``actions`` as int64 [B] if each is an integer id legal under its row of ``masks``; else one line."""
    array = np.asarray(actions)
    if array.shape != (masks.shape[0],):
        raise IllegalMoveError(f"policy {name} returned {array.shape} actions for {masks.shape[0]} positions")
    if array.dtype.kind not in "iu":
        if array.dtype.kind == "f" and np.all(np.isfinite(array)) and np.all(array == np.round(array)):
            array = array.astype(np.int64)  # whole numbers in a float array (a framework's argmax): accepted
        else:
            raise IllegalMoveError(f"policy {name} returned actions of dtype {array.dtype}, not integer ids")
    array = array.astype(np.int64)
    bad = np.flatnonzero((array < 0) | (array >= ACTIONS))
    if bad.size == 0:
        bad = np.flatnonzero(masks[np.arange(len(array)), array] == 0)
    if bad.size:
        k = int(bad[0])
        raise IllegalMoveError(f"policy {name} played action {int(array[k])}, which is not legal (position {k})")
    return array


class Policy(Agent):
    """An agent from ``fn(observation int8 [339], mask int8 [256]) -> action`` (see the module)."""

    stateless = True

    def __init__(self, fn: Callable[[np.ndarray, np.ndarray], int], name: str | None = None):
        if not callable(fn):
            raise ArgumentError(f"a policy is a function (observation, mask) -> action, got {short(fn)}")
        self._fn = fn
        self.name = _label(fn, name)

    def act(self, observation: Observation, state: GameState | None = None) -> int:
        mask = np.asarray(observation["action_mask"], np.int8)
        action = self._fn(np.asarray(observation["observation"], np.int8), mask)
        return int(checked_actions(np.array([action]).reshape(1), mask[None], self.name)[0])


class BatchedPolicy(Agent):
    """An agent from ``fn(observations int8 [B, 339], masks int8 [B, 256]) -> actions [B]`` (see the module); the
    tools that score many positions call ``act_batch`` once for all of them."""

    stateless = True

    def __init__(self, fn: Callable[[np.ndarray, np.ndarray], np.ndarray], name: str | None = None):
        if not callable(fn):
            raise ArgumentError(f"a batched policy is a function (observations, masks) -> actions, got {short(fn)}")
        self._fn = fn
        self.name = _label(fn, name)

    def act_batch(self, observations: np.ndarray, masks: np.ndarray) -> np.ndarray:
        observations = np.ascontiguousarray(observations, np.int8)
        masks = np.ascontiguousarray(masks, np.int8)
        if (
            observations.ndim != 2
            or observations.shape[1] != OBSERVATION_SIZE
            or masks.shape != (len(observations), ACTIONS)
        ):
            raise ArgumentError(
                f"observations [B, {OBSERVATION_SIZE}] and masks [B, {ACTIONS}], got "
                f"{observations.shape} and {masks.shape}"
            )
        return checked_actions(self._fn(observations, masks), masks, self.name)

    def act(self, observation: Observation, state: GameState | None = None) -> int:
        observations = np.asarray(observation["observation"], np.int8)[None]
        return int(self.act_batch(observations, np.asarray(observation["action_mask"], np.int8)[None])[0])


@dataclass(frozen=True, eq=False)
class AgentPlayer:
    """A ``Player`` (``trinity_env.agents.spec``) of an agent object: each ``build()`` is a fresh copy, so one
    player can sit in two seats or two tools without sharing a search tree. Equal only to itself."""

    agent: Agent
    label: str = field(default="")
    families: tuple[str, ...] = ()

    def __post_init__(self) -> None:
        if not isinstance(self.agent, Agent):
            raise ArgumentError(f"AgentPlayer takes an Agent, got {short(self.agent)}")
        if not self.label:
            object.__setattr__(self, "label", str(getattr(self.agent, "name", type(self.agent).__name__)))

    def build(self) -> Agent:
        return copy.deepcopy(self.agent)


def policy_as_agent(value: object) -> Agent:
    """An ``Agent`` for a policy given as an agent or a function: a function of two parameters is
    ``(observation, mask) -> action`` (``Policy``); of one, PettingZoo's ``observation_dict -> action``."""
    if isinstance(value, Agent):
        return value
    if callable(value):
        try:
            required = [
                p
                for p in inspect.signature(value).parameters.values()
                if p.default is inspect.Parameter.empty and p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)
            ]
        except (TypeError, ValueError):
            required = [None, None]
        if len(required) == 1:
            from trinity_env.spec.agent import PolicyAgent

            return PolicyAgent(value)
        return Policy(value)
    raise ArgumentError(
        f"a policy is an Agent, a function (observation, mask) -> action or a BatchedPolicy, got {short(value)}"
    )
