"""A policy exported to ONNX (from torch, JAX, TensorFlow...) as an agent every evaluation tool can play.

**The model contract.**

- Input ``observation``: int8 or float32, shape ``[batch, 339]``, the batch dimension symbolic (any
  name) or a fixed size. It receives the project's observation (``trinity_env.spec.observation``,
  ``docs/observation.md``): the int8 vector of the player to move, entries 0 to 10, unscaled; a
  float32 model receives the same numbers as float32.
- Optional second input ``action_mask``: int8, bool or float32, shape ``[batch, 256]``, 1 for a legal
  action (``docs/observation.md``), with the same batch dimension.
- Output ``logits``: float32 ``[batch, 256]``, required: one score per action id. Only the legal
  actions' scores are read (they must be finite); illegal ones are ignored whatever they hold.
- Optional output ``value``: float32 ``[batch]`` or ``[batch, 1]``: the value of the position for the
  player to move, in [-1, 1] (read by ``evaluate`` only: ``trinity accuracy`` scores it).

A model with exactly one input and one or two outputs under other names is taken positionally (the
input as the observation, the outputs as logits then value) only if their types and shapes fit;
otherwise it is refused in one line naming the expected names. The model is played greedily: the
legal action with the highest logit (ties: the lowest action id).

**Safety.** A file is checked by what loading it would read, allocate and build before any
onnxruntime session exists (``trinity_env.agents.loaders.onnx_check``: a regular file within a size cap,
the protobuf's fields counted before parsing, no external data, standard operators only and no
control flow, every tensor's declared size and bytes, every intermediate shape known and bounded
by ONNX's strict shape inference run in a memory-limited child process). The session is then built
from the checked bytes on the CPU provider with ``threads`` threads, its inputs and outputs checked
again, and the probe batch of real positions run at each size checked, its outputs held to the contract of every
policy (``trinity_env.agents.outputs``), as they are on every later run where they are read. Every refusal is one
``OnnxPolicyError`` (a ``CheckpointError``) line naming the file.

**Pickling.** An ``OnnxPolicyAgent`` pickles as its path, the sha256 of the file's bytes and its
thread count; unpickling loads and checks the file again and refuses it if its bytes changed.

onnx and onnxruntime (the ``onnx`` extra) are imported when a model is loaded, torch only by
``export_policy``: ``import trinity_env.agents`` works without them.
"""

from __future__ import annotations

import io
from pathlib import Path
from typing import Any

import numpy as np

from trinity_env.agents.loaders import onnx_check
from trinity_env.agents.loaders.checkpoint import ACTIONS
from trinity_env.agents.loaders.onnx_check import BOOL, FLOAT, INT8, CheckedModel
from trinity_env.agents.loaders.onnx_file import OnnxPolicyError, import_onnx
from trinity_env.agents.outputs import check_outputs, probe_positions
from trinity_env.core import ArgumentError, GameState, PositionError
from trinity_env.core.files import cut, one_line
from trinity_env.core.limits import check_processes
from trinity_env.core.writes import write_bytes
from trinity_env.spec.agent import Agent, Observation
from trinity_env.spec.observation import OBSERVATION_SIZE


def check_threads(threads: object) -> int:
    """A session's ``threads``: a whole number from 1 to the one limits table's bound (``core.limits``: 4 a CPU of
    this machine, as every other thread and process count), else one ``ArgumentError`` line."""
    if type(threads) is not int or threads < 1:
        raise ArgumentError(f"onnx threads must be a whole number of at least 1, got {threads!r}")
    return check_processes("onnx threads", threads, ArgumentError)


_NUMPY = {INT8: np.int8, FLOAT: np.float32, BOOL: np.bool_}
_ORT_TYPES = {INT8: "tensor(int8)", FLOAT: "tensor(float)", BOOL: "tensor(bool)"}


