"""The built-in agents' factories, the shipped policies and the checkpoint reader a path spec plays.

An agent spec (``mcts:400``, ``./runs/quick``, ``onnx:model.onnx,threads=2``) is text that
``trinity_env.agents.spec`` reads: its grammar, its typed arguments and the files it names live there, once.
This module builds what a checked ``AgentSpec`` names: ``build(spec)`` calls the agent's factory with the spec's
arguments, already typed and checked against their bounds (``AGENTS``: each factory's keywords are its agent's
constructor keywords), or reads the checkpoint or run folder a path names. Files are read as weights and plain
data only, so no code in a checkpoint runs (see ``_checkpoint``); the agent's ``name`` is the spec's text, so the
arena labels a checkpoint by its path, never by a built-in name.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from importlib import resources
from pathlib import Path
from typing import TYPE_CHECKING, Any

from trinity_env.agents.baselines import GreedyAgent, LookaheadAgent, check_seed
from trinity_env.agents.loaders.checkpoint import CheckpointError
from trinity_env.agents.loaders.network_checkpoint import best_else_latest
from trinity_env.agents.mcts import MCTSAgent
from trinity_env.core import TrinityError
from trinity_env.core.files import one_line, short
from trinity_env.core.paths import refuse_special
from trinity_env.spec.agent import Agent, RandomAgent

if TYPE_CHECKING:
    from trinity_env.agents.spec import AgentSpec


class AgentSpecError(TrinityError):
    """An agent spec string that names no agent or gives it bad arguments."""


AZ_STANDARD = "az-standard"
"""The shipped AlphaZero agent (``training/alphazero.py``, ``configs/train/az-standard.yaml``)."""
STATE_DICT = "state_dict"
"""``state_dict:PATH,trainer=ppo|az,sims=N``: a bare torch ``state_dict`` of one of the project's networks, which
network and its size read from its keys and shapes (``trinity_env.agents.loaders.state_dict``)."""
SHIPPED_DIR = Path(str(resources.files("trinity_env.agents") / "data"))


def shipped() -> list[str]:
    """Names of the trained policies that ship inside the package (``make(name)`` plays one)."""
    return sorted(path.stem for path in SHIPPED_DIR.glob("*.pt"))


def _az(path: str, **keywords: Any) -> Agent:
    """``az:PATH_OR_RUN,sims=N,solver=K``: an AlphaZero network (a checkpoint or a run folder) searching with
    ``AZAgent``'s keywords (``simulations`` 0: the raw policy; ``solver`` K: exact below K empty tiles)."""
    try:
        from trinity_env.agents.az import AZAgent
    except ImportError:
        raise AgentSpecError("az agents need torch: install the train extra") from None
    return AZAgent.from_checkpoint(path, **keywords)


def _az_standard(**keywords: Any) -> Agent:
    """The shipped ``az-standard`` network: ``az-standard:sims=0`` plays its raw policy."""
    return _az(str(SHIPPED_DIR / f"{AZ_STANDARD}.pt"), **keywords)


def _onnx(path: str, threads: int = 1) -> Agent:
    """``onnx:PATH,threads=N``: a policy exported to ONNX from any framework
    (``trinity_env.agents.loaders.onnx_policy``, the ``onnx`` extra), checked by what loading it would allocate before
    onnxruntime sees it; its raw policy plays."""
    from trinity_env.agents.loaders.onnx_policy import OnnxPolicyAgent

    return OnnxPolicyAgent.from_file(path, threads=threads)


def _state_dict(path: str, trainer: str | None = None, **search: Any) -> Agent:
    """``state_dict:PATH,trainer=ppo|az,sims=N``: a bare ``state_dict`` of a project network (the ``train`` extra):
    its raw policy, or an AlphaZero network's search with ``sims=N`` and ``az:``'s other arguments."""
    try:
        from trinity_env.agents.loaders.state_dict import state_dict_agent
    except ImportError:
        raise AgentSpecError("state_dict policies need torch: install the train extra") from None
    return state_dict_agent(path, trainer, **search)


AGENTS: dict[str, Callable[..., Agent]] = {
    "random": RandomAgent,
    "greedy": GreedyAgent,
    "lookahead": LookaheadAgent,
    "mcts": MCTSAgent,
    "az": _az,
    AZ_STANDARD: _az_standard,
    "onnx": _onnx,
    STATE_DICT: _state_dict,
}
"""The built-in agents by spec name: each factory takes the spec's typed arguments as keywords
(``trinity_env.agents.spec.PARAMETERS`` maps a spec's names to them). ``level:N`` builds its ladder agent's spec."""


