"""What a newcomer meets in the terminal (issue 43), run as they would run it: ``trinity ...`` in a subprocess.

``solve`` answers in sentences first (JSON with ``--json FILE``), says "this is a replay" when handed one and exits
3 when its budget runs out; ``accuracy`` says why a count has fewer positions than ``--limit`` asked and what a
value MSE above 1 means; every exit status in the guide's table is produced by a real command, one case each.
"""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from trinity_env.cli import common

ROOT = Path(__file__).resolve().parent.parent
TRINITY = [sys.executable, "-m", "trinity_env.cli"]
_RUN_CLI = (
    "import signal, sys; signal.signal(signal.SIGINT, signal.default_int_handler); "
    "from trinity_env.cli import main; sys.exit(main(sys.argv[1:]))"
)  # Ctrl-C's default handler even where the test runner ignores SIGINT (a background job)
ENDGAME = str(ROOT / "examples" / "positions" / "endgame.json")
OPENING = str(ROOT / "examples" / "positions" / "opening.json")
REPLAY = str(ROOT / "examples" / "replays" / "mcts_vs_mcts.json")


def trinity(*argv: str, timeout: float = 120) -> subprocess.CompletedProcess:
    return subprocess.run([*TRINITY, *argv], capture_output=True, text=True, timeout=timeout, cwd=ROOT)


def _error_line(done: subprocess.CompletedProcess, command: str) -> str:
    """The one error line on stderr (a cold cache's "preparing ..." lines left out)."""
    lines = [line for line in done.stderr.splitlines() if not line.startswith(("preparing the", "ready ("))]
    assert len(lines) == 1 and lines[0].startswith(f"trinity {command}: "), done.stderr
    return lines[0]


# ---------------------------------------------------------------------- trinity solve


def test_solve_answers_in_sentences_and_writes_json_on_request(tmp_path):
    out = tmp_path / "solved.json"
    done = trinity("solve", ENDGAME, "--json", str(out))
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert lines[0] == "Player 1 (to move) wins with perfect play."
    assert re.fullmatch(r"10 of its 24 legal moves win: 235A on tile 3, .*, 4646 on tile 11\.", lines[1]), lines[1]
    assert re.fullmatch(r"Searched [0-9,]+ nodes in [0-9.]+ s\.", lines[2]), lines[2]
    assert lines[3] == f"wrote {out}"
    data = json.loads(out.read_text())
    assert data["winner"] == 1 and data["value"] == 1 and len(data["best_moves"]) == 10
    assert data["nodes"] == int(lines[2].split()[1].replace(",", ""))


def test_solve_out_of_budget_is_status_3_not_bad_input():
    done = trinity("solve", OPENING, "--max-nodes", "1000")
    assert done.returncode == common.EXIT_BUDGET == 3
    line = _error_line(done, "solve")
    assert "not solved within the budget" in line and "a larger --max-seconds or --max-nodes" in line
    assert done.stdout == ""


def test_solve_handed_a_replay_says_so_and_what_to_run_instead():
    done = trinity("solve", REPLAY)
    assert done.returncode == 2
    line = _error_line(done, "solve")
    assert "is a replay, not a position" in line and f"trinity review {REPLAY}" in line
    assert "unknown position field" not in line


# ---------------------------------------------------------------------- trinity accuracy


def test_accuracy_says_why_a_count_has_fewer_positions_than_its_limit():
    done = trinity("accuracy", "score", "--agents", "greedy", "--limit", "3", "--empty", "4-5", "--quiet")
    assert done.returncode == 0, done.stderr
    assert "| 4 | 3 |" in done.stdout and "| 5 | 1 |" in done.stdout  # the shipped set's first three at 5: two lost
    note = next(line for line in done.stdout.splitlines() if line.startswith("Positions scored for moves"))
    assert "--limit 3 takes the first 3 of each count" in note
    assert "3 of 3 at 4 empty, 1 of 3 at 5 empty" in note and "The other 2 are lost for the mover" in note


def test_accuracy_explains_a_value_mse_above_1():
    done = trinity(
        "accuracy", "score", "--agents", "ppo-standard", "--limit", "3", "--empty", "4", "--quiet", timeout=300
    )
    assert done.returncode == 0, done.stderr
    mse = float(re.search(r"\| ppo-standard \| 4 \| [^|]+\| ([0-9.]+) \|", done.stdout).group(1))
    assert mse > 1  # the shipped PPO network's critic on these three positions
    assert "A value MSE above 1 (ppo-standard)" in done.stdout and "unbounded" in done.stdout


# ---------------------------------------------------------------------- examples/maskable_ppo.py


