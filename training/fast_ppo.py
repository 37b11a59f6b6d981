"""PPO with action masking on the batched fast engine, against an opponent pool.

Read it top to bottom: the opponent pool, evaluation, checkpoints, then ``train``.
``num_games`` games run in lockstep; in each the learner holds a random seat and the
opponent, drawn per episode from the pool (the latest snapshot, a past snapshot, the
greedy baseline or the random agent), moves inside the vector env with one batched
forward pass (or one greedy kernel call) per opponent.
The learner's trajectory holds only its own decisions and ends with its own +1 or -1.

Usage: python -m training.fast_ppo --config quick --run runs/quick [--resume]
"""

from __future__ import annotations

import argparse
import copy
import json
import time
from pathlib import Path

import numpy as np
import torch
from torch import nn
from tqdm import tqdm

from training.config import TrainConfig
from training.evaluation import Results, RunLog, evaluate_agent, selection_score
from training.report import format_results, write_report
from trinity_env.agents.policy import NetworkAgent, PolicyNetwork, load_checkpoint, save_checkpoint
from trinity_env.agents.tactics import tactical_features
from trinity_env.fast.games import FastGames
from trinity_env.fast.layout import Batch
from trinity_env.fast.vector_env import TrinityTowersVectorEnv
from trinity_env.search.baselines import greedy_batch

RANDOM, GREEDY = -1, -2


class OpponentPool:
    """Per-episode opponents: latest snapshot, a past snapshot, greedy or random; played in batch."""

    def __init__(self, config: TrainConfig, num_games: int, rng: np.random.Generator):
        self.config = config
        self.rng = rng
        self.latest: PolicyNetwork | None = None
        self.past: list[PolicyNetwork] = []
        self.assigned = np.full(num_games, RANDOM, np.int64)  # or GREEDY, 0 latest, k >= 1 past[k - 1]
        self.games: FastGames | None = None  # the env's games, which greedy reads
        self._scratch = tuple(Batch.empty(1))

    def add_snapshot(self, network: PolicyNetwork) -> None:
        if self.latest is not None:
            self.past = [*self.past, self.latest][-self.config.pool_size :]
        self.latest = copy.deepcopy(network).eval()

    def new_episodes(self, games: np.ndarray) -> None:
        draw = self.rng.random(games.size)
        c = self.config
        choice = np.full(games.size, RANDOM, np.int64)
        choice[draw >= c.p_random] = GREEDY
        if self.latest is not None:
            choice[draw >= c.p_random + c.p_greedy] = 0
            past = draw >= c.p_random + c.p_greedy + c.p_latest
            if self.past:
                choice[past] = self.rng.integers(1, len(self.past) + 1, int(past.sum()))
        self.assigned[games] = choice

    def act(self, observations: np.ndarray, masks: np.ndarray, games: np.ndarray) -> np.ndarray:
        actions = np.zeros(games.size, np.int64)
        who = self.assigned[games]
        for opponent in np.unique(who):
            rows = np.flatnonzero(who == opponent)
            if opponent == RANDOM:  # the legal action with the largest random key
                keys = self.rng.random((rows.size, masks.shape[1])) * masks[rows]
                actions[rows] = keys.argmax(axis=1)
            elif opponent == GREEDY:
                out = np.zeros(rows.size, np.int64)
                greedy_batch(*self.games.batch, games[rows], self._scratch, out)
                actions[rows] = out
            else:
                network = self.latest if opponent == 0 else self.past[opponent - 1]
                actions[rows] = network.act(observations[rows], masks[rows], greedy=False)
        return actions


def evaluate(network: PolicyNetwork, config: TrainConfig, seed: int) -> Results:
    """The network's best moves against each evaluation opponent (and the endgame suite)."""
    return evaluate_agent(NetworkAgent(network, name="learner"), config, seed)


def _save(run: Path, name: str, network, optimizer, pool: OpponentPool, steps: int, history: list, best: float):
    extra = {
        "steps": steps,
        "optimizer": optimizer.state_dict(),
        "pool": [p.state_dict() for p in ([pool.latest] if pool.latest else []) + pool.past],
        "rng": json.dumps(pool.rng.bit_generator.state),
        "torch_rng": torch.get_rng_state(),
        "history": json.dumps(history),
        "best": best,
    }
    save_checkpoint(run / name, network, extra)


