"""Self-play training of Trinity Towers agents (needs the ``train`` extra: torch, SB3)."""
