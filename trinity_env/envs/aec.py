"""
# Trinity Towers

| Creation            | `trinity_env.env()` or `pettingzoo.make("aec", "trinity_env/TrinityTowers-v0")` |
|---------------------|----------------------------------------------------------------------------------|
| Actions             | Discrete                                                                         |
| Parallel API        | No                                                                               |
| Manual Control      | `trinity play`                                                                   |
| Agents              | `agents = ['player_0', 'player_1']`                                              |
| Agents              | 2                                                                                |
| Action Shape        | (1)                                                                              |
| Action Values       | [0, 255]                                                                         |
| Observation Shape   | (339,)                                                                           |
| Observation Values  | [0, 10]                                                                          |
| Observation Type    | int8 (`observation_dtype="float32"` for float32)                                |

Trinity Towers is a two-player card-placement game on 3 lanes of 5 tiles. Each player
drafts 8 cards from a 16-card deck (at most 3 with an `A` side), then the players take
turns placing cards. A placed card captures each orthogonal opponent neighbour whose
facing side it beats (higher value, or `A` against `A`); captured cards flip and get one
domino check of their own. Owning a whole lane wins at once; otherwise the full board is
scored lane by lane. The full rules, with pictures, are in `docs/rules.md`.

### Observation Space

The observation is a dictionary with an `'observation'` element, the usual RL
observation described below, and an `'action_mask'` holding the legal moves.

The main observation is a flat int8 vector of 339 entries, from the observing agent's
point of view ("mine" and "theirs", never "player 0" and "player 1"), so that one policy
can play both seats:

| entries  | what                                                                         |
|----------|------------------------------------------------------------------------------|
| 0-8      | phase (draft, play, over), my turn, I place first, max_a_cards, my A cards, my hand size, their hand size |
| 9-98     | 15 tiles x (mine, theirs, top, right, bottom, left)                          |
| 99-210   | my 16 deck cards x (top, right, bottom, left, unpicked, in hand, played)     |
| 211-338  | their 16 deck cards x (top, right, bottom, left, played, in hand, not picked, unknown) |

Side values are 1-9, and 10 for `A`. Draft picks are secret: during the draft every
unplayed card of the opponent is "unknown". With `open_hands=False` the opponent's
unplayed cards stay "unknown" during play too. `docs/observation.md` documents every entry.

#### Legal Actions Mask

The legal moves of the agent to move are in the `action_mask` element: a binary int8
vector of 256 entries. It is all zeros for the agent not to move. Taking an illegal move
ends the game with a reward of -1 for the illegally moving agent and 0 for the other (the
`TerminateIllegalWrapper` of `env()`; `raw_env` raises `IllegalMoveError` instead).

### Action Space

`Discrete(256)`, the layout of `trinity_env.core.actions`: during the draft `a < 16` picks
own deck card `a`; during play `a = 16 + 15*i + t` places own deck card `i` on tile `t`
(`t = 5*lane + position`).

### Rewards

With `reward="win_loss"` (default):

| Winner | Loser |
| :----: | :---: |
| +1     | -1    |

A draw (only reachable from loaded positions) gives 0 to both. With `reward="margin"`,
each placement also gives each agent the change in its lane-score margin (its lane-majority
score minus the opponent's, on the board as it stands) divided by 15, so the shaping
terms of a game add up to the final margin / 15, on top of the +1/-1.

### Infos

Every agent's info holds the same three keys from `reset()` on, each a number or numbers
(libraries such as TorchRL and BenchMARL make a tensor of every info value): `winner` (0 or 1
once the game is won; -1 while it runs or for a draw), `scores` (the lane scores of the board
as it stands, player 0's first) and `termination_code`, how the game ended:

| `termination_code` | `Termination`  | the game                                      |
|--------------------|----------------|-----------------------------------------------|
| 0                  |                | is not over                                   |
| 1                  | `lane_control` | was won by owning a whole lane                |
| 2                  | `full_board`   | was scored lane by lane on the full board     |
| 3                  | `no_moves`     | ended with no legal move left                 |

`Termination(...).code` gives the number and `env.game_state.outcome.termination` the name
(the single-agent and vector envs give both: `termination` and `termination_code`).

### Arguments

``` python
trinity_env.env(render_mode=None, config=None, observation_dtype="int8", draft="pick",
                first_player="random", open_hands=True, max_a_cards=3, deck="standard",
                decks=None, hands=None, reward="win_loss")
```

`observation_dtype`: `"int8"` (default) or `"float32"`, the dtype of the `observation`
entry and of its space (the same values; the `action_mask` stays int8). Libraries that feed
the observation straight into a float network without casting it (BenchMARL's MAPPO and
IQL: `mat1 and mat2 must have the same dtype`) need `"float32"`.

`config`: a YAML file (or a name in `configs/rules/`) holding these keywords; keywords
given here override it. `draft`: `"pick"` (the agents draft), `"dealt"` (a random legal
hand each, no draft steps) or `"fixed"` (with `hands=`: 8 cards or deck indices per player).
`first_player`: `"random"`, `0` or `1`. `deck`: a deck name from `configs/decks/`, a YAML
path, a list of 16 cards, or `"random"` (a seeded random deck each game); both players get
a copy. `decks`: one such deck per player. `reset(seed=...)` seeds everything random.

### Parallel API

None: the game is turn-based, one agent acts at a time. The metadata says
`"is_parallelizable": False` (a plain dict, as in every PettingZoo env), so PettingZoo's
`aec_to_parallel` refuses the env with its usual `AssertionError`. Use instead this AEC
env, the gymnasium single-agent env, the vector env, or PettingZoo's
`turn_based_aec_to_parallel(env())` (a parallel env that takes every agent's action each
step and uses only the mover's; it passes `parallel_api_test`).

### Version History

* v0: Initial release (trinity-towers 0.1.0)
"""

