"""One small adapter per engine, so ``test_invariants.py`` writes each invariant once (Pgx's ``api_test``).

An adapter plays whole games and returns a ``Record`` of what its engine showed: the seat
it asked to move and the action taken, the observations and masks it showed each seat,
the rewards it delivered and when, and its game as a core ``GameState`` where it shows one.
The invariants then compare the record with the core replaying the same actions.

Engines with the opponent inside (the single-agent env, the vector env) call back for the
opponent's moves, so an adapter is driven by a chooser ``choose(seat, mask) -> action``
rather than step by step; the step-by-step engines share ``StepEngine.play``.
"""

from __future__ import annotations

import random
from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np

import trinity_env
from trinity_env.core import GameState, IllegalMoveError
from trinity_env.core.rewards import margin_shaping, result_rewards
from trinity_env.envs import raw_env
from trinity_env.envs.single_agent import TrinityTowersEnv
from trinity_env.fast import FastGames, TrinityTowersVectorEnv
from trinity_env.spec.config import make_config
from trinity_env.spec.observation import encode_observation

AGENTS = ("player_0", "player_1")
Choose = Callable[[int, np.ndarray], int]
"""``choose(seat, mask) -> action``: picks the move of ``seat`` from the mask the engine showed it."""


class RandomChooser:
    """A uniformly random action among those the engine's mask allows, from a seeded stream."""

    def __init__(self, seed: int):
        self._rng = random.Random(seed)

    def __call__(self, seat: int, mask: np.ndarray) -> int:
        legal = np.flatnonzero(mask)
        assert legal.size, f"seat {seat} was asked to move with an all-zero mask"
        return int(legal[self._rng.randrange(legal.size)])


class ScriptChooser:
    """Replays a recorded action sequence (and checks each action is allowed by the shown mask)."""

    def __init__(self, actions: list[int]):
        self._actions = iter(actions)

    def __call__(self, seat: int, mask: np.ndarray) -> int:
        action = next(self._actions)
        assert mask[action], f"seat {seat}: the replayed action {action} is masked out"
        return action


def as_int8(values: np.ndarray) -> np.ndarray:
    """An observation or mask as int8, refusing values a float vector might hold but int8 cannot."""
    values = np.asarray(values)
    converted = values.astype(np.int8)
    assert (converted == values).all(), "the engine's vector holds non-integer or out-of-range values"
    return converted


@dataclass
class Record:
    """What an engine showed during one game; ``d`` below is the number of decisions taken so far."""

    engine: str
    open_hands: bool
    start: GameState | None = None
    actions: list[int] = field(default_factory=list)
    movers: list[int] = field(default_factory=list)
    """The seat the engine asked for each action."""
    observations: list[tuple[int, int, np.ndarray]] = field(default_factory=list)
    """``(d, seat, int8 observation)`` for every observation the engine showed."""
    masks: list[tuple[int, int, np.ndarray]] = field(default_factory=list)
    """``(d, seat, int8 mask)`` for every mask the engine showed."""
    states: list[tuple[int, GameState]] = field(default_factory=list)
    """``(d, the engine's game as a core state)`` wherever the engine shows it."""
    rewards: dict[str, list[tuple[int, int, float]]] = field(default_factory=dict)
    """Per channel (a way the engine delivers rewards), ``(d, seat, reward delivered then)``."""
    ended: int | None = None
    """``d`` when the engine said the game was over."""
    after_end: list[float] | None = None
    """Rewards delivered after the end (AEC dead steps); ``None`` where the engine restarts by itself."""
    refuses_after_end: bool | None = None
    """Whether a step after the end raised ``IllegalMoveError``; ``None`` where not asked."""
    learner: int | None = None
    """The learner's seat, for engines with the opponent inside."""

    def show(self, d: int, seat: int, observation=None, mask=None) -> None:
        if observation is not None:
            self.observations.append((d, seat, as_int8(observation)))
        if mask is not None:
            self.masks.append((d, seat, as_int8(mask)))

    def reward(self, channel: str, seat: int, amount: float, d: int | None = None) -> None:
        self.rewards.setdefault(channel, []).append((len(self.actions) if d is None else d, seat, float(amount)))

    def act(self, seat: int, action: int) -> int:
        self.movers.append(seat)
        self.actions.append(int(action))
        return int(action)


