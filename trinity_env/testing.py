"""Reusable checks that nothing a seat cannot see leaks into an env's observations or an agent's moves.

PettingZoo's ``api_test`` checks that an env follows the AEC API; these check the rules of
information of ``docs/rules.md`` ("What each player knows"): draft picks are secret, and
with ``open_hands=False`` so is which of its unplayed deck cards the opponent holds. Each
check builds pairs of games that differ **only** in something one seat cannot see, and
asserts that this seat cannot tell them apart:

- ``check_observation_hides_secrets(env_factory)`` plays two copies of an env side by
  side through its public AEC API (``reset``, ``observe``, ``step``, ``agent_selection``):
  the observed seat plays the same moves in both, its opponent drafts differently (and,
  with hidden hands, so holds a different hand) but places the same cards on the same
  tiles. The observed seat's observation, action mask and info must be equal at every step.
- ``check_agent_ignores_hidden_information(agent_factory)`` builds pairs of states that
  differ only in the opponent's secret picks or hidden hand (``hidden_twin``), hands a
  fresh agent, reset with the same seed, the (equal) observation and, by default, the full
  state as well, as a careless host might, and asserts that it takes the same action.

Both raise ``AssertionError`` with a message naming the seat, the phase, what the two
games differ in and where the observations or actions differ; both return how many pairs
they compared, so a test can also assert that the check was not vacuous. ``hidden_twin``
is public for checks of one's own (a wrapper's observation, a network's output).

Usage, in a test::

    from trinity_env.testing import check_agent_ignores_hidden_information, check_observation_hides_secrets

    check_observation_hides_secrets(lambda: trinity_env.env(open_hands=False))
    check_agent_ignores_hidden_information(lambda: MyAgent(), open_hands=False)
"""

from __future__ import annotations

import dataclasses
import random
from collections.abc import Callable, Mapping
from typing import Any

import numpy as np

from trinity_env.core import GameState
from trinity_env.core.actions import decode_action
from trinity_env.core.state import DRAFT, IN_HAND, PLAY, UNPICKED
from trinity_env.spec.agent import Agent, visible_state
from trinity_env.spec.config import make_config
from trinity_env.spec.observation import (
    BOARD_OFFSET,
    OWN_CARD_FEATURES,
    OWN_DECK_OFFSET,
    SCALAR_NAMES,
    THEIR_CARD_FEATURES,
    THEIR_DECK_OFFSET,
    TILE_FEATURES,
    action_mask,
    encode_observation,
)

__all__ = ["check_agent_ignores_hidden_information", "check_observation_hides_secrets", "hidden_twin"]

MAX_STEPS = 200
"""More steps than any game has (16 picks and 15 placements): a twin game longer than this is stuck."""
_TILE = ("mine", "theirs", "top", "right", "bottom", "left")
_OWN = ("top", "right", "bottom", "left", "unpicked", "in hand", "played")
_THEIRS = ("top", "right", "bottom", "left", "played", "in hand", "not picked", "unknown")
_SHOWN = 6  # differing entries named in a message


# ---------------------------------------------------------------------- twin states


def _redeal(state: GameState, player: int, slots: list[int], size: int, rng: random.Random) -> tuple[int, ...] | None:
    """``player``'s statuses with ``size`` of ``slots`` in hand (the rest unpicked), different from now
    and within the A limit (counting its played A cards); ``None`` if no other choice exists."""
    status = state.status[player]
    deck = state.decks[player]
    played_a = sum(1 for i, s in enumerate(status) if i not in slots and s != UNPICKED and deck[i].is_a_card)
    current = {i for i in slots if status[i] == IN_HAND}
    for _ in range(200):
        chosen = set(rng.sample(slots, size))
        if chosen == current or played_a + sum(deck[i].is_a_card for i in chosen) > state.max_a_cards:
            continue
        return tuple(IN_HAND if i in chosen else (UNPICKED if i in slots else s) for i, s in enumerate(status))
    return None


def hidden_twin(state: GameState, seat: int, rng: random.Random, *, open_hands: bool) -> GameState | None:
    """A state that differs from ``state`` only in what ``seat`` cannot see, or ``None`` when nothing is hidden.

    In the draft: the opponent's picks so far, re-drawn (as many, within the A limit). In play
    with ``open_hands=False``: which of the opponent's unplayed deck cards are in its hand
    (as many, within the A limit). With open hands in play, or once the game is over, both
    seats see everything: ``None``. The twin has no ``last`` transition.
    """
    if state.is_over or (state.phase == PLAY and open_hands):
        return None
    other = 1 - seat
    status = state.status[other]
    slots = [i for i, s in enumerate(status) if s in (IN_HAND, UNPICKED)]  # picked or not; unplayed in play
    size = sum(1 for i in slots if status[i] == IN_HAND)
    if size == 0 or size == len(slots):
        return None
    new = _redeal(state, other, slots, size, rng)
    if new is None:
        return None
    both = list(state.status)
    both[other] = new
    return dataclasses.replace(state, status=(both[0], both[1]), last=None)