@pytest.mark.e2e  # a MaskablePPO update and four games: about 15 CPU seconds
def test_the_maskable_ppo_example_says_what_it_does_how_long_and_ends_with_an_interval():
    pytest.importorskip("sb3_contrib")
    done = subprocess.run(
        [sys.executable, "examples/maskable_ppo.py", "--steps", "512", "--eval-games", "4", "--seed", "3"],
        capture_output=True,
        text=True,
        timeout=300,
        cwd=ROOT,
    )
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert lines[0].startswith("MaskablePPO against the random player on dealt hands: 512 training steps")
    assert "then 4 evaluation games" in lines[0] and "estimate" in lines[0]
    assert re.fullmatch(r"  512/512 steps, [0-9.]+ (s|min): about [0-9.]+ (s|min) left(; won .*)?", lines[1]), lines
    assert any(re.fullmatch(r"  4/4 games: won [0-9]+% so far", line) for line in lines), lines
    assert re.fullmatch(
        r"MaskablePPO after 512 steps: wins [0-9]+% \[[0-9]+%, [0-9]+%\] of 4 games against random "
        r"\(95% Wilson interval; [0-9.]+ (s|min) in all\)",
        lines[-1],
    ), lines[-1]


# ---------------------------------------------------------------------- training's progress and figures


def _ppo_config(tmp_path: Path) -> Path:
    from trainer_runs import PPO_FOUR_UPDATES

    config = tmp_path / "tiny.yaml"
    config.write_text(json.dumps({"trainer": "ppo"} | PPO_FOUR_UPDATES | {"eval_endgames": True}))  # JSON is YAML
    return config


@pytest.mark.e2e  # a whole trainer in its own process (make test-e2e); the fast twin below runs it in this one
def test_the_ppo_bar_shows_losses_and_reward_and_every_evaluation_shows_progress(tmp_path):
    done = trinity("train", str(_ppo_config(tmp_path)), "--run", str(tmp_path / "run"), timeout=300)
    assert done.returncode == 0, done.stderr
    _check_ppo_bars(done.stderr, done.stdout)


def test_the_ppo_bar_shows_losses_and_reward_in_process(tmp_path, capsys):
    """The e2e test above without the process start: the trainer's own bars and lines, the same checks."""
    from training.fast_ppo import main

    main(["--config", str(_ppo_config(tmp_path)), "--run", str(tmp_path / "run")])
    captured = capsys.readouterr()
    _check_ppo_bars(captured.err, captured.out)


def _check_ppo_bars(stderr: str, stdout: str) -> None:
    bars = stderr.replace("\r", "\n")
    ppo = [line for line in bars.splitlines() if line.startswith("fast_ppo")]
    assert re.search(r"policy loss -?[0-9.]+, value loss [0-9.]+, reward [-+][0-9.]+", ppo[-1]), ppo[-1]
    assert re.search(r"random [0-9]+%, greedy [0-9]+%", ppo[-1]), "the last evaluation's win rates"
    evaluating = [line for line in bars.splitlines() if line.startswith("evaluating")]
    assert any("vs greedy" in line for line in evaluating) and any("endgame suite" in line for line in evaluating)
    assert any(re.search(r"\b8/\d+ ", line) for line in evaluating), "counted game by game: 2 opponents x 4 games"
    out = stdout
    assert "measuring best.pt (from step" in out and out.index("measuring best.pt") < out.index("on fresh games:")


@pytest.mark.e2e  # a whole trainer in its own process (make test-e2e); the fast twin below runs it in this one
def test_the_alphazero_bar_ends_in_a_figure_not_a_comma(tmp_path):
    from trainer_runs import AZ_TWO_ITERATIONS

    config = tmp_path / "az.yaml"
    config.write_text(
        json.dumps({"trainer": "alphazero"} | AZ_TWO_ITERATIONS | {"eval_every_games": 16})
    )  # no eval yet
    done = trinity("train", str(config), "--run", str(tmp_path / "run"), timeout=300)
    assert done.returncode == 0, done.stderr
    _check_az_bars(done.stderr)


def test_the_alphazero_bar_ends_in_a_figure_not_a_comma_in_process(tmp_path, capsys):
    """The e2e test above without the process start: the trainer's own bar, the same checks."""
    from trainer_runs import AZ_TWO_ITERATIONS

    from training.alphazero import train
    from training.az_config import AZConfig

    train(AZConfig.from_dict(AZ_TWO_ITERATIONS | {"eval_every_games": 16}), tmp_path / "run", progress=True)
    _check_az_bars(capsys.readouterr().err)


def _check_az_bars(stderr: str) -> None:
    bars = [line for line in stderr.replace("\r", "\n").splitlines() if line.startswith("alphazero")]
    assert any(re.search(r"policy [0-9.]+, value [0-9.]+\]", line) for line in bars), bars
    assert not any(", ]" in line for line in bars), bars


