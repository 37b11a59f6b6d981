"""BenchMARL on Trinity Towers with no glue: its task, its experiment, its actor as an ONNX file, self-play figures.

Needs BenchMARL 1.5 (the ``benchmarl`` extra, in a venv of its own: 1.5 pins ``torchrl<0.12``, older than the
``integrations`` extra's; ``make test-benchmarl`` builds ``.venv-benchmarl``). Nothing else in the project imports
this module, so nothing else loads BenchMARL::

    from trinity_env.integrations.benchmarl import export_actor, make_experiment

    experiment = make_experiment("mappo", folder="runs/benchmarl", iterations=3, frames=512)
    experiment.run()  # a line per iteration: player_0's results against player_1
    export_actor(experiment, "policy.onnx")  # trinity benchmark --agent onnx:policy.onnx

**The task** (``TrinityTowersTask``, ``make_task()``). BenchMARL's PettingZoo task class builds a *parallel* env; this
game is turn-based (an AEC env, which ``aec_to_parallel`` refuses), so the task's env is TorchRL's
``PettingZooWrapper`` over ``trinity_env.env(observation_dtype="float32")``: one group per player, the action masks
on. The observation is float32 because BenchMARL's MLP takes it as the env gives it: with the env's default int8
its first layer fails (``mat1 and mat2 must have the same dtype, but got Char and Float``). The task lives in this
module because BenchMARL pickles it into the run folder (``config.pkl``, read back by its ``restore_file``).

**The experiment** (``make_experiment``). BenchMARL's ``Experiment`` with the task, the save folder created (BenchMARL
makes only the run's own folder inside it, with ``parents=False``) and ``SelfPlayProgress`` among its callbacks.

**The progress line** (``SelfPlayProgress``, ``self_play_figures``). BenchMARL's bar shows ``mean return``, the mean
over both groups of their episode returns: in a zero-sum game always 0. The bar is a local of
``Experiment._collection_loop`` whose description is set from the logger's return value, also saved in checkpoints,
so it cannot be changed without patching BenchMARL; its figure is left as it is. Instead, after each collection
``SelfPlayProgress`` writes a line above the bar with player_0's games in the batch: won, drawn and lost against
player_1's policy, and its mean return. The task's ``log_info`` adds the same figures to BenchMARL's loggers
(``collection/player_0/win_share``...; the csv logger writes them under the run folder).

**The export** (``export_actor``). BenchMARL's MLP actor is TorchRL's ``MultiAgentMLP``, whose weights live apart
from its layers; ``export_actor`` rebuilds the plain torch network of one group (the observation, written from the
mover's point of view, to the 256 logits, or Q-values for IQL) and writes it as an ONNX file of
``trinity_env.agents.loaders.onnx_policy``'s contract: float32 ``observation`` [batch, 339] in, ``logits`` [batch,
256] out.
The project's ``onnx:`` spec plays it greedily (the legal action with the highest output), which is what BenchMARL's
actor plays with deterministic actions (MAPPO's masked categorical's mode, IQL's greedy masked Q-value).
"""

from __future__ import annotations

import copy
import functools
import sys
import warnings
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import torch
from benchmarl.algorithms import algorithm_config_registry
from benchmarl.algorithms.common import AlgorithmConfig
from benchmarl.environments.pettingzoo.common import PettingZooClass
from benchmarl.experiment import Callback, Experiment, ExperimentConfig
from benchmarl.models.common import ModelConfig
from benchmarl.models.mlp import Mlp, MlpConfig
from tensordict import TensorDictBase
from torchrl.envs import EnvBase
from torchrl.envs.libs.pettingzoo import PettingZooWrapper
from torchrl.envs.utils import ExplorationType, set_exploration_type
from torchrl.modules.models.multiagent import MultiAgentMLP
from tqdm import tqdm

import trinity_env
from trinity_env.agents.loaders.checkpoint import ACTIONS
from trinity_env.agents.loaders.onnx_policy import export_policy
from trinity_env.core import ArgumentError
from trinity_env.core.board import TILES
from trinity_env.core.decks import DECK_SIZE
from trinity_env.spec.observation import OBSERVATION_SIZE

GROUPS = ("player_0", "player_1")
"""BenchMARL's groups: one a player, each with a policy of its own."""


