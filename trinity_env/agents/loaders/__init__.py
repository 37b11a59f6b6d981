"""The agents' file loaders: each reads a file a user may share by what loading it would allocate, before anything
is allocated, and plays what it holds: torch files read dry (``checkpoint``) and the project's network checkpoints
(``network_checkpoint``), a bare ``state_dict``, a Stable-Baselines3 zip (``sb3``) and an ONNX policy (``onnx_file``
reads its bytes and walks its encoding, ``onnx_check`` checks the rest, ``onnx_policy`` plays it).

Nothing is imported here: each module is imported by name, so only an agent that needs torch or onnxruntime loads
them.
"""
