"""The documentation tells the truth: its pictures are what the renderer draws, its code runs."""

from __future__ import annotations

import contextlib
import io
import json
import re
import unicodedata
from pathlib import Path

import pytest

from doc_examples import EXAMPLES

ROOT = Path(__file__).resolve().parent.parent


def _python_blocks(path: Path) -> list[str]:
    return re.findall(r"```python\n(.*?)```", path.read_text(encoding="utf-8"), flags=re.S)


@pytest.mark.parametrize("name", sorted(EXAMPLES))
def test_the_rules_page_shows_what_the_renderer_draws(name):
    page = (ROOT / "docs" / "rules.md").read_text(encoding="utf-8")
    for state in EXAMPLES[name]():
        assert str(state) in page, f"docs/rules.md does not show the current drawing of the {name} example"


PAGES_WITH_CODE = ["README.md", "docs/rules.md", "docs/agents.md", "docs/guide.md", "docs/evaluate.md"]


def test_every_page_with_python_is_tested():
    pages = ["README.md", *(f"docs/{p.name}" for p in sorted((ROOT / "docs").glob("*.md")))]
    with_code = [page for page in pages if _python_blocks(ROOT / page)]
    assert sorted(with_code) == sorted(PAGES_WITH_CODE)


@pytest.mark.parametrize("page", PAGES_WITH_CODE)
def test_python_snippets_run(page):
    """The blocks of a page run in order in one namespace, as a reader would paste them."""
    blocks = _python_blocks(ROOT / page)
    assert blocks, f"{page} has no python snippet"
    namespace: dict = {}
    for block in blocks:
        exec(compile(block, page, "exec"), namespace)


DOC_PAGES = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
TOP_LEVEL = ("benchmarks", "configs", "docs", "examples", "notebooks", "scripts", "tests", "training", "trinity_env")


def _code(path: Path) -> list[str]:
    """The lines of a page's bash blocks and its inline code spans, shell comments dropped."""
    text = path.read_text(encoding="utf-8")
    lines = [line for block in re.findall(r"```bash\n(.*?)```", text, flags=re.S) for line in block.splitlines()]
    lines += re.findall(r"`([^`\n]+)`", re.sub(r"```.*?```", "", text, flags=re.S))
    return [line.split(" #")[0].strip() for line in lines]


def _commands(path: Path, program: str) -> list[list[str]]:
    """The arguments of every ``program ...`` command the page shows (after any VAR=value prefix)."""
    pattern = re.compile(rf"(?:[A-Z_]+=\S+ )*{program} (.+)")
    return [
        match[1].replace("[", " ").replace("]", " ").split()
        for line in _code(path)
        if (match := pattern.fullmatch(line))
    ]


def _help(*argv: str) -> str:
    from trinity_env.cli import main

    out = io.StringIO()
    with contextlib.redirect_stdout(out), pytest.raises(SystemExit):
        main([*argv, "--help"])
    return out.getvalue()


@pytest.mark.parametrize("page", DOC_PAGES, ids=lambda p: p.name)
def test_every_trinity_command_a_page_shows_exists_with_its_options(page):
    commands = re.search(r"\{([\w,-]+)\}", _help())[1].split(",")
    for argv in _commands(page, "trinity"):
        assert argv[0] in commands, f"{page.name}: `trinity {argv[0]}` is not a command ({', '.join(commands)})"
        options = _help(argv[0])
        verbs = re.search(r"\{([\w,-]+)\}", options)  # a command of verbs (trinity dataset build): the verb's options
        if verbs and len(argv) > 1 and argv[1] in verbs[1].split(","):
            options = _help(*argv[:2])
        for flag in (a for a in argv if a.startswith("--")):
            assert re.search(rf"{flag}(?![\w-])", options), f"{page.name}: `trinity {argv[0]}` has no option {flag}"


@pytest.mark.parametrize("page", DOC_PAGES, ids=lambda p: p.name)
def test_every_script_module_target_and_path_a_page_names_exists(page):
    for argv in _commands(page, "python"):
        script = f"{argv[1].replace('.', '/')}.py" if argv[0] == "-m" else argv[0]
        shown = " ".join(argv[:2] if argv[0] == "-m" else argv[:1])
        assert (ROOT / script).is_file(), f"{page.name}: `python {shown}` names no file of the project"
    targets = re.findall(r"^([\w-]+):", (ROOT / "Makefile").read_text(encoding="utf-8"), flags=re.M)
    for argv in _commands(page, "make"):
        assert argv[0] in targets, f"{page.name}: `make {argv[0]}` is not a Makefile target"
    for span in _code(page):
        if re.fullmatch(r"[\w.-]+(/[\w.-]+)+/?", span) and span.split("/")[0] in TOP_LEVEL:
            assert (ROOT / span).exists(), f"{page.name} names `{span}`, which is not in the repository"


