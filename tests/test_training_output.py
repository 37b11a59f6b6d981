"""Training runs that say what is happening (issue 26, item 4).

Each evaluation printed as it finishes, ``metrics.csv`` with a header row (a file without one refused in one line,
every committed one with it), ``--resume`` on a finished run saying so at once, and ``--total-steps`` /
``--total-games`` extending a run from the command line. Tiny configs: each run takes seconds.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml
from trainer_runs import AZ_TWO_ITERATIONS, PPO_FOUR_UPDATES

from training.config import TrainConfig, TrainConfigError
from training.evaluation import read_metrics
from training.fast_ppo import main as ppo_main
from training.fast_ppo import train
from training.skeleton import evaluation_line
from trinity_env.agents.networks.ppo_network import load_checkpoint
from trinity_env.core import TrinityError

TINY = PPO_FOUR_UPDATES
AZ_TINY = AZ_TWO_ITERATIONS
HEADER = "steps,seconds,measure,rate,low,high"


def _config_file(tmp_path: Path, fields: dict, name: str = "tiny.yaml", trainer: str = "ppo") -> str:
    path = tmp_path / name
    path.write_text(yaml.safe_dump({"trainer": trainer} | fields))
    return str(path)


def test_each_evaluation_is_printed_as_it_finishes_and_metrics_csv_has_a_header(tmp_path, capsys):
    history = train(TrainConfig.from_dict(TINY), tmp_path / "loud")
    printed = capsys.readouterr().out.splitlines()
    lines = [line for line in printed if " steps (" in line]
    assert [line.split(" (")[0] for line in lines] == ["512 steps", "1,024 steps"]
    for line, record in zip(lines, history, strict=True):  # the figures metrics.csv and the history hold
        rate, low, high = record["results"]["greedy"]
        assert f"vs greedy {rate:.1%} [{low:.1%}, {high:.1%}]" in line
        assert "vs random " in line and "endgame suite " in line
    text = (tmp_path / "loud" / "metrics.csv").read_text()
    assert text.splitlines()[0] == HEADER and text.count(HEADER) == 1
    rows = read_metrics(tmp_path / "loud" / "metrics.csv")
    assert [(int(r[0]), r[2]) for r in rows] == [(s, m) for s in (512, 1024) for m in ("random", "greedy", "endgames")]
    train(TrainConfig.from_dict(TINY), tmp_path / "quiet", progress=False)  # progress=False: no bar, no lines
    assert capsys.readouterr().out == ""


def test_the_evaluation_line_puts_the_measures_against_perfect_play_on_a_second_line():
    results = {"random": (0.75, 0.3, 0.95), "exact:policy": (0.5, 0.4, 0.6), "exact:value@10": (0.25, 0.2, 0.3)}
    line = evaluation_line(2048, "games", 95.0, results)
    first, second = line.splitlines()
    assert first == "2,048 games (1.6 min): vs random 75.0% [30.0%, 95.0%]"
    assert second == "  policy keeps exact value 50.0% [40.0%, 60.0%], value sign exact (10 empty) 25.0% [20.0%, 30.0%]"
    assert evaluation_line(512, "steps", 12.3, {"endgames": (0.5, 0.25, 0.75)}, "where it stopped") == (
        "512 steps (12 s, where it stopped): endgame suite 50.0% [25.0%, 75.0%]"
    )


def test_a_metrics_csv_without_its_header_is_refused_in_one_line_and_a_resume_rewrites_it_whole(tmp_path):
    config = TrainConfig.from_dict(TINY)
    train(config, tmp_path, progress=False, stop_at=512)
    metrics = tmp_path / "metrics.csv"
    lines = metrics.read_text().splitlines()
    assert lines[0] == HEADER
    metrics.write_text("\n".join(lines[1:]) + "\n")  # as a run from before the header wrote it
    with pytest.raises(TrinityError, match=r"not a metrics\.csv \(its first row must be the header") as error:
        read_metrics(metrics)
    assert "\n" not in str(error.value) and "got '512," in str(error.value)
    train(config, tmp_path, resume=True, progress=False)
    text = metrics.read_text()
    assert text.splitlines()[0] == HEADER and text.count(HEADER) == 1
    rows = read_metrics(metrics)
    assert [int(r[0]) for r in rows] == [512] * 3 + [1024] * 3  # each evaluation once
    assert len(text.splitlines()) == 1 + len(rows)


def test_every_committed_metrics_csv_has_its_header():
    """The documented runs' files are in the current format: ``read_metrics`` reads each, figures and all."""
    root = Path(__file__).resolve().parent.parent
    paths = sorted((root / "docs").rglob("*metrics.csv"))
    assert len(paths) >= 7
    for path in paths:
        rows = read_metrics(path)
        assert rows and all(len(row) == 6 and row[0].isdigit() for row in rows), path


