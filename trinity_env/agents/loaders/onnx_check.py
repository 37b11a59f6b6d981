"""Checking an ONNX policy file by what loading it would allocate and build, before onnxruntime sees it.

An ONNX file is a protobuf: parsing one runs no code, but what it describes is built by whoever
reads it. A 4 MB file of empty nodes parses into 300 MB of objects; a tensor can declare 10^12
elements and hold none; an ``ExternalData`` entry names another file to read; a
``ConstantOfShape`` of ``[10^12]`` costs nothing in the file and 4 TB once onnxruntime folds it
at session creation; ``Range`` feeding ``Cast`` makes ONNX's own shape inference expand every
value. So a file is read here in steps, each bounding the next (``check_model``):

1. **The bytes** (``onnx_file``). A regular file only (``core.paths.open_regular``: never a named pipe or a
   device), at most ``onnx_file.MAX_ONNX_BYTES``.
2. **The wire** (``onnx_file``). Before protobuf parses it, the encoding is walked with ONNX's schema: at most
   ``MAX_FIELDS`` fields (every message and string costs an object) and ``MAX_PACKED_VALUES``
   packed integers (8 bytes each once parsed), nesting at most ``MAX_DEPTH``.
3. **The graph.** Parsed (``onnx.load_from_string``: external data is never read), unknown fields
   dropped, then refused on: local functions, training info, sparse tensors, subgraphs (``If``,
   ``Loop``, ``Scan``: a policy is straight-line), an operator outside ``OPERATORS`` (the standard
   domain only), more than ``MAX_NODES`` nodes, and any tensor (initializer or attribute) with
   external data, an unsupported type, a declared size over ``MAX_TENSOR_BYTES`` or data whose
   length disagrees with its declared shape.
4. **The shapes.** ONNX's checker and strict shape inference with data propagation run on a copy
   without the large weights, the batch fixed to each size in ``BATCHES`` (or the model's own
   fixed batch), in a child process limited to ``MAX_INFERENCE_BYTES`` of memory and
   ``INFERENCE_SECONDS``. Every node output must then have a known shape of rank at most
   ``MAX_RANK``, each at most ``MAX_TENSOR_BYTES``, all together at most ``MAX_TOTAL_BYTES``, the
   multiply-adds of a position at most ``MAX_OPERATIONS`` and of a run (a fixed batch's whole batch)
   at most ``MAX_RUN_OPERATIONS``: what onnxruntime would allocate folding constants at session
   creation and spend running a batch.
5. **The contract** (``trinity_env.agents.loaders.onnx_policy``): the names, types and shapes of the inputs
   and outputs.

Only then does ``onnx_policy`` build an ``onnxruntime.InferenceSession``, from ``CheckedModel.data``
(the bytes re-serialized from what was checked) and run its batches at the sizes checked here
only. Every refusal is one ``OnnxPolicyError`` line (a ``CheckpointError``) naming the file.
onnx is imported inside the functions: ``import trinity_env.agents`` works without it.
"""

from __future__ import annotations

import hashlib
import json
import math
import os
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from trinity_env.agents.loaders.checkpoint import ACTIONS
from trinity_env.agents.loaders.onnx_file import (
    OnnxPolicyError,
    import_onnx,
    read_model_bytes,
    scan_wire,
)
from trinity_env.core.files import cut, one_line
from trinity_env.spec.observation import OBSERVATION_SIZE

MAX_NODES = 10_000
"""Most nodes in a graph."""
MAX_RANK = 8
"""Most dimensions of any tensor."""
MAX_TENSOR_BYTES = 256 << 20
"""Largest tensor: an initializer, a constant, or any node's output at a checked batch size."""
MAX_TOTAL_BYTES = 1 << 30
"""All node outputs together at the largest checked batch: a bound on what a run (or constant folding) allocates."""
MAX_OPERATIONS = 1 << 28
"""Most multiply-adds (roughly: a matrix product counts rows x columns x depth, other operators their sizes) per
position. The largest MLP a checkpoint may hold takes about 2^24."""
MAX_INFERENCE_BYTES = 1 << 30
"""Memory the shape inference's child process may take beyond the interpreter's own (Linux: ``RLIMIT_AS``)."""
INFERENCE_SECONDS = 60
"""Time the shape inference's child process may take."""
BATCHES = (1, 64)
"""The batch sizes checked and run for a model whose batch dimension is symbolic: ``act`` runs one row, larger
batches run in chunks of 64 (the last one padded), so onnxruntime never runs a size that was not checked."""
MAX_RUN_OPERATIONS = MAX_OPERATIONS * max(BATCHES)
"""Most multiply-adds of one run, the unit a move spends: what a symbolic batch's largest chunk may take. A model of
fixed batch runs its whole batch for every move (one position padded to all its rows), so its run is costed whole
at that batch: a graph within ``MAX_OPERATIONS`` a position but fixed at 4,096 rows is refused."""

