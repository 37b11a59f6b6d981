"""No file is written before its checks (issue 50, class 8): a trainer checks the files its config names (AlphaZero's
``initial_network``) before its run folder is created, cleared or given a ``config.json``.

The break: a mistyped ``initial_network`` was refused in one line, but ``trinity train`` had already written the run
folder's ``config.json``, so the corrected command was refused ("already holds a run"). The cause was the order in
``training.run_folder.claim``: the trainer's own checks ran inside the claimed folder. Now ``claim`` runs the
config's ``check_files`` first of all; ``test_every_trainer_checks_its_config_s_files_before_its_run_folder`` walks
every module of ``training/`` that claims a run folder, so a new trainer cannot skip it.
"""

from __future__ import annotations

import importlib
from pathlib import Path

import pytest
import yaml
from trainer_runs import AZ_TWO_ITERATIONS

from training.config import TrainConfigError, YAMLConfig

ROOT = Path(__file__).resolve().parent.parent

TRAINERS = {
    "fast_ppo": None,
    "selfplay_ppo": "sb3_contrib",
    "alphazero": None,
    "alphazero_ray": "ray",
    "rllib_selfplay": "ray",
    "jax_ppo": "jax",
}
"""Every module of ``training/`` that claims a run folder, and the extra it needs (skipped without it)."""


def _exit_status(main, argv: list[str]) -> int:
    with pytest.raises(SystemExit) as done:
        main(argv)
        raise SystemExit(0)
    return done.value.code or 0


def test_the_walk_knows_every_trainer():
    claiming = {
        path.stem
        for path in (ROOT / "training").glob("*.py")
        if path.name != "run_folder.py"
        and any(c in path.read_text(encoding="utf-8") for c in ("claim(", "run_and_report("))
    }
    assert claiming == set(TRAINERS), "list the new trainer in TRAINERS"


@pytest.mark.parametrize("trainer", sorted(TRAINERS))
def test_every_trainer_checks_its_config_s_files_before_its_run_folder(trainer, tmp_path, monkeypatch, capsys):
    if TRAINERS[trainer]:
        pytest.importorskip(TRAINERS[trainer])
    module = importlib.import_module(f"training.{trainer}")

    def refused(self) -> None:
        raise TrainConfigError("initial_network planted.pt: refused (planted)")

    monkeypatch.setattr(YAMLConfig, "check_files", refused)  # the hook every config has (raising if it is gone)
    configs = YAMLConfig.__subclasses__()
    while configs:  # and every config class that checks files of its own
        config = configs.pop()
        configs += config.__subclasses__()
        if "check_files" in vars(config):
            monkeypatch.setattr(config, "check_files", refused)
    run = tmp_path / "run"
    for extra in ([], ["--overwrite"]):
        assert _exit_status(module.main, ["--run", str(run), *extra]) == 2
        err = capsys.readouterr().err.strip()
        assert err.endswith("initial_network planted.pt: refused (planted)") and "\n" not in err
        assert not run.exists()
    run.mkdir()
    (run / "config.json").write_text("{}")  # a run there is neither cleared nor rewritten by a refused command
    assert _exit_status(module.main, ["--run", str(run), "--overwrite"]) == 2
    assert (run / "config.json").read_text() == "{}" and sorted(p.name for p in run.iterdir()) == ["config.json"]


def test_a_mistyped_initial_network_leaves_no_run_and_the_corrected_command_runs(tmp_path, capsys):
    """The break on the command line: ``config.json`` is not written, and the command with the typo mended runs."""
    from training import alphazero

    config, run = tmp_path / "az.yaml", tmp_path / "run"
    mistyped = AZ_TWO_ITERATIONS | {"network": "board", "initial_network": str(tmp_path / "pretrianed.pt")}
    config.write_text(yaml.safe_dump(mistyped))
    argv = ["--config", str(config), "--run", str(run), "--stop-at", "8"]
    assert _exit_status(alphazero.main, argv) == 2
    assert "pretrianed.pt" in capsys.readouterr().err
    assert not run.exists()
    config.write_text(yaml.safe_dump(mistyped | {"initial_network": ""}))
    assert _exit_status(alphazero.main, argv) == 0
    assert (run / "config.json").exists() and (run / "latest.pt").exists()