def _load_file(path: Path, spec: str, sample: str, seed: int | None) -> Agent:
    """The agent of one checkpoint file: a ``.zip`` (weights only, never unpickled) or a ``.pt``."""
    try:
        from trinity_env.agents.networks.ppo_network import CheckpointError
    except ImportError:
        what = "an SB3 checkpoint" if path.suffix == ".zip" else "a checkpoint"
        raise AgentSpecError(f"{spec!r} is {what}: install the train extra (torch) to play it") from None
    refuse_special(path, CheckpointError)
    if path.suffix == ".zip":
        try:
            from trinity_env.agents.loaders.sb3 import SB3PolicyAgent
        except ImportError:
            raise AgentSpecError(f"{spec!r} is an SB3 checkpoint: install the train extra to play it") from None
        return SB3PolicyAgent.from_zip(path)
    from trinity_env.agents.networks.ppo_network import NetworkAgent

    return NetworkAgent.from_checkpoint(path, sample=sample, seed=check_seed(spec, seed))


def _run_folder(folder: Path, spec: str, sample: str, seed: int | None) -> Agent:
    """A run folder's best checkpoint, else (missing or damaged, with a warning) its latest.

    The ``.pt`` pair (``fast_ppo``) is used when either file exists, else the ``.zip`` pair
    (``selfplay_ppo``); ``CheckpointError`` names the folder and, when both files are there
    but neither loads, both problems. A ``best`` that is not a regular file (a named pipe)
    counts as damaged.
    """
    try:
        from trinity_env.agents.networks.ppo_network import CheckpointError
    except ImportError:
        raise AgentSpecError(f"{spec!r} is a run folder: install the train extra (torch) to play it") from None
    suffix = ".pt" if any(os.path.exists(folder / f"{n}.pt") for n in ("best", "latest")) else ".zip"
    if not any(os.path.lexists(folder / f"{n}{suffix}") for n in ("best", "latest")):
        raise CheckpointError(f"no checkpoint in the run folder {folder}: no best.pt, latest.pt, best.zip, latest.zip")
    return best_else_latest(
        folder, folder / f"best{suffix}", folder / f"latest{suffix}", lambda path: _load_file(path, spec, sample, seed)
    )


def _checkpoint(spec: str, sample: str = "none", seed: int | None = None) -> Agent:
    """A trained policy: a ``.pt`` checkpoint (``fast_ppo``), a ``.zip`` one (``selfplay_ppo``), or a run
    folder (its best checkpoint, else its latest); ``sample``: none | all | draft (see ``NetworkAgent``).

    Loading runs no code from the file: ``.pt`` files are read with ``weights_only=True`` and
    ``.zip`` files for their weights and plain JSON only (``trinity_env.agents.networks.ppo_network``,
    ``trinity_env.agents.loaders.sb3``); a bad file raises ``CheckpointError`` naming it.
    """
    path = Path(spec)
    if path.is_dir() and path.suffix not in (".pt", ".zip"):
        agent = _run_folder(path, spec, sample, seed)
    else:  # a directory named x.pt is refused by the loaders, naming it
        agent = _load_file(path, spec, sample, seed)
    agent.name = spec
    return agent


def unreadable(spec: str, err: OSError) -> CheckpointError:
    """One line for a file that ``os.stat`` calls regular but that cannot be read as one: ``/proc/self/mem``
    (its reads and seeks fail), ``/proc/self/pagemap`` (it reports 0 bytes and reads for ever)."""
    return CheckpointError(f"cannot read the checkpoint of {short(spec)}: {one_line(err.strerror or err)}")


def build(spec: AgentSpec) -> Agent:
    """The agent of a checked ``AgentSpec`` (``trinity_env.agents.spec``) naming a built-in agent, a shipped policy
    or a file: its factory called with the spec's typed keywords, or its checkpoint read. Its ``name`` is the
    spec's text."""
    try:
        if spec.name == "file:":
            agent = _checkpoint(spec.path)
        elif spec.name in AGENTS:
            agent = AGENTS[spec.name](**spec.factory_keywords)
        else:  # a shipped policy (AgentSpec.parse let only known names through)
            agent = _checkpoint(str(SHIPPED_DIR / f"{spec.name}.pt"), **spec.factory_keywords)
    except CheckpointError:  # the file, not the spec, is at fault: its error names it
        raise
    except OSError as err:  # a /proc file: "regular" by its stat, yet its reads fail
        raise unreadable(spec.text, err) from None
    except (TypeError, ValueError) as err:
        raise AgentSpecError(f"bad arguments in agent spec {short(spec.text)}: {err}") from None
    agent.name = spec.text
    return agent