def _make_env(config: dict[str, Any], seed: int | None, device: Any) -> EnvBase:
    """The env of a task: TorchRL's wrapper over the AEC env (module level, so ``ParallelEnv`` can pickle it)."""
    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", message="PettingZoo in TorchRL is tested")
        return PettingZooWrapper(
            env=trinity_env.env(**config), use_mask=True, categorical_actions=True, seed=seed, device=device
        )


class TrinityTowersTask(PettingZooClass):
    """Trinity Towers as a BenchMARL task; its ``config`` holds ``trinity_env.env``'s keywords. Build it with
    ``make_task()``, which checks them."""

    def get_env_fun(self, num_envs: int, continuous_actions: bool, seed: int | None, device: Any) -> Any:
        return functools.partial(_make_env, dict(self.config), seed, device)

    def supports_continuous_actions(self) -> bool:
        return False

    def supports_discrete_actions(self) -> bool:
        return True

    def has_state(self) -> bool:
        return False

    def has_render(self, env: EnvBase) -> bool:
        return False

    def max_steps(self, env: EnvBase) -> int:
        return DECK_SIZE + TILES  # the longest game: a draft of every deck card, then a full board

    @staticmethod
    def log_info(batch: TensorDictBase) -> dict[str, float]:
        figures = self_play_figures(batch)
        return {f"collection/player_0/{key}": value for key, value in figures.items()} if figures["games"] else {}

    @staticmethod
    def env_name() -> str:
        return "trinity_towers"


def make_task(**keywords: Any) -> TrinityTowersTask:
    """The task over ``trinity_env.env(observation_dtype="float32", **keywords)`` (``draft``, ``config``,
    ``reward``...); a bad keyword is the env's one-line ``ConfigError``, raised here, before any run."""
    if "render_mode" in keywords:
        raise ArgumentError("BenchMARL's task has no render_mode (it renders nothing)")
    config = {"observation_dtype": "float32", **keywords}
    env = trinity_env.env(**config)  # checks every keyword
    env.close()
    if env.unwrapped.observation_dtype != "float32":
        raise ArgumentError(
            f"BenchMARL's task takes float32 observations only, got observation_dtype={keywords['observation_dtype']!r}"
            " (BenchMARL's MLP fails on the env's int8 default)"
        )
    return TrinityTowersTask("trinity_towers", config)


