"""``trinity play`` in tests: a reader for ``play_in_terminal`` that answers every prompt with a legal move."""

from __future__ import annotations


class FirstLegal:
    """A ``read`` for ``play_in_terminal`` that plays the first legal move of the position it was last shown.

    It sees the positions by wrapping ``trinity_env.play._show`` through ``monkeypatch``; ``state`` is the last one.
    """

    def __init__(self, monkeypatch):
        import trinity_env.play as play_module

        self.state = None
        original = play_module._show

        def spy(state, me, open_hands, out):
            self.state = state
            original(state, me, open_hands, out)

        monkeypatch.setattr(play_module, "_show", spy)

    def __call__(self, prompt: str) -> str:
        if self.state.phase.name == "DRAFT":
            return str(self.state.legal_actions()[0])
        move = self.state.legal_moves()[0]
        return f"{move.card} {move.tile}"
