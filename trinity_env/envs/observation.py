"""The observation, re-exported: its layout and encoder live in ``trinity_env.spec.observation``.

The layout is part of the game's spec, below the envs and the fast engine (whose kernels
must match it bit for bit); this module keeps ``trinity_env.envs.observation`` working.
``docs/observation.md`` documents every entry.
"""

from trinity_env.spec.observation import (
    BOARD_OFFSET,
    OBSERVATION_HIGH,
    OBSERVATION_SIZE,
    OWN_CARD_FEATURES,
    OWN_DECK_OFFSET,
    SCALAR_NAMES,
    SCALARS,
    THEIR_CARD_FEATURES,
    THEIR_DECK_OFFSET,
    TILE_FEATURES,
    action_mask,
    encode_observation,
    observation_dict,
)

__all__ = [
    "BOARD_OFFSET",
    "OBSERVATION_HIGH",
    "OBSERVATION_SIZE",
    "OWN_CARD_FEATURES",
    "OWN_DECK_OFFSET",
    "SCALARS",
    "SCALAR_NAMES",
    "THEIR_CARD_FEATURES",
    "THEIR_DECK_OFFSET",
    "TILE_FEATURES",
    "action_mask",
    "encode_observation",
    "observation_dict",
]