class Engine:
    """An engine under test; ``shows_terminal_mask``, ``shows_both_seats`` and ``loads`` say what it can do."""

    name = "engine"
    shows_terminal_mask = True
    shows_both_seats = True
    """Whether it shows both seats' observations at every decision."""
    loads = False
    """Whether ``play`` accepts ``start=`` (a core state to start from)."""

    def __init__(self, **config):
        self.config = make_config(**config)

    def play(self, seed: int, choose: Choose, start: GameState | None = None) -> Record:
        raise NotImplementedError


class StepEngine(Engine):
    """An engine stepped one action at a time by the player to move."""

    def new_game(self, seed: int) -> None:
        raise NotImplementedError

    def load(self, state: GameState) -> None:
        raise NotImplementedError

    def state(self) -> GameState | None:
        """The engine's game as a core state, ``None`` where it does not show it."""
        raise NotImplementedError

    def mover(self) -> int:
        raise NotImplementedError

    def show(self, record: Record, done: bool) -> None:
        """Record what the engine shows now (``done``: the game just ended)."""
        raise NotImplementedError

    def step(self, record: Record, action: int) -> bool:
        """The mover takes ``action``; record the rewards; whether the game is over."""
        raise NotImplementedError

    def after_end(self, record: Record) -> None:
        pass

    def play(self, seed: int, choose: Choose, start: GameState | None = None) -> Record:
        if start is None:
            self.new_game(seed)
        else:
            self.load(start)
        record = Record(self.name, self.config.open_hands, self.state())
        done = record.start.is_over
        while True:
            d = len(record.actions)
            if (state := self.state()) is not None:
                record.states.append((d, state))
            self.show(record, done)
            if done:
                break
            seat = self.mover()
            mask = next(m for dd, s, m in reversed(record.masks) if dd == d and s == seat)
            done = self.step(record, record.act(seat, choose(seat, mask)))
        record.ended = len(record.actions)
        self.after_end(record)
        return record


class CoreEngine(StepEngine):
    """``GameState`` itself: its masks, the env's observation encoder, the core's reward module."""

    name = "core"
    loads = True

    def new_game(self, seed: int) -> None:
        self.game = self.config.new_game(random.Random(seed))

    def load(self, state: GameState) -> None:
        self.game = state

    def state(self) -> GameState:
        return self.game

    def mover(self) -> int:
        return self.game.to_move

    def show(self, record: Record, done: bool) -> None:
        for seat in (0, 1):
            record.show(len(record.actions), seat, encode_observation(self.game, seat, self.config.open_hands))
        record.show(len(record.actions), self.game.to_move, mask=np.array(self.game.action_mask(), np.int8))

    def step(self, record: Record, action: int) -> bool:
        before, self.game = self.game, self.game.apply(action)
        rewards = [0.0, 0.0]
        if self.config.reward == "margin" and before.phase == "play":
            shaping = margin_shaping(before.owners, self.game.owners)
            rewards = [shaping, -shaping]
        if self.game.is_over:
            rewards = [r + result for r, result in zip(rewards, result_rewards(self.game.winner))]
        for seat in (0, 1):
            record.reward("step", seat, rewards[seat])
        return self.game.is_over

    def after_end(self, record: Record) -> None:
        record.refuses_after_end = _refused(lambda: self.game.apply(16))


def _refused(step: Callable[[], object]) -> bool:
    try:
        step()
    except IllegalMoveError:
        return True
    return False


