"""Measuring agents: games between them, the round-robin arena, ratings, the endgame suite."""