def _what_differs(one: GameState, two: GameState, seat: int) -> str:
    other = 1 - seat
    secret = "secret draft picks" if one.phase == DRAFT else "hidden hand"
    a = " ".join(c.notation for c in one.hand(other))
    b = " ".join(c.notation for c in two.hand(other))
    return f"player {other}'s {secret}: [{a}] in one, [{b}] in the other"


# ---------------------------------------------------------------------- describing differences


def _entry_name(index: int) -> str:
    if index < BOARD_OFFSET:
        return SCALAR_NAMES[index] if index < len(SCALAR_NAMES) else f"scalar {index}"
    if index < OWN_DECK_OFFSET:
        tile, feature = divmod(index - BOARD_OFFSET, TILE_FEATURES)
        return f"tile {tile}: {_TILE[feature]}"
    if index < THEIR_DECK_OFFSET:
        card, feature = divmod(index - OWN_DECK_OFFSET, OWN_CARD_FEATURES)
        return f"my deck card {card}: {_OWN[feature]}"
    card, feature = divmod(index - THEIR_DECK_OFFSET, THEIR_CARD_FEATURES)
    name = _THEIRS[feature] if feature < len(_THEIRS) else str(feature)
    return f"their deck card {card}: {name}"


def _differences(one: Any, two: Any, where: str) -> list[str]:
    """What differs between two observations (dicts of arrays, or arrays), one phrase per part."""
    if isinstance(one, Mapping) and isinstance(two, Mapping):
        if set(one) != set(two):
            return [f"{where} keys {sorted(one)} vs {sorted(two)}"]
        found = []
        for key in one:
            found += _differences(one[key], two[key], f"{where}[{key!r}]" if where else repr(key))
        return found
    a, b = np.asarray(one), np.asarray(two)
    if a.shape != b.shape:
        return [f"{where} shapes {a.shape} vs {b.shape}"]
    if a.dtype.kind in "biuf" and b.dtype.kind in "biuf":
        unequal = np.flatnonzero(a.reshape(-1) != b.reshape(-1))
        if unequal.size == 0:
            return []
        flat_a, flat_b = a.reshape(-1), b.reshape(-1)
        named = where.endswith("'observation']") or where == "'observation'"
        shown = ", ".join(
            f"{i}{f' ({_entry_name(int(i))})' if named else ''} {flat_a[i]} vs {flat_b[i]}" for i in unequal[:_SHOWN]
        )
        more = f" and {unequal.size - _SHOWN} more" if unequal.size > _SHOWN else ""
        return [f"{where} entries {shown}{more}"]
    return [] if _equal(one, two) else [f"{where} {one!r} vs {two!r}"]


def _equal(one: Any, two: Any) -> bool:
    try:
        return bool(np.all(np.asarray(one) == np.asarray(two))) if not isinstance(one, str) else one == two
    except (ValueError, TypeError):
        return one == two


def _describe_action(state: GameState, action: int) -> str:
    try:
        kind, deck_index, tile = decode_action(action)
        card = state.decks[state.to_move][deck_index].notation
    except Exception:  # an illegal id: say so, plainly
        return f"action {action}"
    return f"action {action} ({'pick' if kind == 'pick' else 'place'} {card}{'' if tile is None else f' on {tile}'})"


# ---------------------------------------------------------------------- the env check


def _open_hands(env: Any, open_hands: bool | None) -> bool:
    if open_hands is not None:
        return open_hands
    config = getattr(getattr(env, "unwrapped", env), "config", None)
    return bool(getattr(config, "open_hands", True))  # unknown: compare the draft only


def _legal(mask: Any) -> list[int]:
    return [int(a) for a in np.flatnonzero(np.asarray(mask))]


def _over(env: Any) -> bool:
    return not env.agents or all(env.terminations.get(a, False) or env.truncations.get(a, False) for a in env.agents)