def test_the_observation_page_matches_the_encoding():
    from trinity_env.spec import observation as obs

    page = (ROOT / "docs" / "observation.md").read_text(encoding="utf-8")
    assert f"**{obs.OBSERVATION_SIZE}** entries" in page
    assert f"| {obs.BOARD_OFFSET} + {obs.TILE_FEATURES}t " in page
    assert f"| {obs.OWN_DECK_OFFSET} + {obs.OWN_CARD_FEATURES}i " in page
    assert f"| {obs.THEIR_DECK_OFFSET} + {obs.THEIR_CARD_FEATURES}i " in page
    for index, name in enumerate(obs.SCALAR_NAMES):
        assert f"| {index} | `{name}` |" in page


def test_the_env_docstring_is_its_documentation_page():
    from trinity_env.envs import aec

    doc = aec.__doc__
    for heading in ("### Observation Space", "### Action Space", "### Rewards", "### Arguments", "### Version History"):
        assert heading in doc


def test_the_arena_page_shows_the_arena_output():
    page = (ROOT / "docs" / "arena.md").read_text(encoding="utf-8")
    generated = (ROOT / "docs" / "arena" / "arena.md").read_text(encoding="utf-8").strip()
    assert generated in page
    summary = json.loads((ROOT / "docs" / "arena" / "arena_summary.json").read_text(encoding="utf-8"))
    assert summary["agents"] == ["random", "greedy", "lookahead", "mcts:400"]
    assert all(g == 200 for i, row in enumerate(summary["games"]) for j, g in enumerate(row) if i != j)
    # stronger agents rank above weaker ones: each beats every agent rated below it
    order = sorted(range(4), key=lambda i: -summary["elo"][i])
    for a, i in enumerate(order):
        for j in order[a + 1 :]:
            assert summary["win_rate"][i][j] > 0.5


FIGURE = re.compile(r"\d+\.\d%(?: \[\d+\.\d%, \d+\.\d%\])?")


def _prose_figures(page: str, table: str) -> list[str]:
    """Percentages (with their intervals) written in a page's text, outside the generated table."""
    return FIGURE.findall(page.replace(table, ""))


def test_the_balance_prose_quotes_the_measured_study():
    table = (ROOT / "docs" / "balance" / "balance.md").read_text(encoding="utf-8").strip()
    figures = _prose_figures((ROOT / "docs" / "balance.md").read_text(encoding="utf-8"), table)
    assert len(figures) >= 8
    for figure in figures:
        assert figure in table, f"docs/balance.md quotes {figure}, which the study did not measure"


def _openings_sentence(path: Path) -> str:
    """What docs/balance.md says of the solved-openings file: counts only (too few deals for a share)."""
    from trinity_env.evaluation.openings_file import read_records
    from trinity_env.evaluation.openings_summary import file_summary

    summary, seeds = file_summary(path), sorted(read_records(path))
    budgets = " and ".join(f"{b:,}" for b in summary["budget_nodes"])
    deals = f"{summary['deals']} deal{'s' if summary['deals'] != 1 else ''}"
    runs: list[list[int]] = []  # consecutive seeds as one run: "seeds 0 to 26", not 27 numbers
    for seed in seeds:
        if runs and seed == runs[-1][1] + 1:
            runs[-1][1] = seed
        else:
            runs.append([seed, seed])
    spans = [str(a) if a == b else f"{a} to {b}" for a, b in runs]
    listed = spans[0] if len(spans) == 1 else f"{', '.join(spans[:-1])} and {spans[-1]}"
    named = f"seed {listed}" if len(seeds) == 1 else f"seeds {listed}"
    counts = f"{summary['solved']} solved, {summary['unsolved']} unsolved within {budgets} nodes."
    text = f"it holds {deals} ({named}): {counts}"
    if summary["solved"]:
        wins = round(summary["first_player"]["wins"]["share"] * summary["solved"])
        text += f" The first player wins {wins} of the {summary['solved']} solved."
    if summary["unsolved"]:
        bounds = summary["wins_all_deals"]
        low, high = round(bounds["low"] * bounds["n"]), round(bounds["high"] * bounds["n"])
        text += (
            f" Counting each unsolved deal as not won and then as won, the first player wins {low} to"
            f" {high} of all {bounds['n']}."
        )
    return text