class AECEngine(Engine):
    """The PettingZoo AEC env, ``trinity_env.env()`` (wrapped) or ``raw_env()``, driven by ``agent_iter``.

    Rewards come on two channels: ``step`` (``env.rewards`` after each step, both agents)
    and ``last`` (what ``last()`` hands each agent at its turns, dead turns included).
    """

    def __init__(self, wrapped: bool, **config):
        super().__init__(**config)
        self.name = "aec" if wrapped else "raw_aec"
        self.env = trinity_env.env(**config) if wrapped else raw_env(**config)

    def play(self, seed: int, choose: Choose, start: GameState | None = None) -> Record:
        assert start is None, "the AEC env starts from reset() only"
        env = self.env
        env.reset(seed=seed)
        record = Record(self.name, self.config.open_hands, env.unwrapped.game_state)
        record.after_end = []
        for agent in env.agent_iter():
            seat, d = AGENTS.index(agent), len(record.actions)
            _, reward, termination, truncation, _ = env.last()
            record.reward("last", seat, reward)
            record.states.append((d, env.unwrapped.game_state))
            for other in (0, 1):
                shown = env.observe(AGENTS[other])
                record.show(d, other, shown["observation"], shown["action_mask"])
            if termination or truncation:
                assert not truncation, "the game is never truncated"
                record.ended = d if record.ended is None else record.ended
                env.step(None)  # a dead step
                record.after_end += [env.rewards[a] for a in env.agents]
                continue
            env.step(record.act(seat, choose(seat, env.observe(agent)["action_mask"])))
            for other in (0, 1):
                record.reward("step", other, env.rewards[AGENTS[other]])
        assert env.agents == [], "every agent left after its dead step"
        return record


class FastEngine(StepEngine):
    """``FastGames`` with two rows holding the same game, so its final observations show both seats.

    Odd-seeded games are the ones the engine restarted by itself (after a game ended), the
    others start from ``reset(seed)``, so both ways in are tested. The engine restarts a
    game in the step that ends it, so its terminal mask is asked of a probe batch holding
    the core's terminal state.
    """

    name = "fast"
    loads = True

    def __init__(self, **config):
        super().__init__(**config)
        self.games = FastGames(2, seed=0, **config)
        self.probe = FastGames(1, seed=0, **config)
        self.started = False
        self.final: np.ndarray | None = None

    def new_game(self, seed: int) -> None:
        if not (self.started and seed % 2):
            self.games.reset(seed)
            self.started = True
        self._mirror()

    def load(self, state: GameState) -> None:
        self.games.set_state(0, state)
        self._mirror()

    def _mirror(self) -> None:
        self.games.set_state(1, self.games.state(0))
        self.final, self.last_state = None, self.games.state(0)

    def state(self) -> GameState | None:
        return None if self.final is not None else self.games.state(0)

    def mover(self) -> int:
        return int(self.games.to_move[0])

    def show(self, record: Record, done: bool) -> None:
        d, seats = len(record.actions), np.array([0, 1])
        if self.final is None and not done:
            observations, masks = self.games.observations(seats), self.games.masks()
        else:  # the rows restarted: the step's final observations, and the probe's terminal mask
            observations = self.final if self.final is not None else self.games.observations(seats)
            self.probe.set_state(0, self.last_state)
            masks = np.repeat(self.probe.masks(), 2, axis=0)
            for seat in (0, 1):
                record.show(d, seat, self.probe.observations(np.array([seat]))[0])
        mover = int(self.last_state.to_move) if done else self.mover()
        for seat in (0, 1):
            record.show(d, seat, observations[seat])
            record.show(d, mover, mask=masks[seat])

    def step(self, record: Record, action: int) -> bool:
        self.last_state = self.last_state.apply(action)  # the core's state, for the probe at the end
        result = self.games.step(np.array([action, action]), final_seats=np.array([0, 1]))
        assert result.terminated[0] == result.terminated[1], "the two rows hold one game"
        for row, channel in ((0, "step"), (1, "mirror")):
            for seat in (0, 1):
                record.reward(channel, seat, result.rewards[row, seat])
        if result.terminated[0]:
            self.final = result.final_observations
        return bool(result.terminated[0])


