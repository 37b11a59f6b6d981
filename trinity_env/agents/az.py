"""``az``: a policy-value network trained by self-play search (``training/alphazero.py``), and its agent.

An AlphaZero network maps the observation (int8 [339], ``docs/observation.md``) to 256 action
logits and a value in [-1, 1] for the observer. Two architectures (``NETWORKS``, a checkpoint's
``network`` field): ``AZNetwork``, the ReLU preset of ``trinity_env.agents.networks.network``'s MLP, and
``BoardNetwork`` (``trinity_env.agents.networks.board_network``), built on the board's structure; with
``tactics`` each placement's logit also gets a learned function of its tactical features
(``trinity_env.agents.networks.tactics``). ``numpy_evaluator`` runs either in plain numpy, the agent's
fast path for its small batches.

``AZAgent`` plays it: with ``simulations=0`` the network's most likely legal action, otherwise
the move of a Gumbel (or PUCT) search guided by the network (``trinity_env.search.az``),
built from the seat's own observation only. Where the rules hide something (the opponent's
secret draft picks, its hand with ``open_hands=False``) it searches ``worlds``
determinisations at once, each dealing the hidden cards at random among the hands consistent
with the observation (``trinity_env.agents.view``), and plays the action with the largest
summed improved policy. ``solver=K`` plays the exact solver's move when at most K tiles are
empty and everything is visible.

Checkpoints are ``torch.save`` files of plain tensors and numbers, checked on a dry run that
builds no tensor (``trinity_env.agents.loaders.checkpoint``: fields, names, shapes, sizes, storages),
then read with ``torch.load(weights_only=True)`` (no code in a file can run), the weights cast
to float32 and checked finite, and the network's outputs held to every policy's contract on a probe batch of real
positions (``trinity_env.agents.outputs``: finite legal logits, values in [-1, 1]; again on every evaluation in
play): every malformed one raises ``CheckpointError`` naming the file.
torch is imported here, so only ``make("az:...")`` loads this module.
"""

from __future__ import annotations

import inspect
import os
from pathlib import Path
from typing import Any

import numpy as np
import torch

from trinity_env.agents.baselines import check_count, check_number, check_seed
from trinity_env.agents.loaders import network_checkpoint
from trinity_env.agents.loaders.checkpoint import CheckpointError
from trinity_env.agents.loaders.network_checkpoint import best_else_latest
from trinity_env.agents.networks.board_network import BoardNetwork, board_numpy_evaluator
from trinity_env.agents.networks.network import MLPNetwork
from trinity_env.agents.networks.precision import PRECISIONS, search_precision
from trinity_env.agents.outputs import checked, probe
from trinity_env.agents.view import decode, determinise
from trinity_env.core import ArgumentError, GameState, PositionError
from trinity_env.core.actions import DECK_SIZE
from trinity_env.core.paths import refuse_special
from trinity_env.fast.layout import PHASE, PLAY, Batch
from trinity_env.fast.tactics import tactical_batch
from trinity_env.search.az import BatchedSearch, SearchMode
from trinity_env.spec.agent import Agent, Observation
from trinity_env.spec.observation import OBSERVATION_HIGH

FORMAT = "trinity-towers-az"
DEFAULT_SIMULATIONS = 1600
"""Simulations per move of ``az:`` agents unless the spec says otherwise."""


class AZNetwork(MLPNetwork):
    """AlphaZero's network: an ``MLPNetwork`` (ReLU, default initialisation) from the observation to masked
    action logits and a value in [-1, 1] (through tanh)."""

    def __init__(self, hidden: int = 256, layers: int = 2, tactics: bool = True):
        super().__init__(hidden, layers, tactics, activation="relu", bounded_value=True, orthogonal_policy=False)


AZModel = AZNetwork | BoardNetwork
"""Either AlphaZero network."""

NETWORKS: dict[str, type[AZNetwork] | type[BoardNetwork]] = {"mlp": AZNetwork, "board": BoardNetwork}
"""AlphaZero's architectures by the name configs (``network:``) and checkpoints (``network``) give them."""


def make_network(network: str, hidden: int, layers: int, tactics: bool) -> AZModel:
    """A fresh AlphaZero network of architecture ``network`` (a key of ``NETWORKS``)."""
    if network not in NETWORKS:
        raise ArgumentError(f"network must be one of {', '.join(NETWORKS)}, got {network!r}")
    return NETWORKS[network](hidden, layers, tactics)


SEARCH_PRECISIONS = (*PRECISIONS, "fastest")
"""What ``evaluator`` takes: a precision of the board network's fast path, or ``fastest`` (``search_precision``)."""