INT8, FLOAT, BOOL = 3, 1, 9  # onnx.TensorProto's data types used by the contract
ITEMSIZE = {1: 4, 2: 1, 3: 1, 4: 2, 5: 2, 6: 4, 7: 8, 9: 1, 10: 2, 11: 8, 12: 4, 13: 8, 16: 2}
"""Bytes per element of the tensor types a model may hold: float, uint8, int8, uint16, int16, int32, int64, bool,
float16, double, uint32, uint64, bfloat16 (strings, complex, 8- and 4-bit types are refused)."""
_DATA_FIELD = {1: "float_data", 11: "double_data", 7: "int64_data", 12: "uint64_data", 13: "uint64_data"}
_DATA_FIELDS = ("float_data", "int32_data", "string_data", "int64_data", "double_data", "uint64_data")
STANDARD_DOMAINS = ("", "ai.onnx")

_ELEMENTWISE = """Abs Neg Exp Log Sqrt Reciprocal Floor Ceil Round Sign Sin Cos Tan Asin Acos Atan Sinh Cosh Asinh Acosh
Atanh Erf Not IsNaN IsInf Identity Relu LeakyRelu PRelu Elu Selu Celu Gelu Sigmoid HardSigmoid HardSwish Tanh Softplus
Softsign Mish ThresholdedRelu Clip Cast CastLike Dropout Add Sub Mul Div Pow Mod Max Min Mean Sum And Or Xor Equal
Greater GreaterOrEqual Less LessOrEqual Where"""
_STRUCTURE = """Reshape Flatten Squeeze Unsqueeze Transpose Concat Split Slice Gather GatherElements GatherND Shape Size
Expand Tile Pad ConstantOfShape Constant Range OneHot Trilu EyeLike DepthToSpace SpaceToDepth"""
_REDUCTIONS = """ReduceSum ReduceMean ReduceMax ReduceMin ReduceProd ReduceL1 ReduceL2 ReduceLogSumExp ReduceLogSum
ReduceSumSquare ArgMax ArgMin CumSum TopK Softmax LogSoftmax Hardmax BatchNormalization LayerNormalization
InstanceNormalization GroupNormalization LpNormalization RMSNormalization"""
_PRODUCTS = "MatMul Gemm Einsum Conv ConvTranspose MaxPool AveragePool GlobalAveragePool GlobalMaxPool"
OPERATORS = frozenset((_ELEMENTWISE + " " + _STRUCTURE + " " + _REDUCTIONS + " " + _PRODUCTS).split())
"""The operators a policy may use: those whose cost ``MAX_OPERATIONS`` bounds from their shapes (no control flow,
no operator whose run time or output depends on its data beyond its shapes)."""


@dataclass(frozen=True)
class CheckedModel:
    """A model that passed every check: what ``onnx_policy`` hands to onnxruntime and how to feed it."""

    name: str
    data: bytes
    sha256: str
    observation: tuple[str, int]
    """The observation input's name and data type (``INT8`` or ``FLOAT``)."""
    mask: tuple[str, int] | None
    """The ``action_mask`` input's name and type (``INT8``, ``BOOL`` or ``FLOAT``), if the model takes one."""
    logits: str
    value: str | None
    batches: tuple[int, ...]
    """The batch sizes checked (``BATCHES``, or the model's own fixed batch): the only ones run."""


# ------------------------------------------------------------------------------ the graph