class RLlibEngine(StepEngine):
    """The RLlib multi-agent env: only the mover is shown an observation, both at the end."""

    name = "rllib"
    shows_both_seats = False

    def __init__(self, **config):
        super().__init__(**config)
        from trinity_env.integrations.rllib import TrinityTowersMultiAgentEnv

        self.env = TrinityTowersMultiAgentEnv(dict(config))

    def new_game(self, seed: int) -> None:
        self.shown, _ = self.env.reset(seed=seed)

    def state(self) -> GameState:
        return self.env.game_state

    def mover(self) -> int:
        (agent,) = self.shown
        return AGENTS.index(agent)

    def show(self, record: Record, done: bool) -> None:
        assert len(self.shown) == (2 if done else 1), "only the mover observes, both at the end"
        for agent, shown in self.shown.items():
            record.show(len(record.actions), AGENTS.index(agent), shown["observations"], shown["action_mask"])

    def step(self, record: Record, action: int) -> bool:
        self.shown, rewards, terminated, truncated, _ = self.env.step({AGENTS[self.mover()]: action})
        assert not truncated["__all__"]
        for seat, agent in enumerate(AGENTS):
            record.reward("step", seat, rewards.get(agent, 0.0))
        return bool(terminated["__all__"])

    def after_end(self, record: Record) -> None:
        record.refuses_after_end = _refused(lambda: self.env.step({AGENTS[self.env.game_state.to_move]: 16}))


class SingleAgentEngine(Engine):
    """The gymnasium env: the learner steps, the opponent (a callback here) moves inside ``step()``.

    Only the learner is rewarded (channel ``step``: each step's reward covers the opponent's
    replies); the opponent's observations and masks are what the env hands the opponent.
    """

    name = "single_agent"
    shows_both_seats = False

    def __init__(self, **config):
        super().__init__(**config)
        self.env = TrinityTowersEnv(opponent=self._opponent, **config)

    def _opponent(self, observation) -> int:
        record, seat = self.record, 1 - self.env.seat
        if record.start is None:
            record.start = self.env.game_state  # the opponent moves first: nothing has happened yet
        d = len(record.actions)
        record.states.append((d, self.env.game_state))
        record.show(d, seat, observation["observation"], observation["action_mask"])
        return record.act(seat, self.choose(seat, observation["action_mask"]))

    def play(self, seed: int, choose: Choose, start: GameState | None = None) -> Record:
        assert start is None, "the single-agent env starts from reset() only"
        self.choose, self.record = choose, Record(self.name, self.config.open_hands)
        record, env = self.record, self.env
        observation, info = env.reset(seed=seed)
        if record.start is None:
            record.start = env.game_state
        done = False
        while True:
            d, seat = len(record.actions), env.seat
            record.states.append((d, env.game_state))
            record.show(d, seat, observation, info["action_mask"])
            record.show(d, seat, mask=env.action_masks())
            if done:
                break
            action = record.act(seat, choose(seat, env.action_masks()))
            observation, reward, done, truncated, info = env.step(action)
            assert not truncated
            record.reward("step", seat, reward)
        record.ended = len(record.actions)
        record.refuses_after_end = _refused(lambda: env.step(16))
        return record


class _Pool:
    """The vector env's opponent, as an opponent pool: told when episodes start, asked to act."""

    def __init__(self, engine: VectorEngine):
        self.engine = engine

    def new_episodes(self, games: np.ndarray) -> None:
        self.engine.new_episode()

    def act(self, observations: np.ndarray, masks: np.ndarray, games: np.ndarray) -> np.ndarray:
        return np.array([self.engine.opponent_moves(observations[0], masks[0])], np.int64)