def test_exploit_prints_percentages_as_train_does():
    done = trinity("exploit", "--agent", "random", "--steps", "256", "--games", "4", "--seed", "1", timeout=300)
    assert done.returncode == 0, done.stderr
    line = next(line for line in done.stdout.splitlines() if line.startswith("exploiter vs random"))
    assert re.search(r"win rate [0-9]+\.[0-9]% \[[0-9]+\.[0-9]%, [0-9]+\.[0-9]%\] over 4 seat-swapped games", line), (
        line
    )
    assert re.search(r"evaluating: 4/4 games against random, won [0-9.]+% so far", done.stderr), done.stderr


def test_the_learning_curve_legend_covers_no_curve():
    from training.report import learning_curve_figure

    results = {"random": (0.9, 0.8, 0.95), "greedy": (0.6, 0.5, 0.7), "endgames": (0.4, 0.3, 0.5)}
    history = [{"steps": s, "results": results} for s in (1000, 2000, 3000)]
    figure = learning_curve_figure(history, "a run", "steps", "learner steps")
    figure.canvas.draw()
    axes = figure.axes[0]
    legend, inside = axes.get_legend().get_window_extent(), axes.get_window_extent()
    assert legend.x0 >= inside.x1, "the legend stands to the right of the axes"
    assert legend.x1 <= figure.bbox.x1 and legend.y0 >= figure.bbox.y0, "and inside the picture"


# ---------------------------------------------------------------------- trinity play


def _play(stdin: str, *argv: str) -> str:
    done = subprocess.run([*TRINITY, "play", *argv], input=stdin, capture_output=True, text=True, timeout=300, cwd=ROOT)
    assert done.returncode == 0, done.stderr
    return done.stdout


def test_play_warns_once_when_a_policy_trained_on_dealt_hands_plays_the_draft(tmp_path):
    run = tmp_path / "run"
    run.mkdir()
    (run / "best.pt").write_bytes((ROOT / "trinity_env" / "agents" / "data" / "ppo-standard.pt").read_bytes())
    (run / "config.json").write_text(json.dumps({"env": {"draft": "dealt"}, "draft_share": 0.0}))
    lines = _play("quit\n", "--opponent", f"{run}/best", "--seed", "0", "--seat", "0").splitlines()
    warnings = [line for line in lines if line.startswith("warning:")]
    assert warnings == [lines[1]], lines[:3]  # one line, right after "You are player ..."
    assert "trained on dealt hands only" in warnings[0] and "draft: dealt" in warnings[0]
    # the same policy on dealt hands, or one that trained on the draft too, plays without it
    dealt = tmp_path / "dealt.yaml"
    dealt.write_text("draft: dealt\n")
    assert "warning:" not in _play("quit\n", "--opponent", f"{run}/best", "--seed", "0", "--config", str(dealt))
    (run / "config.json").write_text(json.dumps({"env": {"draft": "dealt"}, "draft_share": 0.25}))
    assert "warning:" not in _play("quit\n", "--opponent", f"{run}/best", "--seed", "0", "--seat", "0")


def test_the_draft_warning_is_for_a_game_with_a_draft_only(tmp_path):
    """Given hands (``draft: fixed``) are no draft either: no picks to be untrained at."""
    from trinity_env.agents.spec import player
    from trinity_env.play import untrained_draft
    from trinity_env.spec.config import EnvConfig

    run = tmp_path / "run"
    run.mkdir()
    (run / "best.pt").write_bytes((ROOT / "trinity_env" / "agents" / "data" / "ppo-standard.pt").read_bytes())
    (run / "config.json").write_text(json.dumps({"env": {"draft": "dealt"}}))
    who = player(f"{run}/best")
    assert "trained on dealt hands only" in untrained_draft(who, EnvConfig(draft="pick"))
    hands = (tuple(range(8)), tuple(range(8)))
    assert untrained_draft(who, EnvConfig(draft="fixed", hands=hands)) is None
    assert untrained_draft(who, EnvConfig(draft="dealt")) is None


def test_play_says_what_my_placement_captured_before_the_opponent_replies(tmp_path):
    dealt = tmp_path / "dealt.yaml"
    dealt.write_text("draft: dealt\n")
    out = _play("5555 7\n5A23 11\nquit\n", "--opponent", "greedy", "--seed", "0", "--seat", "1", "--config", str(dealt))
    said = [line.removeprefix("your move> ") for line in out.splitlines() if re.search(r" plays? ....? on tile", line)]
    assert said[:4] == [
        "you play 5555 on tile 7: no capture",
        "greedy plays A541 on tile 12: captures tile 7",
        "you play 5A23 on tile 11: captures tile 12, and the captured cards flip tile 7 (domino)",
        "greedy plays 9146 on tile 13: captures tile 12, and the captured cards flip tile 7 (domino)",
    ]