def _tensor_problem(tensor: Any) -> str | None:
    """Why an initializer or attribute tensor cannot be loaded, else ``None``."""
    if tensor.data_location == 1 or len(tensor.external_data):
        return "has external data (it would read another file)"
    if tensor.HasField("segment"):
        return "is a segment of a tensor"
    if tensor.data_type not in ITEMSIZE:
        return f"has data type {tensor.data_type}, not a numeric type a policy may use"
    if len(tensor.dims) > MAX_RANK or any(d < 0 for d in tensor.dims):
        return f"declares the shape {cut(str(list(tensor.dims)))}"
    count = math.prod(tensor.dims)
    size = count * ITEMSIZE[tensor.data_type]
    if size > MAX_TENSOR_BYTES:
        return f"declares {count} elements ({size} bytes, over {MAX_TENSOR_BYTES >> 20} MiB)"
    typed = _DATA_FIELD.get(tensor.data_type, "int32_data")
    held = {field: len(getattr(tensor, field)) for field in _DATA_FIELDS if len(getattr(tensor, field))}
    if tensor.HasField("raw_data"):
        if held:
            return "holds its data twice (raw_data and typed fields)"
        if len(tensor.raw_data) != size:
            return f"holds {len(tensor.raw_data)} bytes of data, its shape {list(tensor.dims)} needs {size}"
    elif set(held) - {typed} or held.get(typed, 0) != count:
        return f"holds {sum(held.values())} values, its shape {list(tensor.dims)} needs {count}"
    return None


def check_graph(name: str, model: Any) -> None:
    """Refuse what no policy needs and what loading would read or build beyond the file (the module, step 3)."""
    if not model.HasField("graph"):
        raise OnnxPolicyError(f"ONNX file {name} holds no graph")
    for field, what in (("functions", "local functions"), ("training_info", "training info")):
        if len(getattr(model, field)):
            raise OnnxPolicyError(f"ONNX file {name} holds {what}: a policy is one graph of standard operators")
    graph = model.graph
    if len(graph.sparse_initializer):
        raise OnnxPolicyError(f"ONNX file {name} holds sparse initializers: not supported")
    if len(graph.node) > MAX_NODES:
        raise OnnxPolicyError(f"ONNX file {name} has {len(graph.node)} nodes, over {MAX_NODES}")
    for tensor in graph.initializer:
        problem = _tensor_problem(tensor)
        if problem is not None:
            raise OnnxPolicyError(f"ONNX file {name}: initializer {cut(tensor.name)!r} {problem}: refused")
    for k, node in enumerate(graph.node):
        where = f"node {k} ({cut(node.op_type)}{' ' + repr(cut(node.name)) if node.name else ''})"
        if node.domain not in STANDARD_DOMAINS:
            raise OnnxPolicyError(
                f"ONNX file {name}: {where} is in the operator domain {cut(node.domain)!r}: only "
                "the standard domain is run (no custom operators)"
            )
        if node.op_type not in OPERATORS:
            raise OnnxPolicyError(
                f"ONNX file {name}: {where}: the operator {cut(node.op_type)!r} is not one a policy "
                "may use (trinity_env.agents.loaders.onnx_check.OPERATORS lists them)"
            )
        for attribute in node.attribute:
            if attribute.HasField("g") or len(attribute.graphs):
                raise OnnxPolicyError(f"ONNX file {name}: {where} holds a subgraph: control flow is not supported")
            if attribute.HasField("sparse_tensor") or len(attribute.sparse_tensors):
                raise OnnxPolicyError(f"ONNX file {name}: {where} holds a sparse tensor: not supported")
            for tensor in [attribute.t] if attribute.HasField("t") else list(attribute.tensors):
                problem = _tensor_problem(tensor)
                if problem is not None:
                    raise OnnxPolicyError(f"ONNX file {name}: {where}'s tensor {problem}: refused")


# ------------------------------------------------------------------------------ the shapes

_CHILD = r"""
import json, sys
header = json.loads(sys.stdin.buffer.readline())
try:
    import resource
    resource.setrlimit(resource.RLIMIT_AS, (header["limit"], header["limit"]))
except (ImportError, AttributeError, ValueError, OSError):
    pass
import onnx
from onnx import checker, shape_inference

def shapes_at(model, batch):
    for value in model.graph.input:
        if value.name in header["inputs"]:
            value.type.tensor_type.shape.dim[0].dim_value = batch
    inferred = shape_inference.infer_shapes(model, check_type=True, strict_mode=True, data_prop=True)
    shapes = {}
    for value in [*inferred.graph.input, *inferred.graph.value_info, *inferred.graph.output]:
        if value.type.WhichOneof("value") != "tensor_type" or not value.type.tensor_type.HasField("shape"):
            shapes[value.name] = None
            continue
        dims = [d.dim_value if d.HasField("dim_value") else -1 for d in value.type.tensor_type.shape.dim]
        if len(dims) > header["rank"]:
            raise ValueError(f"{value.name[:60]!r} has {len(dims)} dimensions, over {header['rank']}")
        shapes[value.name] = [value.type.tensor_type.elem_type, dims]
    return shapes

try:
    model = onnx.load_from_string(sys.stdin.buffer.read())
    checker.check_model(model)
    for value in model.graph.output:  # every shape inferred, none taken from the file
        value.type.tensor_type.ClearField("shape")
    sys.stdout.write(json.dumps({str(b): shapes_at(model, b) for b in header["batches"]}))
except MemoryError:
    sys.exit(3)
except Exception as err:
    sys.stderr.write(" ".join(str(err).split())[:300] or type(err).__name__)
    sys.exit(2)
"""
_BASE_BYTES = 512 << 20  # the child's interpreter, numpy and onnx, before the inference's own allocations


