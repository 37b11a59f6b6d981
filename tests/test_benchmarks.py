"""The benchmarks' one way of printing their figures (``benchmarks.report``): one JSON object with ``--json``, else
the text for a person, both with the load averages before and after the timings."""

from __future__ import annotations

import json

import pytest

from benchmarks import engine, report


def test_report_prints_one_json_object_or_the_text_with_the_load_averages(capsys):
    def lines():
        raise AssertionError("the text is not made for --json")
        yield ""

    result = {"x_per_s": 2.0}
    report(result, True, lines(), "0.10 0.20 0.30")
    printed = json.loads(capsys.readouterr().out)
    assert printed["x_per_s"] == 2.0 and printed["load_average_before"] == "0.10 0.20 0.30"
    assert printed == result and set(printed) == {"x_per_s", "load_average_before", "load_average_after"}
    report({"x_per_s": 2.0}, False, iter(["the figures", "  x : 2"]), "0.10 0.20 0.30")
    out = capsys.readouterr().out.splitlines()
    assert out[:2] == ["the figures", "  x : 2"] and len(out) == 3
    assert out[2].startswith("  load average before: 0.10 0.20 0.30; after: ") and out[2].endswith(" cores)")


@pytest.mark.parametrize("as_json", [True, False], ids=["json", "text"])
def test_the_engine_benchmark_reports_its_figures_and_the_load(monkeypatch, capsys, as_json):
    monkeypatch.setattr("sys.argv", ["engine", "--games", "2", "--runs", "1", *(["--json"] if as_json else [])])
    engine.main()
    out = capsys.readouterr().out
    if as_json:
        figures = json.loads(out)
        assert figures["games_per_run"] == 2 and figures["core_full_games_per_s"] > 0
        assert {"load_average_before", "load_average_after"} <= set(figures)
    else:
        assert out.startswith("trinity-towers core, Python ") and "median of 1 runs of 2 games" in out
        assert out.splitlines()[-1].startswith("  load average before: ")
