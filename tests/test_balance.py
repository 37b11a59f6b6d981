"""The balance lab: game records, the summaries' arithmetic, worker independence, `trinity balance`."""

from __future__ import annotations

import json

import pytest

from trinity_env.cli import main
from trinity_env.core import Card
from trinity_env.envs import make_config
from trinity_env.evaluation.balance import GameRecord, _summarise, play_recorded, run_balance
from trinity_env.evaluation.match import RunInterrupted

STANDARD = make_config(None).to_dict()


def test_a_recorded_game_is_whole_and_reproducible():
    record = play_recorded(("mcts:30,draft=search", "mcts:30,draft=search"), STANDARD, seed=5)
    assert record == play_recorded(("mcts:30,draft=search", "mcts:30,draft=search"), STANDARD, seed=5)
    assert all(len(hand) == 8 for hand in record.hands)  # hand size with 16-card decks
    assert all(0 <= count <= STANDARD["max_a_cards"] for count in record.a_cards)
    assert record.placements <= 15 and record.winner in (0, 1)
    assert record.termination in ("lane_control", "full_board")
    assert record.termination == "lane_control" or record.placements == 15


def test_the_a_limit_binds_in_recorded_games():
    for seed in range(6):
        record = play_recorded(("mcts:20,draft=search",) * 2, STANDARD | {"max_a_cards": 2}, seed)
        assert max(record.a_cards) <= 2


def _record(first, winner, hands, domino=(0, 0), last=False, termination="full_board"):
    return GameRecord(first, winner, termination, hands, (0, 0), domino, last, 15)


def test_summaries_count_what_they_say():
    deck = [Card("5555")] * 3
    records = [
        _record(0, 0, ((0, 1), (1, 2)), domino=(2, 0), last=True, termination="lane_control"),
        _record(1, 0, ((0,), (2,)), domino=(0, 1)),
        _record(0, None, ((0,), (1,)), domino=(1, 1)),
        _record(1, 1, ((1,), (2,))),
    ]
    s = _summarise(records, deck)
    assert s["first_mover_wins"]["share"] == pytest.approx((1 + 0 + 0.5 + 1) / 4)
    assert s["lane_control_endings"]["share"] == 0.25
    assert s["domino_fired"]["share"] == 0.75 and s["domino_in_last_placement"]["share"] == 0.25
    # uneven domino games: the first (player 0 more, won) and the second (player 1 more, lost)
    assert s["more_domino_flips_wins"] == pytest.approx(
        s["more_domino_flips_wins"] | {"hits": 1, "share": 0.5, "total": 2}
    )
    assert s["first_mover_wins"]["hits"] == 2.5  # a draw is half a win
    card0, card2 = s["cards"][0], s["cards"][2]
    assert card0["picked"]["share"] == pytest.approx(3 / 8)  # in 3 of 8 hands
    assert card0["win_rate_when_picked"]["share"] == pytest.approx((1 + 1 + 0.5) / 3)
    assert card2["picked"]["total"] == 8 and card2["win_rate_when_picked"]["share"] == pytest.approx(1 / 3)


def test_results_do_not_depend_on_workers_and_the_report_is_written(tmp_path):
    kwargs = {"games": 6, "seed": 2, "a_limits": (2, 3), "progress": False}
    one = run_balance(["mcts:20,draft=search"], workers=1, **kwargs)
    two = run_balance(["mcts:20,draft=search"], workers=2, **kwargs)
    assert one.studies == two.studies
    assert list(one.studies) == ["mcts:20,draft=search", "mcts:20,draft=search max_a=2"]
    assert one.studies["mcts:20,draft=search max_a=2"]["max_a_cards"] == 2
    paths = one.write(tmp_path)
    assert [p.name for p in paths] == [
        "balance.json",
        "balance.md",
        "balance_overview.png",
        "balance_cards.png",
        "balance_a_limit.png",
    ]
    assert all(p.read_bytes()[:4] == b"\x89PNG" for p in paths[2:])
    assert "| mcts:20,draft=search max_a=2 | 6 | 2 |" in paths[1].read_text()
    assert json.loads(paths[0].read_text())["studies"] == json.loads(json.dumps(one.studies))


def test_the_command_prints_the_tables_and_writes_the_plots(tmp_path, capsys):
    out = tmp_path / "lab"
    argv = ["balance", "--games", "4", "--agents", "greedy", "--a-limits", "3", "--workers", "1", "--quiet"]
    assert main([*argv, "--out", str(out)]) == 0
    printed = capsys.readouterr().out
    assert "first mover wins" in printed and "wins when picked" in printed
    assert (out / "balance.json").is_file() and (out / "balance_cards.png").is_file()


def test_bad_balance_input_is_refused():
    with pytest.raises(ValueError, match="games must be at least 1"):
        run_balance(["greedy"], games=0, progress=False)
    with pytest.raises(ValueError, match="no agent named"):
        run_balance(["nobody"], games=2, progress=False)


def test_the_balance_page_shows_the_measured_study():
    from pathlib import Path

    from trinity_env.evaluation.balance import BalanceReport

    root = Path(__file__).resolve().parent.parent
    report = BalanceReport.from_json(json.loads((root / "docs" / "balance" / "balance.json").read_text()))
    page = (root / "docs" / "balance.md").read_text(encoding="utf-8")
    assert report.markdown().strip() in page
    fair = report.studies["mcts:200,draft=search"]["first_mover_wins"]
    assert fair["low"] < 0.5 < fair["high"], "the page says the first mover has no measurable edge"