from __future__ import annotations

import random
from typing import Any

import gymnasium
import numpy as np
from gymnasium import spaces
from gymnasium.utils import EzPickle
from pettingzoo import AECEnv

from trinity_env.core import NUM_ACTIONS, GameState, IllegalMoveError, lane_scores, render_text
from trinity_env.core.checks import describe_value, is_int
from trinity_env.core.rewards import transition_rewards
from trinity_env.envs.wrappers import AssertOutOfBoundsWrapper, OrderEnforcingWrapper, TerminateIllegalWrapper
from trinity_env.spec.config import ConfigError, EnvConfig, make_config
from trinity_env.spec.observation import OBSERVATION_HIGH, OBSERVATION_SIZE, observation_dict

AGENTS = ("player_0", "player_1")
RENDER_MODES = ("human", "ansi", "rgb_array")
OBSERVATION_DTYPES = {"int8": np.int8, "float32": np.float32}
"""The ``observation_dtype`` values: the observation's dtype, by name."""


def observation_dtype_name(value: Any) -> str:
    """``value`` checked as an ``observation_dtype``: ``"int8"`` or ``"float32"`` (or the numpy dtype), by name."""
    if isinstance(value, np.dtype) or (isinstance(value, type) and issubclass(value, np.generic)):
        value = np.dtype(value).name
    if not isinstance(value, str) or value not in OBSERVATION_DTYPES:
        raise ConfigError(f"observation_dtype must be 'int8' or 'float32', got {describe_value(value)}")
    return value


def env(render_mode: str | None = None, **kwargs: Any) -> AECEnv:
    """The Trinity Towers AEC env with PettingZoo's standard classic-game wrappers.

    Takes ``raw_env``'s arguments (the Arguments above); a bad one raises ``ConfigError`` naming it.
    ``observation_dtype="float32"`` gives float32 observations (the same values) for libraries that need them.
    An illegal action ends the game with -1 for the mover instead of raising. The wrappers are
    subclasses of PettingZoo's own that only make attribute access direct (see
    ``trinity_env.envs.wrappers``).
    """
    wrapped = raw_env(render_mode=render_mode, **kwargs)
    wrapped = TerminateIllegalWrapper(wrapped, illegal_reward=-1)
    wrapped = AssertOutOfBoundsWrapper(wrapped)
    return OrderEnforcingWrapper(wrapped)