def test_the_balance_page_counts_the_solved_openings_file():
    page = " ".join((ROOT / "docs" / "balance.md").read_text(encoding="utf-8").split())
    assert _openings_sentence(ROOT / "docs" / "balance" / "openings.jsonl") in page


def test_the_shipped_agent_figures_are_the_measured_ones():
    from trinity_env.agents import make
    from trinity_env.evaluation.endgames import DEFAULT_SUITE, load_suite, score_agent

    figures_dir = ROOT / "docs" / "ppo-standard"
    tables = "".join((figures_dir / name).read_text(encoding="utf-8") for name in ("arena.md", "drafted/arena.md"))
    suite = load_suite(DEFAULT_SUITE)
    scores = {spec: f"{score_agent(make(spec), suite):.1%}" for spec in ("random", "greedy", "lookahead", "mcts:400")}
    scores["ppo-standard"] = f"{json.loads((figures_dir / 'summary.json').read_text())['endgame_suite']:.1%}"
    page = (ROOT / "docs" / "ppo-standard.md").read_text(encoding="utf-8")
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    baselines = ", ".join(f"{spec} {scores[spec]}" for spec in ("random", "greedy", "lookahead", "mcts:400"))
    assert baselines in page.replace("\n", " ")
    assert f"winning move in {scores['ppo-standard']} of the endgame suite" in readme.replace("\n", " ")
    start = readme.index("The package also ships the strongest agent trained so far by PPO")
    end = readme.find("\n## ", start)  # the paragraph runs to the next heading
    shipped = readme[start : end if end >= 0 else None]
    for text in (page, shipped):
        for figure in _prose_figures(text, tables):
            if figure not in scores.values():
                assert figure in tables, f"{figure} is quoted for ppo-standard but is not in the measured tables"


def test_the_readme_quotes_the_alphazero_figures_the_arena_measured():
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    start = readme.index("**AlphaZero**")
    paragraph = readme[start : readme.index("\n\n", start)]
    tables = "".join(path.read_text(encoding="utf-8") for path in (ROOT / "docs" / "alphazero").glob("*/arena.md"))
    figures = re.findall(r"\d+\.\d%(?: \[\d+\.\d%, \d+\.\d%\])?", paragraph)
    assert len(figures) >= 4
    for figure in figures:
        assert figure in tables, f"the README quotes {figure} for az-standard, which no arena table holds"


def test_the_readme_quotes_the_make_train_run_it_ships_the_report_of():
    from training.evaluation import read_metrics

    readme = (ROOT / "README.md").read_text(encoding="utf-8").replace("\n", " ")
    rows = read_metrics(ROOT / "docs" / "train-quick" / "metrics.csv")
    last_step = rows[-1][0]
    final = {row[2]: row[3:6] for row in rows if row[0] == last_step}
    assert f"{int(last_step) / 1e6:.1f}M learner steps" in readme
    for opponent in ("random", "greedy"):
        rate, low, high = (float(x) for x in final[opponent])
        assert f"{rate:.1%} [{low:.1%}, {high:.1%}] against {opponent}" in readme, opponent


def test_the_rllib_page_quotes_the_runs_it_ships_the_metrics_of():
    """docs/rllib.md's learning figures are rows of docs/rllib-run/*metrics.csv (the runs' own files)."""
    from training.evaluation import read_metrics

    page = (ROOT / "docs" / "rllib.md").read_text(encoding="utf-8").replace("\n", " ")
    measured = set()
    for path in (ROOT / "docs" / "rllib-run").glob("*metrics.csv"):
        for _, _, opponent, rate, low, high in read_metrics(path):
            if opponent in ("random", "greedy"):
                measured.add(f"{float(rate):.1%} [{float(low):.1%}, {float(high):.1%}]")
    quoted = re.findall(r"\d+\.\d% \[\d+\.\d%, \d+\.\d%\]", page)
    assert len(quoted) >= 4, "the page quotes none of the runs' evaluations"
    for figure in quoted:
        assert figure in measured, f"docs/rllib.md quotes {figure}, which no docs/rllib-run/*metrics.csv holds"


