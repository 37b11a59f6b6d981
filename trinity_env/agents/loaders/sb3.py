"""Agents from Stable-Baselines3 policies: what ``selfplay_ppo`` trains, playable anywhere.

What is safe to load: an SB3 checkpoint is a zip whose ``data`` entry is JSON in which SB3
stores every value it cannot write as JSON as a *cloudpickle* (the policy class, the
spaces, the schedules; and whatever else a crafted file puts there): ``MaskablePPO.load``
unpickles those, so loading a zip with it runs any code the zip carries. ``from_zip``
never does. It reads, and checks, only:

- the zip's member names (``data`` and ``policy.pth`` must be there; the other files SB3
  writes are allowed and never opened; any other name is refused);
- plain JSON fields of ``data``, never its ``:serialized:`` strings: the policy class's
  module and name (sb3-contrib's ``MaskableActorCriticPolicy``, i.e. ``"MlpPolicy"``), the
  spaces' type names (a ``Box`` observation, a ``Discrete`` action) and ``policy_kwargs``,
  which must be plain JSON holding nothing but ``net_arch``, ``ortho_init`` and
  ``share_features_extractor`` (a pickled ``activation_fn`` or feature extractor is refused:
  the network is built with SB3's default ``Tanh``);
- ``policy.pth`` (at most its bound in bytes, however well it compresses), first on a dry run
  that builds no tensor (``trinity_env.agents.loaders.checkpoint``), then with
  ``torch.load(..., weights_only=True)``: a dict of floating-point tensors, finite as float32,
  whose names and shapes are those of that network for this game's 339 observation values and
  256 actions, within the shared size limits (the layer widths are read from the tensor shapes
  and must agree with ``net_arch``).

It then builds the ``MaskableActorCriticPolicy`` itself and loads the weights into it, so
the policy plays exactly as ``MaskablePPO.load`` would, for the zips ``selfplay_ppo``
writes; its outputs are held to every policy's contract (``trinity_env.agents.outputs``) on a
probe batch when the agent is made and on every move. Anything else raises ``CheckpointError``
naming the file. ``trusted=True`` uses SB3's full load instead (it unpickles: only for files you made yourself).
"""

from __future__ import annotations

import zipfile
from pathlib import Path
from typing import Any

import numpy as np

from trinity_env.agents.loaders.checkpoint import (
    MAX_HIDDEN,
    MAX_LAYERS,
    MAX_PARAMETERS,
    CheckpointError,
    TensorInfo,
    describe_error,
    float32_weights,
    read_torch,
)
from trinity_env.agents.outputs import checked, probe
from trinity_env.core import GameState
from trinity_env.core.files import parse_json
from trinity_env.core.zips import open_zip
from trinity_env.spec.agent import Agent, Observation

ALLOWED_MEMBERS = frozenset(
    {
        "data",
        "policy.pth",
        "policy.optimizer.pth",
        "pytorch_variables.pth",
        "_stable_baselines3_version",
        "system_info.txt",
    }
)
REQUIRED_MEMBERS = ("data", "policy.pth")
POLICY_MODULE = "sb3_contrib.common.maskable.policies"
POLICY_CLASS = "MaskableActorCriticPolicy"
POLICY_KWARGS = frozenset({"net_arch", "ortho_init", "share_features_extractor"})
TO_ONNX = "; another SB3 policy plays once its network is exported to ONNX (onnx:PATH, docs/evaluate.md)"
"""What a refusal of a readable SB3 zip of another kind (plain PPO, another activation or network) ends with."""
MAX_DATA_BYTES = 4 << 20  # a MaskablePPO ``data`` is some 20 kB
MAX_WEIGHTS_BYTES = 8 * MAX_PARAMETERS + (1 << 20)  # two float32 networks within the shared limit, and the pickle