def light_copy(model: Any) -> Any:
    """The model without its large initializers (each becomes an input of its type and shape) and without its
    declared intermediate shapes: what shape inference needs, and no more."""
    onnx, _ = import_onnx()
    light = onnx.ModelProto(ir_version=model.ir_version, opset_import=model.opset_import)
    graph, source = light.graph, model.graph
    graph.name = source.name
    graph.node.extend(source.node)
    stripped = {t.name: t for t in source.initializer if math.prod(t.dims) > 4096}
    graph.input.extend(value for value in source.input if value.name not in stripped)
    graph.input.extend(onnx.helper.make_tensor_value_info(t.name, t.data_type, list(t.dims)) for t in stripped.values())
    graph.initializer.extend(t for t in source.initializer if t.name not in stripped)
    graph.output.extend(source.output)  # their declared shapes go once the checker has seen them
    return light


def infer_shapes(name: str, light: Any, batch_inputs: list[str], batches: tuple[int, ...]) -> dict[int, dict]:
    """``{batch: {tensor: [data type, dims] or None}}`` from ONNX's checker and strict shape inference with data
    propagation, run in a child process with bounded memory and time (its expansions stay out of this one)."""
    header = {
        "limit": _BASE_BYTES + MAX_INFERENCE_BYTES,
        "inputs": batch_inputs,
        "batches": list(batches),
        "rank": MAX_RANK,
    }
    request = json.dumps(header).encode() + b"\n" + light.SerializeToString()
    environment = dict(os.environ, OMP_NUM_THREADS="1", OPENBLAS_NUM_THREADS="1", MKL_NUM_THREADS="1")
    try:
        done = subprocess.run(
            [sys.executable, "-I", "-c", _CHILD],
            input=request,
            capture_output=True,
            timeout=INFERENCE_SECONDS,
            env=environment,
        )
    except subprocess.TimeoutExpired:
        raise OnnxPolicyError(f"ONNX file {name}: shape inference took over {INFERENCE_SECONDS} s: refused") from None
    if done.returncode == 2:
        detail = cut(one_line(done.stderr.decode("utf-8", "replace")), 300)
        raise OnnxPolicyError(f"ONNX file {name} fails ONNX's checks or strict shape inference: {detail}")
    if done.returncode != 0:
        raise OnnxPolicyError(
            f"ONNX file {name}: shape inference needs over {MAX_INFERENCE_BYTES >> 20} MiB (a shape "
            "or constant computation expands): refused"
        )
    return {int(batch): shapes for batch, shapes in json.loads(done.stdout).items()}


def _operations(node: Any, shapes: dict[str, list]) -> int:
    """Multiply-adds of one node, roughly (see ``MAX_OPERATIONS``)."""
    dims = [shapes[name][1] if shapes.get(name) else [] for name in node.input if name]
    outputs = [shapes[name][1] for name in node.output if name and shapes.get(name)]
    size = sum(math.prod(d) for d in dims) + sum(math.prod(d) for d in outputs)
    out = math.prod(outputs[0]) if outputs else 0
    if node.op_type in ("MatMul", "Gemm") and dims and dims[0]:
        transposed = node.op_type == "Gemm" and any(a.name == "transA" and a.i for a in node.attribute)
        return size + out * (dims[0][0] if transposed and len(dims[0]) == 2 else dims[0][-1])
    if node.op_type in ("Conv", "ConvTranspose") and len(dims) > 1:
        return size + max(out, math.prod(dims[0])) * math.prod(dims[1][1:])
    if node.op_type in ("MaxPool", "AveragePool"):
        kernel = next((list(a.ints) for a in node.attribute if a.name == "kernel_shape"), [])
        return size + out * math.prod(kernel)
    if node.op_type == "Einsum":
        return size + _einsum_operations(node, dims, out)
    return size