def test_resuming_a_finished_run_says_so_at_once_and_total_steps_extends_it(tmp_path, capsys):
    from trinity_env.cli import main as trinity

    config, run = _config_file(tmp_path, TINY), tmp_path / "run"
    ppo_main(["--config", config, "--run", str(run)])
    capsys.readouterr()
    before = {name: (run / name).read_bytes() for name in ("metrics.csv", "latest.pt", "best.pt", "report.md")}
    assert trinity(["train", config, "--run", str(run), "--resume"]) == 0
    out, err = capsys.readouterr()
    (line,) = out.splitlines()
    assert line.startswith(f"{run} already reached its budget (1,024 steps; total_steps 1,024): nothing to train")
    assert line.endswith("to train on, --resume --total-steps N with N above 1,024") and "report.md" in line
    assert "best.pt" not in out and err == ""  # nothing evaluated again
    assert before == {name: (run / name).read_bytes() for name in before}
    assert train(TrainConfig.from_dict(TINY), run, resume=True, progress=False)[-1]["steps"] == 1024  # Python: history

    ppo_main(["--config", config, "--run", str(run), "--resume", "--total-steps", "1536"])  # no YAML edited
    out = capsys.readouterr().out
    assert "1,536 steps (" in out and "after 1,536 learner steps" in out
    assert load_checkpoint(run / "latest.pt")[1]["steps"] == 1536
    assert json.loads((run / "config.json").read_text())["total_steps"] == 1536  # the run records its budget
    assert [int(r[0]) for r in read_metrics(run / "metrics.csv")][-1] == 1536
    ppo_main(["--config", config, "--run", str(run), "--resume"])  # the YAML's budget: already reached
    assert "already reached its budget (1,536 steps; total_steps 1,024)" in capsys.readouterr().out


@pytest.mark.parametrize(
    ("argv", "message", "trainer_message"),
    [
        (
            ["--total-games", "5"],
            "trinity train: --total-games does not apply to the ppo trainer; its budget is --total-steps N",
            "--total-games does not apply to this trainer (TrainConfig has no total_games): its "
            "budget is --total-steps N",
        ),
        (["--total-steps", "1.5e3"], "expected a whole number >= 1, got '1.5e3'", None),
        (["--total-steps", "0"], "expected a whole number >= 1, got '0'", None),
        (["--total-steps", "1_000"], "expected a whole number >= 1, got '1_000'", None),
        (
            ["--total-steps", "5", "trainer: alphazero"],
            "--total-steps does not apply to the alphazero trainer; its budget is --total-games N",
            None,
        ),
        (["--total-steps", "5", "trainer: rllib"], "--total-steps does not apply to the rllib trainer", None),
    ],
)
def test_the_budget_options_are_strict_and_the_wrong_one_is_refused(tmp_path, capsys, argv, message, trainer_message):
    """``trainer: X`` in ``argv`` is the config's field, not an option."""
    from trinity_env.cli import main as trinity

    trainer = next((word.split(": ")[1] for word in argv if word.startswith("trainer: ")), "ppo")
    argv = [word for word in argv if not word.startswith("trainer: ")]
    config, run = _config_file(tmp_path, TINY, trainer=trainer), tmp_path / "run"
    assert trinity(["train", config, "--run", str(run), "--resume", *argv]) == 2
    (line,) = capsys.readouterr().err.strip().splitlines()
    assert message in line
    assert not run.exists()  # refused before anything was written
    if trainer == "ppo":
        with pytest.raises(SystemExit) as exit_:  # the trainer's own command line refuses it too
            ppo_main(["--config", config, "--run", str(run), *argv])
        assert exit_.value.code == 2 and (trainer_message or message) in capsys.readouterr().err
        assert not run.exists()