class SB3PolicyAgent(Agent):
    """Plays an SB3 maskable policy: its best move, or a sample with ``sample=True``."""

    def __init__(self, policy, sample: bool = False, name: str = "sb3"):
        self.policy, self.sample, self.name = policy, sample, name
        # the output contract (``outputs``; PPO's value is a return, unbounded): on the probe batch now, on every
        # move in play, each refusal one line naming ``name`` (the file)
        self._checked = checked(name, self._forward, bounded=False)
        probe(name, self._checked, bounded=False)

    def _forward(self, observations: np.ndarray, masks: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """The policy's raw logits (illegal actions at -1e9) and values, as its ``forward`` computes them."""
        import torch

        policy = self.policy
        with torch.no_grad():
            features = policy.extract_features(torch.as_tensor(np.asarray(observations), dtype=torch.float32))
            if policy.share_features_extractor:
                latent_pi, latent_vf = policy.mlp_extractor(features)
            else:
                latent_pi = policy.mlp_extractor.forward_actor(features[0])
                latent_vf = policy.mlp_extractor.forward_critic(features[1])
            logits, values = policy.action_net(latent_pi).numpy(), policy.value_net(latent_vf)[:, 0].numpy()
        logits[np.asarray(masks) == 0] = -1e9
        return logits, values

    def evaluate(self, observations: np.ndarray, masks: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """The policy's logits (illegal actions at -1e9) and value estimates for int8 observations [B, 339] and masks
        [B, 256], held to the output contract."""
        return self._checked(observations, masks)

    def act(self, observation: Observation, state: GameState | None = None) -> int:
        logits, _ = self._checked(
            np.asarray(observation["observation"])[None], np.asarray(observation["action_mask"])[None]
        )
        if not self.sample:  # the masked distribution's mode: the legal action with the highest logit
            return int(logits[0].argmax())
        action, _ = self.policy.predict(
            observation["observation"],
            action_masks=observation["action_mask"].astype(bool),
            deterministic=not self.sample,
        )
        return int(action)

    @classmethod
    def from_zip(cls, path: str | Path, sample: bool = False, trusted: bool = False) -> SB3PolicyAgent:
        """The policy of a MaskablePPO zip (``RUN/best.zip``, ``RUN/latest.zip``), weights only.

        Nothing in the zip is unpickled (see the module's docstring); ``CheckpointError`` names
        the file and what is wrong with it. ``trusted=True`` loads with ``MaskablePPO.load``,
        which runs any code the zip carries: only for files you made yourself.
        """
        if trusted:
            return cls(_trusted_policy(Path(path)), sample=sample, name=str(path))
        return cls(load_policy(path), sample=sample, name=str(path))


def _trusted_policy(path: Path):
    from sb3_contrib import MaskablePPO

    try:
        model = MaskablePPO.load(path, device="cpu")
    except FileNotFoundError:
        raise CheckpointError(f"no checkpoint at {path}") from None
    except Exception as err:  # SB3 raises many kinds for a damaged or foreign zip
        raise CheckpointError(f"{path} is not a readable MaskablePPO checkpoint ({describe_error(err)})") from None
    return model.policy


def load_policy(path: str | Path):
    """sb3-contrib's ``MaskableActorCriticPolicy`` with the weights of a MaskablePPO zip, never unpickling.

    ``CheckpointError`` names the file and the problem: not there, not a zip, a member or a
    field it does not recognise, a pickled ``policy_kwargs``, weights of another shape.
    """
    path = Path(path)
    if path.is_dir():
        raise CheckpointError(f"{path} is a directory, not a checkpoint file")
    if not path.exists():
        raise CheckpointError(f"no checkpoint at {path}")
    try:
        with open(path, "rb") as handle, open_zip(handle, str(path), CheckpointError) as archive:
            data_bytes, weights_bytes = _read_members(path, archive)
    except CheckpointError:
        raise
    except Exception as err:  # BadZipFile, a truncated member, a bad CRC, an unreadable file, ...
        raise CheckpointError(f"{path} is not a readable MaskablePPO zip ({describe_error(err)})") from None
    net_arch, share = _read_data(path, data_bytes)
    state, pi, vf = _read_weights(path, weights_bytes)
    if net_arch is not None and net_arch != (pi, vf):
        raise CheckpointError(
            f"{path}: policy_kwargs net_arch {net_arch} does not match the weights' layers (pi={pi}, vf={vf})"
        )
    return _build_policy(path, state, pi, vf, share)


def _read_members(path: Path, archive: zipfile.ZipFile) -> tuple[bytes, bytes]:
    names = archive.namelist()
    if len(names) != len(set(names)):
        raise CheckpointError(f"{path}: the zip holds a member twice")
    unknown = sorted(set(names) - ALLOWED_MEMBERS)
    if unknown:
        raise CheckpointError(f"{path}: the zip holds members a MaskablePPO checkpoint does not have: {unknown[:4]}")
    for name in REQUIRED_MEMBERS:
        if name not in names:
            raise CheckpointError(f"{path} is not a MaskablePPO checkpoint: the zip has no {name!r}")

    def read(name: str, limit: int) -> bytes:
        if archive.getinfo(name).file_size > limit:
            raise CheckpointError(f"{path}: the zip's {name!r} is larger than {limit} bytes")
        with archive.open(name) as member:
            content = member.read(limit + 1)
        if len(content) > limit:
            raise CheckpointError(f"{path}: the zip's {name!r} is larger than {limit} bytes")
        return content

    return read("data", MAX_DATA_BYTES), read("policy.pth", MAX_WEIGHTS_BYTES)


def _plain(value: Any) -> bool:
    """Whether a JSON value holds no cloudpickled entry (SB3 marks those with ``:serialized:``)."""
    if isinstance(value, dict):
        return not any(isinstance(k, str) and k.startswith(":") for k in value) and all(map(_plain, value.values()))
    if isinstance(value, list):
        return all(map(_plain, value))
    return True


def _layer_list(value: Any) -> bool:
    return isinstance(value, list) and all(type(v) is int and v >= 1 for v in value)


def _read_data(path: Path, content: bytes) -> tuple[tuple[tuple[int, ...], tuple[int, ...]] | None, bool]:
    """Check ``data``'s plain-JSON fields; ``(net_arch as (pi, vf) or None, share_features_extractor)``."""
    data = parse_json(content, f"{path}: the zip's 'data'", CheckpointError)
    if not isinstance(data, dict):
        raise CheckpointError(f"{path}: the zip's 'data' is not a JSON object")

    policy_class = data.get("policy_class")
    init = policy_class.get("__init__") if isinstance(policy_class, dict) else None
    if not (
        isinstance(policy_class, dict)
        and policy_class.get("__module__") == POLICY_MODULE
        and isinstance(init, str)
        and init.startswith(f"<function {POLICY_CLASS}.__init__ ")
    ):
        raise CheckpointError(f"{path}: data's policy_class is not sb3-contrib's {POLICY_CLASS} (MlpPolicy){TO_ONNX}")
    spaces = (("observation_space", "gymnasium.spaces.box.Box"), ("action_space", "gymnasium.spaces.discrete.Discrete"))
    for key, kind in spaces:
        space = data.get(key)
        if not isinstance(space, dict) or space.get(":type:") != f"<class '{kind}'>":
            raise CheckpointError(f"{path}: data's {key} is not a {kind.rsplit('.', 1)[1]}")

    kwargs = data.get("policy_kwargs", {})
    if not isinstance(kwargs, dict) or not _plain(kwargs):
        raise CheckpointError(
            f"{path}: data's policy_kwargs are pickled (a custom activation or network?), which is never "
            f"unpickled here: only plain net_arch, ortho_init and share_features_extractor are read{TO_ONNX}"
        )
    unknown = sorted(set(kwargs) - POLICY_KWARGS)
    if unknown:
        raise CheckpointError(f"{path}: data's policy_kwargs has fields that are not read here: {unknown}{TO_ONNX}")
    for key in ("ortho_init", "share_features_extractor"):
        if key in kwargs and type(kwargs[key]) is not bool:
            raise CheckpointError(f"{path}: policy_kwargs {key!r} must be a bool, got {kwargs[key]!r:.60}")
    share = kwargs.get("share_features_extractor", True)
    net_arch = kwargs.get("net_arch")
    if net_arch is None:
        return None, share
    if _layer_list(net_arch):
        return (tuple(net_arch), tuple(net_arch)), share
    if isinstance(net_arch, dict) and set(net_arch) <= {"pi", "vf"} and all(map(_layer_list, net_arch.values())):
        return (tuple(net_arch.get("pi", [])), tuple(net_arch.get("vf", []))), share
    raise CheckpointError(
        f"{path}: policy_kwargs net_arch must be a list of layer widths or {{'pi': [...], 'vf': [...]}}, "
        f"got {net_arch!r:.80}"
    )


def _read_weights(path: Path, content: bytes) -> tuple[dict[str, Any], tuple[int, ...], tuple[int, ...]]:
    """The float32 weights of ``policy.pth`` and the widths of its policy and value MLPs.

    Names, dtypes, shapes and the layer chain are checked on the dry run's description, within the shared size
    limits, before any tensor is built (``trinity_env.agents.loaders.checkpoint``)."""
    name = f"{path}: the zip's 'policy.pth'"
    widths: list[tuple[int, ...]] = []

    def validate(state: Any) -> None:
        if not isinstance(state, dict) or not all(isinstance(key, str) for key in state):
            raise CheckpointError(f"{name} is not a dict of named tensors")
        for key, tensor in state.items():
            if not isinstance(tensor, TensorInfo) or not tensor.is_floating_point():
                raise CheckpointError(f"{path}: policy.pth entry {key[:60]!r} is not a dense floating-point tensor")
        widths.extend(_infer_net_arch(path, state))
        weights = sum(tensor.numel for tensor in state.values())
        if weights > 2 * MAX_PARAMETERS:
            raise CheckpointError(f"{path}: policy.pth holds {weights:,} weights, over two networks' limit")

    state = read_torch(content, name, validate, max_bytes=MAX_WEIGHTS_BYTES)
    return float32_weights(f"{path}: policy.pth", state), widths[0], widths[1]


def _infer_net_arch(path: Path, state: dict[str, Any]) -> tuple[tuple[int, ...], tuple[int, ...]]:
    """The hidden widths of the policy and value MLPs, read from the described shapes and checked as a chain."""
    from trinity_env.spec.observation import OBSERVATION_SIZE

    def chain(prefix: str, head: str, outputs: int) -> tuple[int, ...]:
        widths, width, index = [], OBSERVATION_SIZE, 0
        while f"{prefix}.{index}.weight" in state:
            weight, bias = state[f"{prefix}.{index}.weight"], state.get(f"{prefix}.{index}.bias")
            if len(weight.shape) != 2 or weight.shape[1] != width or bias is None or bias.shape != (weight.shape[0],):
                raise CheckpointError(f"{path}: policy.pth {prefix}.{index} does not fit the layer before it")
            width = int(weight.shape[0])
            if not 1 <= width <= MAX_HIDDEN or len(widths) == MAX_LAYERS:
                raise CheckpointError(
                    f"{path}: policy.pth {prefix} is wider than {MAX_HIDDEN} or deeper than {MAX_LAYERS} layers"
                )
            widths.append(width)
            index += 2  # Linear, activation, Linear, ...
        weight, bias = state.get(f"{head}.weight"), state.get(f"{head}.bias")
        if weight is None or bias is None or weight.shape != (outputs, width) or bias.shape != (outputs,):
            raise CheckpointError(
                f"{path}: policy.pth {head} does not map {width} features to {outputs} outputs "
                f"(this game has {OBSERVATION_SIZE} observation values and 256 actions)"
            )
        inputs = (OBSERVATION_SIZE, *widths)
        weights = sum(a * b + b for a, b in zip(inputs, widths)) + width * 257 + 257  # the body and both heads
        if weights > MAX_PARAMETERS:
            raise CheckpointError(
                f"{path}: policy.pth {prefix} makes {weights:,} weights, over the limit of {MAX_PARAMETERS:,}"
            )
        return tuple(widths)

    return chain("mlp_extractor.policy_net", "action_net", 256), chain("mlp_extractor.value_net", "value_net", 1)


def _build_policy(path: Path, state: dict[str, Any], pi: tuple[int, ...], vf: tuple[int, ...], share: bool):
    import numpy as np
    import torch
    from gymnasium import spaces
    from sb3_contrib.common.maskable.policies import MaskableActorCriticPolicy

    from trinity_env.spec.observation import OBSERVATION_HIGH, OBSERVATION_SIZE

    observation_space = spaces.Box(0, OBSERVATION_HIGH, (OBSERVATION_SIZE,), np.int8)
    with torch.random.fork_rng(devices=[]):  # building initialises weights: leave the caller's RNG alone
        policy = MaskableActorCriticPolicy(
            observation_space,
            spaces.Discrete(256),
            lambda _: 0.0,
            net_arch={"pi": list(pi), "vf": list(vf)},
            ortho_init=False,
            share_features_extractor=share,
        )
    try:
        policy.load_state_dict(state)  # strict: every name, every shape
    except (RuntimeError, KeyError, TypeError) as err:
        raise CheckpointError(f"{path}: policy.pth does not match a MaskableActorCriticPolicy: {err}") from None
    policy.set_training_mode(False)
    return policy
