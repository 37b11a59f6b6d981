"""BenchMARL's MAPPO (or IQL) on Trinity Towers, through BenchMARL's own ``Experiment``.

BenchMARL has no task for an outside PettingZoo env, so ``TrinityTowersTask`` is BenchMARL's
PettingZoo task class with one method changed: its env is TorchRL's ``PettingZooWrapper`` over
``trinity_env.env(observation_dtype="float32")`` (one group per player, masks on). The float32
observation is needed: BenchMARL's MLP gets the observation as the env gives it, and with the
default int8 the first layer fails (``mat1 and mat2 must have the same dtype, but got Char and Float``).
BenchMARL pickles the task into its run folder, so the class lives at module level.

After training, the two groups' policies (one per seat) play ``--games`` games against each other;
each game must end by the rules with every move inside its mask (an illegal move would end it
early, with ``termination_code`` 0).

Needs BenchMARL 1.5, which pins ``torchrl<0.12``, older than the ``integrations`` extra's TorchRL:
a venv of its own (``make test-benchmarl`` builds ``.venv-benchmarl`` from the ``benchmarl`` extra).

``--export policy.onnx`` writes the ``player_0`` group's actor (its MLP: the observation, written from
the mover's point of view, to the logits) as an ONNX file every evaluation tool takes, in either seat:
``trinity benchmark onnx:policy.onnx`` (the ``onnx`` extra in this venv too: ``pip install onnx onnxruntime``).

Usage: python examples/benchmarl_mappo.py [--algorithm mappo|iql] [--iterations N] [--frames F] [--games G] [--seed S]
       [--export PATH]
"""

from __future__ import annotations

import argparse
import tempfile
import warnings

import torch
from benchmarl.algorithms import IqlConfig, MappoConfig
from benchmarl.environments.pettingzoo.common import PettingZooClass
from benchmarl.experiment import Experiment, ExperimentConfig
from benchmarl.models.mlp import MlpConfig
from torchrl.envs.libs.pettingzoo import PettingZooWrapper
from torchrl.envs.utils import ExplorationType, set_exploration_type

import trinity_env

ALGORITHMS = {"mappo": MappoConfig, "iql": IqlConfig}


class TrinityTowersTask(PettingZooClass):
    """Trinity Towers as a BenchMARL task; its config holds ``trinity_env.env``'s keywords."""

    def get_env_fun(self, num_envs, continuous_actions, seed, device):
        config = dict(self.config)

        def make():
            return PettingZooWrapper(
                env=trinity_env.env(**config), use_mask=True, categorical_actions=True, seed=seed, device=device
            )

        return make

    def supports_continuous_actions(self) -> bool:
        return False

    def supports_discrete_actions(self) -> bool:
        return True

    def has_state(self) -> bool:
        return False

    def has_render(self, env) -> bool:
        return False

    def max_steps(self, env) -> int:
        return 16 + 15  # a draft and a full board

    @staticmethod
    def env_name() -> str:
        return "trinity_towers"


def make_task(**keywords) -> TrinityTowersTask:
    """The task over ``trinity_env.env(observation_dtype="float32", **keywords)``."""
    return TrinityTowersTask("trinity_towers", {"observation_dtype": "float32", **keywords})


