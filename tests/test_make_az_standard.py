"""scripts/make_az_standard.py: the old network and its figures are kept, the new one shipped, and the
measurements go on where a stopped run left them, afresh for a new network."""

from __future__ import annotations

import json
import sys

import pytest

from scripts import make_az_standard as script
from trinity_env.agents import registry
from trinity_env.agents.az import load_network, make_network, save_network


@pytest.fixture
def place(tmp_path, monkeypatch):
    """A docs folder with the old network's figures, a shipped folder with the old network, and a run."""
    docs, shipped, run = tmp_path / "docs" / "alphazero", tmp_path / "data", tmp_path / "run"
    for folder in (docs / "dealt", shipped, run):
        folder.mkdir(parents=True)
    save_network(shipped / "az-standard.pt", make_network("mlp", 8, 1, True), {"games": 96_000})
    (docs / "dealt" / "arena.json").write_text("{}")
    for name in ("accuracy/accuracy.json", "exploitability/az-standard-sims0-1m.json"):
        (docs.parent / name).parent.mkdir(parents=True, exist_ok=True)
        (docs.parent / name).write_text(f"old {name}")
    for name in script.RUN_FILES:
        (docs / name).write_text(f"old {name}")
    header = "games,seconds,measure,rate,low,high\n"
    (docs / "metrics.csv").write_text(header + "12032,368.5,mcts:400,0.6,0.5,0.69\n12032,368.5,endgames,0.7,0.6,0.8\n")
    save_network(run / "latest.pt", make_network("board", 8, 1, True), {"games": 4_096})
    for name in script.RUN_FILES:
        (run / name).write_text(f"new {name}")
    (run / "metrics.csv").write_text(header + "4096,600.0,mcts:400,0.7,0.6,0.8\n4096,600.0,endgames,0.9,0.8,0.95\n")
    monkeypatch.setattr(script, "DOCS", docs)
    monkeypatch.setattr(script, "MEASURED", docs / "measured.json")
    monkeypatch.setattr(registry, "SHIPPED_DIR", shipped)
    log = tmp_path / "ran.txt"
    fail = tmp_path / "fail"

    def measurements(previous: str) -> dict[str, list[str]]:
        def step(name: str) -> list[str]:  # appends its name; fails while the file "fail" names it
            code = (
                f"import pathlib, sys; f = pathlib.Path({str(fail)!r}); "
                f"sys.exit(3) if f.exists() and f.read_text() == {name!r} else None; "
                f"open({str(log)!r}, 'a').write({name!r} + '\\n')"
            )
            return [sys.executable, "-c", code]

        return {name: step(name) for name in ("one", "two", "three")}

    monkeypatch.setattr(script, "measurements", measurements)
    return docs, shipped, run, log, fail


def test_shipping_keeps_the_old_network_and_its_figures_and_plots_both_curves(place):
    docs, shipped, run, log, fail = place
    old = (shipped / "az-standard.pt").read_bytes()
    script.main(["--run", str(run), "--only", "one"])
    kept = docs / "mlp-96k"
    assert (kept / "network.pt").read_bytes() == old
    assert (kept / "dealt" / "arena.json").is_file() and not (docs / "dealt").exists()
    assert (kept / "report.md").read_text() == "old report.md" and (docs / "report.md").read_text() == "new report.md"
    # the figures kept elsewhere: the accuracy rows copied (a rescore keeps the other agents'), the exploit moved
    assert (kept / "accuracy.json").read_text() == (docs.parent / "accuracy" / "accuracy.json").read_text()
    assert (kept / "exploit-sims0-1m.json").read_text() == "old exploitability/az-standard-sims0-1m.json"
    assert not (docs.parent / "exploitability" / "az-standard-sims0-1m.json").exists()
    network, payload = load_network(shipped / "az-standard.pt")
    assert payload["games"] == 4_096 and payload["network"] == "board"
    assert (docs / "vs_previous.png").stat().st_size > 1000
    script.main(["--run", str(run), "--only", "one"])  # shipping again keeps the first previous, not the new one
    assert (kept / "network.pt").read_bytes() == old


def test_measurements_go_on_where_a_stopped_run_left_them_and_start_afresh_for_a_new_network(place):
    docs, shipped, run, log, fail = place
    fail.write_text("two")
    with pytest.raises(SystemExit, match="two failed"):
        script.main(["--run", str(run)])
    assert log.read_text().split() == ["one"]
    assert json.loads((docs / "measured.json").read_text())["done"] == ["one"]
    fail.unlink()
    script.main(["--no-ship"])
    assert log.read_text().split() == ["one", "two", "three"]
    script.main(["--no-ship", "--only", "two", "--redo"])
    assert log.read_text().split() == ["one", "two", "three", "two"]
    save_network(run / "latest.pt", make_network("board", 8, 1, True), {"games": 8_192})  # another network
    script.main(["--run", str(run)])
    assert log.read_text().split()[-3:] == ["one", "two", "three"]


def test_an_unknown_measurement_or_a_missing_network_is_one_line(place, capsys):
    docs, shipped, run, log, fail = place
    with pytest.raises(SystemExit) as stopped:
        script.main(["--only", "nothing"])
    assert stopped.value.code == 2 and "unknown measurement nothing" in capsys.readouterr().err
    with pytest.raises(SystemExit) as stopped:
        script.main(["--run", str(run), "--network", "best.pt"])
    assert stopped.value.code == 2 and "best.pt does not exist" in capsys.readouterr().err
    assert not log.exists()