# ---------------------------------------------------------------------- notebooks cite sections that exist


def _anchors(page: Path) -> set[str]:
    headings = re.findall(r"^#+ (.+)$", page.read_text(encoding="utf-8"), flags=re.MULTILINE)
    return {re.sub(r"[^a-z0-9 -]", "", heading.lower()).strip().replace(" ", "-") for heading in headings}


@pytest.mark.parametrize("notebook", sorted((ROOT / "notebooks").glob("*.ipynb")), ids=lambda p: p.name)
def test_the_notebooks_cite_sections_that_exist(notebook):
    cells = json.loads(notebook.read_text(encoding="utf-8"))["cells"]
    text = "\n".join("".join(cell["source"]) for cell in cells if cell["cell_type"] == "markdown")
    assert "§" not in text, "a section sign names a section of a file the repository does not hold"
    for target, anchor in re.findall(r"\]\(([^)#\s]+\.md)(?:#([^)\s]+))?\)", text):
        page = (notebook.parent / target).resolve()
        assert page.is_file(), target
        assert not anchor or anchor in _anchors(page), f"{target}#{anchor}"


# ---------------------------------------------------------------------- exit statuses: the guide's table, each one


def _documented_statuses() -> dict[int, str]:
    """The exit-status table of docs/guide.md: status -> meaning."""
    text = (ROOT / "docs" / "guide.md").read_text()
    section = text.split("## Exit statuses", 1)[1].split("\n## ", 1)[0]
    rows = re.findall(r"^\| (\d+) \| ([^|]+) \|", section, flags=re.MULTILINE)
    return {int(status): meaning.strip() for status, meaning in rows}


def _broken_pipe() -> int:
    """``trinity show --all REPLAY`` whose reader went away before it wrote (``| head -0``)."""
    proc = subprocess.Popen([*TRINITY, "show", "--all", REPLAY], stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    proc.stdout.close()  # before the interpreter has even started: its first write finds no reader
    proc.stderr.read()
    return proc.wait(timeout=120)


def _interrupted(sig: signal.Signals) -> int:
    """``trinity solve`` on a position it cannot finish soon, stopped by ``sig`` once it says it is searching."""
    argv = [*TRINITY, "solve", OPENING, "--max-seconds", "600", "--threads", "1"]
    if sig == signal.SIGTERM:  # the status as a shell reports a process that SIGTERM ended: 128 + 15
        script = (
            '"$@" 2>"$ERR" & pid=$!; until grep -q "searching" "$ERR" || ! kill -0 $pid; do sleep 0.2; done; '
            "kill -TERM $pid; wait $pid"
        )
        env = os.environ | {"ERR": str(Path(os.environ.get("TMPDIR", "/tmp")) / f"solve-{os.getpid()}.err")}
        done = subprocess.run(
            ["bash", "-c", script, "bash", *argv], capture_output=True, timeout=120, cwd=ROOT, env=env
        )
        Path(env["ERR"]).unlink(missing_ok=True)
        return done.returncode
    proc = subprocess.Popen(
        [sys.executable, "-c", _RUN_CLI, *argv[len(TRINITY) :]],
        stderr=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        for line in proc.stderr:  # wait until it is searching
            if line.startswith("trinity solve: searching"):
                break
        proc.send_signal(sig)
        proc.communicate(timeout=60)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    return proc.returncode


CASES = {
    0: lambda tmp: trinity("show", ENDGAME).returncode,
    1: lambda tmp: _broken_pipe(),
    2: lambda tmp: trinity("solve", str(tmp / "missing.json")).returncode,
    3: lambda tmp: trinity("solve", OPENING, "--max-nodes", "1000").returncode,
    130: lambda tmp: _interrupted(signal.SIGINT),
    143: lambda tmp: _interrupted(signal.SIGTERM),
}


def test_the_guide_documents_every_exit_status_the_code_has():
    documented = _documented_statuses()
    named = {value for name, value in vars(common).items() if name.startswith("EXIT_")}
    assert set(documented) == named == set(CASES), (documented, named)
    assert len(set(documented.values())) == len(documented), "each status means one thing"


@pytest.mark.skipif(os.name != "posix", reason="signals and pipes as POSIX shells see them")
@pytest.mark.parametrize("status", sorted(CASES))
def test_each_documented_exit_status_comes_from_a_real_command(status, tmp_path):
    assert status in _documented_statuses()
    assert CASES[status](tmp_path) == status