def make_session(checked: CheckedModel, threads: int = 1) -> Any:
    """An onnxruntime session of a checked model (CPU, ``threads`` threads), its inputs and outputs checked again
    and one batch of each checked size run; else one ``OnnxPolicyError`` line."""
    _, onnxruntime = import_onnx()
    options = onnxruntime.SessionOptions()
    options.intra_op_num_threads = options.inter_op_num_threads = threads
    options.log_severity_level = 3
    options.add_session_config_entry("session.load_model_format", "ONNX")  # never the ORT format's reader
    options.add_session_config_entry("session.intra_op.allow_spinning", "0")
    try:
        session = onnxruntime.InferenceSession(checked.data, options, providers=["CPUExecutionProvider"])
    except Exception as err:
        raise OnnxPolicyError(f"ONNX file {checked.name}: onnxruntime refused it: {cut(one_line(err), 300)}") from None
    wanted_inputs = [checked.observation] + ([checked.mask] if checked.mask else [])
    wanted_outputs = [(checked.logits, FLOAT)] + ([(checked.value, FLOAT)] if checked.value else [])
    for kind, found, wanted in (
        ("inputs", session.get_inputs(), wanted_inputs),
        ("outputs", session.get_outputs(), wanted_outputs),
    ):
        have = sorted((arg.name, arg.type) for arg in found)
        if have != sorted((name, _ORT_TYPES[dtype]) for name, dtype in wanted):
            raise OnnxPolicyError(
                f"ONNX file {checked.name}: onnxruntime sees the {kind} {cut(str(have), 200)}, not those checked"
            )
    return session


class OnnxPolicyAgent(Agent):
    """Plays an ONNX policy (the module's contract): the legal action with the highest logit.

    ``act`` runs one position, ``act_batch`` and ``evaluate`` many in one call (in chunks of the
    checked batch sizes, ``onnx_check.BATCHES``).
    """

    stateless = True
    """The same observation always gets the same action: the tools may score it in batches."""

    def __init__(self, checked: CheckedModel, path: str | Path, threads: int = 1):
        check_threads(threads)
        self.path, self.threads, self.sha256 = str(path), threads, checked.sha256
        self.name = f"onnx:{path}"
        self._checked = checked
        self._session = make_session(checked, threads)
        observations, masks = probe_positions()
        for rows in (len(observations), 1):  # the probe batch, then one position alone: a run of each checked size
            outputs = self._run(observations[:rows], masks[:rows])
            check_outputs(f"ONNX file {checked.name}", *outputs, masks[:rows], True, OnnxPolicyError)

    @classmethod
    def from_file(cls, path: str | Path, threads: int = 1) -> OnnxPolicyAgent:
        """The agent of an ONNX file, checked before any session is built (``onnx_check.check_model``)."""
        check_threads(threads)
        return cls(onnx_check.check_model(path), path, threads)

    @property
    def has_value(self) -> bool:
        """Whether the model has a ``value`` output (``evaluate`` then returns values)."""
        return self._checked.value is not None

    def __reduce__(self) -> tuple[Any, tuple[str, str, int]]:
        return _unpickle, (self.path, self.sha256, self.threads)

    def _run(self, observations: np.ndarray, masks: np.ndarray) -> tuple[np.ndarray, np.ndarray | None]:
        """Raw logits [B, 256] and values [B] (or ``None``), run at the checked batch sizes only."""
        observations, masks = _batch(observations, OBSERVATION_SIZE, "observations"), _batch(masks, ACTIONS, "masks")
        if len(observations) != len(masks):
            raise ArgumentError(f"{len(observations)} observations but {len(masks)} masks")
        checked, rows = self._checked, len(observations)
        step = max(checked.batches)
        logits = np.empty((rows, ACTIONS), np.float32)
        values = np.empty(rows, np.float32) if checked.value else None
        start = 0
        while start < rows:
            size = 1 if rows - start == 1 and 1 in checked.batches else step
            part = np.arange(start, start + size).clip(max=rows - 1)  # the last chunk padded with its last row
            feed = {checked.observation[0]: observations[part].astype(_NUMPY[checked.observation[1]])}
            if checked.mask:
                feed[checked.mask[0]] = masks[part].astype(_NUMPY[checked.mask[1]])
            names = [checked.logits] + ([checked.value] if checked.value else [])
            try:
                out = self._session.run(names, feed)
            except Exception as err:
                raise OnnxPolicyError(f"ONNX file {checked.name} failed to run: {cut(one_line(err), 300)}") from None
            kept = min(size, rows - start)
            logits[start : start + kept] = _output(checked, out[0], (size, ACTIONS), "logits")[:kept]
            if values is not None:
                values[start : start + kept] = _output(checked, out[1], (size,), "value").reshape(size)[:kept]
            start += kept
        return logits, values

    def _masked(
        self, observations: np.ndarray, masks: np.ndarray, values_read: bool
    ) -> tuple[np.ndarray, np.ndarray | None]:
        """The outputs held to the contract where they are read (``trinity_env.agents.outputs``: the legal actions'
        logits, and the values when ``values_read``), illegal actions' logits then set to -1e9."""
        logits, values = self._run(observations, masks)
        check_outputs(
            f"ONNX file {self._checked.name}", logits, values if values_read else None, masks, True, OnnxPolicyError
        )
        logits[np.asarray(masks) == 0] = -1e9
        return logits, values

    def evaluate(self, observations: np.ndarray, masks: np.ndarray) -> tuple[np.ndarray, np.ndarray | None]:
        """The model's logits (float32 [B, 256], illegal actions at -1e9) and values (float32 [B], for the player
        to move, in [-1, 1]; ``None`` without a value output) for int8 observations [B, 339] and masks [B, 256]:
        what ``trinity accuracy`` scores. A legal action's logit or a value that breaks the contract (non-finite,
        a value outside [-1, 1]) is one ``OnnxPolicyError`` line naming the file."""
        return self._masked(observations, masks, True)

    def act_batch(self, observations: np.ndarray, masks: np.ndarray) -> np.ndarray:
        """The legal action with the highest logit (int64 [B]) for int8 observations [B, 339] and masks [B, 256]."""
        masks = _batch(masks, ACTIONS, "masks")
        if not masks.any(axis=1).all():
            raise PositionError("onnx was asked to act with no legal action (is it its turn?)")
        logits, _ = self._masked(observations, masks, False)
        return np.where(masks != 0, logits, -np.inf).argmax(axis=1).astype(np.int64)

    def act(self, observation: Observation, state: GameState | None = None) -> int:
        return int(
            self.act_batch(np.asarray(observation["observation"])[None], np.asarray(observation["action_mask"])[None])[
                0
            ]
        )