def test_an_interrupted_run_keeps_what_was_played(tmp_path, monkeypatch):
    from trinity_env.evaluation import balance
    from trinity_env.evaluation.balance import BalanceReport

    real = balance._play_chunk
    calls = []

    def chunk(task):
        calls.append(task)
        if len(calls) > 1:
            raise KeyboardInterrupt  # Ctrl-C during the second chunk
        return real(task)

    monkeypatch.setattr(balance, "_play_chunk", chunk)
    with pytest.raises(KeyboardInterrupt) as stop:
        run_balance(["greedy"], 20, a_limits=(2, 3), workers=1, progress=False)
    assert isinstance(stop.value, RunInterrupted)
    report = stop.value.partial
    assert report.partial and report.games == 20
    assert [s["games"] for s in report.studies.values()] == [10, 0]
    empty = report.studies["greedy max_a=2"]
    assert empty["first_mover_wins"]["share"] is None and empty["mean_placements"] is None
    assert "interrupted after 10 of 40 games" in report.table()
    assert "**Partial results: interrupted after 10 of 40 games" in report.markdown()
    paths = report.write(tmp_path)
    data = json.loads(paths[0].read_text())
    assert data["partial"] is True
    assert BalanceReport.from_json(data).markdown() == report.markdown()


def test_a_whole_run_reads_as_before():
    report = run_balance(["greedy"], 2, a_limits=(3,), workers=1, progress=False)
    assert not report.partial and "partial" not in report.to_json() and "Partial" not in report.markdown()


def test_bad_a_limits_are_refused_before_any_game():
    from trinity_env.spec.config import ConfigError

    for limit in (9, -1, 2.0, True):
        with pytest.raises(ConfigError, match="max_a_cards"):
            run_balance(["greedy"], 2, a_limits=(limit,), progress=False)


def test_solved_openings_travel_with_the_report_and_are_shown_beside_the_studies(tmp_path):
    from trinity_env.evaluation.balance import BalanceReport
    from trinity_env.evaluation.openings import LateGame, solve_openings
    from trinity_env.evaluation.openings_summary import file_summary

    out = tmp_path / "deals.jsonl"
    solve_openings(range(5), 10**9, out, table_bits=16, deal=LateGame(9), progress=False)
    openings = file_summary(out)
    plain = run_balance(["greedy"], 2, a_limits=(3,), workers=1, progress=False)
    assert "openings" not in plain.to_json() and "Perfect play" not in plain.markdown()
    report = run_balance(["greedy"], 2, a_limits=(3,), workers=1, progress=False, openings=openings)
    assert report.studies == plain.studies
    again = BalanceReport.from_json(json.loads(json.dumps(report.to_json())))
    assert again.openings == json.loads(json.dumps(openings)) and again.markdown() == report.markdown()
    wins = openings["first_player"]["wins"]
    line = report.openings_line()
    assert line.startswith("Perfect play (5 dealt games solved from the first placement, 0 unsolved, in ")
    assert f"the first mover wins {wins['share']:.1%} [{wins['low']:.1%}, {wins['high']:.1%}]" in line
    assert line in report.markdown() and "perfect play (solved openings)" in report.table()


def test_the_perfect_play_line_bounds_the_share_over_all_deals_when_some_are_unsolved(tmp_path):
    from trinity_env.evaluation.balance import BalanceReport
    from trinity_env.evaluation.openings import LateGame, solve_openings
    from trinity_env.evaluation.openings_summary import file_summary

    out = tmp_path / "deals.jsonl"
    solve_openings(range(4), 10**9, out, table_bits=16, deal=LateGame(9), progress=False)
    solve_openings(range(4, 6), 10, out, table_bits=16, deal=LateGame(9), progress=False)  # out of budget
    openings = file_summary(out)
    solved, unsolved = openings["solved"], openings["unsolved"]
    assert unsolved >= 1 and solved + unsolved == 6
    wins = round(openings["first_player"]["wins"]["share"] * solved)
    report = BalanceReport(["greedy"], 2, 0, {}, False, openings)
    line = report.openings_line()
    assert f"{solved} dealt games solved from the first placement, {unsolved} unsolved" in line
    assert line.endswith(
        f"Over all 6 deals, each unsolved one counted as not won, then as won: "
        f"{wins / 6:.1%} to {(wins + unsolved) / 6:.1%}."
    )
    data = BalanceReport(["greedy"], 2, 0, {}, False, openings).to_json()
    assert BalanceReport.from_json(json.loads(json.dumps(data))).openings_line() == line


def test_a_saved_report_whose_openings_summary_lacks_the_all_deals_bounds_is_refused_in_one_line():
    from pathlib import Path

    from trinity_env.core import ArgumentError
    from trinity_env.evaluation.balance import BalanceReport

    saved = json.loads((Path(__file__).resolve().parents[1] / "docs" / "balance" / "openings-summary.json").read_text())
    data = BalanceReport(["greedy"], 2, 0, {}, False, saved).to_json()
    assert "Over all" in BalanceReport.from_json(data).openings_line()  # the committed summary: bounds and all
    del data["openings"]["wins_all_deals"]  # a report written before the bounds were summarised
    with pytest.raises(ArgumentError, match=r"^a balance report's openings summary lacks 'wins_all_deals'") as refused:
        BalanceReport.from_json(data)
    assert "\n" not in str(refused.value)
