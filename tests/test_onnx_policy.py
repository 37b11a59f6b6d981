"""ONNX policies: an exported torch policy plays exactly as the module, and every unsafe or malformed file is one
``OnnxPolicyError`` line before onnxruntime sees it, with bounded memory."""

from __future__ import annotations

import json
import os
import pickle
import random
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

onnx = pytest.importorskip("onnx")
pytest.importorskip("onnxruntime")
torch = pytest.importorskip("torch")

from onnx import TensorProto, helper, numpy_helper  # noqa: E402

from trinity_env.agents.loaders import onnx_check, onnx_file  # noqa: E402
from trinity_env.agents.loaders.checkpoint import CheckpointError  # noqa: E402
from trinity_env.agents.loaders.onnx_policy import OnnxPolicyAgent, OnnxPolicyError, export_policy  # noqa: E402
from trinity_env.evaluation.match import seat_swapped_points  # noqa: E402
from trinity_env.spec.agent import RandomAgent  # noqa: E402
from trinity_env.spec.config import make_config  # noqa: E402
from trinity_env.spec.observation import observation_dict  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]


class Policy(torch.nn.Module):
    """A small MLP policy: observation -> logits (and a tanh value); with ``mask``, illegal actions get +1e6."""

    def __init__(self, value: bool = True, mask: bool = False):
        super().__init__()
        torch.manual_seed(7)
        self.body, self.policy, self.head = torch.nn.Linear(339, 32), torch.nn.Linear(32, 256), torch.nn.Linear(32, 1)
        self.value, self.mask = value, mask

    def forward(self, observation, action_mask=None):
        hidden = torch.relu(self.body(observation.float() / 10))
        logits = self.policy(hidden)
        if self.mask:  # the model puts its highest scores on illegal actions: the agent must ignore them
            logits = logits + (1 - action_mask.float()) * 1e6
        return (logits, torch.tanh(self.head(hidden)).squeeze(-1)) if self.value else logits


def _positions(count: int, seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    """Observations and masks of the player to move, from random games of the default rules."""
    config, rng = make_config(), random.Random(seed)
    observations, masks = [], []
    while len(observations) < count:
        state = config.new_game(rng)
        while not state.is_over and len(observations) < count:
            view = observation_dict(state, state.to_move, config.open_hands)
            observations.append(view["observation"])
            masks.append(view["action_mask"])
            state = state.apply(rng.choice(state.legal_actions()))
    return np.stack(observations).astype(np.int8), np.stack(masks).astype(np.int8)


@pytest.fixture(scope="module")
def positions():
    return _positions(70)


def _torch_outputs(module, observations, masks, dtype):
    with torch.no_grad():
        inputs = (torch.from_numpy(observations.astype(dtype)),)
        out = module(*inputs, torch.from_numpy(masks)) if module.mask else module(*inputs)
    logits, values = out if isinstance(out, tuple) else (out, None)
    return logits.numpy(), None if values is None else values.numpy()


@pytest.mark.parametrize(
    ("dtype", "value", "mask"), [("int8", True, False), ("float32", False, False), ("float32", True, True)]
)
def test_an_exported_policy_plays_as_the_torch_module(tmp_path, positions, dtype, value, mask):
    module = Policy(value, mask)
    path = export_policy(module, tmp_path / "policy.onnx", dtype=dtype, action_mask=mask)
    agent = OnnxPolicyAgent.from_file(path)
    observations, masks = positions
    logits, values = _torch_outputs(module, observations, masks, getattr(np, dtype))
    legal = masks != 0
    expected = np.where(legal, logits, -np.inf).argmax(axis=1)
    assert agent.act_batch(observations, masks).tolist() == expected.tolist()
    assert legal[np.arange(len(expected)), agent.act_batch(observations, masks)].all()
    for k in (0, 33, 69):
        assert agent.act({"observation": observations[k], "action_mask": masks[k]}) == expected[k]
    got_logits, got_values = agent.evaluate(observations, masks)
    assert got_logits.dtype == np.float32 and got_logits.shape == (70, 256)
    np.testing.assert_allclose(got_logits[legal], logits[legal], rtol=1e-4, atol=1e-4)
    assert (got_logits[~legal] == -1e9).all()
    assert agent.has_value is value and agent.name == f"onnx:{path}"
    if value:
        assert got_values.dtype == np.float32 and got_values.shape == (70,)
        np.testing.assert_allclose(got_values, values, rtol=1e-4, atol=1e-5)
    else:
        assert got_values is None


def test_it_plays_whole_games_against_random(tmp_path):
    agent = OnnxPolicyAgent.from_file(export_policy(Policy(), tmp_path / "policy.onnx"))
    points = seat_swapped_points(agent, RandomAgent(), make_config(), range(4), lambda k: 100 + k)
    assert 0 <= points <= 4  # every move was legal: GameState.apply refuses any other


def test_it_pickles_as_its_path_and_hash_and_refuses_a_changed_file(tmp_path):
    path = export_policy(Policy(), tmp_path / "policy.onnx")
    agent = OnnxPolicyAgent.from_file(path)
    blob = pickle.dumps(agent)
    assert len(blob) < 1000  # the path, the hash and the threads: no weights, no session
    export_policy(Policy(value=False), path)  # the file changes under the pickled agent
    with pytest.raises(OnnxPolicyError, match="changed since the agent was pickled"):
        pickle.loads(blob)


# ------------------------------------------------------------------------------ handmade models


def _model(nodes, inputs=None, outputs=None, initializers=(), opset=17):
    inputs = inputs or [helper.make_tensor_value_info("observation", TensorProto.FLOAT, ["batch", 339])]
    outputs = outputs or [helper.make_tensor_value_info("logits", TensorProto.FLOAT, ["batch", 256])]
    graph = helper.make_graph(nodes, "policy", inputs, outputs, initializer=list(initializers))
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)])


