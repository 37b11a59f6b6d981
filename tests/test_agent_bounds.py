"""Every agent spec parameter has an upper bound, checked before any work and in the constructors.

A spec is input from a command line, a config or a web form: ``az:...,worlds=1000000000`` used to
build a billion determinisations (past 2 GB) before its first search. The bounds are named
constants next to each agent; a value past one is a one-line error naming the parameter.
"""

from __future__ import annotations

import random
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from trinity_env.agents import AgentSpecError, MCTSAgent, make
from trinity_env.envs import make_config
from trinity_env.spec.observation import action_mask, encode_observation

ROOT = Path(__file__).resolve().parent.parent
HUGE = 1_000_000_000


@pytest.mark.parametrize(
    ("spec", "parameter"),
    [
        (f"mcts:{HUGE}", "simulations"),
        (f"mcts:400,worlds={HUGE}", "worlds"),
        ("mcts:400,c=1e9", "c"),
        ("mcts:400,greed=2", "greed"),
        ("mcts:400,seed=-1", "seed"),
        ("random:seed=-1", "seed"),
    ],
)
def test_mcts_and_random_specs_past_a_bound_are_refused_naming_it(spec, parameter):
    with pytest.raises(AgentSpecError, match=rf"{parameter} must be .* (to|and) ") as caught:
        make(spec)
    assert "\n" not in str(caught.value)


def test_the_mcts_bounds_are_inclusive_and_guard_python_callers_too():
    from trinity_env.agents.baselines import MAX_SEED
    from trinity_env.agents.mcts import MAX_C, MAX_SIMULATIONS, MAX_WORLDS

    edge = MCTSAgent(MAX_SIMULATIONS, MAX_C, MAX_WORLDS, MAX_SEED, greed=1.0)
    assert (edge.simulations, edge.c, edge.worlds) == (MAX_SIMULATIONS, MAX_C, MAX_WORLDS)
    assert make(f"mcts:{MAX_SIMULATIONS},worlds={MAX_WORLDS},c={MAX_C}").worlds == MAX_WORLDS
    for keywords, parameter in [
        ({"simulations": MAX_SIMULATIONS + 1}, "simulations"),
        ({"worlds": MAX_WORLDS + 1}, "worlds"),
        ({"c": MAX_C * 2}, "c"),
        ({"seed": MAX_SEED + 1}, "seed"),
        ({"simulations": 400.5}, "simulations"),  # a float is not a count
        ({"worlds": True}, "worlds"),
    ]:
        with pytest.raises(ValueError, match=rf"mcts {parameter} must be"):
            MCTSAgent(**keywords)


# ------------------------------------------------------------------------------ az


def _az_checkpoint(folder: Path) -> Path:
    torch = pytest.importorskip("torch")
    del torch
    from trinity_env.agents.az import AZNetwork, save_network

    path = folder / "tiny.pt"
    save_network(path, AZNetwork(8, 1, False))
    return path


@pytest.mark.parametrize(
    ("arguments", "parameter"),
    [
        (f"sims={HUGE}", "sims"),
        (f"worlds={HUGE}", "worlds"),
        ("worlds=64,sims=50000", "worlds x sims"),
        (f"considered={HUGE}", "considered"),
        ("solver=16", "solver"),
        ("seed=-1", "seed"),
    ],
)
def test_az_specs_past_a_bound_are_refused_before_the_checkpoint_is_read(tmp_path, arguments, parameter):
    pytest.importorskip("torch")
    missing = tmp_path / "missing.pt"  # were the file read first, the error would name it instead
    with pytest.raises(AgentSpecError, match=rf"{parameter} must be") as caught:
        make(f"az:{missing},{arguments}")
    message = str(caught.value)
    reason = message[message.index(f"{parameter} must be") :]  # after the spec, which names the file itself
    assert "missing.pt" not in reason and "\n" not in reason
    with pytest.raises(AgentSpecError, match=rf"{parameter} must be"):
        make(f"az:{_az_checkpoint(tmp_path)},{arguments}")