def _einsum_operations(node: Any, dims: list[list[int]], out: int) -> int:
    equation = next((a.s.decode("ascii", "replace") for a in node.attribute if a.name == "equation"), "")
    terms = equation.replace(" ", "").split("->")[0].split(",")
    sizes: dict[str, int] = {}
    for term, shape in zip(terms, dims):
        head, _, tail = term.partition("...")
        for letter, size in zip(head, shape):
            sizes[letter] = max(sizes.get(letter, 1), size)
        for letter, size in zip(reversed(tail), reversed(shape)):
            sizes[letter] = max(sizes.get(letter, 1), size)
    return max(out, 1) * math.prod(sizes.values())


def check_shapes(name: str, model: Any, shapes: dict[int, dict]) -> None:
    """Every node output known, of rank at most ``MAX_RANK``, within ``MAX_TENSOR_BYTES`` and together within
    ``MAX_TOTAL_BYTES``; a position within ``MAX_OPERATIONS`` and a run within ``MAX_RUN_OPERATIONS``: at every
    batch size checked."""
    for batch, known in shapes.items():
        total = operations = 0
        for k, node in enumerate(model.graph.node):
            for output in node.output:
                if not output:
                    continue
                where = f"ONNX file {name}: node {k} ({cut(node.op_type)})'s output {cut(output)!r}"
                entry = known.get(output)
                if entry is None or entry[0] not in ITEMSIZE:
                    raise OnnxPolicyError(f"{where} has no inferred numeric tensor type: refused")
                if any(d < 0 for d in entry[1]):
                    raise OnnxPolicyError(
                        f"{where} has a shape that depends on its data ({entry[1]} at "
                        f"batch {batch}, -1 unknown): every shape must be known to bound memory"
                    )
                size = math.prod(entry[1]) * ITEMSIZE[entry[0]]
                if size > MAX_TENSOR_BYTES:
                    raise OnnxPolicyError(
                        f"{where} would be {entry[1]} ({size} bytes, over {MAX_TENSOR_BYTES >> 20} "
                        f"MiB) at batch {batch}: refused"
                    )
                total += size
            operations += _operations(node, known)
        if total > MAX_TOTAL_BYTES:
            raise OnnxPolicyError(
                f"ONNX file {name}: its node outputs take {total} bytes at batch {batch}, over "
                f"{MAX_TOTAL_BYTES >> 20} MiB: refused"
            )
        if operations > MAX_OPERATIONS * batch:
            raise OnnxPolicyError(
                f"ONNX file {name} takes about {operations // batch} multiply-adds a position, "
                f"over {MAX_OPERATIONS}: refused"
            )
        if operations > MAX_RUN_OPERATIONS:
            raise OnnxPolicyError(
                f"ONNX file {name} takes about {operations:,} multiply-adds a run at its fixed batch of {batch:,} "
                f"(every move runs the whole batch), over {MAX_RUN_OPERATIONS:,}: refused (export it with a "
                "symbolic batch dimension)"
            )


# ------------------------------------------------------------------------------ the contract

_EXPECTED_INPUTS = (
    "one input named observation [batch, 339] int8 or float32, and optionally action_mask "
    "[batch, 256] int8, bool or float32"
)
_EXPECTED_OUTPUTS = "outputs named logits [batch, 256] float32 and optionally value [batch] or [batch, 1] float32"
_TYPES = {INT8: "int8", FLOAT: "float32", BOOL: "bool"}


def _declared(value: Any) -> tuple[int, list[int | None] | None]:
    """A graph input's data type and dims (``None`` for a symbolic or unset one; no shape: ``None``)."""
    kind = value.type.tensor_type if value.type.HasField("tensor_type") else None
    if kind is None or not kind.HasField("shape"):
        return (kind.elem_type if kind is not None else 0), None
    return kind.elem_type, [d.dim_value if d.HasField("dim_value") else None for d in kind.shape.dim]