def _weights(name="w", shape=(339, 256)):
    return numpy_helper.from_array(np.random.default_rng(0).standard_normal(shape).astype(np.float32), name)


def _linear(source="observation", out="logits"):
    return helper.make_node("MatMul", [source, "w"], [out])


def _write(tmp_path, model, name="model.onnx") -> Path:
    path = tmp_path / name
    path.write_bytes(model.SerializeToString())
    return path


def test_a_single_input_with_other_names_is_taken_by_position_only_if_it_fits(tmp_path):
    x = [helper.make_tensor_value_info("x", TensorProto.INT8, [None, 339])]
    y = [helper.make_tensor_value_info("y", TensorProto.FLOAT, [None, 256])]
    nodes = [helper.make_node("Cast", ["x"], ["xf"], to=TensorProto.FLOAT), _linear("xf", "y")]
    agent = OnnxPolicyAgent.from_file(_write(tmp_path, _model(nodes, x, y, [_weights()])))
    observations, masks = _positions(3)
    expected = np.where(masks != 0, observations.astype(np.float32) @ numpy_helper.to_array(_weights()), -np.inf)
    assert agent.act_batch(observations, masks).tolist() == expected.argmax(axis=1).tolist() and not agent.has_value
    narrow = [helper.make_tensor_value_info("x", TensorProto.FLOAT, [None, 100])]
    with pytest.raises(OnnxPolicyError, match=r"input 'x' is float32 \[batch, 100\].*expected one input named obs"):
        OnnxPolicyAgent.from_file(
            _write(tmp_path, _model([_linear("x", "y")], narrow, y, [_weights(shape=(100, 256))]))
        )


def test_a_model_of_fixed_batch_runs_every_batch_in_chunks_of_its_size(tmp_path):
    fixed = [helper.make_tensor_value_info("observation", TensorProto.FLOAT, [1, 339])]
    agent = OnnxPolicyAgent.from_file(_write(tmp_path, _model([_linear()], fixed, None, [_weights()])))
    observations, masks = _positions(5)
    expected = np.where(masks != 0, observations @ numpy_helper.to_array(_weights()), -np.inf).argmax(axis=1)
    assert agent.act_batch(observations, masks).tolist() == expected.tolist()