class VectorEngine(Engine):
    """``TrinityTowersVectorEnv`` with one game: the learner steps, the opponent moves inside.

    Odd-seeded games are those the env restarted by itself (same-step autoreset): the
    opponent's opening moves happen in the step that ended the game before, and their
    rewards must reach the learner in its first step of the new game. The others start
    from ``reset(seed)``, so both ways in are tested.
    """

    name = "vector"
    shows_terminal_mask = False  # it restarts a game in the step that ends it
    shows_both_seats = False

    def __init__(self, **config):
        super().__init__(**config)
        self.env = TrinityTowersVectorEnv(1, opponent=_Pool(self), autoreset_mode="same_step", **config)
        self.next: tuple[np.ndarray, dict] | None = None
        self.record: Record | None = None

    def new_episode(self) -> None:
        self.record = Record(self.name, self.config.open_hands, self.env.games.state(0))
        self.record.learner = int(self.env.seats[0])

    def opponent_moves(self, observation: np.ndarray, mask: np.ndarray) -> int:
        record = self.record
        seat, d = 1 - record.learner, len(record.actions)
        record.states.append((d, self.env.games.state(0)))
        record.show(d, seat, observation, mask)
        return record.act(seat, self.choose(seat, mask))

    def play(self, seed: int, choose: Choose, start: GameState | None = None) -> Record:
        assert start is None, "the vector env starts from reset() only"
        self.choose = choose
        observations, infos = self.env.reset(seed=seed) if self.next is None or seed % 2 == 0 else self.next
        record = self.record
        seat = record.learner
        while True:
            d = len(record.actions)
            record.states.append((d, self.env.games.state(0)))
            record.show(d, seat, observations[0], infos["action_mask"][0])
            action = record.act(seat, choose(seat, infos["action_mask"][0]))
            observations, rewards, terminated, truncated, infos = self.env.step(np.array([action]))
            assert not truncated[0]
            record.reward("step", seat, rewards[0])
            if terminated[0]:
                record.show(len(record.actions), seat, infos["final_obs"][0])
                break
        assert self.record is not record, "the env restarted the game it ended"
        record.ended = len(record.actions)
        self.next = observations, infos
        return record


class JaxEngine(StepEngine):
    """``trinity_env.jax.TrinityTowers`` (the ``jax`` extra), one game jitted: both seats' observations, the
    rules' mask (Pgx's ``legal_action_mask`` is all True at the end: tests/test_jax_engine.py checks that), and
    ``to_state`` as the engine's game. A step after the end pays nothing (Pgx's rule) rather than raising."""

    name = "jax"
    loads = True

    def __init__(self, **config):
        super().__init__(**config)
        import jax
        import jax.numpy as jnp

        from trinity_env.jax import TrinityTowers, from_state, legal_mask, to_state

        self.env = TrinityTowers(**config)
        self._init, self._step = jax.jit(self.env.init), jax.jit(self.env.step)
        seats = jnp.arange(2)
        self._show = jax.jit(lambda s: (jax.vmap(lambda p: self.env.observe(s, p))(seats), legal_mask(s)))
        self._key, self._from_state, self._to_state = jax.random.PRNGKey, from_state, to_state

    def new_game(self, seed: int) -> None:
        self.game = self._init(self._key(seed))

    def load(self, state: GameState) -> None:
        self.game = self._from_state(state, self.env)

    def state(self) -> GameState:
        return self._to_state(self.game)

    def mover(self) -> int:
        return int(self.game.current_player)

    def show(self, record: Record, done: bool) -> None:
        observations, mask = (np.asarray(a) for a in self._show(self.game))
        d = len(record.actions)
        for seat in (0, 1):
            record.show(d, seat, observations[seat])
        record.show(d, self.mover(), mask=mask.astype(np.int8))
        assert np.array_equal(np.asarray(self.game.observation), observations[self.mover()])

    def step(self, record: Record, action: int) -> bool:
        self.game = self._step(self.game, action)
        for seat in (0, 1):
            record.reward("step", seat, float(self.game.rewards[seat]))
        return bool(self.game.terminated)

    def after_end(self, record: Record) -> None:
        record.after_end = [float(r) for r in self._step(self.game, 16).rewards]


def make_engine(name: str, **config) -> Engine:
    """The adapter of engine ``name`` under the env config ``config``."""
    engines: dict[str, Callable[..., Engine]] = {
        "core": CoreEngine,
        "fast": FastEngine,
        "aec": lambda **c: AECEngine(wrapped=True, **c),
        "raw_aec": lambda **c: AECEngine(wrapped=False, **c),
        "single_agent": SingleAgentEngine,
        "vector": VectorEngine,
        "rllib": RLlibEngine,
        "jax": JaxEngine,
    }
    return engines[name](**config)


ENGINES = ("core", "fast", "aec", "raw_aec", "single_agent", "vector", "rllib", "jax")