def experiment_config(iterations: int, frames: int) -> ExperimentConfig:
    """BenchMARL's default experiment config as a short CPU run: ``iterations`` batches of ``frames`` env steps (both
    seats' moves) from 2 envs, one pass over 2 minibatches (on-policy) or 2 optimizer steps on ``frames // 2``
    samples (off-policy), the csv logger only, no evaluation (its figure is the zero-sum mean), render, json or
    checkpoints."""
    for name, value in (("iterations", iterations), ("frames", frames)):
        if type(value) is not int or value < 1:
            raise ArgumentError(f"{name} must be a whole number of at least 1, got {value!r}")
    config = ExperimentConfig.get_from_yaml()
    config.sampling_device = config.train_device = config.buffer_device = "cpu"
    config.max_n_iters, config.max_n_frames = iterations, None
    config.loggers, config.create_json, config.checkpoint_interval, config.checkpoint_at_end = ["csv"], False, 0, False
    config.evaluation, config.render = False, False
    config.on_policy_collected_frames_per_batch = config.off_policy_collected_frames_per_batch = frames
    config.on_policy_n_envs_per_worker = config.off_policy_n_envs_per_worker = 2
    config.on_policy_n_minibatch_iters, config.on_policy_minibatch_size = 1, max(1, frames // 2)
    config.off_policy_n_optimizer_steps, config.off_policy_train_batch_size = 2, max(1, frames // 2)
    config.off_policy_init_random_frames = 0
    return config


def make_experiment(
    algorithm: str | AlgorithmConfig = "mappo",
    *,
    folder: str | Path,
    iterations: int | None = None,
    frames: int | None = None,
    config: ExperimentConfig | None = None,
    seed: int = 0,
    task: TrinityTowersTask | None = None,
    model_config: ModelConfig | None = None,
    critic_model_config: ModelConfig | None = None,
    callbacks: Sequence[Callback] = (),
    progress: bool = True,
) -> Experiment:
    """BenchMARL's ``Experiment`` on Trinity Towers, its run saved in a new folder inside ``folder`` (created,
    parents included, if missing).

    ``algorithm``: a name of BenchMARL's registry, with its yaml's defaults, or an ``AlgorithmConfig``; the game's
    actions are discrete, which BenchMARL checks (``mappo`` and ``iql`` are tested here). ``config``: BenchMARL's
    ``ExperimentConfig`` (a copy, its ``save_folder`` set to ``folder``), else ``experiment_config(iterations,
    frames)`` (defaults 10 and 512); not both. ``task``: ``make_task()`` unless given. The models default to
    BenchMARL's MLP (what ``export_actor`` exports). ``progress``: ``SelfPlayProgress`` writes player_0's results
    after each collection (on stderr, above BenchMARL's bar).
    """
    if isinstance(algorithm, str):
        if algorithm not in algorithm_config_registry:
            known = ", ".join(algorithm_config_registry)
            raise ArgumentError(f"unknown BenchMARL algorithm {algorithm!r}: one of {known}")
        algorithm = algorithm_config_registry[algorithm].get_from_yaml()
    elif not isinstance(algorithm, AlgorithmConfig):
        raise ArgumentError(f"algorithm must be a name or a BenchMARL AlgorithmConfig, got {type(algorithm).__name__}")
    if config is None:
        config = experiment_config(10 if iterations is None else iterations, 512 if frames is None else frames)
    elif iterations is not None or frames is not None:
        raise ArgumentError("give iterations and frames or a config, not both")
    else:
        config = copy.copy(config)
    folder = Path(folder)
    try:
        folder.mkdir(parents=True, exist_ok=True)
    except OSError as err:
        raise ArgumentError(f"cannot create the save folder {folder}: {err.strerror or err}") from None
    config.save_folder = str(folder)
    return Experiment(
        task=make_task() if task is None else task,
        algorithm_config=algorithm,
        model_config=MlpConfig.get_from_yaml() if model_config is None else model_config,
        critic_model_config=MlpConfig.get_from_yaml() if critic_model_config is None else critic_model_config,
        seed=seed,
        config=config,
        callbacks=[*callbacks, SelfPlayProgress()] if progress else list(callbacks),
    )


# ------------------------------------------------------------------------------ self-play figures


def self_play_figures(batch: TensorDictBase, group: str = "player_0") -> dict[str, float]:
    """``group``'s results over the games that ended in ``batch`` (a collected batch, or a rollout): ``games``,
    ``won``, ``drawn``, ``lost`` (by the game's ``winner``), ``win_share`` (a draw half a win, as every win rate of
    the project: the glossary's ``Share``) and ``mean_return`` (its episode return, where the batch holds BenchMARL's
    ``episode_reward``); both NaN when no game ended."""
    done = batch.get(("next", "done")).reshape(batch.batch_size)
    winners = batch.get(("next", group, "info", "winner"))[done].flatten()
    seat = GROUPS.index(group)
    games = int(winners.numel())
    won, drawn = int((winners == seat).sum()), int((winners == -1).sum())
    nan = float("nan")
    figures = {"games": float(games), "won": float(won), "drawn": float(drawn), "lost": float(games - won - drawn)}
    figures["win_share"] = (won + drawn / 2) / games if games else nan
    key = ("next", group, "episode_reward")
    returns = batch.get(key)[done].flatten() if key in batch.keys(True) else None
    figures["mean_return"] = float(returns.mean()) if games and returns is not None else nan
    return figures


def progress_line(iteration: int, figures: dict[str, float], group: str = "player_0") -> str:
    """One line of ``self_play_figures``: what ``SelfPlayProgress`` writes."""
    if not figures["games"]:
        return f"iteration {iteration}: no game ended in this batch"
    opponent = GROUPS[1 - GROUPS.index(group)]
    return (
        f"iteration {iteration}: {group} won {figures['won']:.0f}, drew {figures['drawn']:.0f} and lost "
        f"{figures['lost']:.0f} of {figures['games']:.0f} games against {opponent} "
        f"(a share of {figures['win_share']:.0%}), mean return {figures['mean_return']:+.2f}"
    )


class SelfPlayProgress(Callback):
    """After each collection, player_0's results in the batch against player_1's policy, on a line above BenchMARL's
    bar (whose ``mean return`` is the zero-sum mean of both groups: 0). ``figures`` holds each iteration's."""

    def __init__(self) -> None:
        super().__init__()
        self.figures: list[dict[str, float]] = []

    def on_batch_collected(self, batch: TensorDictBase) -> None:
        figures = self_play_figures(batch)
        self.figures.append(figures)
        iteration = self.experiment.n_iters_performed + 1 if self.experiment is not None else len(self.figures)
        tqdm.write(progress_line(iteration, figures), file=sys.stderr)


# ------------------------------------------------------------------------------ games of the policies


def play_games(experiment: Experiment, games: int, *, seed: int = 0, deterministic: bool = False) -> list[Any]:
    """``games`` rollouts (TorchRL tensordicts) of the experiment's two policies against each other, each to its end;
    actions sampled, or the policies' modes with ``deterministic``."""
    if type(games) is not int or games < 0:
        raise ArgumentError(f"games must be a whole number, got {games!r}")
    env = experiment.task.get_env_fun(1, False, seed, "cpu")()
    exploration = ExplorationType.DETERMINISTIC if deterministic else ExplorationType.RANDOM
    steps = experiment.task.max_steps(env) + 1
    with set_exploration_type(exploration), torch.no_grad():
        return [env.rollout(steps, policy=experiment.policy, break_when_any_done=True) for _ in range(games)]


def illegal_moves(rollout: TensorDictBase) -> int:
    """The moves of a rollout outside the acting player's mask."""
    count = 0
    for group in GROUPS:
        acting = rollout[group, "mask"].flatten()
        actions = rollout[group, "action"].flatten()[acting]
        masks = rollout[group, "action_mask"][:, 0][acting]
        count += int((~masks.gather(1, actions[:, None])).sum())
    return count


# ------------------------------------------------------------------------------ the export


def actor_network(experiment_or_policy: Experiment | torch.nn.Module, group: str = "player_0") -> torch.nn.Module:
    """``group``'s actor as a plain torch network, observation [B, 339] (float32) to logits [B, 256]: TorchRL's
    ``MultiAgentMLP`` keeps its weights apart from its layers, so its layers are copied and given a copy of the
    weights. Takes an ``Experiment``, its ``policy`` or a group's; one ``ArgumentError`` line for anything else."""
    if group not in GROUPS:
        raise ArgumentError(f"group must be one of {', '.join(GROUPS)}, got {group!r}")
    if isinstance(experiment_or_policy, Experiment):
        policy = experiment_or_policy.group_policies[group]
    elif isinstance(experiment_or_policy, torch.nn.Module):
        policy = experiment_or_policy
    else:
        raise ArgumentError(f"export_actor takes a BenchMARL Experiment or policy, got {type(experiment_or_policy)}")
    models = [
        module
        for module in policy.modules()
        if isinstance(module, Mlp) and module.out_keys[0][0] == group and isinstance(module.mlp, MultiAgentMLP)
    ]
    if len(models) != 1:
        raise ArgumentError(
            f"found {len(models)} actors of {group} in the {type(policy).__name__}: export_actor takes BenchMARL's MLP "
            "model (MlpConfig), one per group"
        )
    mlp = models[0].mlp
    if (mlp.n_agent_inputs, mlp.n_agent_outputs) != (OBSERVATION_SIZE, ACTIONS):
        raise ArgumentError(
            f"{group}'s MLP maps {mlp.n_agent_inputs} inputs to {mlp.n_agent_outputs} outputs, "
            f"not the observation's {OBSERVATION_SIZE} to the {ACTIONS} actions"
        )
    params = mlp.params if mlp.share_params else mlp.params[0]  # a group is one player: its one agent's weights
    network = copy.deepcopy(mlp._empty_net)
    for key, value in params.flatten_keys(".").items():
        path, _, name = key.rpartition(".")
        layer = network.get_submodule(path)
        if hasattr(layer, name):
            delattr(layer, name)  # the empty layer's placeholder (a tensor on the meta device)
        layer.register_parameter(name, torch.nn.Parameter(value.detach().clone(), requires_grad=False))
    return network.eval()


def export_actor(experiment_or_policy: Experiment | torch.nn.Module, path: str | Path, group: str = "player_0") -> Path:
    """Write ``group``'s actor (``actor_network``) as an ONNX file the ``onnx:`` spec plays, in either seat (the
    observation is the mover's); the path written. Needs the ``onnx`` extra to load it (``onnx``, ``onnxruntime``)."""
    return export_policy(actor_network(experiment_or_policy, group), path, dtype="float32")


__all__ = [
    "SelfPlayProgress",
    "TrinityTowersTask",
    "actor_network",
    "experiment_config",
    "export_actor",
    "illegal_moves",
    "make_experiment",
    "make_task",
    "play_games",
    "progress_line",
    "self_play_figures",
]
