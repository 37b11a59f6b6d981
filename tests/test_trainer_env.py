"""The trainers' configs hold an ``EnvConfig``: the YAML ``env`` mapping is parsed once, when the config is loaded,
and only the typed value travels down; ``config.json`` writes it back as the fields that differ from the standard
rules."""

from __future__ import annotations

import json

import pytest

import trinity_env.spec.config as spec_config
from training.az_config import AZConfig
from training.az_selfplay import LocalSelfPlay
from training.config import TrainConfig, TrainConfigError
from training.rllib_selfplay import RLlibConfig
from training.run_folder import resume_conflicts
from trinity_env.spec.config import EnvConfig, make_config

ODD = {"deck": "random", "draft": "dealt", "reward": "margin", "first_player": 1}


@pytest.mark.parametrize("kind", [TrainConfig, AZConfig, RLlibConfig])
def test_a_trainer_config_holds_the_parsed_env(kind):
    config = kind.from_dict({"env": ODD})
    assert isinstance(config.env, EnvConfig) and config.env == make_config(ODD)
    assert isinstance(kind().env, EnvConfig)
    written = json.loads(json.dumps(config.to_dict()))  # as config.json holds it
    assert written["env"] == {"draft": "dealt", "first_player": 1, "decks": ["random", "same"], "reward": "margin"}
    assert kind.from_dict(written) == config


def test_config_json_writes_only_what_differs_from_the_standard_rules():
    assert TrainConfig.load("quick").to_dict()["env"] == {"draft": "dealt"}
    assert AZConfig.load("az-quick").to_dict()["env"] == {"draft": "dealt"}
    assert TrainConfig().to_dict()["env"] == {} and make_config().changes() == {}


def test_a_parsed_config_passes_through_make_config_unchanged(monkeypatch):
    config = make_config(ODD)
    assert make_config(config) is config
    assert make_config(config, reward="win_loss").reward == "win_loss"  # keywords still apply


def test_the_az_self_play_parses_no_env(monkeypatch):
    config = AZConfig.from_dict({"games_per_iteration": 4, "env": {"draft": "dealt", "open_hands": True}})
    parsed = []
    real = spec_config._validate
    monkeypatch.setattr(spec_config, "_validate", lambda raw: parsed.append(raw) or real(raw))
    games = LocalSelfPlay(config)
    assert parsed == [] and games.games.config is config.env and games.open_hands


def test_a_bad_env_is_refused_naming_the_field():
    with pytest.raises(TrainConfigError, match=r"field 'env': draft must be one of"):
        TrainConfig.from_dict({"env": {"draft": "sometimes"}})
    with pytest.raises(TrainConfigError, match=r"field 'env' must map rules fields to values, got 'dealt'"):
        AZConfig.from_dict({"env": "dealt"})


def test_resume_compares_the_rules_not_how_they_are_written():
    saved = TrainConfig.from_dict({"env": {"draft": "pick"}}).to_dict() | {"env": {"draft": "pick"}}
    assert resume_conflicts(TrainConfig(), saved) == []  # {"draft": "pick"} and {} are the standard rules
    assert resume_conflicts(TrainConfig(), saved | {"env": {"draft": "dealt"}}) == ["env: {'draft': 'dealt'} -> {}"]
