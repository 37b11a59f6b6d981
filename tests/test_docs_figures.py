"""The figures the pages quote are the tools': each measured share or time, and each share with its interval, is in a
file a tool wrote (a JSON, CSV, table or printed output) that the page names or links."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
PAGES = sorted(p.name for p in (ROOT / "docs").glob("*.md"))

MEASURED = re.compile(r"(?<![\w.])(\d+(?:,\d{3})*\.\d+)(%| ?s\b| ms\b)")
"""A measured figure on a page: a decimal share (``72.0%``) or time (``0.049 s``, ``2.5 ms``)."""
SOURCE_SUFFIXES = {".md", ".json", ".jsonl", ".csv", ".txt"}
NUMBER = re.compile(r"-?\d+(?:,\d{3})*(?:\.\d+)?(?:[eE]-?\d+)?")


def _sources(page: Path) -> set[Path]:
    """The files a page's figures may come from: its own folder (``docs/accuracy/`` for ``accuracy.md``),
    every file it links to or names, and the other files of a folder it links into."""
    text = page.read_text(encoding="utf-8")
    found: set[Path] = set()
    folder = page.with_suffix("")
    named = re.findall(r"\]\(([^)#\s]+)", text) + re.findall(r"`([\w./-]+\.(?:json|jsonl|md|csv|txt))`", text)
    for path in [folder, *(base / name for name in named for base in (page.parent, ROOT))]:
        path = path.resolve()
        if path.is_file() and path != page.resolve():
            found.add(path)
            if path.parent != page.parent.resolve() and ROOT / "docs" in path.parents:
                found |= {p for p in path.parent.iterdir() if p.is_file()}
        elif path.is_dir() and ROOT in path.parents:
            found |= {p for p in path.rglob("*") if p.is_file()}
    return {path for path in found if path.suffix in SOURCE_SUFFIXES}


def _holds(figure: str, unit: str, texts: list[str], numbers: set[float]) -> bool:
    if any(figure in text for text in texts):
        return True
    value = float(figure.replace(",", ""))
    tolerance = 0.5 * 10 ** -len(figure.split(".")[1]) + 1e-9
    return any(abs(x - value) <= tolerance or (unit == "%" and abs(100 * x - value) <= tolerance) for x in numbers)


@pytest.mark.parametrize("page", PAGES)
def test_every_measured_figure_on_a_page_is_in_a_file_a_tool_wrote(page):
    """Each decimal share and time a page quotes is in one of the files it comes from (a tool's JSON, CSV,
    table or printed output), as written or as the fraction a JSON holds: a figure typed by hand, or one
    left behind when its source was measured again, fails here."""
    path = ROOT / "docs" / page
    texts = [source.read_text(encoding="utf-8", errors="replace") for source in _sources(path)]
    numbers = {float(n.replace(",", "")) for text in texts for n in NUMBER.findall(text)}
    missing = [
        f"line {i}: {m.group(0)}"
        for i, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1)
        for m in MEASURED.finditer(line)
        if not _holds(m.group(1), m.group(2), texts, numbers)
    ]
    assert not missing, f"docs/{page} quotes figures no source file holds: {missing}"


INTERVAL = re.compile(r"(?<![\w.])(\d+\.\d+)% \[(\d+\.\d+)%, (\d+\.\d+)%\]")
"""A share with its 95% interval on a page: ``64.7% [60.8%, 68.4%]``."""
NEAR_CHARACTERS = 400
"""How close a source must hold an interval's three numbers (a table row, a CSV line, one JSON record)."""


def _together(figures: tuple[str, str, str], numbers: list[tuple[int, float]]) -> bool:
    """Whether ``numbers`` (position in a source, value) hold the share and both ends of its interval close
    together, as written or as fractions."""

    def matches(x: float, figure: str) -> bool:
        return _holds(figure, "%", [], {x})

    share, low, high = figures
    for k, (position, x) in enumerate(numbers):
        if matches(x, share):
            near = [y for p, y in numbers[max(0, k - 8) : k + 9] if abs(p - position) < NEAR_CHARACTERS]
            if any(matches(y, low) for y in near) and any(matches(y, high) for y in near):
                return True
    return False


@pytest.mark.parametrize("page", PAGES)
def test_every_interval_on_a_page_is_one_measurement_of_a_file_a_tool_wrote(page):
    """A share and its interval are quoted together from one measurement: the three numbers sit together in a
    source (a figure mistyped, or taken from the next row, fails here though each number is somewhere)."""
    path = ROOT / "docs" / page
    texts = [source.read_text(encoding="utf-8", errors="replace") for source in _sources(path)]
    positioned = [[(m.start(), float(m.group(0).replace(",", ""))) for m in NUMBER.finditer(text)] for text in texts]
    missing = [
        f"line {i}: {m.group(0)}"
        for i, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1)
        for m in INTERVAL.finditer(line)
        if not any(m.group(0) in text for text in texts)
        and not any(_together(m.groups(), numbers) for numbers in positioned)
    ]
    assert not missing, f"docs/{page} quotes intervals no source file holds together: {missing}"