def test_trinity_train_takes_the_trainer_from_the_config_and_guesses_none(tmp_path, capsys):
    """The config's ``trainer:`` field chooses the trainer: a config named like AlphaZero's that names none is refused
    in one line naming the field and the choices (the file's name was once taken for it), before any run folder."""
    from training.config import TRAINERS, read_config
    from trinity_env.cli import main as trinity

    shipped = {
        name: read_config(name).trainer()
        for name in ("quick", "standard", "az-quick", "az-standard", "rllib", "jax-quick")
    }
    assert shipped == {
        "quick": "ppo",
        "standard": "ppo",
        "az-quick": "alphazero",
        "az-standard": "alphazero",
        "rllib": "rllib",
        "jax-quick": "jax",
    }
    assert set(shipped.values()) == set(TRAINERS)
    bare, run = tmp_path / "az-mine.yaml", tmp_path / "run"
    bare.write_text(yaml.safe_dump(AZ_TINY))
    assert trinity(["train", str(bare), "--run", str(run)]) == 2
    (line,) = capsys.readouterr().err.strip().splitlines()
    assert "names none in its trainer: field: give one of ppo, alphazero, rllib, jax" in line and not run.exists()
    assert trinity(["train", "quick", "--trainer", "alphazero", "--run", str(run)]) == 2
    assert "--trainer is now the config's trainer: field" in capsys.readouterr().err and not run.exists()
    other = _config_file(tmp_path, TINY, "other.yaml", trainer="alphazero")  # PPO's fields, another trainer named
    with pytest.raises(SystemExit) as exit_:
        ppo_main(["--config", other, "--run", str(run)])
    assert exit_.value.code == 2 and "field 'trainer' is 'alphazero'; this trainer is ppo" in capsys.readouterr().err
    assert TrainConfig.from_dict({"trainer": "ppo"} | TINY) == TrainConfig.from_dict(TINY)  # not a field of the run


def test_trinity_train_reads_its_config_once_and_hands_the_trainer_typed_values(tmp_path, monkeypatch, capsys):
    """``trinity train`` reads the YAML file once, builds the typed config once and calls the trainer's ``run`` with it
    and a ``RunRequest``: no command line is rebuilt for the trainer's own argparse to parse again."""
    import training.config
    import training.fast_ppo
    from training.session import RunRequest
    from trinity_env.cli import main as trinity

    path = _config_file(tmp_path, TINY, "mine.yaml", trainer="ppo")
    reads, loads, calls = [], [], []
    read = training.config.load_yaml
    monkeypatch.setattr(training.config, "load_yaml", lambda *a, **k: reads.append(a[0]) or read(*a, **k))
    load = training.config.YAMLConfig.load.__func__
    monkeypatch.setattr(
        training.config.YAMLConfig, "load", classmethod(lambda cls, *a, **k: loads.append(a[0]) or load(cls, *a, **k))
    )
    monkeypatch.setattr(training.fast_ppo, "run", lambda config, request: calls.append((config, request)))
    monkeypatch.setattr(training.fast_ppo, "main", lambda argv=None: pytest.fail(f"a command line rebuilt: {argv}"))
    assert trinity(["train", str(path), "--run", str(tmp_path / "run"), "--total-steps", "4096"]) == 0
    assert [str(read) for read in reads] == [str(path)] and len(loads) == 1
    ((config, request),) = calls
    assert config == TrainConfig.from_dict(TINY | {"total_steps": 4096})
    assert request == RunRequest(str(path), tmp_path / "run", resume=False, overwrite=False)


