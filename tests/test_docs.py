"""The documentation tells the truth: its pictures are what the renderer draws, its code runs."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from doc_examples import EXAMPLES

ROOT = Path(__file__).resolve().parent.parent


def _python_blocks(path: Path) -> list[str]:
    return re.findall(r"```python\n(.*?)```", path.read_text(encoding="utf-8"), flags=re.S)


@pytest.mark.parametrize("name", sorted(EXAMPLES))
def test_the_rules_page_shows_what_the_renderer_draws(name):
    page = (ROOT / "docs" / "rules.md").read_text(encoding="utf-8")
    for state in EXAMPLES[name]():
        assert str(state) in page, f"docs/rules.md does not show the current drawing of the {name} example"


@pytest.mark.parametrize("page", ["README.md", "docs/rules.md"])
def test_python_snippets_run(page):
    blocks = _python_blocks(ROOT / page)
    assert blocks, f"{page} has no python snippet"
    for block in blocks:
        exec(compile(block, page, "exec"), {})