def _batch(array: Any, width: int, what: str) -> np.ndarray:
    array = np.asarray(array)
    if array.ndim != 2 or array.shape[1] != width or array.dtype.kind not in "biu":
        raise ArgumentError(f"{what} must be an integer array [B, {width}], got {array.dtype} {list(array.shape)}")
    return array.astype(np.int8, copy=False)


def _output(checked: CheckedModel, array: Any, shape: tuple[int, ...], what: str) -> np.ndarray:
    array = np.asarray(array)
    fits = array.shape == shape or (what == "value" and array.shape == (*shape, 1))
    if not fits or array.dtype != np.float32:
        raise OnnxPolicyError(
            f"ONNX file {checked.name}'s {what} output is {array.dtype} {list(array.shape)}, not float32 {list(shape)}"
        )
    return array  # its entries are held to the contract where they are read (``_masked``)


def _unpickle(path: str, sha256: str, threads: int) -> OnnxPolicyAgent:
    agent = OnnxPolicyAgent.from_file(path, threads)
    if agent.sha256 != sha256:
        raise OnnxPolicyError(f"ONNX file {path} changed since the agent was pickled (its sha256 differs)")
    return agent


def export_policy(
    module: Any, path: str | Path, *, dtype: str = "float32", action_mask: bool = False, opset: int = 17
) -> Path:
    """Export a torch module to an ONNX file of the module's contract; the path written (atomically).

    ``module.forward(observation)`` (or ``forward(observation, action_mask)`` with ``action_mask``) takes a batch
    of observations [B, 339] of ``dtype`` (``"int8"`` or ``"float32"``; a mask as int8 [B, 256]) and returns
    logits [B, 256], or ``(logits, value)`` with value [B] or [B, 1]. The batch dimension is symbolic.
    """
    import torch

    if dtype not in ("int8", "float32"):
        raise ArgumentError(f"dtype must be int8 or float32, got {dtype!r}")
    example = (torch.zeros(2, OBSERVATION_SIZE, dtype=getattr(torch, dtype)),)
    example += (torch.ones(2, ACTIONS, dtype=torch.int8),) if action_mask else ()
    module = module.eval()
    with torch.no_grad():
        result = module(*example)
    value = isinstance(result, tuple | list)
    if value and len(result) != 2:
        raise ArgumentError(f"the module returns {len(result)} tensors: expected logits or (logits, value)")
    inputs = ["observation"] + (["action_mask"] if action_mask else [])
    outputs = ["logits"] + (["value"] if value else [])
    buffer = io.BytesIO()
    torch.onnx.export(
        module,
        example,
        buffer,
        input_names=inputs,
        output_names=outputs,
        opset_version=opset,
        dynamic_axes={name: {0: "batch"} for name in inputs + outputs},
        dynamo=False,
    )
    write_bytes(path, buffer.getvalue())
    return Path(path)


__all__ = ["OnnxPolicyAgent", "OnnxPolicyError", "check_threads", "export_policy", "make_session"]
