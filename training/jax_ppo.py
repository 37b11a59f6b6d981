"""Self-play PPO that stays on the device: one ``jax.jit``-compiled update, in the PureJaxRL manner.

``python -m training.jax_ppo --config jax-quick --run runs/jax-quick`` (``trinity train jax-quick``) trains
the MLP of the project's PPO (``trinity_env.jax.networks.mlp_apply``: a tanh body, per-placement tactical
features, a bounded value) on ``trinity_env.jax.TrinityTowers``. Each update is one compiled call: ``num_envs``
games under ``vmap``, ``rollout_steps`` of the learner's decisions gathered with ``jax.lax.scan`` (the opponent's
moves and the restart of finished games happen inside the env step the learner sees: ``training.jax_selfplay``),
GAE, then ``epochs`` passes of ``minibatches`` shuffled minibatches of the clipped PPO loss with Adam. The games
are split by opponent once, at the start: the first share plays a past self drawn from a pool of snapshots (one
draw per update), the next share the jitted ``greedy`` player and the rest the jitted ``random`` player
(``trinity_env.jax.players``). The learner's seat is drawn anew for every game. Illegal actions get a logit of
-1e9 (not -inf, whose 0 * -inf would make the entropy NaN): their probability is exactly 0 in float32, so they
are never sampled.

The budget is ``total_steps``: the learner's decisions over all games (a move of the opponent is not counted).
The same seed gives the same policy. The run folder is claimed as every trainer's is (``training.run_folder``: one
trainer at a time, ``--resume`` and ``--overwrite``); ``latest.npz`` (``training.jax_checkpoint``) holds the whole
training state every ``snapshot_every_updates`` updates, at each evaluation and at the end, and ``--resume`` continues
from it exactly: a run stopped and resumed makes the policy the run would have made. Ctrl-C or SIGTERM stops after the
update under way: what finished is saved, evaluated and written, then the command exits with 130 (143 after SIGTERM),
as the other trainers do. The evaluation runs in JAX too (``training.jax_eval``) and the policy is written as an
ONNX file built with ``onnx.helper`` (``training.jax_onnx``) that ``trinity benchmark --agent onnx:FILE`` plays.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import math
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, ClassVar, NamedTuple

import jax
import jax.numpy as jnp
import numpy as np

from trinity_env.agents.spec import format_spec
from trinity_env.arguments import positive_int
from trinity_env.core.writes import atomic_file, write_text
from trinity_env.core.zips import open_zip
from trinity_env.spec.config import make_config

from .config import TrainConfigError, YAMLConfig
from .jax_checkpoint import CHECKPOINT, load_checkpoint, save_checkpoint
from .jax_eval import OPPONENTS, Result, evaluate
from .jax_onnx import export_onnx
from .jax_selfplay import Games, SelfPlay, init_params, policy_fn
from .run_folder import RunFolderError, claim
from .session import GracefulStop, RunRequest, TrainingInterrupted, run_command


@dataclass(frozen=True)
class JaxPPOConfig(YAMLConfig):
    """The trainer's fields, read as every trainer's config is (``YAMLConfig``: ``load`` through the strict YAML door,
    ``from_dict`` refusing an unknown field or a bad value in one line)."""

    trainer: ClassVar[str] = "jax"
    seed: int = 0
    total_steps: int = 1_000_000
    """The learner's decisions to train for, over all games."""
    num_envs: int = 512
    rollout_steps: int = 8
    epochs: int = 4
    minibatches: int = 4
    learning_rate: float = 1e-3
    anneal: bool = True
    """Anneal the learning rate linearly to 0 over ``total_steps``."""
    gamma: float = 1.0
    gae_lambda: float = 0.95
    clip: float = 0.2
    entropy: float = 0.01
    value_coef: float = 0.5
    max_grad_norm: float = 0.5
    hidden: int = 128
    layers: int = 2
    share_self: float = 0.5
    """The share of the games played against a past self; then ``share_greedy`` against greedy, the rest random."""
    share_greedy: float = 0.25
    pool_size: int = 8
    snapshot_every_updates: int = 10
    """Updates between two snapshots into the pool of past selves (the oldest one is replaced)."""
    eval_games: int = 400
    eval_every_steps: int = 0
    """Evaluate against random and greedy every this many steps during training (0: only at the end)."""
    target_random: float = 0.9
    target_greedy: float = 0.6
    """The bar: the win shares (draws count half) against random and greedy that ``stop_at_target`` stops at."""
    stop_at_target: bool = False
    """Stop at the first evaluation that clears both targets (else train the whole budget)."""
    env: dict = field(default_factory=lambda: {"draft": "dealt"})

    resume_may_change: ClassVar[frozenset[str]] = frozenset(
        {"total_steps", "eval_games", "eval_every_steps", "target_random", "target_greedy", "stop_at_target"}
    )
    """How long to train and the evaluations; with ``anneal``, a new ``total_steps`` re-plans the rest of the rate."""

    def check(self, source: str = "config") -> None:
        self._check_common(source)
        positive = ("total_steps", "num_envs", "rollout_steps", "epochs", "minibatches", "hidden", "layers")
        for name in (*positive, "pool_size", "snapshot_every_updates", "eval_games"):
            if getattr(self, name) < 1:
                raise TrainConfigError(f"{source}: field {name!r} must be at least 1, got {getattr(self, name)}")
        if (self.num_envs * self.rollout_steps) % self.minibatches:
            raise TrainConfigError(f"{source}: num_envs x rollout_steps must split into {self.minibatches} minibatches")
        if self.eval_games % 2:
            raise TrainConfigError(f"{source}: field 'eval_games' must be even (each deal is played from both seats)")
        if self.hidden > 1024 or self.layers > 4 or self.num_envs > 65_536 or self.pool_size > 64:
            raise TrainConfigError(f"{source}: hidden <= 1024, layers <= 4, num_envs <= 65536, pool_size <= 64")
        if self.eval_every_steps < 0:
            raise TrainConfigError(f"{source}: field 'eval_every_steps' must be at least 0")
        for name in ("share_self", "share_greedy", "gae_lambda", "gamma", "clip", "target_random", "target_greedy"):
            if not 0.0 <= getattr(self, name) <= 1.0:
                raise TrainConfigError(f"{source}: field {name!r} must be within [0, 1], got {getattr(self, name)}")
        if self.share_self + self.share_greedy > 1.0:
            raise TrainConfigError(f"{source}: share_self + share_greedy must be at most 1")
        for name in ("learning_rate", "entropy", "value_coef", "max_grad_norm"):
            if not (math.isfinite(getattr(self, name)) and getattr(self, name) >= 0):
                raise TrainConfigError(f"{source}: field {name!r} must be a finite number >= 0")
        make_config(dict(self.env))  # a bad env config is the env config's own line

    @property
    def steps_per_update(self) -> int:
        return self.num_envs * self.rollout_steps

    @property
    def updates(self) -> int:
        return -(-self.total_steps // self.steps_per_update)

    @property
    def groups(self) -> tuple[int, int, int]:
        """How many games play a past self, greedy and random."""
        selves = round(self.num_envs * self.share_self)
        greedy = min(round(self.num_envs * self.share_greedy), self.num_envs - selves)
        return selves, greedy, self.num_envs - selves - greedy


# ------------------------------------------------------------------------------ PPO


class Transition(NamedTuple):
    observation: jax.Array
    mask: jax.Array
    action: jax.Array
    log_prob: jax.Array
    value: jax.Array
    reward: jax.Array
    done: jax.Array


class Adam(NamedTuple):
    mean: Any
    square: Any
    count: jax.Array


class TrainState(NamedTuple):
    """Everything an update reads and writes; ``pool`` stacks ``pool_size`` past parameter sets (of ``snapshots``)."""

    params: Any
    adam: Adam
    pool: Any
    snapshots: jax.Array
    games: Games
    key: jax.Array
    update: jax.Array


def masked_log_probs(logits):
    """Log-probabilities of masked logits: an illegal action's (logit -1e9) is about -1e9, its probability 0."""
    return jax.nn.log_softmax(logits, axis=-1)


def entropy_of(logits):
    log_probs = masked_log_probs(logits)
    return -jnp.sum(jnp.exp(log_probs) * log_probs, axis=-1)


def gae(values, rewards, dones, last_value, gamma: float, lam: float):
    """Generalised advantages and returns of ``[T, B]`` arrays (``dones[t]``: the game ended after step t)."""

    def back(carry, step):
        next_value, next_advantage = carry
        value, reward, done = step
        alive = 1.0 - done.astype(jnp.float32)
        delta = reward + gamma * next_value * alive - value
        advantage = delta + gamma * lam * alive * next_advantage
        return (value, advantage), advantage

    _, advantages = jax.lax.scan(back, (last_value, jnp.zeros_like(last_value)), (values, rewards, dones), reverse=True)
    return advantages, advantages + values


def ppo_loss(params, batch: Transition, advantages, returns, config: JaxPPOConfig):
    """The clipped PPO loss (advantages normalised in the minibatch), value loss and entropy bonus."""
    logits, values = policy_fn(config.layers)(params, batch.observation, batch.mask)
    log_probs = jnp.take_along_axis(masked_log_probs(logits), batch.action[:, None], axis=-1)[:, 0]
    ratio = jnp.exp(log_probs - batch.log_prob)
    advantages = (advantages - advantages.mean()) / (advantages.std() + 1e-8)
    policy_loss = -jnp.minimum(ratio * advantages, jnp.clip(ratio, 1 - config.clip, 1 + config.clip) * advantages)
    value_loss = 0.5 * (values - returns) ** 2
    entropy = entropy_of(logits).mean()
    loss = policy_loss.mean() + config.value_coef * value_loss.mean() - config.entropy * entropy
    return loss, (policy_loss.mean(), value_loss.mean(), entropy)


def adam_step(params, grads, adam: Adam, learning_rate, max_grad_norm: float):
    """One Adam step (betas 0.9, 0.999, eps 1e-5) after clipping the gradients' global norm to ``max_grad_norm``."""
    norm = jnp.sqrt(sum(jnp.sum(g**2) for g in jax.tree_util.tree_leaves(grads)))
    scale = jnp.minimum(1.0, max_grad_norm / (norm + 1e-6))
    grads = jax.tree_util.tree_map(lambda g: g * scale, grads)
    count = adam.count + 1
    mean = jax.tree_util.tree_map(lambda m, g: 0.9 * m + 0.1 * g, adam.mean, grads)
    square = jax.tree_util.tree_map(lambda v, g: 0.999 * v + 0.001 * g**2, adam.square, grads)
    fix_mean, fix_square = 1 - 0.9**count, 1 - 0.999**count

    def move(p, m, v):
        return p - learning_rate * (m / fix_mean) / (jnp.sqrt(v / fix_square) + 1e-5)

    return jax.tree_util.tree_map(move, params, mean, square), Adam(mean, square, count)


def make_selfplay(config: JaxPPOConfig) -> SelfPlay:
    """The games of ``config``: its env, network and split of opponents."""
    return SelfPlay(config.env, config.layers, config.groups)


def initial_state(config: JaxPPOConfig, selfplay: SelfPlay) -> TrainState:
    key = jax.random.PRNGKey(config.seed)
    key, net_key, reset_key = jax.random.split(key, 3)
    params = init_params(net_key, config.hidden, config.layers)
    zeros = [jax.tree_util.tree_map(jnp.zeros_like, params) for _ in range(2)]  # two buffers: the update donates
    pool = jax.tree_util.tree_map(lambda p: jnp.broadcast_to(p, (config.pool_size, *p.shape)), params)
    games = jax.jit(selfplay.reset)(reset_key, params)
    return TrainState(params, Adam(*zeros, jnp.int32(0)), pool, jnp.int32(1), games, key, jnp.int32(0))


def make_update(config: JaxPPOConfig, selfplay: SelfPlay):
    """The compiled update: ``update(state) -> (state, metrics)``."""
    policy = selfplay.policy
    batch_size = config.steps_per_update
    minibatch = batch_size // config.minibatches

    def rollout_step(carry, key):
        params, opponent, games = carry
        act_key, step_key = jax.random.split(key)
        state = games.state
        logits, value = policy(params, state.observation, state.legal_action_mask)
        action = jax.random.categorical(act_key, logits).astype(jnp.int32)
        log_prob = jnp.take_along_axis(masked_log_probs(logits), action[:, None], axis=-1)[:, 0]
        games, reward, done = selfplay.step(games, action, opponent, step_key)
        transition = Transition(state.observation, state.legal_action_mask, action, log_prob, value, reward, done)
        return (params, opponent, games), transition

    def epoch(carry, key):
        params, adam, data, advantages, returns, learning_rate = carry
        order = jax.random.permutation(key, batch_size)

        def one(carry, rows):
            params, adam = carry
            pick = _take_rows(rows)
            (_, parts), grads = jax.value_and_grad(ppo_loss, has_aux=True)(
                params, pick(data), pick(advantages), pick(returns), config
            )
            params, adam = adam_step(params, grads, adam, learning_rate, config.max_grad_norm)
            return (params, adam), parts

        (params, adam), parts = jax.lax.scan(one, (params, adam), order.reshape(config.minibatches, minibatch))
        return (params, adam, data, advantages, returns, learning_rate), parts

    def update(train: TrainState):
        key, pool_key, roll_key, epoch_key = jax.random.split(train.key, 4)
        filled = jnp.minimum(train.snapshots, config.pool_size)
        chosen = jax.random.randint(pool_key, (), 0, filled)
        opponent = jax.tree_util.tree_map(lambda p: p[chosen], train.pool)
        (_, _, games), data = jax.lax.scan(
            rollout_step, (train.params, opponent, train.games), jax.random.split(roll_key, config.rollout_steps)
        )
        _, last_value = policy(train.params, games.state.observation, games.state.legal_action_mask)
        advantages, returns = gae(data.value, data.reward, data.done, last_value, config.gamma, config.gae_lambda)
        flat = jax.tree_util.tree_map(lambda a: a.reshape((batch_size, *a.shape[2:])), data)
        progress = train.update.astype(jnp.float32) / config.updates
        learning_rate = config.learning_rate * (1.0 - progress if config.anneal else 1.0)
        carry = (train.params, train.adam, flat, advantages.reshape(-1), returns.reshape(-1), learning_rate)
        (params, adam, *_), parts = jax.lax.scan(epoch, carry, jax.random.split(epoch_key, config.epochs))
        update = train.update + 1
        take = update % config.snapshot_every_updates == 0
        slot = train.snapshots % config.pool_size
        pool = jax.tree_util.tree_map(lambda p, x: jnp.where(take, p.at[slot].set(x), p), train.pool, params)
        snapshots = train.snapshots + take.astype(jnp.int32)
        finished = data.done.sum()
        metrics = {
            "games": finished,
            "learner_return": jnp.sum(jnp.where(data.done, data.reward, 0.0)) / jnp.maximum(finished, 1),
            "policy_loss": parts[0].mean(),
            "value_loss": parts[1].mean(),
            "entropy": parts[2].mean(),
            "learning_rate": learning_rate,
        }
        return TrainState(params, adam, pool, snapshots, games, key, update), metrics

    return jax.jit(update, donate_argnums=0)


def _take_rows(rows):
    return lambda tree: jax.tree_util.tree_map(lambda a: a[rows], tree)


# ------------------------------------------------------------------------------ the loop


def _evaluate_all(config: JaxPPOConfig, selfplay: SelfPlay, params) -> dict[str, Result]:
    key = jax.random.PRNGKey(config.seed + 1)  # the same deals at every evaluation of a run
    return {
        name: evaluate(selfplay.policy, params, selfplay.env, name, config.eval_games, jax.random.fold_in(key, i))
        for i, name in enumerate(OPPONENTS)
    }


def _cleared(config: JaxPPOConfig, results: dict[str, Result]) -> bool:
    return (
        results["random"].share.value >= config.target_random and results["greedy"].share.value >= config.target_greedy
    )


def train(
    config: JaxPPOConfig, out: str | Path | None = None, log=print, *, resume: bool = False, overwrite: bool = False
) -> dict[str, Any]:
    """Train for ``config.total_steps`` (or to the target, or to Ctrl-C), evaluate, and write into the run folder
    ``out`` (if given) ``policy.onnx``, ``params.npz``, ``summary.json`` and the checkpoint ``latest.npz``; returns the
    summary. ``out`` is claimed as every trainer claims its run folder (``training.run_folder``: one trainer at a
    time, a fresh start needs an empty folder); ``resume`` continues its run from ``latest.npz`` exactly, ``overwrite``
    deletes it and starts again."""
    if out is None:
        return _train(config, None, log, resuming=False)
    with claim(out, config, "jax_ppo", resume=resume, overwrite=overwrite, checkpoint=CHECKPOINT) as folder:
        return _train(config, folder.path, log, resuming=folder.resuming)


def _resumed(config: JaxPPOConfig, selfplay: SelfPlay, path: Path) -> tuple[TrainState, dict[str, Any]]:
    """The training state and progress of the checkpoint ``path`` (``RunFolderError`` in one line if it is not one)."""
    template = jax.eval_shape(lambda: initial_state(config, selfplay))
    state, progress = load_checkpoint(path, template)
    kinds = {"steps": int, "games": int, "history": list, "reached_target": (dict, type(None))}
    fits = set(progress) == set(kinds) and all(isinstance(progress[k], kind) for k, kind in kinds.items())
    if not fits or not all(isinstance(h, dict) and isinstance(h.get("steps"), int) for h in progress["history"]):
        raise RunFolderError(f"cannot resume from {path}: its progress is not this trainer's ({', '.join(kinds)})")
    return state, progress


def _train(config: JaxPPOConfig, out: Path | None, log, resuming: bool) -> dict[str, Any]:
    started = time.monotonic()
    selfplay = make_selfplay(config)
    progress = {"steps": 0, "games": 0, "history": [], "reached_target": None}
    if resuming:
        train_state, progress = _resumed(config, selfplay, out / CHECKPOINT)
        log(f"resuming {out} after update {int(train_state.update)} ({progress['steps']:,} steps)")
    else:
        train_state = initial_state(config, selfplay)
    update = make_update(config, selfplay)
    history: list[dict[str, Any]] = progress["history"]
    steps, games, reached_at = progress["steps"], progress["games"], progress["reached_target"]
    compile_steps, compile_games = steps, games
    compiled_at = results = None
    eval_at = history[-1]["steps"] if history else 0
    last_print = evaluating = running = 0.0

    def save() -> None:  # latest.npz: the state after this update, and what came of the run so far
        if out is not None:
            counts = {"steps": steps, "games": games, "history": history, "reached_target": reached_at}
            save_checkpoint(out / CHECKPOINT, train_state, counts)

    stop = GracefulStop()
    with stop.installed():
        at_target = reached_at is not None and config.stop_at_target  # the run had stopped at its target
        for index in range(config.updates if at_target else int(train_state.update), config.updates):
            train_state, metrics = update(train_state)
            metrics = {name: float(value) for name, value in metrics.items()}  # waits for the update
            steps += config.steps_per_update
            games += int(metrics["games"])
            results = None
            now = time.monotonic()
            if compiled_at is None:  # the first update: compiled, then run once
                compiled_at, compile_steps, compile_games = now, steps, games
            running = max(now - compiled_at - evaluating, 1e-9)  # training time since then, evaluations apart
            last = index + 1 == config.updates or stop.requested
            if now - last_print >= 10 or last:
                rate = (steps - compile_steps) / running
                left = f"about {(config.updates - index - 1) * config.steps_per_update / rate:.0f} s" if rate else "?"
                log(
                    f"update {index + 1}/{config.updates}: {steps:,} steps, {games:,} games, "
                    f"{(games - compile_games) / running:.0f} games/s, {now - started:.0f} s, {left} left; "
                    f"mean result {metrics['learner_return']:+.3f}, entropy {metrics['entropy']:.2f}"
                )
                last_print = now
            if config.eval_every_steps and (steps >= eval_at + config.eval_every_steps or last):
                eval_at, began = steps, time.monotonic()
                results = _evaluate_all(config, selfplay, train_state.params)
                wall, evaluating = time.monotonic() - started, evaluating + time.monotonic() - began
                history.append({"steps": steps, "games": games, "wall_s": wall})
                history[-1] |= {name: result.to_dict() for name, result in results.items()}
                log(f"  at {steps:,} steps ({wall:.0f} s): " + "; ".join(r.line() for r in results.values()))
                if reached_at is None and _cleared(config, results):
                    reached_at = history[-1]
                    if config.stop_at_target:
                        break
                save()
            elif (index + 1) % config.snapshot_every_updates == 0:
                save()
            if stop.requested:
                log(f"stopped after update {index + 1}: evaluating and writing what finished")
                break
        save()
        trained_s = time.monotonic() - started
        with stop.interruptible():
            final = results or _evaluate_all(config, selfplay, train_state.params)
    for result in final.values():
        log(result.line())
    summary = {
        "config": dataclasses.asdict(config),
        "updates": int(train_state.update),
        "steps": steps,
        "games": games,
        "compile_s": (compiled_at or time.monotonic()) - started,
        "train_s": trained_s,
        "evaluating_s": evaluating,
        "games_per_s": (games - compile_games) / running if running else 0.0,
        "steps_per_s": (steps - compile_steps) / running if running else 0.0,
        "stopped": stop.requested,
        "history": history,
        "reached_target": reached_at,
        "final": {name: result.to_dict() for name, result in final.items()},
    }
    if out is not None:
        params = {name: np.asarray(value) for name, value in train_state.params.items()}
        export_onnx(params, config.layers, out / "policy.onnx")
        with atomic_file(out / "params.npz") as handle:  # the write door: whole or untouched
            np.savez(handle, **params)
        write_text(out / "summary.json", json.dumps(summary, indent=1) + "\n")
        onnx = out / "policy.onnx"
        log(f"wrote {onnx} (trinity benchmark --agent {format_spec('onnx', [str(onnx)])}), params.npz, summary.json")
    if stop.requested:
        kept = (
            f"the policy of {steps:,} steps is in {out} (--resume continues it)" if out else f"trained {steps:,} steps"
        )
        raise TrainingInterrupted(kept)
    return summary


def load_params(path: str | Path) -> dict[str, np.ndarray]:
    """The parameters ``train`` wrote to ``params.npz`` (arrays only: nothing is unpickled)."""
    with open(path, "rb") as handle, open_zip(handle, str(path)) as archive:  # its entries bounded first
        return {
            name.removesuffix(".npy"): np.lib.format.read_array(archive.open(name), allow_pickle=False)
            for name in archive.namelist()
        }


def main(argv: list[str] | None = None) -> None:
    """``python -m training.jax_ppo --config jax-quick --run runs/jax-quick [--total-steps N]`` (what ``trinity train
    jax-quick`` runs): train, evaluate, write the run folder's files."""
    parser = argparse.ArgumentParser(prog="python -m training.jax_ppo", description=__doc__.splitlines()[0])
    parser.add_argument("--config", default="jax-quick", help="a name in configs/train/ or a YAML path")
    parser.add_argument("--run", default="runs/jax-quick", help="the folder for policy.onnx, params.npz, summary.json")
    parser.add_argument(
        "--total-steps", type=positive_int, default=None, metavar="N", help="the budget, over the config's"
    )
    parser.add_argument("--resume", action="store_true", help="continue the run in --run from its latest.npz")
    parser.add_argument("--overwrite", action="store_true", help="delete the run in --run and start again")

    def body(args: argparse.Namespace) -> None:
        budget = {"total_steps": args.total_steps} if args.total_steps is not None else {}
        run(JaxPPOConfig.load(args.config, budget), RunRequest.from_args(args))

    run_command(parser, body, argv)


def run(config: JaxPPOConfig, request: RunRequest) -> None:
    """Train in ``request.run``, evaluate and write the run folder's files: what the command line and ``trinity
    train`` run."""
    train(config, request.run, lambda line: print(line, flush=True), resume=request.resume, overwrite=request.overwrite)


if __name__ == "__main__":
    main(sys.argv[1:])