def test_the_az_bounds_are_inclusive_and_guard_python_callers_too(tmp_path):
    pytest.importorskip("torch")
    from trinity_env.agents.az import (
        MAX_CONSIDERED,
        MAX_SIMULATIONS,
        MAX_SOLVER,
        MAX_WORLD_SIMULATIONS,
        MAX_WORLDS,
        AZAgent,
        AZNetwork,
    )
    from trinity_env.agents.baselines import MAX_SEED

    network = AZNetwork(8, 1, False)
    edge = AZAgent(
        network,
        MAX_SIMULATIONS,
        worlds=MAX_WORLD_SIMULATIONS // MAX_SIMULATIONS,
        solver=MAX_SOLVER,
        max_considered=MAX_CONSIDERED,
        seed=MAX_SEED,
    )
    assert edge.simulations == MAX_SIMULATIONS
    assert AZAgent(network, 0, worlds=MAX_WORLDS).worlds == MAX_WORLDS  # the raw policy builds no tree
    for keywords, parameter in [
        ({"simulations": MAX_SIMULATIONS + 1}, "sims"),
        ({"worlds": MAX_WORLDS + 1}, "worlds"),
        ({"worlds": MAX_WORLDS, "simulations": MAX_WORLD_SIMULATIONS // MAX_WORLDS + 1}, "worlds x sims"),
        ({"max_considered": MAX_CONSIDERED + 1}, "considered"),
        ({"max_considered": 0}, "considered"),
        ({"solver": MAX_SOLVER + 1}, "solver"),
        ({"seed": MAX_SEED + 1}, "seed"),
        ({"c_puct": float("nan")}, "c_puct"),
        ({"simulations": 16.0}, "sims"),
    ]:
        with pytest.raises(ValueError, match=rf"az {parameter} must be"):
            AZAgent(network, **keywords)


def test_a_billion_worlds_is_refused_at_once_in_little_memory():
    """The reported case: ``az-standard:worlds=1000000000`` asked for a draft move grew past 2 GB.

    Run in a child whose address space is capped, so that a regression fails here (MemoryError,
    or the peak over the limit) instead of taking the machine's memory.
    """
    pytest.importorskip("torch")
    child = textwrap.dedent(
        """
        import random, resource, sys
        import trinity_env.agents.az  # torch: loaded before the cap, as make would load it
        from trinity_env.agents import AgentSpecError, make
        from trinity_env.envs import make_config
        from trinity_env.spec.observation import action_mask, encode_observation

        rng = random.Random(0)
        state = make_config(None).new_game(rng)
        for _ in range(2):  # seat 0 drafts again with a secret pick of seat 1 to guess: worlds are searched
            state = state.apply(rng.choice(state.legal_actions()))
        observation = {"observation": encode_observation(state, 0, True), "action_mask": action_mask(state, 0)}
        with open("/proc/self/status") as status:
            fields = {line.split(":")[0]: int(line.split()[1]) for line in status if line.startswith("Vm")}
        size, before = fields["VmSize"] * 1024, fields["VmRSS"]
        print("BEFORE_KB", before)
        with open("/proc/self/clear_refs", "w") as clear:  # the peak from here on: not the imports' transients
            clear.write("5")
        resource.setrlimit(resource.RLIMIT_AS, (size + 600 * 2**20, resource.RLIM_INFINITY))
        try:
            agent = make("az-standard:worlds=1000000000")
            agent.act(observation)
            print("ACCEPTED")
        except AgentSpecError as err:
            print("REFUSED", err)
        except MemoryError:
            print("MEMORY")
        with open("/proc/self/status") as status:
            print("PEAK_KB", next(int(line.split()[1]) for line in status if line.startswith("VmHWM")))
        """
    )
    result = subprocess.run([sys.executable, "-c", child], cwd=ROOT, capture_output=True, text=True, timeout=120)
    lines = dict(line.split(" ", 1) for line in result.stdout.splitlines() if " " in line)
    assert "REFUSED" in lines, result.stdout + result.stderr[-2000:]
    assert "worlds must be" in lines["REFUSED"]
    grown = int(lines["PEAK_KB"]) - int(lines["BEFORE_KB"])  # past what the imports took (torch, numba)
    assert grown < 200 * 1024, f"peak RSS grew {grown // 1024} MB"


def test_a_draft_move_with_the_most_worlds_stays_small():
    """At the bounds the determinisations are few: the largest allowed worlds plays a draft move."""
    from trinity_env.agents.mcts import MAX_WORLDS

    rng = random.Random(0)
    state = make_config(None).new_game(rng)
    for _ in range(2):  # a secret pick of seat 1 to guess
        state = state.apply(rng.choice(state.legal_actions()))
    observation = {"observation": encode_observation(state, 0, True), "action_mask": action_mask(state, 0)}
    agent = make(f"mcts:{MAX_WORLDS},worlds={MAX_WORLDS},draft=search,seed=1")
    assert observation["action_mask"][agent.act(observation)]


def test_the_security_page_quotes_the_bounds_the_agents_check():
    from trinity_env.agents import mcts

    page = " ".join((ROOT / "docs" / "security.md").read_text(encoding="utf-8").split())
    quoted = f"`mcts` at most {mcts.MAX_SIMULATIONS:,} simulations and {mcts.MAX_WORLDS} worlds"
    assert quoted in page
    az = pytest.importorskip("trinity_env.agents.az")
    quoted = (
        f"`az` at most {az.MAX_SIMULATIONS:,} simulations, {az.MAX_WORLDS} worlds and "
        f"{az.MAX_WORLD_SIMULATIONS:,} worlds x simulations"
    )
    assert quoted in page


def test_an_az_config_evaluating_past_the_agents_bound_is_refused_at_load():
    """Once a run trained for hours and then failed at its first evaluation, where the agent was built."""
    pytest.importorskip("torch")
    from training.az_config import AZConfig
    from training.config import TrainConfigError
    from trinity_env.agents.az import MAX_SIMULATIONS

    assert AZConfig.from_dict({"eval_simulations": MAX_SIMULATIONS}).eval_simulations == MAX_SIMULATIONS
    with pytest.raises(TrainConfigError, match=rf"field 'eval_simulations' must be at most {MAX_SIMULATIONS:,}"):
        AZConfig.from_dict({"eval_simulations": MAX_SIMULATIONS + 1})