def test_the_rllib_row_of_the_libraries_table_quotes_the_documented_runs_last_evaluation():
    from training.evaluation import read_metrics

    rows = read_metrics(ROOT / "docs" / "rllib-run" / "metrics.csv")
    final = {row[2]: float(row[3]) for row in rows if row[0] == rows[-1][0]}
    page = (ROOT / "docs" / "integrations.md").read_text(encoding="utf-8")  # the outside libraries' table
    (line,) = [x for x in page.splitlines() if x.startswith("| Ray RLlib")]
    assert f"{final['random']:.1%} against random and {final['greedy']:.1%} against greedy" in line
    assert f"after {int(rows[-1][0]) / 1e6:.1f}M of `main`'s decisions" in line


def test_the_exploitability_rows_with_a_json_are_what_the_tool_wrote():
    page = (ROOT / "docs" / "exploitability.md").read_text(encoding="utf-8")
    files = sorted((ROOT / "docs" / "exploitability").glob("*.json"))
    assert files
    for path in files:
        result = json.loads(path.read_text(encoding="utf-8"))
        low, high = result["interval"]
        row = (
            f"| {result['agent']} | {result['steps']:,} | {result['win_rate']:.3f} [{low:.3f}, {high:.3f}] | "
            f"{result['curve'][-1]['win_rate']:.3f} | {round(result['seconds'])} |"
        )
        assert row in page, f"docs/exploitability.md has no row {row} ({path.name})"


def test_the_alphazero_targets_quote_the_million_step_best_responses():
    page = (ROOT / "docs" / "alphazero.md").read_text(encoding="utf-8")
    folder = ROOT / "docs" / "exploitability"
    raw = json.loads((folder / "az-standard-sims0-1m.json").read_text(encoding="utf-8"))
    searched = json.loads((folder / "az-standard-sims64-1m.json").read_text(encoding="utf-8"))
    assert raw["steps"] >= 1_000_000 and searched["steps"] >= 1_000_000
    assert not (raw["partial"] or searched["partial"])
    assert f"vs the raw policy | ≤ 55% | {raw['win_rate']:.1%} |" in page
    verdict = "met" if searched["win_rate"] <= 0.5 else "missed"
    assert f"| ≤ 50% | {searched['win_rate']:.1%} | {verdict} |" in page


def test_the_accuracy_page_shows_the_tables_the_benchmark_drew_from_its_json_for_every_agent():
    from benchmarks.accuracy import AGENTS
    from trinity_env.evaluation.accuracy import AgentAccuracy
    from trinity_env.evaluation.accuracy_report import network_table, table

    page = (ROOT / "docs" / "accuracy.md").read_text(encoding="utf-8")
    document = json.loads((ROOT / "docs" / "accuracy" / "accuracy.json").read_text(encoding="utf-8"))
    results = [AgentAccuracy.from_json(agent) for agent in document["agents"]]
    assert [r.agent for r in results] == AGENTS  # every shipped agent, as the benchmark scores them
    expected = {int(e): share for e, share in document["random_mover"].items()}
    moves, heads = table(results, expected), network_table(results)
    assert (ROOT / "docs" / "accuracy" / "accuracy.md").read_text(encoding="utf-8").strip() == moves
    assert (ROOT / "docs" / "accuracy" / "network.md").read_text(encoding="utf-8").strip() == heads
    assert moves in page and heads in page
    assert (ROOT / "docs" / "accuracy" / "accuracy.png").is_file()


def test_the_accuracy_page_says_how_many_positions_ran_past_the_budget_as_the_shipped_set_records():
    from trinity_env.evaluation.accuracy import DEFAULT_SET

    records = [json.loads(line) for line in DEFAULT_SET.read_text(encoding="utf-8").splitlines()[1:]]
    tried = {e: sum(1 for r in records if r["empty_tiles"] == e) for e in (11, 12)}
    over = {e: sum(1 for r in records if r["empty_tiles"] == e and r.get("over_budget")) for e in (11, 12)}
    page = " ".join((ROOT / "docs" / "accuracy.md").read_text(encoding="utf-8").split())
    assert f"{over[11]} of the {tried[11]:,} positions tried ran past it" in page
    assert over[12] == tried[12] and f"none of the {tried[12]} tried did" in page


def test_the_network_comparison_on_the_alphazero_page_is_the_benchmark_s_table_of_its_json():
    from benchmarks.networks import NETWORKS, table

    document = json.loads((ROOT / "docs" / "alphazero" / "networks.json").read_text(encoding="utf-8"))
    assert [run["network"] for run in document["runs"]] == list(NETWORKS)
    text = table(document["runs"])
    assert (ROOT / "docs" / "alphazero" / "networks.md").read_text(encoding="utf-8").strip() == text
    assert text in (ROOT / "docs" / "alphazero.md").read_text(encoding="utf-8")