def make_experiment(
    task: TrinityTowersTask, algorithm: str, iterations: int, frames: int, seed: int, folder: str
) -> Experiment:
    """A small CPU experiment: ``iterations`` batches of ``frames`` env steps, no loggers, no evaluation."""
    config = ExperimentConfig.get_from_yaml()
    config.sampling_device = config.train_device = config.buffer_device = "cpu"
    config.max_n_iters, config.loggers, config.create_json, config.checkpoint_interval = iterations, [], False, 0
    config.evaluation, config.render, config.save_folder = False, False, folder
    config.on_policy_collected_frames_per_batch = config.off_policy_collected_frames_per_batch = frames
    config.on_policy_n_envs_per_worker = config.off_policy_n_envs_per_worker = 2
    config.on_policy_n_minibatch_iters, config.on_policy_minibatch_size = 1, max(1, frames // 2)
    config.off_policy_n_optimizer_steps, config.off_policy_train_batch_size = 2, max(1, frames // 2)
    config.off_policy_init_random_frames = 0
    return Experiment(
        task=task,
        algorithm_config=ALGORITHMS[algorithm].get_from_yaml(),
        model_config=MlpConfig.get_from_yaml(),
        critic_model_config=MlpConfig.get_from_yaml(),
        seed=seed,
        config=config,
    )


def play(experiment: Experiment, task: TrinityTowersTask, games: int, seed: int) -> list:
    """``games`` rollouts of the experiment's policies (sampling) against each other, each to its end."""
    env = task.get_env_fun(1, False, seed, "cpu")()
    rollouts = []
    for _ in range(games):
        with set_exploration_type(ExplorationType.RANDOM), torch.no_grad():
            rollouts.append(env.rollout(task.max_steps(env) + 1, policy=experiment.policy, break_when_any_done=True))
    return rollouts


def illegal_moves(rollout) -> int:
    """The moves of a rollout outside the acting player's mask."""
    count = 0
    for group in ("player_0", "player_1"):
        acting = rollout[group, "mask"].flatten()
        actions = rollout[group, "action"].flatten()[acting]
        masks = rollout[group, "action_mask"][:, 0][acting]
        count += int((~masks.gather(1, actions[:, None])).sum())
    return count


def actor_network(experiment: Experiment, group: str = "player_0") -> torch.nn.Sequential:
    """``group``'s actor as a plain torch MLP (observation [B, 339] -> logits [B, 256]): TorchRL's
    ``MultiAgentMLP`` keeps its weights apart from its layers, so the layers are rebuilt and the weights copied."""
    mlp = experiment.group_policies[group].module[0].mlp
    layers = [
        torch.nn.Linear(layer.in_features, layer.out_features) if isinstance(layer, torch.nn.Linear) else layer
        for layer in mlp._empty_net
    ]
    network = torch.nn.Sequential(*layers)
    network.load_state_dict({key: value.detach() for key, value in mlp.params.flatten_keys(".").items()})
    return network


def main(argv: list[str] | None = None) -> list:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--algorithm", choices=sorted(ALGORITHMS), default="mappo")
    parser.add_argument("--iterations", type=int, default=2)
    parser.add_argument("--frames", type=int, default=64, help="env steps (both seats' moves) per iteration")
    parser.add_argument("--games", type=int, default=2, help="games of the trained policies at the end")
    parser.add_argument("--draft", choices=("pick", "dealt"), default="dealt")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--folder", default=None, help="BenchMARL's run folder (default: a temporary one)")
    parser.add_argument("--export", default=None, metavar="PATH", help="write player_0's actor to this ONNX file")
    args = parser.parse_args(argv)
    task = make_task(draft=args.draft)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # TorchRL's deprecations and "PettingZoo in TorchRL is tested using ..."
        experiment = make_experiment(
            task, args.algorithm, args.iterations, args.frames, args.seed, args.folder or tempfile.mkdtemp()
        )
        experiment.run()
        rollouts = play(experiment, task, args.games, args.seed + 1)
    if args.export:
        from trinity_env.agents.onnx_policy import export_policy

        print(f"wrote {export_policy(actor_network(experiment), args.export)}")
    for number, rollout in enumerate(rollouts):
        code = int(rollout["next", "player_0", "info", "termination_code"][-1].item())
        winner = int(rollout["next", "player_0", "info", "winner"][-1].item())
        print(
            f"game {number}: {len(rollout)} moves, termination_code {code}, winner {winner}, "
            f"illegal moves {illegal_moves(rollout)}"
        )
    return rollouts


if __name__ == "__main__":
    main()