class raw_env(AECEnv, EzPickle):
    """Trinity Towers as a PettingZoo AEC environment; ``env()`` adds the standard wrappers.

    ``render_mode`` and ``config`` (a name in ``configs/rules/``, a YAML path, a mapping or an
    ``EnvConfig``), overridden by ``keywords``, are checked here: a bad one raises ``ConfigError``
    naming it; so is ``observation_dtype`` (``"int8"`` or ``"float32"``: the observation's dtype, the
    mask stays int8). ``step`` raises ``IllegalMoveError`` for an action the rules do not allow.
    """

    metadata = {
        "render_modes": list(RENDER_MODES),
        "name": "trinity_towers_v0",
        "is_parallelizable": False,
        "render_fps": 2,
    }

    def __init__(
        self, render_mode: str | None = None, config: Any = None, observation_dtype: Any = "int8", **keywords: Any
    ):
        EzPickle.__init__(self, render_mode, config, observation_dtype, **keywords)
        super().__init__()
        if render_mode is not None and render_mode not in RENDER_MODES:
            raise ConfigError(f"render_mode must be None or one of {', '.join(RENDER_MODES)}, got {render_mode!r}")
        self.render_mode = render_mode
        self.observation_dtype = observation_dtype_name(observation_dtype)
        self._cast = OBSERVATION_DTYPES[self.observation_dtype] if self.observation_dtype != "int8" else None
        self.config: EnvConfig = make_config(config, **keywords)
        self.possible_agents = list(AGENTS)
        self.agents = list(AGENTS)
        self.action_spaces = {agent: spaces.Discrete(NUM_ACTIONS) for agent in AGENTS}
        self.observation_spaces = {
            agent: spaces.Dict(
                {
                    "observation": spaces.Box(
                        0, OBSERVATION_HIGH, (OBSERVATION_SIZE,), OBSERVATION_DTYPES[self.observation_dtype]
                    ),
                    "action_mask": spaces.Box(0, 1, (NUM_ACTIONS,), np.int8),
                }
            )
            for agent in AGENTS
        }
        self._rng = np.random.default_rng()
        self._game: GameState | None = None
        self.rewards = dict.fromkeys(AGENTS, 0.0)
        self._cumulative_rewards = dict.fromkeys(AGENTS, 0.0)
        self.terminations = dict.fromkeys(AGENTS, False)
        self.truncations = dict.fromkeys(AGENTS, False)
        self.infos: dict[str, dict[str, Any]] = {agent: {} for agent in AGENTS}
        self.agent_selection = AGENTS[0]

    # ------------------------------------------------------------------ spaces and state

    def observation_space(self, agent: str) -> spaces.Space:
        return self.observation_spaces[agent]

    def action_space(self, agent: str) -> spaces.Space:
        return self.action_spaces[agent]

    @property
    def game_state(self) -> GameState:
        """The current core ``GameState`` (its ``to_dict()`` is the position format once play starts)."""
        if self._game is None:
            raise RuntimeError("call reset() before reading the state")
        return self._game

    # ------------------------------------------------------------------ the AEC API

    def reset(self, seed: int | None = None, options: dict[str, Any] | None = None) -> None:
        if seed is not None:
            self._rng = np.random.default_rng(seed)
        self._game = self.config.new_game(random.Random(int(self._rng.integers(2**63))))
        self.agents = list(AGENTS)
        self.rewards = dict.fromkeys(AGENTS, 0.0)
        self._cumulative_rewards = dict.fromkeys(AGENTS, 0.0)
        self.terminations = dict.fromkeys(AGENTS, False)
        self.truncations = dict.fromkeys(AGENTS, False)
        self.infos = _infos(self._game)
        self.agent_selection = AGENTS[self._game.to_move]

    def observe(self, agent: str) -> dict[str, np.ndarray]:
        seat = AGENTS.index(agent)
        game = self.game_state
        observation = observation_dict(game, seat, self.config.open_hands)
        if self._cast is not None:
            observation["observation"] = observation["observation"].astype(self._cast)
        return observation

    def step(self, action: int | None) -> None:
        if not self.agents:
            raise IllegalMoveError("the game is over and every agent has left: call reset() to play again")
        agent = self.agent_selection
        if self.terminations[agent] or self.truncations[agent]:
            self._was_dead_step(action)
            return
        before = self.game_state
        if action is None:
            raise IllegalMoveError(f"{agent} must act: None is only for agents whose game is over")
        if not is_int(action):
            raise IllegalMoveError(
                f"{agent}: an action is an integer 0-{NUM_ACTIONS - 1}, got {describe_value(action)}"
            )
        try:
            after = before.apply(action)
        except IllegalMoveError as err:
            raise IllegalMoveError(f"{agent}: {err}") from None
        self._game = after
        self._cumulative_rewards[agent] = 0.0
        self._clear_rewards()
        paid = transition_rewards(self.config.reward, before, after)
        if paid is not None:
            self.rewards.update(zip(AGENTS, paid))
        if after.is_over:
            self.terminations = dict.fromkeys(self.agents, True)
        self.infos = _infos(after)
        self.agent_selection = AGENTS[after.to_move]
        self._accumulate_rewards()
        if self.render_mode == "human":
            self.render()

    def render(self) -> str | np.ndarray | None:
        if self.render_mode is None:
            gymnasium.logger.warn("You are calling render method without specifying any render mode.")
            return None
        if self.render_mode == "rgb_array":
            from trinity_env.envs.image import render_rgb

            return render_rgb(self.game_state)
        text = render_text(self.game_state)
        if self.render_mode == "ansi":
            return text
        print(text)
        return None

    def close(self) -> None:
        pass


def _infos(state: GameState) -> dict[str, dict[str, Any]]:
    """Each agent's info: the same keys and types from ``reset`` on (replay buffers such as
    Tianshou's allocate their columns from the first step and refuse missing values later).

    ``winner``: 0 or 1 once the game is won, -1 while it runs or for a draw; ``scores``: the
    lane scores of the board as it stands; ``termination_code``: how the game ended (``Termination.code``), 0 until
    then. Numbers only: TorchRL's ``PettingZooWrapper`` makes a tensor of each value (a string fails there).
    """
    outcome = state.outcome
    info = {
        "winner": -1 if outcome is None or outcome.winner is None else outcome.winner,
        "scores": lane_scores(state.owners),
        "termination_code": 0 if outcome is None else outcome.termination.code,
    }
    return {agent: dict(info) for agent in AGENTS}
