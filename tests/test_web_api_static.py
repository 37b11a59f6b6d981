"""The page's script is ES modules loaded as they are: the page loads ``app.js`` as a module, every module it
imports (and they import) is served as JavaScript (a module with another type is refused by the browser), every
name a module imports is one the named module exports, and no module under ``static/`` is left unreached.

These read the files and ask the app for them; the browser tests (``make test-web``) run the modules for real."""

from __future__ import annotations

import re

from web_client import small_client  # skips without Starlette

from trinity_env.web.app import STATIC

IMPORT = re.compile(r'^import \{ ([^}]*) \} from "\./([\w-]+\.js)";$', re.M)
EXPORT = re.compile(r"^export (?:async function|function|const) ([\w$]+)", re.M)
JAVASCRIPT = ("text/javascript", "application/javascript")  # the type a module script must be served with


def imports_of(name: str) -> dict[str, list[str]]:
    """The modules one module imports, each with the names it takes from it."""
    text = (STATIC / name).read_text(encoding="utf-8")
    assert "require(" not in text and "import(" not in text, name  # static imports only: the graph below is whole
    return {module: [n.strip() for n in names.split(",")] for names, module in IMPORT.findall(text)}


def module_graph() -> dict[str, dict[str, list[str]]]:
    """Every module reached from ``app.js``, with its imports."""
    graph: dict[str, dict[str, list[str]]] = {}
    todo = ["app.js"]
    while todo:
        name = todo.pop()
        if name not in graph:
            graph[name] = imports_of(name)
            todo.extend(graph[name])
    return graph


def test_the_page_loads_its_script_as_a_module():
    page = small_client().get("/play").text
    assert '<script type="module" src="/static/app.js"></script>' in page


def test_every_module_is_served_as_javascript_and_every_file_is_reached():
    graph = module_graph()
    assert set(graph) == {path.name for path in STATIC.glob("*.js")}  # none left over, none missing
    assert len(graph) > 1
    client = small_client()
    for name in graph:
        response = client.get(f"/static/{name}")
        assert response.status_code == 200, name
        assert response.headers["content-type"].split(";")[0] in JAVASCRIPT, (name, response.headers["content-type"])
        assert response.headers["x-content-type-options"] == "nosniff"


def test_every_imported_name_is_exported_by_its_module():
    graph = module_graph()
    exports = {name: set(EXPORT.findall((STATIC / name).read_text(encoding="utf-8"))) for name in graph}
    for name, imports in graph.items():
        for module, names in imports.items():
            missing = set(names) - exports[module]
            assert not missing, f"{name} imports {sorted(missing)} that {module} does not export"