def test_what_the_accuracy_page_says_it_shows_holds_in_its_json():
    document = json.loads((ROOT / "docs" / "accuracy" / "accuracy.json").read_text(encoding="utf-8"))
    moves = {a["agent"]: {c["empty_tiles"]: c["moves"]["share"] for c in a["counts"]} for a in document["agents"]}
    heads = {
        c["empty_tiles"]: c["value_sign"]["share"]
        for a in document["agents"]
        if a["agent"] == "az-standard"
        for c in a["counts"]
    }
    counts = sorted(moves["mcts:400"])
    assert all(moves["mcts:400"][e] <= moves["mcts:1600"][e] <= moves["mcts:6400"][e] for e in counts)
    assert moves["mcts:400"][4] == 1.0
    assert all(moves["az-standard"][e] > moves["mcts:1600"][e] for e in range(6, 12))
    assert all(abs(moves["az-standard"][e] - moves["mcts:6400"][e]) <= 0.04 for e in range(8, 11))
    assert moves["az-standard"][11] > moves["mcts:6400"][11]
    assert moves["az-standard"][10] < 0.97  # issue 25's target, missed (the page says by how much)
    assert all(0.6 <= share <= 0.82 for share in heads.values()) and heads[10] < 0.9
    ppo_heads = [
        c["value_sign"]["share"] for a in document["agents"] if a["agent"] == "ppo-standard" for c in a["counts"]
    ]
    assert min(ppo_heads) >= 0.40 and max(ppo_heads) <= 0.65
    raw = moves["az-standard:sims=0"]
    assert all(raw[e] > max(moves["greedy"][e], moves["ppo-standard"][e]) for e in counts)
    assert all(raw[e] > moves["mcts:400"][e] for e in (9, 10, 11)) and raw[8] < moves["mcts:400"][8]
    previous = json.loads((ROOT / "docs" / "alphazero" / "mlp-96k" / "accuracy.json").read_text(encoding="utf-8"))
    old = {
        c["empty_tiles"]: c["moves"]["share"]
        for a in previous["agents"]
        if a["agent"] == "az-standard"
        for c in a["counts"]
    }
    assert all(old[e] < moves["mcts:1600"][e] for e in range(4, 11))


def test_the_make_train_az_section_is_the_spread_over_seeds_of_the_current_config():
    from scripts.train_az_seeds import MEASURES, seeds_table, targets_row
    from training.az_config import AZConfig

    folder = ROOT / "docs" / "alphazero" / "quick"
    document = json.loads((folder / "seeds.json").read_text(encoding="utf-8"))
    page = (ROOT / "docs" / "alphazero.md").read_text(encoding="utf-8")
    assert len(document["seeds"]) >= 3 and seeds_table(document) in page
    assert document["processor"]["model"] in page and document["eval_games"] == AZConfig.load("az-quick").eval_games
    for seed in document["seeds"]:  # every seed is today's config with only the seed changed, its report kept
        shipped = json.loads((folder / f"seed-{seed}" / "config.json").read_text(encoding="utf-8"))
        assert shipped == json.loads(json.dumps(AZConfig.load("az-quick", seed=seed).to_dict()))
        assert (folder / f"seed-{seed}" / "report.md").is_file()
    assert set(MEASURES) <= set(document["spread"][list(document["spread"])[-1]])
    for games, cells in document["spread"].items():  # the band a run lands in holds every seed's interval
        for measure in MEASURES:
            shares = [document["runs"][str(seed)][games][measure] for seed in document["seeds"]]
            assert document["band"][games][measure] == [min(s[1] for s in shares), max(s[2] for s in shares)]
            low, high = document["band"][games][measure]
            assert low <= cells[measure][0] <= cells[measure][1] <= high
    assert targets_row(document) in page  # the targets' row: the last evaluation's range over the seeds


def test_the_value_sources_on_the_alphazero_page_are_the_benchmark_s():
    from benchmarks.value_sources import table

    document = json.loads((ROOT / "docs" / "alphazero" / "value_sources.json").read_text(encoding="utf-8"))
    text = (ROOT / "docs" / "alphazero" / "value_sources.md").read_text(encoding="utf-8").strip()
    page = (ROOT / "docs" / "alphazero.md").read_text(encoding="utf-8")
    assert text in page and f"stopped at\n{document['dataset_positions']:,} positions" in page
    rows = {
        label: {int(e) if e != "all" else e: v for e, v in run["value_sign"].items()}
        for label, run in document["runs"].items()
    }
    assert table(rows) in text  # the exact-label rows, as the benchmark draws them from its JSON
    exact = {label.split(",")[0]: run["value_sign"]["all"] for label, run in document["runs"].items()}
    selfplay = {
        run["network"]: run["evaluations"][-1]["results"]["exact:value"][0]
        for run in json.loads((ROOT / "docs" / "alphazero" / "networks.json").read_text())["runs"]
    }
    lifts = sorted(round(100 * (exact[n] - selfplay[n])) for n in exact)
    assert f"by {lifts[0]} (board) to {lifts[1]} (MLP) points" in page


