"""Random-move steps per second: the JAX engine against the numba engine and Pgx's ``connect_four``, in one run.

Each engine plays random legal moves in B games in lockstep, restarting a game in the step after it
ends (the standard rules, the draft included: picks count as steps as placements do):

- ``jax``: ``trinity_env.jax.TrinityTowers`` under ``jax.jit(jax.vmap(...))``, a scan of steps per call
  (draw a random legal action from the mask with ``random_actions``, step, restart finished games from
  fresh keys);
- ``connect_four``: Pgx's own env, in the same harness (pgx 2.6.0's ``pgx.make("connect_four")``);
- ``numba``: ``FastGames.step(FastGames.random_actions(...))``, the numba engine's lockstep API as the
  trainers use it (seeded random legal actions, the same restarts);
- ``loop_256`` and ``loop_7``: the harness alone, on a game that does nothing (``NoGame``: a mask of 256 or 7
  actions, all legal, a game of 10 steps), so each engine's figure can be read apart from the loop's own cost: the
  random draw reads the whole mask, 256 entries for this game against ``connect_four``'s 7.

For the JAX engines the compile time is measured apart (``jit(...).lower(...).compile()``) and the
timed calls run the compiled function. Each figure is the best of ``--repeats`` timings of at least
``--seconds`` each. The load averages before and after are printed and kept; the JSON also names the
device, the versions and the core count.

Usage: python -m benchmarks.jax [--sizes 1 256 4096 65536] [--json docs/jax/benchmark.json]
"""

from __future__ import annotations

import argparse
import os
import platform
import time
from collections.abc import Callable
from pathlib import Path

import jax
import jax.numpy as jnp
import numpy as np

from benchmarks import load_average, write_result
from trinity_env.fast import FastGames
from trinity_env.jax import TrinityTowers
from trinity_env.jax.rules import dataclass

SIZES = (1, 256, 4096, 65536)
STEPS_PER_CALL = 1 << 16
"""Game steps one compiled call makes (B games x steps): fewer calls for small batches' dispatch to weigh on."""


def random_actions(key, masks):
    """A uniformly random legal action per game from one uniform number each: the k-th legal action, found in
    two levels of 16 (XLA's cumsum over all 256 ids, or a categorical draw of 256 numbers, cost more than a step)."""
    width = masks.shape[-1]
    side = int(np.ceil(np.sqrt(width)))
    padded = jnp.pad(masks, [(0, 0), (0, side * side - width)]).reshape(-1, side, side).astype(jnp.int32)
    counts = padded.sum(axis=-1)
    total = jnp.cumsum(counts, axis=-1)
    k = jnp.floor(jax.random.uniform(key, total.shape[:1]) * total[:, -1]).astype(jnp.int32)
    row = jnp.argmax(total > k[:, None], axis=-1)
    within = k - jnp.take_along_axis(total - counts, row[:, None], axis=-1)[:, 0]
    cells = jnp.take_along_axis(padded, row[:, None, None], axis=1)[:, 0]
    column = jnp.argmax(jnp.cumsum(cells, axis=-1) > within[:, None], axis=-1)
    return row * side + column


def _player(env) -> Callable:
    """A jitted ``(states, key) -> (states, key)`` making ``steps`` lockstep random moves with restarts."""

    def one(carry, _):
        states, key = carry
        key, act_key, init_key = jax.random.split(key, 3)
        actions = random_actions(act_key, states.legal_action_mask)
        states = jax.vmap(env.step)(states, actions)
        fresh = jax.vmap(env.init)(jax.random.split(init_key, states.terminated.shape[0]))
        done = states.terminated
        states = jax.tree_util.tree_map(
            lambda new, old: jnp.where(done.reshape(done.shape + (1,) * (old.ndim - 1)), new, old), fresh, states
        )
        return (states, key), None

    def play(states, key, steps: int):
        (states, key), _ = jax.lax.scan(one, (states, key), None, length=steps)
        return states, key

    return play


@dataclass
class NoGame:
    """A game that does nothing, as the harness sees one: a mask of ``actions`` entries (all legal), the end after 10
    steps, a first-mover bit drawn at ``init`` as both games draw theirs, and the last action (kept, so the draw is
    not compiled away)."""

    legal_action_mask: jax.Array
    terminated: jax.Array
    steps: jax.Array
    first: jax.Array
    action: jax.Array


class NoGameEnv:
    """``init``/``step`` of ``NoGame`` with ``actions`` actions: the harness's own cost, an engine's taken away."""

    def __init__(self, actions: int):
        self.actions = actions

    def init(self, key) -> NoGame:
        no = jnp.int32(0)
        return NoGame(jnp.ones(self.actions, jnp.bool_), jnp.bool_(False), no, jax.random.bernoulli(key), no)

    def step(self, state: NoGame, action) -> NoGame:
        steps = state.steps + 1
        return state.replace(steps=steps, terminated=steps >= 10, action=jnp.asarray(action, jnp.int32))