def evaluator(network: AZModel, precision: str = "float32"):
    """The search's evaluation callback: numpy in, numpy out, no gradients. The board network's is its fast path
    (``FastBoardEvaluator``: the legal actions' logits only) in ``precision``: ``float32`` (the default: the forward
    pass's figures to float rounding), ``int8`` (round products in int8 through onnxruntime, within
    ``INT8_LOGIT_TOLERANCE``), ``bfloat16``, or ``fastest`` (``search_precision``: int8 where the processor has
    VNNI and onnxruntime is installed); ``benchmarks.az --reference`` measures each against the forward pass.
    The MLP's is its forward pass (``forward_evaluator``), in float32 whatever ``precision`` says."""
    if precision not in SEARCH_PRECISIONS:
        raise ArgumentError(f"precision must be one of {', '.join(SEARCH_PRECISIONS)}, got {precision!r}")
    if isinstance(network, BoardNetwork):
        return board_numpy_evaluator(network, search_precision() if precision == "fastest" else precision)
    return forward_evaluator(network)


def forward_evaluator(network: AZModel):
    """The network's own torch forward pass as the search's callback: one forward pass, no gradients (the reference
    the numpy paths are tested and timed against)."""

    def evaluate(observations: np.ndarray, masks: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        with torch.inference_mode():
            logits, values = network(torch.from_numpy(observations), torch.from_numpy(masks))
        return logits.numpy(), values.numpy()

    return evaluate


def numpy_evaluator(network: AZModel):
    """The same evaluation as ``evaluator`` in plain numpy (float32), for the agent's small batches: at one to a
    few positions per call, torch's per-operation overhead is most of the time."""
    if isinstance(network, BoardNetwork):
        return board_numpy_evaluator(network)
    weights = {key: tensor.detach().numpy().astype(np.float32) for key, tensor in network.state_dict().items()}
    body = [(weights[f"body.{2 * k}.weight"].T.copy(), weights[f"body.{2 * k}.bias"]) for k in range(network.layers)]
    policy = (weights["policy.weight"].T.copy(), weights["policy.bias"])
    value = (weights["value.weight"].T.copy(), weights["value.bias"])
    if network.tactics:
        first = (weights["placement.0.weight"].T.copy(), weights["placement.0.bias"])
        second = (weights["placement.2.weight"].T.copy(), weights["placement.2.bias"])
    scale = np.float32(1 / OBSERVATION_HIGH)

    def evaluate(observations: np.ndarray, masks: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        x = observations.astype(np.float32) * scale
        for w, b in body:
            x = np.maximum(x @ w + b, 0)
        logits = x @ policy[0] + policy[1]
        if network.tactics:
            hidden = np.maximum(tactical_batch(observations) @ first[0] + first[1], 0)
            logits[:, DECK_SIZE:] += (hidden @ second[0] + second[1]).reshape(len(x), -1)
        logits[masks == 0] = -1e9
        return logits, np.tanh((x @ value[0] + value[1])[:, 0])

    return evaluate


# ------------------------------------------------------------------------------ checkpoints


def save_network(path: str | Path, network: AZModel, extra: dict[str, Any] | None = None) -> None:
    """Write the network (and ``extra`` tensors and numbers) atomically, never through a link: a crash or a full
    disk leaves the old file (``trinity_env.agents.loaders.network_checkpoint.save_network``)."""
    network_checkpoint.save_network(path, network, FORMAT, extra)


def load_network(path: str | Path) -> tuple[AZModel, dict[str, Any]]:
    """The network of an ``az`` checkpoint and the whole payload; ``CheckpointError`` names the file and the fault.

    Checked on a dry run before any tensor is built, then read weights-only, the weights cast to float32 and
    checked finite (``trinity_env.agents.loaders.network_checkpoint.load_network``)."""
    return network_checkpoint.load_network(path, NETWORKS, FORMAT, "az")


def check_network(name: str, network: AZModel, precision: str = "float32") -> None:
    """Hold ``network`` to the output contract (``trinity_env.agents.outputs``) on the probe batch: through its
    forward pass and through the search's evaluator in ``precision`` (``evaluator``'s); one ``CheckpointError`` line
    naming ``name`` (its file) otherwise: finite weights that overflow to NaN are refused here, not mid-search."""
    probe(name, forward_evaluator(network), bounded=True)
    if isinstance(network, BoardNetwork):  # the MLP's evaluator is its forward pass
        with np.errstate(over="ignore", invalid="ignore"):  # weights folded past float32: refused by the probe
            evaluate = evaluator(network, precision)
        probe(name, evaluate, bounded=True)


def resolve_checkpoint(spec: str) -> Path:
    """A checkpoint file's path (a run folder is ``AZAgent.from_checkpoint``'s: ``best_else_latest``).

    ``PATH`` without a suffix also names ``PATH.pt``. A named pipe, device or socket is refused
    here, by ``os.stat`` and without opening it (a pipe would block the open forever).
    """
    path = Path(spec)
    if not path.suffix and os.path.exists(spec + ".pt"):
        path = Path(spec + ".pt")
    refuse_special(path, CheckpointError)
    return path


# ------------------------------------------------------------------------------ the agent


MAX_SIMULATIONS = 50_000
"""The most simulations a move (``sims=``): a search keeps one node per simulation, about 1.7 KB each
(120 edges), so one tree of this size takes about 85 MB."""
MAX_WORLDS = 64
"""The most determinisations (``worlds=``), searched at once: one tree each."""
MAX_WORLD_SIMULATIONS = 200_000
"""The most ``worlds x sims``: the nodes of the determinised search, about 340 MB at this bound (and
two one-tree searches at most besides, for open positions: about 510 MB in all)."""
MAX_CONSIDERED = 256
"""The most root actions Gumbel considers (``considered=``); past the 120 legal actions a position can
have, more considers every one of them."""
MAX_SOLVER = 15
"""The most empty tiles for the exact solver (``solver=``): the whole board."""
MAX_C_PUCT = 100.0
"""The largest PUCT exploration constant (``c_puct``)."""


class AZAgent(Agent):
    """Plays an AlphaZero network (``AZModel``): the raw policy (``simulations=0``) or network-guided search (see
    the module).

    Every argument has a bound (``MAX_SIMULATIONS`` and the others above), checked before any
    work: ``make("az:...")`` checks them before it reads the checkpoint. The network's outputs are held to the
    contract of ``trinity_env.agents.outputs`` on its probe batch when the agent is made, and on every evaluation in
    play: a refusal is one ``CheckpointError`` line naming ``source`` (the file it came from; default ``name``).
    """

    @classmethod
    def check_arguments(cls, **given: Any) -> None:
        """A one-line ``ArgumentError`` naming the first argument past its bound (the spec's names); an argument
        not given takes ``__init__``'s default (declared there only)."""
        defaults = {
            name: parameter.default
            for name, parameter in inspect.signature(cls.__init__).parameters.items()
            if parameter.default is not inspect.Parameter.empty
        }
        arguments = defaults | given
        simulations = check_count("az", "sims", arguments["simulations"], 0, MAX_SIMULATIONS)
        worlds = check_count("az", "worlds", arguments["worlds"], 1, MAX_WORLDS)
        if simulations * worlds > MAX_WORLD_SIMULATIONS:
            raise ArgumentError(
                f"az worlds x sims must be at most {MAX_WORLD_SIMULATIONS} (a search node takes "
                f"about 1.7 KB), got {worlds} x {simulations}"
            )
        check_count("az", "solver", arguments["solver"], 0, MAX_SOLVER)
        check_count("az", "considered", arguments["max_considered"], 1, MAX_CONSIDERED)
        check_number("az", "c_puct", arguments["c_puct"], 0.0, MAX_C_PUCT)
        check_seed("az", arguments["seed"])
        try:
            SearchMode.parse(arguments["mode"], "az search")
        except ValueError as err:
            raise ArgumentError(str(err)) from None

    def __init__(
        self,
        network: AZModel,
        simulations: int = DEFAULT_SIMULATIONS,
        *,
        solver: int = 0,
        worlds: int = 4,
        mode: SearchMode | str = SearchMode.GUMBEL,
        max_considered: int = 16,
        c_puct: float = 1.25,
        seed: int | None = None,
        name: str = "az",
        source: str | None = None,
    ):
        self.check_arguments(
            simulations=simulations,
            solver=solver,
            worlds=worlds,
            mode=mode,
            max_considered=max_considered,
            c_puct=c_puct,
            seed=seed,
        )
        self.network = network.eval()
        self.simulations, self.solver_empty, self.worlds = simulations, solver, worlds
        self.mode, self.max_considered, self.c_puct = SearchMode(mode), max_considered, c_puct
        self.name = name
        # the output contract (``outputs``): held on the probe batch now and on every evaluation in play, each
        # refusal one line naming the file (``source``) the network came from
        with np.errstate(over="ignore", invalid="ignore"):  # weights folded past float32: refused by the probe
            self._evaluate = checked(source or name, numpy_evaluator(self.network), bounded=True)
        probe(source or name, self._evaluate, bounded=True)
        self._searches: dict[tuple[int, bool], BatchedSearch] = {}
        self._solver = None
        self.reset(seed)

    def reset(self, seed: int | None = None) -> None:
        self._rng = np.random.default_rng(seed)

    def _search(self, games: int, open_hands: bool) -> BatchedSearch:
        key = (games, open_hands)
        if key not in self._searches:
            self._searches[key] = BatchedSearch(
                games,
                self.simulations,
                mode=self.mode,
                c_puct=self.c_puct,
                max_considered=self.max_considered,
                open_hands=open_hands,
            )
        return self._searches[key]

    def evaluate(self, observations: np.ndarray, masks: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """The network's masked logits and values (for the observer, in [-1, 1]) for a batch of int8 observations
        [B, 339] and masks [B, 256]: what the search leans on, measured by ``trinity accuracy``."""
        return self._evaluate(np.asarray(observations, np.int8), np.asarray(masks, np.int8))

    def act(self, observation: Observation, state: GameState | None = None) -> int:
        return int(
            self.act_batch(
                np.asarray(observation["observation"], np.int8)[None],
                np.asarray(observation["action_mask"], np.int8)[None],
            )[0]
        )

    def act_batch(self, observations: np.ndarray, masks: np.ndarray) -> np.ndarray:
        """Actions (int64) for many positions at once: the raw policy in one forward pass, one batched search
        over all the complete views and one over all the determinised worlds of the rest, so a searched agent
        plays many games for the cost of a few network calls per simulation (``trinity exploit`` plays it across
        the exploiter's games); ``act`` is its one-row case. Each row is searched in a tree of its own, so a
        row's move does not depend on the others (only the random stream's order does)."""
        observations, masks = np.asarray(observations, np.int8), np.asarray(masks, np.int8)
        actions = np.full(len(observations), -1, np.int64)
        raw: list[int] = []
        complete: list[tuple[int, Batch]] = []
        hidden: list[tuple[int, list[Batch]]] = []
        for j, (obs, mask) in enumerate(zip(observations, masks)):
            legal = np.flatnonzero(mask)
            if legal.size == 0:
                raise PositionError("az was asked to act with no legal action (is it its turn?)")
            if legal.size == 1:
                actions[j] = legal[0]
                continue
            view = decode(obs)
            playing = view.batch.info[0, PHASE] == PLAY
            empty = int((view.batch.owner[0] == -1).sum())
            if self.solver_empty and playing and view.complete and empty <= self.solver_empty:
                actions[j] = self._solve(view.batch)
            elif self.simulations == 0:
                raw.append(j)
            elif view.complete:
                complete.append((j, view.batch))
            else:
                hidden.append((j, [determinise(view, self._rng) for _ in range(self.worlds)]))
        if raw:
            logits, _ = self._evaluate(observations[raw], masks[raw])
            actions[raw] = np.where(masks[raw].astype(bool), logits, -np.inf).argmax(axis=1)
        if complete:
            roots = Batch(*(np.concatenate(parts) for parts in zip(*(batch for _, batch in complete))))
            result = self._batch_search(roots.size, True).run(roots, self._evaluate, self._rng)
            actions[[j for j, _ in complete]] = result.action
        if hidden:
            worlds = [world for _, views in hidden for world in views]
            roots = Batch(*(np.concatenate(parts) for parts in zip(*worlds)))
            result = self._batch_search(roots.size, False).run(roots, self._evaluate, self._rng)
            summed = result.policy.reshape(len(hidden), self.worlds, -1).sum(axis=1)
            for (j, _), policy in zip(hidden, summed):
                legal = np.flatnonzero(masks[j])
                actions[j] = legal[np.argmax(policy[legal])]
        return actions

    def _batch_search(self, roots: int, open_hands: bool) -> BatchedSearch:
        """A search with room for ``roots`` (rounded up to a power of two, so a few sizes serve every batch)."""
        return self._search(1 << max(roots - 1, 0).bit_length(), open_hands)

    def _solve(self, position: Batch) -> int:
        from trinity_env.search.solver import Solver

        if self._solver is None:
            self._solver = Solver(table_bits=18)
        _, action = self._solver.best_move_of_row(position, 0)
        return action

    @classmethod
    def from_checkpoint(cls, spec: str, **keywords) -> AZAgent:
        """The agent of a checkpoint or run folder, its network held to the output contract (``check_network``); a
        folder whose ``best.pt`` is damaged (or refused by its checks, that one included) plays its ``latest.pt``,
        with a warning, as every run folder does (``best_else_latest``)."""

        def load(path: Path) -> AZModel:
            network, _ = load_network(path)
            check_network(str(path), network)
            return network

        if Path(spec).is_dir():
            folder = Path(spec)
            network = best_else_latest(
                folder, folder / "best.pt", folder / "latest.pt", lambda path: load(resolve_checkpoint(str(path)))
            )
        else:
            network = load(resolve_checkpoint(spec))
        return cls(network, **({"source": spec} | keywords))
