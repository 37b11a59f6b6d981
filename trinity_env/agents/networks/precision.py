"""The precisions of the board network's fast evaluation (``board_fast``): which products, how close to the
forward pass each stays (its tolerances, tested in tests/test_board_fast.py), and which one this processor
multiplies fastest. A precision changes the search's play a little, so nothing picks one by itself: a caller
names it (``az.evaluator(network, precision)``, an ``AZConfig``'s ``precision``), or names ``fastest``.

No numba, torch or onnxruntime is imported here (``fastest_precision`` imports a library only to see whether it is
installed)."""

from __future__ import annotations

from collections.abc import Sequence
from functools import cache

PRECISIONS = ("float32", "bfloat16", "int8")
BFLOAT16_LOGIT_TOLERANCE = 0.25
"""The most a legal action's logit may differ from the forward pass's with bfloat16 products (measured on the shipped
network, 128 x 2: at most 0.082 on logits up to about 20; bfloat16 keeps 8 significant bits)."""
BFLOAT16_VALUE_TOLERANCE = 0.02
"""The most a value (in [-1, 1]) may differ from the forward pass's with bfloat16 products (measured: 0.0084)."""
NATIVE_BFLOAT16 = ("avx512_bf16", "amx_bf16")
"""The processor flags (Linux's ``/proc/cpuinfo``) of native bfloat16 products; without them oneDNN emulates them,
slower than float32."""
INT8_LOGIT_TOLERANCE = 0.5
"""The most a legal action's logit may differ from the forward pass's with int8 products (measured on the shipped
network over 5,000 positions: at most 0.34 on logits up to about 36: 7-bit inputs, 8-bit weights)."""
INT8_VALUE_TOLERANCE = 0.05
"""The most a value (in [-1, 1]) may differ from the forward pass's with int8 products (measured: at most 0.034)."""
NATIVE_INT8 = ("avx512_vnni", "avx_vnni", "amx_int8")
"""The processor flags of VNNI's byte products (``vpdpbusd``: four multiply-adds a 32-bit lane, no saturation)."""


def precision_for(flags: Sequence[str], installed: Sequence[str] = ("onnxruntime", "torch")) -> str:
    """The fastest precision for the processor's flags (``/proc/cpuinfo``'s) whose library is ``installed``:
    ``int8`` with VNNI (``NATIVE_INT8``) and onnxruntime, ``bfloat16`` with native bfloat16 products
    (``NATIVE_BFLOAT16``) and torch, else ``float32``."""
    if "onnxruntime" in installed and any(flag in flags for flag in NATIVE_INT8):
        return "int8"
    if "torch" in installed and any(flag in flags for flag in NATIVE_BFLOAT16):
        return "bfloat16"
    return "float32"


def installed(name: str) -> bool:
    """Whether the library ``name`` can be imported here (found, not imported)."""
    from importlib.util import find_spec

    return find_spec(name) is not None


@cache
def fastest_precision() -> str:
    """The fastest precision on this machine: ``precision_for`` its flags (read from Linux's ``/proc/cpuinfo``;
    none where there is no such file) and the libraries installed (onnxruntime, with onnx to build its product, for
    int8; torch for bfloat16)."""
    try:
        with open("/proc/cpuinfo", encoding="utf-8") as info:
            flags = next((line.split(":", 1)[1].split() for line in info if line.startswith("flags")), [])
    except OSError:
        flags = []
    libraries = [name for name in ("onnxruntime", "torch") if installed(name)]
    if "onnxruntime" in libraries and not installed("onnx"):
        libraries.remove("onnxruntime")
    return precision_for(flags, libraries)


def search_precision() -> str:
    """What a search asked for the fastest precision gets (``az.evaluator(network, "fastest")``):
    ``fastest_precision``, but float32 where that is bfloat16 (torch's products wait on numba's threads, see
    ``board_fast``)."""
    return "float32" if fastest_precision() == "bfloat16" else fastest_precision()
