"""What a score card says it measured, in terms anyone can check with standard tools.

- ``policy_label(player, agent)``: the policy's label, a normalised spec: one label for one policy however it was
  named. A file is named by its path relative to the working directory when it lies in it (``onnx:./x.onnx``,
  ``onnx:x.onnx`` and ``onnx:/home/me/x.onnx`` run from ``/home/me`` are all ``onnx:x.onnx``), by its file name
  alone when it lies elsewhere (no path of the author's machine goes into a published card); keywords are sorted;
  ``level:N`` is the ladder agent it names. A policy of code, a Python function or ``py:module:factory``, is named
  by the function that plays, ``py:module:function`` (a factory's result when it is a function of a module),
  so ``heuristic`` given in Python and ``py:myheur:make`` returning it are one label.
- ``policy_files(player, agent)``: every file the policy reads, each as ``{"name", "sha256", "bytes"}``: ``sha256``
  is the plain SHA-256 of the file's bytes (what ``sha256sum`` prints); ``name`` follows the label's rule, and a
  file of the installed package is named ``trinity_env/...`` (the shipped networks). A policy of code reads the
  source file of its module.
- ``code_provenance()``: the code that measured: the package's version, ``source_sha256`` (``source_sha256``: a
  SHA-256 over the package's ``.py`` files in a defined order) and, in a git checkout, the commit and whether the
  package's files differ from it.
- ``verify(card)``: each mismatch between a card's recorded files and code and what is here now, one line each
  (``trinity benchmark --verify CARD``).
"""

from __future__ import annotations

import hashlib
import inspect
import os
import subprocess
from pathlib import Path
from typing import Any

from trinity_env.core import ArgumentError
from trinity_env.core.files import short

PACKAGE = Path(__file__).resolve().parent
"""The installed package's folder (``trinity_env``): what ``source_sha256`` hashes."""
READ_BYTES = 1 << 20


def source_sha256() -> str:
    """The package's source hash, as the rating's games files record it (``evaluation.anchored.source_sha256``)."""
    from trinity_env.evaluation.anchored import source_sha256 as games_source_sha256

    return games_source_sha256()


def file_sha256(path: str | Path) -> tuple[str, int]:
    """The plain SHA-256 of a regular file's bytes (``sha256sum``'s figure) and its size; ``ArgumentError`` in one
    line for a file that is not there or not a regular file (a pipe or device is never read), one over the
    checkpoint cap (``agents.spec_hash.MAX_HASHED_BYTES``), or one whose bytes disagree with its size (a ``/proc``
    file, a file being written): never more than its size and one byte is read."""
    from trinity_env.agents.spec_hash import MAX_HASHED_BYTES
    from trinity_env.core.paths import open_regular

    try:
        handle, kind, stat_size = open_regular(path)
    except (OSError, ValueError) as err:
        raise ArgumentError(f"cannot read {path}: {err.strerror if isinstance(err, OSError) else err}") from None
    if handle is None:
        raise ArgumentError(f"{path} is {kind}, not a file")
    if stat_size > MAX_HASHED_BYTES:
        handle.close()
        raise ArgumentError(f"{path} is over {MAX_HASHED_BYTES:,} bytes, the most a policy file is read at")
    digest, size = hashlib.sha256(), 0
    with handle:
        while size <= stat_size and (block := handle.read(min(READ_BYTES, stat_size + 1 - size))):
            digest.update(block)
            size += len(block)
    if size != stat_size:
        raise ArgumentError(f"{path} changed size while it was read ({stat_size:,} bytes by its stat, {size:,} read)")
    return digest.hexdigest(), size


def file_name(path: str | Path) -> str:
    """How a card names a file: ``trinity_env/...`` inside the installed package, its path relative to the
    working directory inside it, else its file name alone."""
    resolved = Path(os.path.abspath(path))
    for base, prefix in ((PACKAGE, "trinity_env/"), (Path.cwd().resolve(), "")):
        try:
            return prefix + resolved.relative_to(base).as_posix()
        except ValueError:
            continue
    return resolved.name


def _function_of(agent: object) -> Any:
    """The function that plays for a policy of code: a ``Policy``'s or ``BatchedPolicy``'s function, a
    ``PolicyAgent``'s; else the agent's class."""
    for attribute in ("_fn", "_policy"):
        found = getattr(agent, attribute, None)
        if callable(found):
            return found
    return type(agent)


def _code_name(function: Any) -> str | None:
    module, name = getattr(function, "__module__", None), getattr(function, "__qualname__", None)
    if not isinstance(module, str) or not isinstance(name, str) or "<" in name:
        return None
    return f"{module}:{name}"