def _input(name: str, value: Any, what: str, width: int, types: tuple[int, ...], positional: bool) -> int | None:
    """The fixed batch of an input that fits the contract (``None``: symbolic), else one line."""
    elem, dims = _declared(value)
    shown = "?" if dims is None else "[" + ", ".join("batch" if d is None else str(d) for d in dims) + "]"
    if elem not in types or dims is None or len(dims) != 2 or dims[1] != width or (dims[0] is not None and dims[0] < 1):
        how = f" (a single input is taken for the {what} only if it fits)" if positional else ""
        raise OnnxPolicyError(
            f"ONNX file {name}: input {cut(value.name)!r} is {_TYPES.get(elem, f'type {elem}')} "
            f"{shown}{how}: expected {_EXPECTED_INPUTS}"
        )
    return dims[0]


def check_contract(name: str, model: Any) -> tuple[tuple[str, int], tuple[str, int] | None, tuple[int, ...]]:
    """The observation and mask inputs (name, type) and the batch sizes to check, from the declared inputs."""
    initialized = {t.name for t in model.graph.initializer}
    inputs = [value for value in model.graph.input if value.name not in initialized]
    names = [value.name for value in inputs]
    if len(inputs) == 1:
        observation, mask = inputs[0], None
    elif len(inputs) == 2 and sorted(names) == ["action_mask", "observation"]:
        observation, mask = sorted(inputs, key=lambda value: value.name != "observation")
    else:
        raise OnnxPolicyError(f"ONNX file {name} has the inputs {cut(str(names))}: expected {_EXPECTED_INPUTS}")
    positional = observation.name != "observation"
    batch = _input(name, observation, "observation", OBSERVATION_SIZE, (INT8, FLOAT), positional)
    batches = BATCHES if batch is None else (batch,)
    if mask is not None:
        mask_batch = _input(name, mask, "action mask", ACTIONS, (INT8, BOOL, FLOAT), False)
        if mask_batch != batch:
            raise OnnxPolicyError(
                f"ONNX file {name}: its observation and action_mask inputs have different batch dimensions"
            )
    pair = (observation.name, _declared(observation)[0])
    return pair, (None if mask is None else (mask.name, _declared(mask)[0])), batches


def check_outputs(name: str, model: Any, shapes: dict[int, dict], single_input: bool) -> tuple[str, str | None]:
    """The logits and value outputs' names: by name, or by position for a model with one input whose outputs
    have other names, if their inferred types and shapes fit."""
    names = [value.name for value in model.graph.output]
    if "logits" in names and set(names) <= {"logits", "value"} and len(set(names)) == len(names):
        logits, value = "logits", ("value" if "value" in names else None)
    elif single_input and len(names) in (1, 2) and not {"logits", "value"} & set(names):
        logits, value = names[0], (names[1] if len(names) == 2 else None)
    else:
        raise OnnxPolicyError(f"ONNX file {name} has the outputs {cut(str(names))}: expected {_EXPECTED_OUTPUTS}")
    for batch, known in shapes.items():
        for output, fits in ((logits, ([batch, ACTIONS],)), (value, ([batch], [batch, 1]))):
            entry = known.get(output) if output is not None else [FLOAT, fits[0]]
            if entry is None or entry[0] != FLOAT or entry[1] not in fits:
                shown = "of unknown type" if entry is None else f"{_TYPES.get(entry[0], f'type {entry[0]}')} {entry[1]}"
                raise OnnxPolicyError(
                    f"ONNX file {name}: output {cut(output)!r} is {shown} at batch {batch}: "
                    f"expected {_EXPECTED_OUTPUTS}"
                )
    return logits, value


def check_model(path: str | Path) -> CheckedModel:
    """Every check of the module, in order; the model ready for onnxruntime, or one ``OnnxPolicyError`` line."""
    onnx, _ = import_onnx()
    name, data = read_model_bytes(path)
    scan_wire(name, data)
    try:
        model = onnx.load_from_string(data)
    except Exception as err:  # protobuf's DecodeError, or what the wire scan let through
        raise OnnxPolicyError(f"ONNX file {name} is not a valid ONNX model: {cut(one_line(err), 200)}") from None
    digest = hashlib.sha256(data).hexdigest()
    del data
    model.DiscardUnknownFields()  # onnxruntime gets exactly what was checked
    check_graph(name, model)
    observation, mask, batches = check_contract(name, model)
    shapes = infer_shapes(name, light_copy(model), [observation[0]] + ([mask[0]] if mask else []), batches)
    check_shapes(name, model, shapes)
    logits, value = check_outputs(name, model, shapes, mask is None)
    return CheckedModel(name, model.SerializeToString(), digest, observation, mask, logits, value, batches)
