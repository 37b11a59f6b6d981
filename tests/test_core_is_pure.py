"""The rules core imports nothing but the standard library, numpy and PyYAML."""

from __future__ import annotations

import ast
import sys
from pathlib import Path

CORE = Path(__file__).resolve().parent.parent / "trinity_env" / "core"
ALLOWED_THIRD_PARTY = {"numpy", "yaml"}


def test_core_modules_import_no_framework():
    for path in CORE.glob("*.py"):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Import):
                names = [alias.name for alias in node.names]
            elif isinstance(node, ast.ImportFrom) and node.level == 0:
                names = [node.module or ""]
            else:
                continue
            for name in names:
                top = name.split(".")[0]
                assert (
                    top in sys.stdlib_module_names or top in ALLOWED_THIRD_PARTY or name.startswith("trinity_env.core")
                ), f"{path.name} imports {name}"
