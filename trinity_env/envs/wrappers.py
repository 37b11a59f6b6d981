"""PettingZoo's standard classic-game wrappers, with direct attribute access.

Each PettingZoo wrapper finds the AEC attributes (``agent_selection``, ``terminations``,
...) by falling through ``__getattr__`` to the env it wraps, one layer at a time. With the
three classic-game wrappers that is about 36 Python-level lookups per step, which cost
more than a whole step of this game's rules. These subclasses behave exactly like
PettingZoo's wrappers (same checks, same errors, ``isinstance`` holds) but read and write
those attributes on the raw env in one step. ``benchmarks/env.py`` measures the effect.
"""

from __future__ import annotations

from typing import Any

from pettingzoo import AECEnv
from pettingzoo.utils import wrappers

from trinity_env.core import NUM_ACTIONS, IllegalMoveError
from trinity_env.core.checks import describe_value, is_int

# The attributes OrderEnforcingWrapper refuses to show before reset().
_GUARDED = frozenset({"rewards", "terminations", "truncations", "infos", "agent_selection", "agents"})
_FORWARDED = ("agent_selection", "agents", "terminations", "truncations", "rewards", "infos", "_cumulative_rewards")


def _forward(name: str, guarded: bool) -> property:
    def get(self: Any) -> Any:
        if guarded and not self.__dict__.get("_reset_seen", False):
            raise AttributeError(f"{name} cannot be accessed before reset")
        return getattr(self._raw, name)

    def set_(self: Any, value: Any) -> None:
        setattr(self._raw, name, value)

    return property(get, set_, doc=f"``{name}`` of the raw env.")


class _DirectAttributes:
    """Mixin: the hot AEC attributes as properties reading the raw env directly."""

    def __init__(self, env: AECEnv, *args: Any, **kwargs: Any) -> None:
        object.__setattr__(self, "_raw", env.unwrapped)
        super().__init__(env, *args, **kwargs)  # PettingZoo's wrapper, next in the bases


for _name in _FORWARDED:
    setattr(_DirectAttributes, _name, _forward(_name, guarded=False))


class TerminateIllegalWrapper(_DirectAttributes, wrappers.TerminateIllegalWrapper):
    def observe(self, agent: Any) -> Any:
        # PettingZoo's observe, reading the raw env's attributes once each
        observation = self.env.observe(agent)
        raw = self._raw
        if agent == raw.agent_selection:
            self._prev_obs = observation
            self._prev_info = raw.infos.get(agent, {})
        return observation

    def step(self, action: Any) -> None:
        # The common case, a legal action of a live agent whose observation was taken, goes straight
        # to the env as PettingZoo's wrapper would; every other case (no observation yet, a dead
        # agent, an illegal action) takes PettingZoo's own code.
        raw = self._raw
        agent = raw.agent_selection
        observation = self._prev_obs
        if (
            type(observation) is dict
            and not getattr(self, "_terminated", False)
            and not raw.terminations[agent]
            and not raw.truncations[agent]
            and observation["action_mask"][action]
        ):
            self._prev_obs = None
            self._prev_info = None
            self.env.step(action)
        else:
            super().step(action)


class AssertOutOfBoundsWrapper(_DirectAttributes, wrappers.AssertOutOfBoundsWrapper):
    def step(self, action: Any) -> None:
        # A Python int in range is what Discrete(NUM_ACTIONS).contains accepts whatever the agent's state, so
        # PettingZoo's assertion holds without asking gymnasium (a third of this wrapper's time); anything
        # else takes PettingZoo's own check.
        if type(action) is int and 0 <= action < NUM_ACTIONS:
            self.env.step(action)
        else:
            super().step(action)


class OrderEnforcingWrapper(_DirectAttributes, wrappers.OrderEnforcingWrapper):
    def __init__(self, env: AECEnv):
        super().__init__(env)
        # Around the chain ``env()`` builds (AssertOutOfBounds, then TerminateIllegal), a step's
        # observation and a legal action can go to TerminateIllegal at once: the two layers between
        # would only pass them on (the action's bounds are checked here).
        inner = getattr(env, "env", None) if type(env) is AssertOutOfBoundsWrapper else None
        object.__setattr__(self, "_inner", inner if type(inner) is TerminateIllegalWrapper else None)

    def reset(self, seed: int | None = None, options: dict | None = None) -> None:
        # Our own record of the first reset, so the guarded attributes need not read the
        # private flag of PettingZoo's wrapper.
        object.__setattr__(self, "_reset_seen", True)
        super().reset(seed=seed, options=options)

    def last(self, observe: bool = True) -> tuple[Any, float, bool, bool, dict[str, Any]]:
        """``AECEnv.last``, reading the raw env's dicts directly (the same values, fewer lookups per step)."""
        agent = self.agent_selection  # refused before reset(), as PettingZoo's wrapper refuses it
        assert agent is not None
        if observe:
            inner = self._inner
            observation = inner.observe(agent) if inner is not None else self.observe(agent)
        else:
            observation = None
        raw = self._raw
        reward = raw._cumulative_rewards[agent]
        return observation, reward, raw.terminations[agent], raw.truncations[agent], raw.infos[agent]

    def step(self, action: Any) -> None:
        # The outermost wrapper names a non-integer action in one line: inside, PettingZoo's
        # wrappers would index the mask with it (``mask[True]`` fails in numpy) or assert.
        if action is not None and not is_int(action):
            raise IllegalMoveError(f"an action is an integer 0-{NUM_ACTIONS - 1}, got {describe_value(action)}")
        inner = self._inner
        if (
            inner is not None
            and type(action) is int
            and 0 <= action < NUM_ACTIONS
            and self.__dict__.get("_reset_seen", False)
            and self._raw.agents
        ):
            self._has_updated = True  # what PettingZoo's OrderEnforcingWrapper.step records
            inner.step(action)
        else:
            super().step(action)


for _name in _FORWARDED:
    setattr(OrderEnforcingWrapper, _name, _forward(_name, guarded=_name in _GUARDED))