def test_the_command_line_budget_applies_to_the_configs_that_have_the_field():
    assert TrainConfig.load("quick", budget={"total_steps": 2048}).total_steps == 2048
    assert TrainConfig.load("quick").total_steps != 2048
    from training.az_config import AZConfig

    assert AZConfig.load("az-quick", budget={"total_games": 64}).total_games == 64
    with pytest.raises(TrainConfigError, match="its budget is --total-games N"):
        AZConfig.load("az-quick", budget={"total_steps": 64})


def test_alphazero_prints_its_evaluations_says_when_finished_and_total_games_extends_it(tmp_path, capsys):
    from training.alphazero import main as az_main

    config, run = _config_file(tmp_path, AZ_TINY, trainer="alphazero"), tmp_path / "run"
    az_main(["--config", config, "--run", str(run)])
    out = capsys.readouterr().out
    assert "8 games (" in out and "16 games (" in out  # printed as they happened (alphazero's default)
    assert (run / "metrics.csv").read_text().splitlines()[0] == "games,seconds,measure,rate,low,high"
    az_main(["--config", config, "--run", str(run), "--resume"])
    (line,) = capsys.readouterr().out.splitlines()
    assert "already reached its budget (16 games; total_games 16)" in line and "--total-games N" in line
    az_main(["--config", config, "--run", str(run), "--resume", "--total-games", "24"])
    assert "24 games (" in capsys.readouterr().out
    assert json.loads((run / "config.json").read_text())["total_games"] == 24
    assert sorted({int(r[0]) for r in read_metrics(run / "metrics.csv")}) == [8, 16, 24]
    with pytest.raises(SystemExit) as exit_:
        az_main(["--config", config, "--run", str(run), "--resume", "--total-steps", "4096"])
    assert exit_.value.code == 2 and "its budget is --total-games N" in capsys.readouterr().err


def test_alphazero_stop_at_ends_a_part_where_it_says_and_resume_goes_on_as_if_unbroken(tmp_path, capsys):
    import torch

    from training.alphazero import main as az_main

    config = _config_file(tmp_path, AZ_TINY, trainer="alphazero")
    az_main(["--config", config, "--run", str(tmp_path / "unbroken")])
    az_main(["--config", config, "--run", str(tmp_path / "parts"), "--stop-at", "8"])
    assert "stopped by --stop-at after 8 of 16 games: --resume continues it" in capsys.readouterr().out
    assert torch.load(tmp_path / "parts" / "latest.pt", weights_only=True)["games"] == 8
    az_main(["--config", config, "--run", str(tmp_path / "parts"), "--resume"])
    models = [torch.load(tmp_path / r / "latest.pt", weights_only=True)["model"] for r in ("unbroken", "parts")]
    unbroken, parts = models
    assert all(torch.equal(unbroken[name], parts[name]) for name in unbroken)
    with pytest.raises(SystemExit) as exit_:
        az_main(["--config", config, "--run", str(tmp_path / "bad"), "--stop-at", "0"])
    assert exit_.value.code == 2 and "--stop-at" in capsys.readouterr().err


@pytest.mark.parametrize("progress", [False, True])
def test_an_evaluation_keeps_no_game_s_states_without_its_bar(monkeypatch, progress):
    """Without a bar nothing watches the evaluation games, so none records its states; with one each game ticks it."""
    import trinity_env.evaluation.match as match
    from training.evaluation import evaluate_agent
    from trinity_env.agents.spec import make

    recorded = []
    real = match.play_game
    monkeypatch.setattr(match, "play_game", lambda *args: recorded.append(args[3] is not None) or real(*args))
    config = TrainConfig.from_dict(PPO_FOUR_UPDATES | {"eval_opponents": ["random"], "eval_games": 2})
    config = TrainConfig.from_dict(config.to_dict() | {"eval_endgames": False})
    assert set(evaluate_agent(make("greedy"), config, seed=0, progress=progress)) == {"random"}
    assert recorded == [progress, progress]