def policy_label(who: Any, agent: Any = None) -> str:
    """The card's label of the ``Player`` ``who`` (see the module); ``agent``, its built agent, names code."""
    from trinity_env.agents.ladder import LEVEL
    from trinity_env.agents.registry import STATE_DICT
    from trinity_env.agents.spec import CODE_PREFIX, FILE_PREFIX, AgentSpec, ladder_spec, names_path

    if not isinstance(who, AgentSpec) or who.name == CODE_PREFIX.rstrip(":"):
        name = _code_name(_function_of(agent)) if agent is not None else None
        if name is None and isinstance(who, AgentSpec):
            return who.text
        return CODE_PREFIX + name if name is not None else str(who.label)
    if who.name == LEVEL:
        return policy_label(ladder_spec(who.factory_keywords["level"]))
    if who.name == FILE_PREFIX:
        name = file_name(who.path)
        return name if names_path(name) and not name.startswith(FILE_PREFIX) else "file:" + name
    args, keywords = list(who.args), dict(who.keywords)
    if who.name in ("onnx", STATE_DICT, "az"):
        if args:
            args[0] = file_name(args[0])
        elif "path" in keywords:
            keywords["path"] = file_name(keywords["path"])
    words = [str(a) for a in args] + [f"{key}={value}" for key, value in sorted(keywords.items())]
    return who.name + (":" + ",".join(words) if words else "")


def policy_files(who: Any, agent: Any = None) -> list[dict[str, Any]]:
    """Every file the policy reads, named and hashed (see the module); ``[]`` for one that reads none."""
    from trinity_env.agents.spec import CODE_PREFIX, AgentSpec

    if isinstance(who, AgentSpec) and who.name != CODE_PREFIX.rstrip(":"):
        paths = who.files() or []
    else:
        source = None
        try:
            source = inspect.getsourcefile(_function_of(agent)) if agent is not None else None
        except TypeError:  # a built-in
            source = None
        paths = [Path(source)] if source and Path(source).is_file() else []
    found = []
    for path in paths:
        sha256, size = file_sha256(path)
        found.append({"name": file_name(path), "sha256": sha256, "bytes": size})
    return found


def _git(*words: str) -> str | None:
    try:
        done = subprocess.run(
            ["git", "-C", str(PACKAGE.parent), *words], capture_output=True, text=True, timeout=20, check=False
        )
    except (OSError, subprocess.SubprocessError):
        return None
    return done.stdout.strip() if done.returncode == 0 else None


def code_provenance() -> dict[str, Any]:
    """The code that measures: ``package`` (its version), ``source_sha256``, and in a git checkout ``git_commit``
    and ``git_dirty`` (whether the package's files differ from that commit); both ``None`` in an installed wheel."""
    from trinity_env import __version__

    commit = dirty = None
    if (PACKAGE.parent / ".git").exists():
        commit = _git("rev-parse", "HEAD")
        status = _git("status", "--porcelain", "--", PACKAGE.name) if commit else None
        dirty = None if status is None else bool(status)
    return {"package": __version__, "source_sha256": source_sha256(), "git_commit": commit, "git_dirty": dirty}


def _resolve(name: str, card_folder: Path) -> Path | None:
    """Where a card's file ``name`` is here: the installed package's file for ``trinity_env/...``, else under the
    working directory, else beside the card."""
    if name.startswith("trinity_env/"):
        return PACKAGE / name[len("trinity_env/") :]
    for base in (Path.cwd(), card_folder):
        if (base / name).is_file():
            return base / name
    return None


def check_card(data: object, where: str) -> tuple[list[dict[str, Any]], dict[str, Any]]:
    """A card's recorded ``files`` and ``code``, each checked; ``ArgumentError`` in one line naming the problem
    (a card written before they were recorded names what writes them)."""
    if not isinstance(data, dict) or "benchmark" not in data:
        raise ArgumentError(f'{where} is not a score card (no "benchmark" field)')
    files, code = data.get("files"), data.get("code")
    if files is None or code is None:
        raise ArgumentError(
            f"{where} is a benchmark {data.get('benchmark')} card without file and code hashes (written before they "
            "were recorded): measure it again with trinity benchmark"
        )
    if not isinstance(files, list) or not all(
        isinstance(f, dict) and isinstance(f.get("name"), str) and isinstance(f.get("sha256"), str) for f in files
    ):
        raise ArgumentError(f"{where}: files must be a list of {{name, sha256}} entries")
    if any(Path(f["name"]).is_absolute() or ".." in Path(f["name"]).parts for f in files):
        raise ArgumentError(f"{where}: a file name must be relative, without '..'")
    if not isinstance(code, dict) or not isinstance(code.get("source_sha256"), str):
        raise ArgumentError(f"{where}: code must name its source_sha256")
    return files, code


def _hex(value: str) -> str:
    """A recorded hash as printed: as it is when it is one (64 hex digits), else quoted and cut short."""
    return value if len(value) == 64 and all(c in "0123456789abcdef" for c in value) else short(value)


def verify(data: object, card_path: str | Path) -> list[str]:
    """The card's mismatches with what is here, one line each (``[]``: the files and the code agree):
    a file missing or of another sha256, and code of another ``source_sha256``."""
    files, code = check_card(data, str(card_path))
    problems = []
    for entry in files:
        path = _resolve(entry["name"], Path(card_path).parent)
        if path is None or not path.is_file():
            problems.append(f"{entry['name']}: not found (looked in the working directory and beside the card)")
            continue
        sha256, _ = file_sha256(path)
        if sha256 != entry["sha256"]:
            problems.append(f"{entry['name']}: sha256 {sha256} here, the card records {_hex(entry['sha256'])}")
    here = source_sha256()
    if here != code["source_sha256"]:
        commit = code.get("git_commit")
        problems.append(
            f"code: source_sha256 {here} here, the card records {_hex(code['source_sha256'])}"
            + (f" (measured at commit {commit})" if isinstance(commit, str) else "")
        )
    return problems
