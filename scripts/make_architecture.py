"""Draw docs/images/architecture.svg: the package's layers, bottom to top, and what each may import.

Run from the repository root: python -m scripts.make_architecture  (the output is deterministic: no dates,
fixed hash salt). ``LAYERS`` is the order tests/test_layers.py enforces; tests/test_docs.py holds the two equal.
"""

from __future__ import annotations

import argparse
from pathlib import Path

OUT = Path(__file__).resolve().parent.parent / "docs" / "images" / "architecture.svg"

LAYERS = [
    ("core", "the rules in pure Python: cards, GameState, positions, replays, rewards,\nfiles, paths, limits, records"),
    ("spec", "the variant config (EnvConfig), the observation layout and encoder,\nthe Agent interface"),
    ("envs", "the PettingZoo AEC env and the single-agent gymnasium env"),
    ("fast", "the rules again as numba kernels: FastGames, the vector env"),
    ("search", "MCTS, AlphaZero's batched search, the exact solver (no torch)"),
    ("agents", "the players, AgentSpec and make(spec), the network, the checkpoint reader"),
    ("evaluation", "matches, arena, ratings, balance, endgames, puzzles, review, accuracy"),
    ("top", "package root, registration, the CLI, play, testing, web, integrations"),
]
"""Bottom to top, with what each layer holds. A module imports only from its own layer or the ones below."""

FRAMEWORKS = {
    "core": "stdlib, PyYAML",
    "spec": "+ numpy",
    "envs": "+ gymnasium, pettingzoo",
    "fast": "+ numba",
    "agents": "+ torch (lazily)",
    "top": "+ starlette, ray, ...",
}
"""The outside libraries a layer adds to those below it (where it adds any)."""


def draw(path: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    from matplotlib.patches import FancyArrowPatch, FancyBboxPatch

    plt.rcParams["svg.hashsalt"] = "trinity-towers"
    plt.rcParams["svg.fonttype"] = "none"  # text stays text: smaller, searchable, crisp at any size
    height, gap, width = 0.9, 0.35, 7.6
    rows = len(LAYERS)
    figure, axes = plt.subplots(figsize=(10.5, 0.62 * rows * (height + gap) + 0.6))
    for row, (name, text) in enumerate(LAYERS):
        y = row * (height + gap)
        colour = "#dbe8f5" if name != "top" else "#f5e6d3"
        axes.add_patch(
            FancyBboxPatch(
                (0, y),
                width,
                height,
                boxstyle="round,pad=0.02,rounding_size=0.12",
                facecolor=colour,
                edgecolor="#34495e",
                linewidth=1.2,
            )
        )
        axes.text(
            0.18, y + height / 2, name, va="center", ha="left", fontsize=12, fontweight="bold", family="monospace"
        )
        axes.text(1.75, y + height / 2, text, va="center", ha="left", fontsize=9)
        if name in FRAMEWORKS:
            axes.text(
                width - 0.12,
                y + 0.14,
                FRAMEWORKS[name],
                va="bottom",
                ha="right",
                fontsize=7.5,
                color="#566573",
                style="italic",
            )
        if row:
            arrow = FancyArrowPatch(
                (width / 2, y),
                (width / 2, y - gap),
                arrowstyle="-|>",
                mutation_scale=12,
                color="#34495e",
                linewidth=1.2,
            )
            axes.add_patch(arrow)
    top = (rows - 1) * (height + gap)
    axes.add_patch(
        FancyBboxPatch(
            (width + 0.45, top - (height + gap)),
            2.2,
            2 * height + gap,
            boxstyle="round,pad=0.02,rounding_size=0.12",
            facecolor="#f5e6d3",
            edgecolor="#34495e",
            linewidth=1.2,
        )
    )
    axes.text(
        width + 1.55,
        top - gap / 2 + 0.12,
        "training/",
        va="center",
        ha="center",
        fontsize=12,
        fontweight="bold",
        family="monospace",
    )
    axes.text(
        width + 1.55,
        top - gap / 2 - 0.42,
        "PPO, AlphaZero,\nRLlib trainers;\nimports any layer",
        va="center",
        ha="center",
        fontsize=8,
    )
    axes.text(
        width / 2,
        -0.45,
        "arrows: imports point down (a layer may import itself and the layers below it)",
        ha="center",
        va="top",
        fontsize=8.5,
        color="#34495e",
    )
    axes.set_xlim(-0.2, width + 2.9)
    axes.set_ylim(-0.9, top + height + 0.2)
    axes.axis("off")
    figure.tight_layout()
    path.parent.mkdir(parents=True, exist_ok=True)
    figure.savefig(path, format="svg", metadata={"Date": None, "Creator": None})
    plt.close(figure)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=OUT, help=f"where to write the SVG (default {OUT})")
    draw(parser.parse_args().out)


if __name__ == "__main__":
    main()
