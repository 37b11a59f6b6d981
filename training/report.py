"""The run report: the final evaluation table and a plot of win rate against training steps."""

from __future__ import annotations

from pathlib import Path

from trinity_env.core.writes import atomic_file, write_text

from .evaluation import ENDGAMES, EXACT

EXACT_LABELS = {"policy": "policy keeps exact value", "value": "value sign exact"}


def label(spec: str) -> str:
    """How a results key reads in tables and legends."""
    if spec.startswith(EXACT):
        name, _, count = spec[len(EXACT) :].partition("@")
        return EXACT_LABELS[name] + (f" ({count} empty)" if count else "")
    return "endgame suite" if spec == ENDGAMES else f"vs {spec}"


def format_results(results: dict[str, tuple[float, float, float]]) -> str:
    """One line per evaluation opponent (win rate) and the endgame score, with 95% intervals."""
    return "\n".join(
        f"  {label(spec):<28} {rate:6.1%}  [{low:.1%}, {high:.1%}]" for spec, (rate, low, high) in results.items()
    )


def plot_learning_curve(path: Path, history: list[dict], title: str, x: str, x_label: str) -> None:
    """Each evaluation measure (with its 95% band) against ``x`` (a key of the history's rows); the legend stands
    to the right of the axes, where it covers no curve."""
    fig = learning_curve_figure(history, title, x, x_label)
    with atomic_file(path) as handle:
        fig.savefig(handle, dpi=110, format="png")
    import matplotlib.pyplot as plt

    plt.close(fig)


def learning_curve_figure(history: list[dict], title: str, x: str, x_label: str):
    """``plot_learning_curve``'s figure (matplotlib's, with the Agg backend), not yet written."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(9.5, 4))
    for spec in history[-1]["results"]:
        rows = [h for h in history if spec in h["results"]]
        where = [h[x] for h in rows]
        ax.plot(where, [h["results"][spec][0] for h in rows], marker="o", label=label(spec))
        ax.fill_between(where, [h["results"][spec][1] for h in rows], [h["results"][spec][2] for h in rows], alpha=0.2)
    ax.set_xlabel(x_label)
    ax.set_ylabel("win rate (seats swapped) / share")
    ax.set_ylim(0, 1)
    ax.grid(alpha=0.3)
    ax.legend(loc="upper left", bbox_to_anchor=(1.02, 1.0), borderaxespad=0.0, fontsize="small")
    ax.set_title(title)
    fig.tight_layout()
    return fig


def write_report(run: Path, history: list[dict], title: str, best: dict | None = None) -> Path:
    """``report.md`` and ``win_rate.png`` in ``run``; the report's path.

    ``best``: the kept checkpoint's evaluation on fresh games, reported beside the last one.
    """
    plot_learning_curve(run / "win_rate.png", history, title, x="steps", x_label="learner steps")
    last = history[-1]
    lines = [
        f"# {title}",
        "",
        f"{last['steps']:,} learner steps in {last['seconds'] / 60:.1f} minutes.",
        "",
        "| measure | share | 95% interval |",
        "|---|---|---|",
    ]
    for spec, (rate, low, high) in last["results"].items():
        lines.append(f"| {label(spec)} | {rate:.1%} | [{low:.1%}, {high:.1%}] |")
    if best is not None:
        lines += [
            "",
            f"The kept checkpoint, `best.pt` (step {best['steps']:,}), evaluated again on fresh games:",
            "",
            "| measure | share | 95% interval |",
            "|---|---|---|",
        ]
        for spec, (rate, low, high) in best["results"].items():
            lines.append(f"| {label(spec)} | {rate:.1%} | [{low:.1%}, {high:.1%}] |")
    lines += ["", "![win rate against steps](win_rate.png)", ""]
    path = run / "report.md"
    write_text(path, "\n".join(lines))
    return path
