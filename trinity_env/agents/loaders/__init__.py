"""The agents' file loaders: each reads a file a user may share by what loading it would allocate, before anything
is allocated, and plays what it holds: the project's torch checkpoints (``checkpoint``), a bare ``state_dict``, a
Stable-Baselines3 zip (``sb3``) and an ONNX policy (``onnx_check`` checks the file, ``onnx_policy`` plays it).

Nothing is imported here: each module is imported by name, so only an agent that needs torch or onnxruntime loads
them.
"""
