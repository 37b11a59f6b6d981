"""Specs built from paths as values, never pasted into text: any path (a comma, an ``=``, quotes, spaces in its
name) can be named by an ``onnx:``, ``state_dict:`` or ``az:`` spec, written in double quotes (``""`` for a quote),
and ``AgentSpec.of`` / ``spec.format_spec`` write that text from the values, read back exactly; a walk of the
code finds no other place that writes a spec from a value."""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

from trinity_env.agents import spec as agent_spec
from trinity_env.agents.registry import AgentSpecError
from trinity_env.agents.spec import AgentSpec, format_spec, split_arguments

ROOT = Path(__file__).resolve().parent.parent

AWKWARD = ["v1,final.onnx", "a=b.onnx", '"quoted".onnx', 'in"side.onnx', " lead.onnx", "trail.onnx ", "é,ü.onnx", ",,"]


@pytest.mark.parametrize("value", [*AWKWARD, "plain.onnx", "runs/x/best.pt", '""', "=", ""])
def test_format_spec_round_trips_any_value(value):
    text = format_spec("onnx", [value], {"threads": "2", "key": value})
    name, _, rest = text.partition(":")
    assert name == "onnx" and split_arguments(rest) == ([value], {"threads": "2", "key": value})


def test_plain_values_are_written_as_before():
    assert format_spec("mcts", ["400"], {"seed": "3"}) == "mcts:400,seed=3"
    assert format_spec("onnx", ["models/policy.onnx"]) == "onnx:models/policy.onnx"
    assert format_spec("greedy") == "greedy"
    assert format_spec("onnx", ["v1,final.onnx"], {"threads": "2"}) == 'onnx:"v1,final.onnx",threads=2'


@pytest.mark.parametrize("name", AWKWARD[:-1])
def test_every_path_spec_names_a_file_whatever_its_name(tmp_path, name):
    """``onnx:``, ``state_dict:`` and ``az:`` built by ``AgentSpec.of`` from a path read that very file (parsed, not
    built: no file is loaded), and the files a spec's hash covers are that file too."""
    path = tmp_path / name
    path.write_bytes(b"not loaded here")
    for kind, keywords in (("onnx", {"threads": 1}), ("state_dict", {"trainer": "az"}), ("az", {"sims": 0})):
        spec = AgentSpec.of(kind, path, **keywords)
        assert spec.path == str(path) and dict(spec.keywords) == keywords  # typed: 1, "az", 0
        assert AgentSpec.parse(spec.text) == spec
        assert spec.files() == [path]
    if name == name.strip():  # file:PATH is the spec's text to its end, trimmed like every spec
        assert AgentSpec.of("file", path).path == str(path)


