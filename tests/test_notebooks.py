"""The notebooks run top to bottom (with CI's small budgets), are committed with their outputs, and `make notebooks`
opens them in JupyterLab."""

from __future__ import annotations

from pathlib import Path

import nbformat
import pytest

from notebooks.execute import NOTEBOOKS, execute

ROOT = Path(__file__).resolve().parent.parent


def test_the_three_notebooks_are_there():
    assert [p.name for p in NOTEBOOKS] == ["01_quickstart.ipynb", "02_train_and_evaluate.ipynb", "03_balance.ipynb"]


@pytest.mark.e2e  # whole notebooks: make test-e2e
@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.stem)
def test_notebook_runs(path):
    executed = execute(path, budget="small")
    errors = [o for cell in executed.cells for o in cell.get("outputs", []) if o.get("output_type") == "error"]
    assert not errors


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.stem)
def test_committed_notebooks_carry_their_outputs(path):
    notebook = nbformat.read(path, as_version=4)
    code = [cell for cell in notebook.cells if cell.cell_type == "code"]
    assert all(cell.get("execution_count") for cell in code), f"{path.name} has cells that were never run"
    images = [o for cell in code for o in cell.get("outputs", []) if "image/png" in o.get("data", {})]
    assert images, f"{path.name} carries no plots"


def test_make_notebooks_installs_jupyterlab_and_opens_this_folder():
    import re
    import subprocess

    extra = re.search(r"^notebooks = \[(.*?)^\]", (ROOT / "pyproject.toml").read_text(encoding="utf-8"), re.M | re.S)
    assert extra and '"jupyterlab>=' in extra.group(1)
    plan = subprocess.run(["make", "-n", "notebooks"], cwd=ROOT, capture_output=True, text=True, check=True).stdout
    assert 'pip install --quiet -e ".[notebooks]" "torch==2.13.0"' in plan  # never an unpinned torch
    assert ".venv/bin/jupyter lab notebooks/" in plan