def _modules() -> set[str]:
    package = ROOT / "trinity_env"
    return {
        ".".join(path.relative_to(ROOT).with_suffix("").parts).removesuffix(".__init__")
        for path in package.rglob("*.py")
        if "__pycache__" not in path.parts and "static" not in path.parts
    }


def test_the_api_reference_documents_every_module_and_names_no_other():
    """make docs builds the site strict (a directive naming a module that does not exist fails there);
    this keeps a new module from being left out of the reference."""
    named = set()
    for page in (ROOT / "docs" / "api").glob("*.md"):
        named |= set(re.findall(r"^::: ([\w.]+)$", page.read_text(encoding="utf-8"), flags=re.M))
    assert named == _modules()


def test_every_page_is_in_the_site_nav():
    config = (ROOT / "mkdocs.yml").read_text(encoding="utf-8")
    in_nav = set(re.findall(r":\s+(\S+\.md)$", config, flags=re.M))
    pages = {str(path.relative_to(ROOT / "docs")) for path in (ROOT / "docs").glob("*.md")}
    pages |= {str(path.relative_to(ROOT / "docs")) for path in (ROOT / "docs" / "api").glob("*.md")}
    assert pages == in_nav


README_MAX_LINES = 140
"""The README is a front page: what it is, the set-up, the env loop, the rules in brief, links into docs/."""


def test_the_readme_is_a_front_page():
    lines = (ROOT / "README.md").read_text(encoding="utf-8").splitlines()
    assert len(lines) <= README_MAX_LINES, f"README.md has {len(lines)} lines; move reference material into docs/"


LINKED_PAGES = ["README.md", "CHANGELOG.md", "docs/security.md", "docs/architecture.md", "docs/integrations.md"]
LINK = re.compile(r"!?\[[^\]]*\]\(([^)\s]+)\)")


def _slug(heading: str) -> str:
    """A heading's anchor as the docs site's toc extension writes it (and GitHub does, for plain headings)."""
    text = unicodedata.normalize("NFKD", heading).encode("ascii", "ignore").decode()
    text = re.sub(r"[^\w\s-]", "", text).strip().lower()
    return re.sub(r"[-\s]+", "-", text)


def _anchors(path: Path) -> set[str]:
    text = re.sub(r"```.*?```", "", path.read_text(encoding="utf-8"), flags=re.S)  # no headings inside code
    return {_slug(heading) for heading in re.findall(r"^#{1,6}\s+(.+?)\s*#*$", text, flags=re.M)}


def _broken_links(page: Path, root: Path = ROOT) -> list[str]:
    """The links of ``page`` that name no file inside ``root``, or no heading of the page they name."""
    text = re.sub(r"```.*?```", "", page.read_text(encoding="utf-8"), flags=re.S)
    broken = []
    for target in LINK.findall(text):
        if re.match(r"[a-z]+:", target):  # https:, mailto:: not this repository's files
            continue
        name, _, anchor = target.partition("#")
        path = (page.parent / name).resolve() if name else page.resolve()
        if not path.exists() or root.resolve() not in path.parents:
            broken.append(f"{target} (no such file)")
        elif anchor and path.suffix == ".md" and anchor not in _anchors(path):
            broken.append(f"{target} (no heading #{anchor} in {path.name})")
    return broken


@pytest.mark.parametrize("page", LINKED_PAGES)
def test_every_link_on_the_front_pages_resolves(page):
    assert LINK.findall((ROOT / page).read_text(encoding="utf-8")), f"{page} links nowhere"
    assert _broken_links(ROOT / page) == [], page


