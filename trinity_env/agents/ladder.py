"""The difficulty ladder: ``level:1`` ... ``level:8``, agents about equally far apart in rating.

``LADDER`` maps each level to the spec of its agent and ``LEVEL_WORDS`` to a name a new player reads ("casual",
not ``mcts:25``). ``level:N`` is an agent spec everywhere one is taken (``trinity_env.agents.spec``): it builds
``LADDER[N]``'s agent and keeps ``level:N`` as its label. The levels were measured with the arena on dealt hands
(docs/web.md has the command; ``trinity_env/web/ladder.json`` its output, the ratings the web app shows), and they
are the reference pool that fixes the rating scale (``trinity_env.evaluation.anchored``, docs/arena.md).

This module imports nothing from the package: the spec grammar and the web app both read it.
"""

from __future__ import annotations

LADDER: dict[int, str] = {
    1: "random",
    2: "mcts:2",
    3: "mcts:25",
    4: "greedy",
    5: "lookahead",
    6: "mcts:400",
    7: "mcts:1200",
    8: "mcts:6400",
}
"""The difficulty ladder ``level:1`` ... ``level:8``: each level's agent spec."""

LEVEL_WORDS: dict[int, str] = {
    1: "first steps",
    2: "beginner",
    3: "casual",
    4: "club player",
    5: "strong",
    6: "expert",
    7: "master",
    8: "grandmaster",
}
"""Each level in plain words: a new player reads "Level 3 — casual", not ``mcts:25``."""

LEVEL = "level"
"""The spec name of a ladder level: ``level:N``."""


def levels() -> str:
    """The levels and their agents, for an error message: ``level:1 (random), level:2 (mcts:2), ...``."""
    return ", ".join(f"{LEVEL}:{level} ({spec})" for level, spec in LADDER.items())


def level_spec(level: object) -> str:
    """The agent spec of ladder level ``level`` (the text after ``level:``, or an int); ``ValueError`` in one line
    listing the levels for anything but 1 ... 8."""
    text = str(level) if isinstance(level, int) and not isinstance(level, bool) else level
    if not isinstance(text, str) or text not in {str(k) for k in LADDER}:
        if level is None:
            shown = "none"
        else:
            shown = repr(level if not isinstance(level, str) or len(level) <= 40 else level[:40] + "...")
        raise ValueError(f"level takes one level, 1 to {len(LADDER)}, got {shown}: {levels()}")
    return LADDER[int(text)]
