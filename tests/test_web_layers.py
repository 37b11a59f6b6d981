"""The browser page's ES modules (``trinity_env/web/static/*.js``) are layered as the package is: every
``import ... from "./x.js"`` points down or sideways in ``PAGE_LAYERS`` (the page's state and the server's API, then
the small tools around it, then what draws the page, then what handles input and runs games, then the module that
starts the page), and the imports make no cycle. A drawing module never imports a controller: it calls one through
the handler table of ``actions.js``, which ``app.js`` fills once at start.

The modules are read as text (no JavaScript runtime needed): the import statements are found by a pattern that takes
every form the page uses (named, several lines, bare ``import "./x.js"``, ``export ... from``).
"""

from __future__ import annotations

import re
from pathlib import Path

STATIC = Path(__file__).resolve().parent.parent / "trinity_env" / "web" / "static"

PAGE_LAYERS = [
    ("state", {"state.js", "api.js", "actions.js"}),
    ("tools", {"notices.js", "focus.js", "dialogs.js"}),
    ("drawing", {"cards.js", "previews.js", "board.js", "draft.js", "render.js"}),
    ("controllers", {"setup.js", "games.js", "replays.js", "keys.js"}),
    ("app", {"app.js"}),
]
"""The page's layers, bottom to top, and their modules; a module imports from its own layer and those below only."""

IMPORT = re.compile(r"""(?:^|;|\s)(?:import|export)\s+(?:[\w*{}\s,$]+?\s+from\s+)?["']\./([\w.-]+\.js)["']""")
DYNAMIC = re.compile(r"""\bimport\s*\(\s*["']\./([\w.-]+\.js)["']\s*\)""")


def imports_of(text: str) -> set[str]:
    """The page modules a module's text imports (``./x.js``: the name ``x.js``), static and dynamic."""
    text = re.sub(r"/\*.*?\*/", "", text, flags=re.S)
    text = "\n".join(re.sub(r"(^|\s)//.*$", "", line) for line in text.splitlines())
    return set(IMPORT.findall(text)) | set(DYNAMIC.findall(text))


def import_graph(folder: Path = STATIC) -> dict[str, set[str]]:
    return {path.name: imports_of(path.read_text(encoding="utf-8")) for path in sorted(folder.glob("*.js"))}


def layer_of(module: str) -> int:
    return next(k for k, (_, members) in enumerate(PAGE_LAYERS) if module in members)


def upward(graph: dict[str, set[str]]) -> list[str]:
    """The imports that point up the layer table."""
    return sorted(
        f"{module} ({PAGE_LAYERS[layer_of(module)][0]}) imports {target} ({PAGE_LAYERS[layer_of(target)][0]})"
        for module, targets in graph.items()
        for target in targets
        if layer_of(target) > layer_of(module)
    )


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """One cycle through each module on one (depth-first search), as the path of modules that closes it."""
    found, done, path = [], set(), []

    def visit(module: str) -> None:
        if module in path:
            found.append([*path[path.index(module) :], module])
            return
        if module in done:
            return
        path.append(module)
        for target in sorted(graph.get(module, ())):
            visit(target)
        path.pop()
        done.add(module)

    for module in sorted(graph):
        visit(module)
    return found


def test_every_page_module_has_a_layer_and_imports_only_page_modules():
    graph = import_graph()
    declared = set().union(*(members for _, members in PAGE_LAYERS))
    assert set(graph) == declared, f"not in PAGE_LAYERS: {set(graph) - declared}; gone: {declared - set(graph)}"
    assert sum(len(members) for _, members in PAGE_LAYERS) == len(declared)  # each module in one layer only
    assert {target for targets in graph.values() for target in targets} <= set(graph)
    assert len(graph["app.js"]) >= 5 and "state.js" in graph["render.js"]  # the pattern finds the imports


def test_page_imports_point_down_and_make_no_cycle():
    graph = import_graph()
    assert upward(graph) == []
    assert cycles(graph) == []


def test_the_page_layer_check_can_fail():
    """The pattern reads every form of import; an import up a layer and a cycle inside one layer are both found."""
    text = """import { a, b } from "./state.js";
        import {
          c,
        } from "./board.js";
        import "./notices.js"; export { d } from './focus.js';
        import * as keys from "./keys.js";
        // import { e } from "./games.js";
        const f = await import("./replays.js");"""
    assert imports_of(text) == {"state.js", "board.js", "notices.js", "focus.js", "keys.js", "replays.js"}
    graph = {"board.js": {"render.js", "state.js"}, "render.js": {"board.js"}, "state.js": {"games.js"}}
    assert upward(graph) == ["state.js (state) imports games.js (controllers)"]
    assert cycles(graph) == [["board.js", "render.js", "board.js"]]