def test_the_link_checker_finds_a_missing_file_and_a_missing_anchor(tmp_path):
    (tmp_path / "other.md").write_text("# Title\n\n## The fast engine\n", encoding="utf-8")
    page = tmp_path / "page.md"
    page.write_text(
        "[a](other.md) [b](other.md#the-fast-engine) [c](#here) [d](https://example.org/x)\n\n## Here\n"
        "[e](gone.md) [f](other.md#the-slow-engine) ![g](img.png)\n",
        encoding="utf-8",
    )
    broken = _broken_links(page, tmp_path)
    assert broken == [
        "gone.md (no such file)",
        "other.md#the-slow-engine (no heading #the-slow-engine in other.md)",
        "img.png (no such file)",
    ]


def test_the_architecture_picture_draws_the_layers_the_tests_enforce():
    from test_layers import SOURCE_LAYERS

    from scripts.make_architecture import LAYERS, OUT

    assert [name for name, _ in LAYERS] == SOURCE_LAYERS
    assert OUT.is_file() and f"images/{OUT.name}" in (ROOT / "docs" / "architecture.md").read_text(encoding="utf-8")


def test_the_security_page_states_the_web_process_and_onnx_limits_in_force():
    """docs/security.md quotes the limits the code holds (the checkpoint, YAML and agent limits are
    tests/test_checkpoint_allocation.py's): a limit changed in the code and not on the page fails here."""
    from trinity_env.agents.loaders import onnx_check, onnx_file
    from trinity_env.core import files, limits
    from trinity_env.web import limits as web
    from trinity_env.web import schema, store

    page = " ".join((ROOT / "docs" / "security.md").read_text(encoding="utf-8").split())
    assert onnx_check.MAX_OPERATIONS.bit_count() == 1  # written as a power of two
    stated = [
        f"at most {store.DEFAULT_GAMES_PER_CLIENT} games and {store.DEFAULT_REPLAYS_PER_CLIENT} replays",
        f"at most {store.DEFAULT_MAX_GAMES} games and {store.DEFAULT_MAX_REPLAYS} replays in all",
        f"used for {store.DEFAULT_IDLE_SECONDS // 60} minutes",
        f"capped at {schema.MAX_BODY >> 10} KiB, or {schema.MAX_REPLAY_BODY >> 20} MiB for a replay upload",
        f"within {web.BODY_SECONDS:g} s, and at no less than {web.MIN_BODY_RATE >> 10} KiB/s after its first "
        f"{web.BODY_GRACE_SECONDS:g} s",
        f"At most {web.BODIES_IN_FLIGHT >> 20} MiB of request bodies",
        f"At most {web.MAX_CONNECTIONS} at once",
        f"close after {web.KEEP_ALIVE_SECONDS:g} s",
        f"within {web.HEADER_SECONDS:g} s is closed",
        f"at most {limits.PROCESSES_PER_CPU} per CPU",
        f"up to {files.MAX_INPUT_BYTES >> 20} MiB",
        f"at most {onnx_file.MAX_ONNX_BYTES >> 20} MiB",
        f"past {onnx_file.MAX_FIELDS:,} fields or {onnx_file.MAX_PACKED_VALUES:,} packed integers",
        f"more than 2^{onnx_check.MAX_OPERATIONS.bit_length() - 1} multiply-adds a position",
    ]
    missing = [phrase for phrase in stated if phrase not in page]
    assert not missing, missing


def test_the_arena_page_shows_the_reference_pool_the_file_holds():
    """Ratings on a fixed scale: every number about the pool on the page is read from the shipped pool file."""
    from trinity_env.agents.ladder import LADDER
    from trinity_env.evaluation.anchored import POOL_FILES, ReferencePool, pool_markdown
    from trinity_env.evaluation.ratings import Z95

    page = (ROOT / "docs" / "arena.md").read_text(encoding="utf-8")
    section = page[page.index("## Ratings on a fixed scale") :]
    pool = ReferencePool.load()
    stated = [
        f"game `k` against member `m` is seeded by `game_seed(seed, m, {len(pool.agents)}, k)`",
        f"anchored at `{pool.anchor}` (`level:1`) = 0",
        f"within {Z95**2 / 2:.2f} ({Z95:.2f}² / 2) of the maximum",
    ]
    for path in POOL_FILES.values():  # the dealt-hands pool, then the draft pool, each as its file holds it
        shown = ReferencePool.load(path)
        stated += [
            f"`trinity_env/evaluation/data/{path.name}`",
            pool_markdown(shown),
            f"{shown.games_per_pair} games a pair",
            f"nice -n 5 {shown.command}\n",
        ]
    missing = [phrase for phrase in stated if phrase not in section]
    assert not missing, missing
    draft = json.loads(POOL_FILES["pick"].read_text(encoding="utf-8"))  # the page's "in all 400", from the file
    names, score, games = draft["agents"], draft["score"], draft["games"]
    for winner, loser in (("lookahead", "greedy"), ("greedy", "mcts:2")):
        i, j = names.index(winner), names.index(loser)
        assert score[i][j] == games[i][j] == 400 and f"`{winner}` beats `{loser}` in all 400" in page.replace("\n", " ")
    agents = (ROOT / "docs" / "agents.md").read_text(encoding="utf-8")
    assert (
        "| `level:1` ... `level:8` | the difficulty ladder's agents ("
        + ", ".join(f"`{spec}`" for spec in LADDER.values())
        in agents
    )


