"""Registration with PettingZoo's and gymnasium's registries (PettingZoo 1.27 prefers them to module imports)."""

from __future__ import annotations

ENV_ID = "trinity_env/TrinityTowers-v0"


def register_envs() -> None:
    """Register the AEC env with PettingZoo and the single-agent env with gymnasium, once."""
    import gymnasium
    import pettingzoo

    if ENV_ID not in pettingzoo.aec_registry:
        pettingzoo.register("aec", ENV_ID, entry_point="trinity_env.envs.aec:env")
    if ENV_ID not in gymnasium.registry:
        gymnasium.register(ENV_ID, entry_point="trinity_env.envs.single_agent:TrinityTowersEnv")