def check_observation_hides_secrets(
    env_factory: Callable[[], Any], *, games: int = 4, seed: int = 0, open_hands: bool | None = None
) -> int:
    """Assert that no seat's observation, action mask or info depends on what it cannot see.

    ``env_factory()`` returns a fresh AEC env of Trinity Towers (``trinity_env.env(...)``,
    ``raw_env(...)`` or a wrapper of one) that drafts (``draft: pick``, the default): its
    secret picks are what make two games differ in hidden information. For each of ``games``
    seeds and each seat, two envs are reset with the same seed and played side by side: the
    observed seat takes the same random legal action in both, the opponent picks at random
    in each (the same pick half the time), and then places, in both, a card that both of its
    hands hold. ``open_hands``: whether the opponent's hand is shown during play (default: the
    env's ``config.open_hands``); with open hands the comparison stops when play starts.

    Returns the number of steps compared at which the two opponents' own observations
    differed (so the twins really differed in something hidden); ``AssertionError`` names
    the first difference the observed seat could see.
    """
    compared = 0
    for game in range(games):
        for seat in (0, 1):
            rng = random.Random(seed * 1_000_003 + 2 * game + seat)
            one, two = env_factory(), env_factory()
            one.reset(seed=seed + game)
            two.reset(seed=seed + game)
            names = list(one.possible_agents)
            me, them = names[seat], names[1 - seat]
            shown = _open_hands(one, open_hands)
            for step in range(MAX_STEPS):
                mine = one.observe(me)
                phase = "draft" if np.asarray(mine["observation"])[0] else "play"
                if phase == "play" and shown:
                    break  # both hands are shown from here on: the twins may rightly look different
                where = f"seat {seat} ({me}), step {step}, {phase} phase"
                found = _differences(mine, two.observe(me), "")
                found += _differences(one.infos.get(me, {}), two.infos.get(me, {}), "info")
                if one.agent_selection != two.agent_selection:
                    found.append(f"agent_selection {one.agent_selection!r} vs {two.agent_selection!r}")
                if found:
                    raise AssertionError(
                        f"{where}: the observation differs between two games that differ only in what {me} "
                        f"cannot see ({them}'s secret picks or hidden hand): " + "; ".join(found)
                    )
                if _differences(one.observe(them), two.observe(them), ""):
                    compared += 1
                if _over(one) or _over(two):
                    break
                mover = one.agent_selection
                legal_one = _legal(one.observe(mover)["action_mask"])
                legal_two = _legal(two.observe(mover)["action_mask"])
                if mover == me:
                    action = rng.choice(legal_one)
                    one.step(action)
                    two.step(action)
                elif phase == "draft":
                    pick = rng.choice(legal_one)
                    one.step(pick)
                    two.step(pick if pick in legal_two and rng.random() < 0.5 else rng.choice(legal_two))
                else:
                    common = sorted(set(legal_one) & set(legal_two))
                    if not common:
                        break  # the opponents hold no card in common any more
                    action = rng.choice(common)
                    one.step(action)
                    two.step(action)
    return compared


# ---------------------------------------------------------------------- the agent check


def _agent(factory: Callable[[], Agent] | Agent | str) -> Agent:
    if isinstance(factory, Agent):
        return factory
    if isinstance(factory, str):
        from trinity_env.agents.spec import make

        return make(factory)
    return factory()


def check_agent_ignores_hidden_information(
    agent_factory: Callable[[], Agent] | Agent | str,
    *,
    open_hands: bool = False,
    games: int = 2,
    seed: int = 0,
    max_decisions: int = 40,
    hand_state: bool = True,
    config: Mapping[str, Any] | None = None,
) -> int:
    """Assert that an agent's action does not depend on what its seat cannot see.

    ``agent_factory``: a callable returning a fresh agent (or an agent, or a spec string).
    Games of the rules ``config`` (default: the standard draft) with ``open_hands`` are
    played at random; at each of up to ``max_decisions`` decisions the state and a
    ``hidden_twin`` of it (the opponent's secret picks, or its hidden hand, re-drawn) are
    each shown to a fresh agent reset with the same seed. Their observations are equal
    (checked); with ``hand_state`` (default) the agent is also handed the twin's full
    ``GameState``, as a careless host might, so an agent that reads the state's hidden
    cards is caught; with ``hand_state=False`` it gets what ``play_game`` gives it
    (``visible_state``). With open hands only draft decisions have a twin.

    Returns the number of decisions compared; ``AssertionError`` names the first pair of
    positions on which the agent acted differently, and what they differ in.
    """
    env_config = make_config(dict(config or {}), open_hands=open_hands)
    rng = random.Random(seed)
    compared = 0
    name = None
    for game in range(games):
        state = env_config.new_game(random.Random(seed * 1_000_003 + game))
        while not state.is_over and compared < max_decisions:
            seat = state.to_move
            twin = hidden_twin(state, seat, rng, open_hands=open_hands)
            if twin is not None:
                observation = encode_observation(state, seat, open_hands)
                mask = action_mask(state, seat)
                if not (
                    np.array_equal(observation, encode_observation(twin, seat, open_hands))
                    and np.array_equal(mask, action_mask(twin, seat))
                ):
                    raise AssertionError(
                        f"the observation itself shows {_what_differs(state, twin, seat)} to seat {seat}: "
                        "check the env with check_observation_hides_secrets"
                    )
                decision_seed = seed * 7919 + compared
                actions = []
                for position in (state, twin):
                    agent = _agent(agent_factory)
                    name = getattr(agent, "name", type(agent).__name__)
                    agent.reset(decision_seed)
                    shown = position if hand_state else visible_state(position, open_hands)
                    actions.append(
                        int(agent.act({"observation": observation.copy(), "action_mask": mask.copy()}, shown))
                    )
                if actions[0] != actions[1]:
                    phase = "draft" if state.phase == DRAFT else "play"
                    first, second = (_describe_action(state, a) for a in actions)
                    raise AssertionError(
                        f"agent {name!r} (seat {seat}, {phase} phase, seed {decision_seed}) chose {first} in one "
                        f"position and {second} in another that differs only in what its seat cannot see: "
                        f"{_what_differs(state, twin, seat)}"
                    )
                compared += 1
            state = state.apply(rng.choice(state.legal_actions()))
    return compared