def test_the_benchmark_page_shows_the_leaderboard_the_cards_hold():
    """The leaderboard's figures are the cards' (docs/benchmark/quick/*/scorecard.json), generated, never typed."""
    from scripts.make_leaderboard import AGENTS, folder_of, leaderboard
    from trinity_env.scorecard import BENCHMARK_VERSION, PROTOCOLS

    page = (ROOT / "docs" / "benchmark.md").read_text(encoding="utf-8")
    assert f"## The protocol (benchmark {BENCHMARK_VERSION})" in page and f'`"benchmark": {BENCHMARK_VERSION}`' in page
    assert leaderboard("quick") in page  # an older card is refused there
    for agent in AGENTS:
        card = json.loads((folder_of("quick", agent) / "scorecard.json").read_text(encoding="utf-8"))
        assert card["agent"] == agent and card["benchmark"] == BENCHMARK_VERSION
        quick = PROTOCOLS["quick"]
        assert card["protocol"]["rating_games"] == quick.rating_games and card["puzzles"]["total"] == quick.puzzles
        for key, pool in (("rating", "reference_pool"), ("rating_draft", "reference_pool_draft")):
            rating = card[key]
            assert rating["pool_name"] == pool and rating["games"] == quick.rating_games * len(rating["opponents"])
    for name, plan in PROTOCOLS.items():
        assert f"| `{name}` | {plan.rating_games} | {plan.accuracy_per_count} | {plan.puzzles} |" in page


def test_the_benchmark_page_shows_the_outside_libraries_cards_and_the_full_protocol_s():
    """The outside libraries' policies (scripts.make_leaderboard.OUTSIDE) and the full protocol's cards are on the
    leaderboard as their JSON files hold them, with the commands that trained and scored each."""
    from scripts.make_leaderboard import OUTSIDE, leaderboard, outside_table
    from trinity_env.scorecard import BENCHMARK_VERSION, PROTOCOLS

    page = (ROOT / "docs" / "benchmark.md").read_text(encoding="utf-8")
    assert outside_table() in page and leaderboard("full") in page
    for entry in OUTSIDE:
        card = json.loads((entry.folder / "scorecard.json").read_text(encoding="utf-8"))
        assert card["benchmark"] == BENCHMARK_VERSION and card["agent"] == entry.policy
        assert card["protocol"]["name"] == "quick" and card["agent_sha256"]  # the model file it read, hashed
        assert (
            entry.train[0].startswith("python ") and f"--out docs/benchmark/quick/outside/{entry.name} " in entry.score
        )
    full = sorted((ROOT / "docs" / "benchmark" / "full").glob("*/scorecard.json"))
    assert full  # at least one full-protocol card
    for path in full:
        card = json.loads(path.read_text(encoding="utf-8"))
        plan = PROTOCOLS["full"]
        assert card["benchmark"] == BENCHMARK_VERSION, path
        assert card["protocol"]["rating_games"] == plan.rating_games and card["puzzles"]["total"] == plan.puzzles
        assert card["rating_draft"]["games"] == plan.rating_games * len(card["rating_draft"]["opponents"])


def test_the_scaling_study_on_the_alphazero_page_is_the_benchmark_s():
    """The study's table is what benchmarks.value_scaling wrote from its runs (scaling.json), never typed."""
    from benchmarks.value_scaling import table

    document = json.loads((ROOT / "docs" / "alphazero" / "scaling.json").read_text(encoding="utf-8"))
    text = (ROOT / "docs" / "alphazero" / "scaling.md").read_text(encoding="utf-8").strip()
    page = (ROOT / "docs" / "alphazero.md").read_text(encoding="utf-8")
    assert table(document["runs"]) == text and text in page
    for held in sorted({run["dataset_positions"] for run in document["runs"]}):
        assert f"{held:,} positions" in page  # what the default build held when each run was made
    assert (ROOT / "docs" / "alphazero" / "scaling.png").stat().st_size > 0