def _bad_models():
    """(name, model or bytes, the refusal's words): each a way a file is malformed or unsafe."""
    obs = helper.make_tensor_value_info("observation", TensorProto.FLOAT, ["batch", 339])
    mask = helper.make_tensor_value_info("mask", TensorProto.INT8, ["batch", 256])
    shape = numpy_helper.from_array(np.array([10**12], np.int64), "shape")
    huge = TensorProto(name="w", data_type=TensorProto.FLOAT, dims=[10**6, 10**6], raw_data=b"")
    short = TensorProto(name="w", data_type=TensorProto.FLOAT, dims=[339, 256], raw_data=b"\0" * 12)
    external = _weights()
    external.ClearField("raw_data")
    external.data_location = TensorProto.EXTERNAL
    external.external_data.add(key="location", value="weights.bin")
    custom = helper.make_node("Evil", ["observation"], ["logits"], domain="com.example")
    expand = numpy_helper.from_array(np.array([10**6, 1, 339], np.int64), "shape")
    sum_first = numpy_helper.from_array(np.array([0], np.int64), "axes")
    zeros = helper.make_tensor("v", TensorProto.FLOAT, [1], [0.0])
    loop_body = helper.make_graph([], "body", [], [])
    return [
        (
            "wrong input shape",
            _model(
                [_linear()],
                [helper.make_tensor_value_info("observation", TensorProto.FLOAT, ["batch", 100])],
                None,
                [_weights(shape=(100, 256))],
            ),
            r"\[batch, 100\]: expected one input named obs",
        ),
        ("wrong input name", _model([_linear()], [obs, mask], None, [_weights()]), "has the inputs"),
        (
            "missing logits",
            _model(
                [_linear(out="value")],
                None,
                [helper.make_tensor_value_info("value", TensorProto.FLOAT, ["batch", 256])],
                [_weights()],
            ),
            "expected outputs named logits",
        ),
        ("huge initializer", _model([_linear()], None, None, [huge]), "declares 1000000000000 elements"),
        ("bytes disagree", _model([_linear()], None, None, [short]), "holds 12 bytes of data"),
        (
            "ConstantOfShape",
            _model(
                [
                    helper.make_node("ConstantOfShape", ["shape"], ["big"], value=zeros),
                    helper.make_node("ReduceSum", ["big"], ["total"], keepdims=0),
                    _linear("observation", "out"),
                    helper.make_node("Add", ["out", "total"], ["logits"]),
                ],
                None,
                None,
                [shape, _weights()],
            ),
            r"would be \[1000000000000\]",
        ),
        (
            "Expand",
            _model(
                [
                    helper.make_node("Expand", ["observation", "shape"], ["big"]),
                    helper.make_node("ReduceSum", ["big", "axes"], ["back"], keepdims=0),
                    _linear("back"),
                ],
                None,
                None,
                [expand, sum_first, _weights()],
            ),
            r"would be \[1000000, 8|would be \[1000000, 1,",
        ),
        ("external data", _model([_linear()], None, None, [external]), "external data"),
        ("custom domain", _model([custom]), "operator domain 'com.example'"),
        ("control flow", _model([helper.make_node("Loop", ["", ""], [], body=loop_body)]), "'Loop' is not one"),
        (
            "operator outside the list",
            _model([helper.make_node("NonZero", ["observation"], ["logits"])]),
            "'NonZero' is not one a policy may use",
        ),
        (
            "data-dependent shape",
            _model(
                [
                    helper.make_node("ReduceMax", ["observation"], ["top"], keepdims=0),
                    helper.make_node("Cast", ["top"], ["rows"], to=TensorProto.INT64),
                    helper.make_node("Unsqueeze", ["rows", "axes"], ["row"]),
                    helper.make_node("Concat", ["row", "width"], ["shape"], axis=0),
                    _linear("observation", "out"),
                    helper.make_node("Reshape", ["out", "shape"], ["logits"]),
                ],
                None,
                None,
                [sum_first, _weights(), numpy_helper.from_array(np.array([-1], np.int64), "width")],
            ),
            "'logits' has a shape that depends on its data",
        ),
        ("random bytes", random.Random(0).randbytes(4000), "not a valid ONNX model"),
        ("empty", b"", "is empty"),
    ]


BAD = _bad_models()


@pytest.mark.parametrize("case", range(len(BAD)), ids=[c[0] for c in BAD])
def test_a_malformed_or_unsafe_model_is_one_line(tmp_path, case):
    _, model, words = BAD[case]
    path = tmp_path / "bad.onnx"
    path.write_bytes(model if isinstance(model, bytes) else model.SerializeToString())
    with pytest.raises(OnnxPolicyError) as caught:
        OnnxPolicyAgent.from_file(path)
    message = str(caught.value)
    assert "\n" not in message and str(path) in message and isinstance(caught.value, CheckpointError)
    assert __import__("re").search(words, message), message