def time_jax(env, size: int, seconds: float, repeats: int) -> dict[str, float]:
    """Steps per second of ``env`` at batch ``size``, and its compile time."""
    steps = max(1, STEPS_PER_CALL // size)
    states = jax.jit(jax.vmap(env.init))(jax.random.split(jax.random.PRNGKey(0), size))
    key = jax.random.PRNGKey(1)
    began = time.perf_counter()
    compiled = jax.jit(_player(env), static_argnums=2).lower(states, key, steps).compile()
    compile_s = time.perf_counter() - began
    states, key = compiled(states, key)  # a first run off the clock
    jax.block_until_ready(states)
    best = 0.0
    for _ in range(repeats):
        calls, began = 0, time.perf_counter()
        while True:
            states, key = compiled(states, key)
            jax.block_until_ready(states)
            calls += 1
            elapsed = time.perf_counter() - began
            if elapsed >= seconds:
                break
        best = max(best, calls * steps * size / elapsed)
    return {"steps_per_second": round(best), "compile_s": round(compile_s, 2)}


def time_numba(size: int, seconds: float, repeats: int) -> dict[str, float]:
    """Steps per second of ``FastGames`` at batch ``size`` (random legal actions, restarts)."""
    games = FastGames(size, seed=0)
    every = np.arange(size)
    games.step(games.random_actions(every))  # compiled (numba's cache) and warm
    best = 0.0
    for _ in range(repeats):
        calls, began = 0, time.perf_counter()
        while True:
            games.step(games.random_actions(every))
            calls += 1
            elapsed = time.perf_counter() - began
            if elapsed >= seconds:
                break
        best = max(best, calls * size / elapsed)
    return {"steps_per_second": round(best)}


def measure(sizes: tuple[int, ...], seconds: float, repeats: int) -> dict:
    import pgx

    engines = {
        "jax": TrinityTowers(),
        "connect_four": pgx.make("connect_four"),
        "loop_256": NoGameEnv(256),
        "loop_7": NoGameEnv(7),
    }
    rows = []
    for size in sizes:
        row: dict = {"batch": size, "numba": time_numba(size, seconds, repeats)}
        for name, env in engines.items():
            row[name] = time_jax(env, size, seconds, repeats)
        rows.append(row)
        print(_line(row), flush=True)
    device = jax.devices()[0]
    return {
        "rows": rows,
        "device": f"{device.platform}: {device.device_kind}",
        "jax": jax.__version__,
        "pgx": pgx.__version__,
        "cpu_count": os.cpu_count(),
        "machine": platform.machine(),
        "seconds": seconds,
        "repeats": repeats,
    }


HEADER = (
    "| batch | JAX engine steps/s | compile s | Pgx connect_four steps/s | compile s | numba FastGames steps/s "
    "| the loop alone, 256 / 7 actions |"
)


def _line(row: dict) -> str:
    return (
        f"| {row['batch']:,} | {row['jax']['steps_per_second']:,} | {row['jax']['compile_s']} | "
        f"{row['connect_four']['steps_per_second']:,} | {row['connect_four']['compile_s']} | "
        f"{row['numba']['steps_per_second']:,} | "
        f"{row['loop_256']['steps_per_second']:,} / {row['loop_7']['steps_per_second']:,} |"
    )


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=list(SIZES), help="batch sizes (games in lockstep)")
    parser.add_argument("--seconds", type=float, default=2.0, help="the least time one timing runs")
    parser.add_argument("--repeats", type=int, default=3, help="timings per figure; the best is kept")
    parser.add_argument("--json", type=Path, help="also write the figures to this JSON file")
    args = parser.parse_args(argv)
    if any(size < 1 for size in args.sizes) or args.seconds <= 0 or args.repeats < 1:
        parser.error("--sizes must be positive, --seconds above 0 and --repeats at least 1")
    before = load_average()
    print(f"random-move steps/s, standard rules with the draft, on {jax.devices()[0].device_kind}; load {before}")
    print(HEADER)
    print("|---:|---:|---:|---:|---:|---:|---:|")
    result = measure(tuple(args.sizes), args.seconds, args.repeats)
    result["load_average_before"], result["load_average_after"] = before, load_average()
    print(f"load average before: {before}; after: {result['load_average_after']} ({os.cpu_count()} cores)")
    write_result(args.json, result)


if __name__ == "__main__":
    main()