def train(config: TrainConfig, run: Path, resume: bool = False, progress: bool = True) -> list[dict]:
    """Train; checkpoints, ``metrics.csv``, ``best.pt`` and ``latest.pt`` go to ``run``. Returns the eval history."""
    run.mkdir(parents=True, exist_ok=True)
    (run / "config.json").write_text(json.dumps(config.to_dict(), indent=1) + "\n", encoding="utf-8")
    torch.manual_seed(config.seed)
    rng = np.random.default_rng(config.seed)
    network = PolicyNetwork(config.hidden, config.layers, config.tactics)
    optimizer = torch.optim.Adam(network.parameters(), lr=config.learning_rate, eps=1e-5)
    pool = OpponentPool(config, config.num_games, rng)
    steps, history, best = 0, [], -1.0
    if resume and (run / "latest.pt").is_file():
        network, payload = load_checkpoint(run / "latest.pt")
        optimizer = torch.optim.Adam(network.parameters(), lr=config.learning_rate, eps=1e-5)
        optimizer.load_state_dict(payload["optimizer"])
        for state in reversed(payload["pool"]):
            snapshot = PolicyNetwork(config.hidden, config.layers, config.tactics)
            snapshot.load_state_dict(state)
            pool.past.insert(0, snapshot.eval())
        if pool.past:
            pool.latest = pool.past.pop(0)
        rng.bit_generator.state = json.loads(payload["rng"])
        torch.set_rng_state(payload["torch_rng"])
        steps, history, best = int(payload["steps"]), json.loads(payload["history"]), float(payload["best"])
    if pool.latest is None:
        pool.add_snapshot(network)

    env = TrinityTowersVectorEnv(config.num_games, opponent=pool, draft_share=config.draft_share, **config.env)
    pool.games = env.games
    observations, infos = env.reset(seed=config.seed + steps)
    masks = infos["action_mask"]
    T, B = config.rollout_steps, config.num_games
    buffer_obs = np.zeros((T, B, observations.shape[1]), np.int8)
    buffer_masks = np.zeros((T, B, 256), bool)
    actions = torch.zeros((T, B), dtype=torch.long)
    logprobs, values, rewards, dones = (torch.zeros((T, B)) for _ in range(4))
    started, first_steps = time.perf_counter(), steps
    next_snapshot = (steps // config.snapshot_every + 1) * config.snapshot_every
    next_eval = (steps // config.eval_every + 1) * config.eval_every
    bar = tqdm(total=config.total_steps, initial=steps, disable=not progress, desc="fast_ppo", unit="step")
    log = RunLog(run, config.tensorboard)
    while steps < config.total_steps:
        if config.max_minutes and time.perf_counter() - started > 60 * config.max_minutes:
            break
        if config.anneal_lr:
            optimizer.param_groups[0]["lr"] = config.learning_rate * (1 - steps / config.total_steps)
        for t in range(T):  # the rollout: learner decisions only
            buffer_obs[t], buffer_masks[t] = observations, masks
            with torch.no_grad():
                logits, value = network(torch.as_tensor(observations), torch.as_tensor(masks))
                distribution = torch.distributions.Categorical(logits=logits)
                action = distribution.sample()
            actions[t], logprobs[t], values[t] = action, distribution.log_prob(action), value
            observations, reward, terminated, _, infos = env.step(action.numpy())
            masks = infos["action_mask"]
            rewards[t], dones[t] = torch.as_tensor(reward), torch.as_tensor(terminated, dtype=torch.float32)
        with torch.no_grad():  # advantages: GAE, cut at each game's end
            _, next_value = network(torch.as_tensor(observations), torch.as_tensor(masks))
            advantages = torch.zeros((T, B))
            running = torch.zeros(B)
            for t in reversed(range(T)):
                following = next_value if t == T - 1 else values[t + 1]
                alive = 1.0 - dones[t]
                delta = rewards[t] + config.gamma * following * alive - values[t]
                running = delta + config.gamma * config.gae_lambda * alive * running
                advantages[t] = running
            returns = advantages + values
        flat_obs = torch.as_tensor(buffer_obs.reshape(T * B, -1))
        flat = {
            "obs": flat_obs,
            "masks": torch.as_tensor(buffer_masks.reshape(T * B, -1)),
            "tactical": tactical_features(flat_obs) if config.tactics else None,  # once, not once per epoch
            "actions": actions.reshape(-1),
            "logprobs": logprobs.reshape(-1),
            "advantages": advantages.reshape(-1),
            "returns": returns.reshape(-1),
        }
        finished, wins = float(dones.sum()), float((rewards > 0).sum())
        size = T * B // config.minibatches
        for _ in range(config.epochs):  # the PPO update
            order = torch.randperm(T * B)
            for start in range(0, T * B, size):
                idx = order[start : start + size]
                tactical = None if flat["tactical"] is None else flat["tactical"][idx]
                logits, value = network(flat["obs"][idx], flat["masks"][idx], tactical)
                distribution = torch.distributions.Categorical(logits=logits)
                ratio = torch.exp(distribution.log_prob(flat["actions"][idx]) - flat["logprobs"][idx])
                adv = flat["advantages"][idx]
                adv = (adv - adv.mean()) / (adv.std() + 1e-8)
                policy_loss = torch.max(-adv * ratio, -adv * ratio.clamp(1 - config.clip, 1 + config.clip)).mean()
                value_loss = 0.5 * (value - flat["returns"][idx]).pow(2).mean()
                entropy = distribution.entropy().mean()
                loss = policy_loss + config.value_coef * value_loss - config.entropy * entropy
                optimizer.zero_grad()
                loss.backward()
                nn.utils.clip_grad_norm_(network.parameters(), config.max_grad_norm)
                optimizer.step()
        steps += T * B
        bar.update(T * B)
        for name, value in (("loss/policy", policy_loss), ("loss/value", value_loss), ("loss/entropy", entropy)):
            log.scalar(name, value.item(), steps)
        log.scalar("train/learning_rate", optimizer.param_groups[0]["lr"], steps)
        log.scalar("train/win_rate_vs_pool", wins / max(finished, 1.0), steps)
        log.scalar("train/steps_per_second", (steps - first_steps) / (time.perf_counter() - started), steps)
        if steps >= next_snapshot:
            pool.add_snapshot(network)
            _save(run, "latest.pt", network, optimizer, pool, steps, history, best)
            next_snapshot += config.snapshot_every
        if steps >= next_eval or steps >= config.total_steps:
            history.append(_evaluate_and_log(network, config, steps, started, log))
            score = selection_score(history[-1]["results"], config)
            if score > best:
                best = score
                save_checkpoint(run / "best.pt", network, {"steps": steps})
            _save(run, "latest.pt", network, optimizer, pool, steps, history, best)
            next_eval += config.eval_every
    bar.close()
    if not history or history[-1]["steps"] != steps:
        history.append(_evaluate_and_log(network, config, steps, started, log))
        _save(run, "latest.pt", network, optimizer, pool, steps, history, best)
        if not (run / "best.pt").is_file():
            save_checkpoint(run / "best.pt", network, {"steps": steps})
    log.close()
    return history


def _evaluate_and_log(network: PolicyNetwork, config: TrainConfig, steps: int, started: float, log: RunLog) -> dict:
    results = evaluate(network, config, seed=10_000_000 + steps)
    seconds = time.perf_counter() - started
    log.results(steps, seconds, results)
    return {"steps": steps, "seconds": seconds, "results": results}


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--config", default="quick", help="a name in configs/train/ or a YAML path")
    parser.add_argument("--run", default="runs/quick", help="the run folder")
    parser.add_argument("--resume", action="store_true", help="continue from RUN/latest.pt")
    args = parser.parse_args(argv)
    config = TrainConfig.load(args.config)
    run = Path(args.run)
    history = train(config, run, resume=args.resume)
    last = history[-1]
    print(f"after {last['steps']:,} learner steps ({last['seconds'] / 60:.1f} min), {config.eval_games} games each:")
    print(format_results(last["results"]))
    # best.pt was chosen by noisy evaluations: measure it again on games it was not chosen on
    best, payload = load_checkpoint(run / "best.pt")
    final = {"steps": int(payload["steps"]), "seconds": last["seconds"], "results": evaluate(best, config, seed=1)}
    print(f"best.pt (from step {final['steps']:,}) on fresh games:")
    print(format_results(final["results"]))
    print(f"report: {write_report(run, history, f'fast_ppo, config {args.config}', final)}")


if __name__ == "__main__":
    main()