def test_a_truncated_file_a_pipe_a_folder_and_a_file_over_the_cap_are_one_line(tmp_path, monkeypatch):
    whole = export_policy(Policy(), tmp_path / "policy.onnx").read_bytes()
    cut = tmp_path / "cut.onnx"
    cut.write_bytes(whole[: len(whole) // 2])
    with pytest.raises(OnnxPolicyError, match="not a valid ONNX model"):
        OnnxPolicyAgent.from_file(cut)
    pipe = tmp_path / "pipe.onnx"
    os.mkfifo(pipe)  # nothing ever writes: opening it to read would block for ever
    with pytest.raises(OnnxPolicyError, match="is a named pipe, not a regular file: refused without reading"):
        OnnxPolicyAgent.from_file(pipe)
    with pytest.raises(OnnxPolicyError, match="is a folder"):
        OnnxPolicyAgent.from_file(tmp_path)
    with pytest.raises(OnnxPolicyError, match="No such file"):
        OnnxPolicyAgent.from_file(tmp_path / "missing.onnx")
    monkeypatch.setattr(onnx_file, "MAX_ONNX_BYTES", len(whole) - 1)
    with pytest.raises(OnnxPolicyError, match=f"too large \\({len(whole)} bytes"):
        OnnxPolicyAgent.from_file(tmp_path / "policy.onnx")


def test_a_graph_of_too_many_multiply_adds_is_refused_by_its_shapes(tmp_path):
    """One 339 x 339 weight used by 2400 chained products: 2^28 multiply-adds a position, from a 0.5 MB file."""
    chain = [
        helper.make_node("MatMul", ["observation" if k == 0 else f"h{k}", "w"], [f"h{k + 1}"]) for k in range(2400)
    ]
    ends = [numpy_helper.from_array(np.array([v], np.int64), n) for n, v in (("starts", 0), ("ends", 256), ("axes", 1))]
    slice_ = helper.make_node("Slice", ["h2400", "starts", "ends", "axes"], ["logits"])
    model = _model([*chain, slice_], None, None, [_weights(shape=(339, 339)), *ends])
    with pytest.raises(OnnxPolicyError, match=f"multiply-adds a position, over {onnx_check.MAX_OPERATIONS}"):
        OnnxPolicyAgent.from_file(_write(tmp_path, model))


def test_a_model_whose_shape_inference_expands_is_refused_in_its_child_process(tmp_path, monkeypatch):
    """Range feeding Cast: ONNX's data propagation builds every value (10^9 of them, ~140 bytes each)."""
    if not sys.platform.startswith("linux"):
        pytest.skip("the child's memory limit is RLIMIT_AS, enforced on Linux")
    scalars = [numpy_helper.from_array(np.array(v, np.int64), n) for n, v in (("a", 0), ("b", 10**9), ("c", 1))]
    nodes = [
        helper.make_node("Range", ["a", "b", "c"], ["big"]),
        helper.make_node("Cast", ["big"], ["f"], to=1),
        helper.make_node("ReduceSum", ["f"], ["t"], keepdims=0),
        _linear("observation", "out"),
        helper.make_node("Add", ["out", "t"], ["logits"]),
    ]
    monkeypatch.setattr(onnx_check, "MAX_INFERENCE_BYTES", 64 << 20)
    with pytest.raises(OnnxPolicyError, match="shape inference needs over 64 MiB"):
        OnnxPolicyAgent.from_file(_write(tmp_path, _model(nodes, None, None, [*scalars, _weights()])))


def test_a_model_that_gives_nan_is_refused_at_load(tmp_path):
    nodes = [
        _linear("observation", "out"),
        helper.make_node("Sub", ["out", "out"], ["zero"]),
        helper.make_node("Div", ["zero", "zero"], ["logits"]),
    ]
    with pytest.raises(
        OnnxPolicyError,
        match=r"^ONNX file .*model\.onnx gave a legal action the logit nan: a legal action.s logit must be finite$",
    ):
        OnnxPolicyAgent.from_file(_write(tmp_path, _model(nodes, None, None, [_weights()])))


def test_without_the_onnx_extra_the_error_names_it(tmp_path, monkeypatch):
    monkeypatch.setitem(sys.modules, "onnxruntime", None)
    with pytest.raises(OnnxPolicyError, match=r"need the onnx extra \(onnxruntime is not installed\).*\[onnx\]"):
        OnnxPolicyAgent.from_file(tmp_path / "any.onnx")
    code = "import sys; sys.modules['onnx'] = sys.modules['onnxruntime'] = None; import trinity_env.agents; print('ok')"
    assert subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT).stdout == "ok\n"


_BOMBS = r"""
import json, resource, sys
import numpy as np
from onnx import TensorProto, helper, numpy_helper
from trinity_env.agents.loaders.onnx_policy import OnnxPolicyAgent, OnnxPolicyError

def ld(field, data):
    size, varint = len(data), b""
    while True:
        varint += bytes([(size & 0x7F) | (0x80 if size >> 7 else 0)])
        size >>= 7
        if not size:
            return bytes([(field << 3) | 2]) + varint + data

obs = helper.make_tensor_value_info("observation", TensorProto.FLOAT, ["batch", 339])
out = helper.make_tensor_value_info("logits", TensorProto.FLOAT, ["batch", 256])
def model(nodes, inits):
    graph = helper.make_graph(nodes, "g", [obs], [out], initializer=inits)
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)]).SerializeToString()
bombs = {
    "fields": ld(7, b"\x0a\x00" * 500_001),  # 1 MB of empty nodes: 75 MB once parsed, refused before
    "packed": ld(7, ld(5, ld(7, b"\x01" * 32_000_001))),  # 32 MB of int64_data: 256 MB parsed
    "declared": model([helper.make_node("MatMul", ["observation", "w"], ["logits"])],
                      [TensorProto(name="w", data_type=TensorProto.FLOAT, dims=[10**6, 10**6], raw_data=b"")]),
}
before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
report = {}
for name, data in bombs.items():
    path = sys.argv[1] + "/" + name + ".onnx"
    open(path, "wb").write(data)
    del data
    try:
        OnnxPolicyAgent.from_file(path)
        report[name] = "loaded"
    except OnnxPolicyError as err:
        report[name] = str(err)
bombs.clear()
report["grown_mib"] = (resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - before) / 1024
print(json.dumps(report))
"""


def test_bombs_are_refused_with_bounded_memory(tmp_path):
    """In a fresh process, at the real limits: what each file would build (75 MB to 4 TB) is refused before it is
    built, so the peak memory grows by less than the files themselves hold and far less than parsing would take."""
    done = subprocess.run([sys.executable, "-c", _BOMBS, str(tmp_path)], capture_output=True, text=True, cwd=ROOT)
    assert done.returncode == 0, done.stderr[-2000:]
    report = json.loads(done.stdout)
    assert "over 500000 protobuf fields" in report["fields"]
    assert "over 32000000 packed integers" in report["packed"]
    assert "declares 1000000000000 elements" in report["declared"]
    assert report["grown_mib"] < 120, report


# ------------------------------------------------------------------------------ the output contract, at load


def _masked_model(extra):
    """observation @ w plus ``extra`` nodes on the float32 ``action_mask`` that make ``bonus``: illegal actions'
    logits are whatever ``bonus`` holds there, legal ones finite."""
    inputs = [
        helper.make_tensor_value_info("observation", TensorProto.FLOAT, ["batch", 339]),
        helper.make_tensor_value_info("action_mask", TensorProto.FLOAT, ["batch", 256]),
    ]
    nodes = [_linear("observation", "base"), *extra, helper.make_node("Add", ["base", "bonus"], ["logits"])]
    return _model(nodes, inputs, None, [_weights()])


@pytest.mark.parametrize(
    ("held", "extra"),
    [
        (
            "NaN",
            [helper.make_node("Log", ["action_mask"], ["log"]), helper.make_node("Sub", ["log", "log"], ["bonus"])],
        ),
        ("+inf", [helper.make_node("Reciprocal", ["action_mask"], ["bonus"])]),
    ],
)
def test_illegal_actions_logits_are_ignored_whatever_they_hold(tmp_path, held, extra):
    """The contract: only legal actions' logits are read. A model whose illegal logits are NaN (log 0 - log 0) or
    +inf (1 / 0) loads and plays whole games (it once stopped ``trinity arena`` mid-game with exit 2)."""
    agent = OnnxPolicyAgent.from_file(_write(tmp_path, _masked_model(extra)))
    observations, masks = _positions(20)
    with np.errstate(divide="ignore", invalid="ignore"):
        raw, _ = agent._run(observations, masks)
    assert (np.isnan(raw) if held == "NaN" else np.isposinf(raw))[masks == 0].all()
    logits, _ = agent.evaluate(observations, masks)
    assert np.isfinite(logits).all() and (logits[masks == 0] == -1e9).all()
    points = seat_swapped_points(agent, RandomAgent(), make_config(), range(2), lambda k: 100 + k)
    assert 0 <= points <= 2


def test_a_value_out_of_range_is_refused_at_load(tmp_path):
    """A value head giving 2.0 once loaded and failed only at ``trinity benchmark``'s accuracy step, after 320
    rating games; it is refused at load, on the probe batch, in one line naming the file."""
    outputs = [
        helper.make_tensor_value_info("logits", TensorProto.FLOAT, ["batch", 256]),
        helper.make_tensor_value_info("value", TensorProto.FLOAT, ["batch", 1]),
    ]
    two = numpy_helper.from_array(np.full((256, 1), 2 / 256, np.float32), "two")
    nodes = [
        _linear(),
        helper.make_node("Sub", ["logits", "logits"], ["zeros"]),  # [batch, 256] of zeros
        helper.make_node("Exp", ["zeros"], ["ones"]),  # of ones
        helper.make_node("MatMul", ["ones", "two"], ["value"]),  # [batch, 1] of 2.0
    ]
    path = _write(tmp_path, _model(nodes, None, outputs, [_weights(), two]))
    with pytest.raises(
        OnnxPolicyError, match=r"^ONNX file .*model\.onnx gave the value 2\.0: a value must be in \[-1, 1\]$"
    ):
        OnnxPolicyAgent.from_file(path)


def test_a_legal_logit_that_turns_bad_in_play_is_one_line_naming_the_file(tmp_path):
    """The contract holds in play as at load: a run that gives a legal action NaN (a position the probe did not
    see) is one ``OnnxPolicyError`` line naming the file, never a move off the board."""
    path = export_policy(Policy(), tmp_path / "policy.onnx")
    agent = OnnxPolicyAgent.from_file(path)
    session = agent._session

    class Turned:
        def run(self, names, feed):
            logits, *rest = session.run(names, feed)
            return [np.full_like(logits, np.nan), *rest]

    agent._session = Turned()
    observations, masks = _positions(3)
    with pytest.raises(OnnxPolicyError, match=rf"^ONNX file {path} gave a legal action the logit nan"):
        agent.act({"observation": observations[0], "action_mask": masks[0]})


def test_a_fixed_batch_is_costed_per_run_at_that_batch(tmp_path):
    """A graph within the per-position bound but fixed at 4,096 rows once passed, then ran 4,096 rows a move (30 s and
    976 MB): a run is the unit a move spends, so it is costed whole and refused; the same graph with a symbolic
    batch, or fixed at 64 rows, costs what a symbolic chunk may and loads."""
    identity = numpy_helper.from_array(np.eye(339, dtype=np.float32), "eye")
    nodes = [helper.make_node("MatMul", [f"x{k}" if k else "observation", "eye"], [f"x{k + 1}"]) for k in range(64)]
    nodes.append(helper.make_node("MatMul", ["x64", "w"], ["logits"]))

    def model(batch):
        inputs = [helper.make_tensor_value_info("observation", TensorProto.FLOAT, [batch, 339])]
        outputs = [helper.make_tensor_value_info("logits", TensorProto.FLOAT, [batch, 256])]
        return _model(nodes, inputs, outputs, [_weights(), identity])

    per_run = onnx_check.MAX_RUN_OPERATIONS
    with pytest.raises(OnnxPolicyError, match=rf"multiply-adds a run at its fixed batch of 4,096 .*over {per_run:,}"):
        onnx_check.check_model(_write(tmp_path, model(4096)))
    assert onnx_check.check_model(_write(tmp_path, model("batch"))).batches == onnx_check.BATCHES
    assert onnx_check.check_model(_write(tmp_path, model(64))).batches == (64,)


def test_onnx_threads_come_from_the_one_limits_table(tmp_path, monkeypatch):
    """``onnx:FILE,threads=64`` was accepted on 2 CPUs (one arena ran 598 threads): the bound is the limits table's
    4 a CPU, at parse time and in ``from_file`` alike."""
    from trinity_env.agents.spec import AgentSpec

    path = export_policy(Policy(), tmp_path / "policy.onnx")
    monkeypatch.setattr("os.cpu_count", lambda: 2)
    words = r"onnx threads: 64 is more than this machine can use \(at most 8: 4 per CPU, 2 CPUs\)"
    with pytest.raises(ValueError, match=words):
        AgentSpec.parse(f"onnx:{path},threads=64")
    with pytest.raises(ValueError, match=words):
        OnnxPolicyAgent.from_file(path, threads=64)
    assert AgentSpec.parse(f"onnx:{path},threads=8").build().threads == 8