def test_a_quoted_path_is_written_by_hand_too(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    Path("v1,final.onnx").write_bytes(b"x")
    Path('say "hi".onnx').write_bytes(b"x")
    assert AgentSpec.parse('onnx:"v1,final.onnx",threads=2').path == "v1,final.onnx"
    assert AgentSpec.parse('onnx: "say ""hi"".onnx" ').path == 'say "hi".onnx'


@pytest.mark.parametrize(
    "text, problem",
    [
        ('onnx:"v1,final.onnx', "a quoted argument is not closed"),
        ('onnx:"v1.onnx"x,threads=2', "text after a quoted argument"),
        ('onnx:"v1.onnx" "x"', "text after a quoted argument"),
    ],
)
def test_a_bad_quote_is_one_line(text, problem):
    with pytest.raises(AgentSpecError, match=problem) as refused:
        AgentSpec.parse(text)
    assert "\n" not in str(refused.value)


def test_serve_offers_an_onnx_file_whose_name_holds_a_comma(tmp_path):
    """``trinity serve --onnx-folder``: a file named ``v1,final.onnx`` is offered like any other (it used to stop the
    server from starting, with an error about ``threads``)."""
    from trinity_env.web.catalogue import onnx_folder

    for name in ("v1,final.onnx", "plain.onnx", "a=b.onnx"):
        (tmp_path / name).write_bytes(b"not loaded here")
    models = onnx_folder(tmp_path)
    assert [m.label for m in models] == ["onnx:a=b", "onnx:plain", "onnx:v1,final"]
    assert [m.spec.path for m in models] == [str(tmp_path / n) for n in ("a=b.onnx", "plain.onnx", "v1,final.onnx")]


SPEC_KINDS = {"onnx", "az", "state_dict", "file"}
"""The spec names a path follows (``f"onnx:{path}"`` is what the walk looks for)."""
MESSAGES = {
    ("trinity_env/agents/loaders/state_dict.py", "state_dict:"): "a hint in an error line, naming what to type",
    ("trinity_env/agents/loaders/network_checkpoint.py", "state_dict:"): "a hint in an error line, naming what to type",
    ("trinity_env/agents/loaders/onnx_policy.py", "onnx:"): "an agent's name, a label tables print (never parsed)",
    ("trinity_env/web/catalogue.py", "onnx:"): "a folder model's label, its file's stem (never parsed)",
    ("trinity_env/agents/spec.py", "file:"): "a hint in an error line, naming what to type",
    ("trinity_env/provenance.py", "file:"): "a score card's label of a policy, by its file's name (never parsed)",
}
"""Places that write ``NAME:{value}`` as a label or a message, never as a spec to be read; each says why."""


NAMED = {"FILE_PREFIX": "file:", "STATE_DICT": "state_dict"}
"""The constants for spec names (``f"{FILE_PREFIX}{path}"``, ``f"{STATE_DICT}:{path}"``)."""


def _piece(node: ast.expr) -> str | None:
    """The text an f-string's piece writes, where it is known: a constant's, or a spec name's constant."""
    if isinstance(node, ast.Constant):
        return str(node.value)
    if isinstance(node, ast.FormattedValue):
        name = getattr(node.value, "id", None) or getattr(node.value, "attr", None)
        return NAMED.get(name)
    return None


def _pasted(tree: ast.AST) -> list[tuple[int, str]]:
    """``(line, "kind:")`` for each f-string, ``+`` or ``%`` that writes a value right after a spec's name."""
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.JoinedStr):
            pieces = [_piece(part) for part in node.values]
            for index, after in enumerate(node.values[1:], start=1):
                written = "".join(piece or "\0" for piece in pieces[:index])  # \0: a value, not a spec name
                if isinstance(after, ast.FormattedValue) and pieces[index] is None:
                    match = re.search(r"(?:^|[^\w-])([\w-]+):$", written)
                    if match and match[1] in SPEC_KINDS:
                        found.append((node.lineno, f"{match[1]}:"))
        elif isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add | ast.Mod):
            left = node.left
            if isinstance(left, ast.Constant) and isinstance(left.value, str):
                match = re.fullmatch(r"([\w-]+):(%s)?", left.value)
                if match and match[1] in SPEC_KINDS:
                    found.append((node.lineno, f"{match[1]}:"))
    return found


def test_no_code_pastes_a_value_into_spec_text():
    """Walks every module of the package, the trainers, the scripts and the benchmarks: a spec built from a value
    goes through ``AgentSpec.of`` or ``spec.format_spec`` (which quote it), so a new place cannot paste one."""
    pasted, seen = [], set()
    for folder in ("trinity_env", "training", "scripts", "benchmarks"):
        for path in sorted((ROOT / folder).rglob("*.py")):
            where = str(path.relative_to(ROOT))
            for line, kind in _pasted(ast.parse(path.read_text(encoding="utf-8"))):
                if (where, kind) in MESSAGES:
                    seen.add((where, kind))
                else:
                    pasted.append(f"{where}:{line}: {kind}{{...}}")
    assert not pasted, pasted
    assert seen == {m for m in MESSAGES if (ROOT / m[0]).exists()}, set(MESSAGES) - seen  # no stale exemption
    assert agent_spec.format_spec is format_spec


@pytest.mark.parametrize(
    "source, caught",
    [
        ('f"onnx:{path}"', True),
        ('f"--agents az:{run}/best.pt"', True),
        ('f"{FILE_PREFIX}{path}"', True),
        ('f"{registry.STATE_DICT}:{path},trainer=az"', True),
        ('"onnx:" + str(path)', True),
        ('"az:%s" % path', True),
        ('f"mcts:{n}"', False),
        ('f"onnx:{MODEL}" if False else format_spec("onnx", [path])', True),
        ('format_spec("onnx", [path])', False),
        ('f"{name}:{value}"', False),
    ],
)
def test_the_walk_finds_a_pasted_path_in_each_form(source, caught):
    assert bool(_pasted(ast.parse(source))) is caught
