"""Adapters to other RL libraries; each needs its extra (``rllib``: ``pip install "trinity-towers[rllib]"``)."""
