"""End to end in a real headless Chromium: ``trinity serve`` in a subprocess, driven with Playwright.

A whole drafted game against ``random`` by clicking (and one placement by dragging), a reload in
the middle of it, the replay downloaded; a drafted game played to the end by keyboard only, each
placement's preview checked against the engine's and against what the move then did; games at
phone (390x844) and tablet (768x1024) size where every card value is checked to be on screen and
nothing to overlap; the rules panel opened and closed by keyboard; an accessibility check of every
page from Chromium's accessibility tree; resigning, looking back, recent games and "Review this
game"; watching two agents; a replay uploaded, stepped through and reviewed; a game that another
browser cannot open; and the bad-input paths a person can reach from the pages.

Needs Debian's ``chromium`` (``/usr/bin/chromium``) and the ``playwright`` package (its own
browser downloads are never used): ``make test-web`` installs both. Skipped cleanly without them.
``TRINITY_WEB_SCREENSHOT=docs/images/play-page.png`` also saves the play page for the README;
``TRINITY_WEB_ARTEFACTS=folder`` keeps the phone and tablet screenshots there (else in pytest's tmp_path).
"""

from __future__ import annotations

import json
import os
import random
from pathlib import Path

import pytest

pytestmark = pytest.mark.browser  # make test-web runs them (CI too); the default suite leaves them out

CHROMIUM = Path("/usr/bin/chromium")
if not CHROMIUM.exists():
    pytest.skip("no /usr/bin/chromium (apt-get install chromium; or make test-web)", allow_module_level=True)
pytest.importorskip("uvicorn")
pytest.importorskip("starlette")
sync_api = pytest.importorskip("playwright.sync_api")

from web_serve import start_serve, stop_serve  # noqa: E402

from trinity_env.agents import make  # noqa: E402
from trinity_env.core import Replay  # noqa: E402
from trinity_env.evaluation.match import play_game  # noqa: E402
from trinity_env.search.solver import Solver  # noqa: E402
from trinity_env.spec.config import make_config  # noqa: E402

BROWSER_ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]
TIMEOUT_MS = 30_000
SCREENSHOT = os.environ.get("TRINITY_WEB_SCREENSHOT")
ARTEFACTS = os.environ.get("TRINITY_WEB_ARTEFACTS")
HUMAN_TURN = "() => app.game && !app.busy && (app.game.state.outcome !== null || !app.game.agent_to_move)"


@pytest.fixture(scope="module")
def server() -> str:
    process, base = start_serve()
    yield base
    stop_serve(process)


@pytest.fixture(scope="module")
def browser():
    with sync_api.sync_playwright() as playwright:
        chromium = playwright.chromium.launch(executable_path=str(CHROMIUM), args=BROWSER_ARGS)
        yield chromium
        chromium.close()


def watched_page(context):
    """A new page of ``context`` whose page errors and console errors are collected in ``page.problems``."""
    page = context.new_page()
    page.set_default_timeout(TIMEOUT_MS)
    problems: list[str] = []
    page.on("pageerror", lambda err: problems.append(f"page error: {err}"))
    page.on("console", lambda msg: problems.append(f"console: {msg.text}") if msg.type == "error" else None)
    page.problems = problems
    return page


@pytest.fixture
def page(browser):
    context = browser.new_context(viewport={"width": 1100, "height": 1250}, accept_downloads=True)
    page = watched_page(context)
    yield page
    context.close()


SETUP = {"opponent": "#opponent", "seat": "#seat", "first": "#first", "draft": "#play-draft", "hands": "#play-hands"}
"""The play page's new-game choices, in the order a person makes them, and their selects."""


def start_game(page, **choices: str) -> None:
    """On the play page, make the new-game ``choices`` (``SETUP``'s names) and start the game."""
    for name, select in SETUP.items():
        if name in choices:
            page.select_option(select, choices[name])
    page.click("#play-start")


def no_script_errors(page, expected: tuple[str, ...] = ()) -> None:
    """No JavaScript error on the page; ``expected``: words of console errors the test provoked (a 4xx logged)."""
    unexpected = [p for p in page.problems if not any(word in p for word in expected)]
    assert unexpected == []


def state(page) -> dict:
    return page.evaluate("() => app.game.state")


def marked_tiles(page, mark: str) -> list[int]:
    return sorted(int(t) for t in page.eval_on_selector_all(f".tile.{mark}", "ts => ts.map(t => t.dataset.tile)"))


# ---------------------------------------------------------------------- play


def test_a_whole_drafted_game_against_random_by_clicking(server, page, tmp_path):
    rng = random.Random(0)
    page.goto(f"{server}/play")
    start_game(page, opponent="random", seat="0", first="you", draft="pick", hands="open")
    page.wait_for_selector("#my-deck .card.selectable")
    game_id = page.evaluate("() => app.game.id")
    assert f"game={game_id}" in page.url

    placements = reloaded = dragged = 0
    shot = False
    seen = {}  # ply: the placement shown then, with its captures and domino flips
    for _ in range(60):
        page.wait_for_function(HUMAN_TURN)
        now = state(page)
        last = now["last"]
        if last and last["kind"] == "place":  # the latest placement, highlighted as it happened
            assert marked_tiles(page, "placed") == [last["tile"]]
            assert marked_tiles(page, "captured") == sorted(last["captured"])
            assert marked_tiles(page, "domino") == sorted(last["domino"])
            seen[page.evaluate("() => app.game.ply")] = last
        if now["outcome"]:
            break
        legal = now["legal"]
        if now["phase"] == "draft":
            assert page.locator("#deck-1").count() == 0  # the opponent's draft is not shown
            offered = page.locator("#my-deck .card.selectable")
            assert sorted(int(i) for i in offered.evaluate_all("cs => cs.map(c => c.dataset.index)")) == sorted(
                m["index"] for m in legal
            )  # only legal picks are offered
            offered.nth(rng.randrange(offered.count())).click()
            continue
        cards = page.locator("#my-hand .card.selectable")
        assert cards.count() == len({m["index"] for m in legal})
        choice = cards.nth(rng.randrange(cards.count()))
        index = int(choice.get_attribute("data-index"))
        tiles = sorted(m["tile"] for m in legal if m["index"] == index)
        ply = page.evaluate("() => app.game.ply")
        if placements == 1 and not dragged:  # one placement by drag and drop
            target = page.locator(f'.tile[data-tile="{tiles[0]}"]')
            choice.drag_to(target)
            page.wait_for_function(f"() => app.game.ply > {ply}")
            assert page.evaluate(f"() => app.game.history[{ply}]")["tile"] == tiles[0]
            dragged = 1
        else:
            choice.click()
            assert marked_tiles(page, "legal") == tiles  # only legal tiles are offered
            flipped = last and last["kind"] == "place" and (last["captured"] or last["domino"])
            if SCREENSHOT and not shot and ((flipped and placements >= 2) or placements == 6):
                shot = True  # a capture on the board, the tiles where the chosen card may go, a preview
                previews = page.evaluate("() => [...app.previews.byKey.values()].filter(p => p.index === app.selected)")
                best = max(previews, key=lambda p: len(p["captured"]) + len(p["domino"]))
                page.hover(f'.tile[data-tile="{best["tile"]}"]')
                page.wait_for_timeout(600)  # the flip animations end
                page.set_viewport_size({"width": 1100, "height": 700})
                page.screenshot(path=SCREENSHOT, full_page=True)  # the whole page, no blank below it
                page.set_viewport_size({"width": 1100, "height": 1250})
            page.locator(".tile.legal").nth(rng.randrange(len(tiles))).click()
        placements += 1
        if placements == 2 and not reloaded:  # the server holds the game: a reload loses nothing
            page.wait_for_function(HUMAN_TURN)
            ply = page.evaluate("() => app.game.ply")
            page.reload()
            page.wait_for_function(HUMAN_TURN)
            assert page.evaluate("() => [app.game.id, app.game.ply]") == [game_id, ply]
            reloaded = 1
    final = state(page)
    assert final["outcome"] is not None and reloaded and dragged
    page.wait_for_selector("#result:not([hidden])")
    headline = page.inner_text("#result h2")
    assert headline in ("You win!", "Random wins", "Draw")
    assert page.locator("#lanes tr").count() == 5  # header, 3 lanes, total
    assert page.locator("#status").get_attribute("data-over") == "1"

    with page.expect_download() as download:
        page.click("#download")
    saved = tmp_path / "game.json"
    download.value.save_as(saved)
    states = Replay.load(saved).states()
    assert states[-1].winner == final["outcome"]["winner"] and list(states[-1].scores) == final["outcome"]["scores"]
    assert len(states) - 1 == page.evaluate("() => app.game.ply")
    # the page showed every placement the opponent made, and the last one, on the turn that followed;
    # a lane is won with 5 cards at the least, so the opponent placed at least twice
    answered = {
        ply for ply, shown in enumerate(states) if shown.last and shown.last.tile is not None and shown.last.player == 1
    }
    assert answered | {len(states) - 1} <= seen.keys() and len(answered) >= 2
    for ply, shown in seen.items():  # what the page highlighted is what the rules did
        step = states[ply].last
        assert [shown["tile"], shown["captured"], shown["domino"]] == [step.tile, [*step.captured], [*step.domino]]
    no_script_errors(page)


def test_a_game_with_hidden_dealt_hands_shows_card_backs(server, page):
    page.goto(f"{server}/play")
    start_game(page, opponent="greedy", seat="1", first="you", draft="dealt", hands="hidden")
    page.wait_for_selector("#my-hand .card.selectable")
    assert page.locator("#hand-0 .card.back").count() == 8
    assert page.locator("#draft").is_hidden()
    page.click("#new-game")  # a game in progress: asked first
    page.wait_for_selector("#confirm[open]")
    assert page.inner_text("#confirm-title") == "Leave this game?"
    page.click("#confirm-no")
    assert page.locator("#confirm").get_attribute("open") is None and page.locator("#game").is_visible()
    page.click("#new-game")
    page.click("#confirm-yes")
    assert page.locator("#play-setup").is_visible() and "game=" not in page.url
    page.wait_for_selector("#recent:not([hidden])")  # and it can be resumed from the list
    assert "you are Black" in page.inner_text("#recent-list li")
    no_script_errors(page)


# ---------------------------------------------------------------------- watch


def test_watch_two_agents_step_by_step_then_animated(server, page):
    page.goto(f"{server}/watch")
    page.select_option("#agent0", "greedy")
    page.select_option("#agent1", "level:1")
    page.select_option("#watch-draft", "pick")
    page.click("#watch-start")
    page.wait_for_selector("#step")
    assert page.locator("#deck-0 .card").count() == 16 and page.locator("#deck-1 .card").count() == 16
    for ply in (1, 2):
        page.click("#step")
        page.wait_for_function(f"() => app.game.ply === {ply} && !app.busy")
    assert page.locator("#history li").count() == 2
    page.select_option("#speed", "fast")
    page.click("#autoplay")
    page.wait_for_selector("#result:not([hidden])", timeout=60_000)
    assert page.inner_text("#result h2").endswith("wins") or page.inner_text("#result h2") == "Draw"
    assert page.locator("#download").is_visible()
    no_script_errors(page)


# ---------------------------------------------------------------------- replays


def _replay_file(folder: Path, seed: int = 3) -> tuple[Path, list]:
    states = []
    play_game((make("greedy"), make("random")), make_config(draft="pick"), seed, states.append)
    path = folder / "replay.json"
    Replay.from_states(states).save(path)
    return path, states


def test_upload_a_replay_step_through_it_and_see_the_review(server, page, tmp_path):
    path, states = _replay_file(tmp_path)
    last = len(states) - 1
    page.goto(f"{server}/replay")
    page.set_input_files("#replay-file", str(path))
    page.click("#replay-load")
    page.wait_for_selector("#game:not([hidden])")
    assert page.inner_text(".counter") == f"position 0 of {last}"
    assert "id=" in page.url
    page.click("#next")
    assert page.inner_text(".counter") == f"position 1 of {last}"
    page.click("#last")
    assert page.inner_text(".counter") == f"position {last} of {last}"
    assert "wins" in page.inner_text("#status") or "Draw" in page.inner_text("#status")
    assert page.locator("#result").is_visible()

    # the latest position with a move to judge and few empty tiles: the solver's review shows
    k = max(k for k, s in enumerate(states[:-1]) if s.phase == "play" and len(s.empty_tiles()) <= 7)
    for _ in range(last - k):
        page.click("#prev")
    assert page.inner_text(".counter") == f"position {k} of {last}"
    text = page.inner_text("#review-text")
    solution = Solver().solve(states[k])
    colour = ("White", "Black")[states[k].to_move]
    verdict = {1: "wins", 0: "draws", -1: "loses"}[solution.value]
    assert f"{colour} (to move) {verdict}" in text
    played = states[k + 1].last
    judged = "is one of them" if (played.card.notation, played.tile) in solution.best_moves else "is a mistake"
    assert f"The move played, {played.card.notation} on tile {played.tile + 1}, {judged}" in text

    page.reload()  # the replay stays on the server too
    page.wait_for_selector("#game:not([hidden])")
    assert page.inner_text(".counter") == f"position 0 of {last}"
    page.click("#again")
    assert page.locator("#replay-setup").is_visible()
    no_script_errors(page)


@pytest.mark.parametrize(
    ("content", "words"),
    [
        ("this is not json", "not valid JSON"),
        ('{"format": "a-spreadsheet"}', "not a replay"),
        ("[1, 2, 3]", "a replay is a JSON object"),
    ],
)
def test_a_bad_replay_file_is_explained(server, page, tmp_path, content, words):
    path = tmp_path / "bad.json"
    path.write_text(content, encoding="utf-8")
    page.goto(f"{server}/replay")
    page.set_input_files("#replay-file", str(path))
    page.click("#replay-load")
    page.wait_for_selector("#error:not([hidden])")
    assert words in page.inner_text("#error")
    assert page.locator("#game").is_hidden()
    no_script_errors(page, ("status of 4",))


def test_a_replay_whose_result_was_changed_is_refused(server, page, tmp_path):
    path, _ = _replay_file(tmp_path, seed=4)
    data = json.loads(path.read_text(encoding="utf-8"))
    data["result"]["scores"] = [99, 0]
    path.write_text(json.dumps(data), encoding="utf-8")
    page.goto(f"{server}/replay")
    page.set_input_files("#replay-file", str(path))
    page.click("#replay-load")
    page.wait_for_selector("#error:not([hidden])")
    assert "claims result" in page.inner_text("#error")
    no_script_errors(page, ("status of 4",))


# ---------------------------------------------------------------------- bad input


def test_unknown_game_and_replay_ids_lead_back_to_the_start(server, page):
    page.goto(f"{server}/play?game={'0' * 32}")
    page.wait_for_selector("#error:not([hidden])")
    assert "no longer on the server" in page.inner_text("#error")
    assert page.locator("#play-setup").is_visible() and "game=" not in page.url
    page.goto(f"{server}/replay?id=not-an-id")
    page.wait_for_selector("#error:not([hidden])")
    assert "upload it again" in page.inner_text("#error")
    assert page.locator("#replay-setup").is_visible()
    no_script_errors(page, ("status of 404",))


def test_bad_requests_from_the_page_get_clear_errors(server, page):
    page.goto(f"{server}/play")
    page.wait_for_selector("#opponent option", state="attached")  # the page's first answer brought its cookie
    calls = page.evaluate(
        """async () => {
            const post = async (path, body, type = "application/json") => {
                const r = await fetch(path, {method: "POST", headers: {"Content-Type": type}, body});
                return [r.status, (await r.json()).error];
            };
            const created = await fetch("/api/games", {method: "POST", headers: {"Content-Type": "application/json"},
                body: JSON.stringify({opponent: "random", seat: 0, first: "you"})});
            const game = await created.json();
            return [
                await post("/api/games", JSON.stringify({opponent: "/etc/passwd"})),
                await post("/api/games", JSON.stringify({opponent: "runs/quick/best.pt"})),
                await post("/api/games", JSON.stringify({opponent: "random", seat: true})),
                await post("/api/games", "opponent=random", "application/x-www-form-urlencoded"),
                await post(`/api/games/${game.id}/move`, JSON.stringify({action: 200, ply: 0})),
                await post(`/api/games/${game.id}/move`, JSON.stringify({action: 1.5, ply: 0})),
                await post(`/api/games/${game.id}/move`, JSON.stringify({action: 0, ply: 7})),
            ];
        }"""
    )
    statuses = [status for status, _ in calls]
    assert statuses == [422, 422, 400, 415, 422, 400, 409]
    assert "no agent named '/etc/passwd'" in calls[0][1]
    assert "not a legal move" in calls[4][1] and "integer" in calls[5][1]
    no_script_errors(page, ("status of 4",))


def test_a_game_belongs_to_the_browser_that_started_it(server, browser, page):
    page.goto(f"{server}/play")
    start_game(page, opponent="random")
    page.wait_for_function(HUMAN_TURN)
    game_id = page.evaluate("() => app.game.id")
    assert "trinity_client" not in page.evaluate("() => document.cookie")  # HttpOnly: no script reads it
    cookies = {c["name"]: c for c in page.context.cookies()}
    assert cookies["trinity_client"]["httpOnly"] and cookies["trinity_client"]["sameSite"] == "Strict"

    other = browser.new_context()  # another browser: its own cookie, so not this game
    try:
        stranger = other.new_page()
        stranger.set_default_timeout(TIMEOUT_MS)
        stranger.goto(f"{server}/play?game={game_id}")
        stranger.wait_for_selector("#error:not([hidden])")
        assert "another browser" in stranger.inner_text("#error")
        assert stranger.locator("#play-setup").is_visible()
    finally:
        other.close()
    page.reload()  # still this browser's game
    page.wait_for_function(HUMAN_TURN)
    assert page.evaluate("() => app.game.id") == game_id
    no_script_errors(page)


# ---------------------------------------------------------------------- keyboard, previews, layout, accessibility


def focused(page) -> dict:
    """The focused element: its focus key (``deck:3``, ``hand:5``, ``tile:7``), id, name and aria-disabled."""
    return page.evaluate(
        """() => { const e = document.activeElement;
            return {key: e && e.dataset ? e.dataset.focus || null : null, id: e ? e.id : null,
                    label: e ? e.getAttribute("aria-label") : null,
                    disabled: e ? e.getAttribute("aria-disabled") : null}; }"""
    )


def tab_to(page, element_id: str, limit: int = 60) -> None:
    """Press Tab until the element ``element_id`` has the focus (as a keyboard user would)."""
    for _ in range(limit):
        if focused(page)["id"] == element_id:
            return
        page.keyboard.press("Tab")
    raise AssertionError(f"Tab never reached #{element_id}")


def walk(page, order: list[int], kind: str, target: int) -> None:
    """Arrow keys along a row of cards (``order``: their deck indices) from the focused one to ``target``."""
    here = order.index(int(focused(page)["key"].split(":")[1]))
    goal = order.index(target)
    for _ in range(abs(goal - here)):
        page.keyboard.press("ArrowRight" if goal > here else "ArrowLeft")
    assert focused(page)["key"] == f"{kind}:{target}"


def walk_board(page, target: int) -> None:
    """Arrow keys across the board's lanes and positions from the focused tile to ``target``."""
    here = int(focused(page)["key"].split(":")[1])
    lanes, positions = target // 5 - here // 5, target % 5 - here % 5
    for _ in range(abs(lanes)):
        page.keyboard.press("ArrowDown" if lanes > 0 else "ArrowUp")
    for _ in range(abs(positions)):
        page.keyboard.press("ArrowRight" if positions > 0 else "ArrowLeft")
    assert focused(page)["key"] == f"tile:{target}"


def api_previews(page) -> dict:
    """The engine's previews of the position on the page, asked of the API with the page's own cookie."""
    return page.evaluate("async () => (await fetch(`/api/games/${app.game.id}/previews/${app.game.ply}`)).json()")


def shown_preview(page) -> dict:
    """What the board shows of the preview now: the tiles marked as would-be captured and domino-flipped."""
    return page.evaluate(
        """() => {
            const tiles = (mark) => [...document.querySelectorAll(`.tile .card.${mark}`)]
                .map(c => Number(c.parentElement.dataset.tile)).sort((a, b) => a - b);
            const target = document.querySelector(".tile.preview-target");
            return {tile: target ? Number(target.dataset.tile) : null, captured: tiles("preview-captured"),
                    domino: tiles("preview-domino"), text: document.getElementById("preview").textContent};
        }"""
    )


def check_preview(page, index: int, tile: int) -> dict:
    """The preview the page shows for card ``index`` on ``tile`` is the engine's (the API's) for that move."""
    expected = next(p for p in api_previews(page)["previews"] if p["index"] == index and p["tile"] == tile)
    shown = shown_preview(page)
    assert shown["tile"] == tile
    assert shown["captured"] == sorted(expected["captured"]) and shown["domino"] == sorted(expected["domino"])
    assert shown["text"].startswith(f"{expected['card']} on tile {tile + 1}")  # tiles are numbered from 1 on the page
    return expected


def test_a_drafted_game_played_to_the_end_by_keyboard_only(server, page):
    """Setup, 8 picks, every placement and "Review this game" with Tab, the arrow keys, Enter and Escape only;
    the focus stays where it was across every re-render, each placement's preview is the engine's and what
    the move then does, the live region announces the moves, and the computer answers without a pause."""
    rng = random.Random(7)
    page.goto(f"{server}/play")
    page.wait_for_selector("#opponent option", state="attached")
    assert page.input_value("#opponent") == "level:1"  # the default opponent: Level 1, as the text above it advises
    tab_to(page, "play-start")  # colour and first mover at random, drafted hands
    page.keyboard.press("Enter")
    page.wait_for_selector("#my-deck .card")
    picks = placements = escaped = 0
    for _ in range(80):
        page.wait_for_function(HUMAN_TURN)
        now = state(page)
        if now["outcome"]:
            break
        where = focused(page)
        ply = page.evaluate("() => app.game.ply")
        if now["phase"] == "draft":
            assert where["key"].startswith("deck:"), where  # still on the deck after the agent's pick
            order = [int(i) for i in page.eval_on_selector_all("#my-deck .card", "cs => cs.map(c => c.dataset.index)")]
            target = rng.choice(now["legal"])["index"]
            walk(page, order, "deck", target)
            assert focused(page)["disabled"] == "false" and focused(page)["label"].startswith("pick ")
            page.keyboard.press("Enter")
            page.wait_for_function(f"() => app.game.ply > {ply}")
            picks += 1
            continue
        assert where["key"].startswith("hand:"), where  # after the draft and after each move: the hand
        legal = now["legal"]
        index = rng.choice(sorted({m["index"] for m in legal}))
        order = [int(i) for i in page.eval_on_selector_all("#my-hand .card", "cs => cs.map(c => c.dataset.index)")]
        walk(page, order, "hand", index)
        page.keyboard.press("Enter")  # chosen: the focus goes on to a tile where it may go
        assert page.evaluate("() => app.selected") == index
        assert focused(page)["key"].startswith("tile:") and focused(page)["disabled"] == "false"
        if not escaped:  # Escape puts the card back, and the focus with it
            page.keyboard.press("Escape")
            assert page.evaluate("() => app.selected") is None and focused(page)["key"] == f"hand:{index}"
            page.keyboard.press("Enter")
            escaped = 1
        tiles = sorted(m["tile"] for m in legal if m["index"] == index)
        tile = rng.choice(tiles)
        walk_board(page, tile)
        label = focused(page)["label"]
        assert label.startswith(f"tile {tile + 1}, lane {tile // 5 + 1}: empty")  # numbered from 1
        page.wait_for_function("() => app.previews !== null")
        expected = check_preview(page, index, tile)
        page.keyboard.press("Enter")
        page.wait_for_function(f"() => app.game.ply > {ply}")
        step = page.evaluate(f"() => app.game.history[{ply}]")
        assert [step["tile"], step["captured"], step["domino"]] == [tile, expected["captured"], expected["domino"]]
        placements += 1
    final = state(page)
    # a lane-control win can come at the 5th placement, after two of ours when the computer places first
    assert final["outcome"] is not None and picks == 8 and placements >= 2 and escaped
    me = page.evaluate("() => app.game.human")
    scores = final["outcome"]["scores"]
    status = page.inner_text("#status")
    result = page.inner_text("#result")
    assert f"you {scores[me]}, Level 1 \u2014 first steps {scores[1 - me]}" in result  # the player's own score first
    assert status.startswith(("You win", "You lose", "Draw"))
    assert focused(page)["id"] == "new-game"  # the game over, the focus is on what comes next, not on the page body
    assert status in page.inner_text("#announce")  # the live region said how it ended
    # the computer's replies come at once: no fixed pause between the person's move and the request for the reply
    gaps = page.evaluate(
        """() => { const entries = performance.getEntriesByType("resource").filter(e => e.name.includes("/api/games/"));
            const gaps = [];
            for (const move of entries.filter(e => e.name.endsWith("/move"))) {
                const next = entries.find(e => e.name.endsWith("/advance") && e.startTime >= move.responseEnd);
                if (next) gaps.push(next.startTime - move.responseEnd);
            }
            return gaps; }"""
    )
    assert len(gaps) >= 8 and sorted(gaps)[len(gaps) // 2] < 250, gaps

    total = page.evaluate("() => app.game.ply")
    tab_to(page, "review-game")  # the finished game opens in the replay view, no download and upload
    page.keyboard.press("Enter")
    page.wait_for_url("**/replay?id=*")
    page.wait_for_selector("#game:not([hidden])")
    assert page.evaluate("() => app.replay.plies") == total
    assert page.evaluate("() => app.replay.frames[app.replay.plies].outcome.scores") == scores
    no_script_errors(page)


LAYOUT = """(root) => {
    // Every value of every card inside its card, on screen and apart from the others; nothing else overlapping.
    const problems = [];
    const width = document.documentElement.clientWidth;
    const scrolled = document.documentElement.scrollWidth;
    if (scrolled > width + 1) problems.push(`the page scrolls sideways (${scrolled} > ${width})`);
    const shown = (e) => {
        const r = e.getBoundingClientRect();
        return r.width > 0 && r.height > 0 && !e.closest("[hidden]") && getComputedStyle(e).visibility !== "hidden";
    };
    const clipped = (e) => {  // the part of e not hidden by a scrolling ancestor
        const r = e.getBoundingClientRect();
        let [l, t, rt, b] = [r.left, r.top, r.right, r.bottom];
        for (let a = e.parentElement; a && a !== document.body; a = a.parentElement) {
            const s = getComputedStyle(a);
            if (s.overflowX !== "visible" || s.overflowY !== "visible") {
                const q = a.getBoundingClientRect();
                [l, t, rt, b] = [Math.max(l, q.left), Math.max(t, q.top), Math.min(rt, q.right), Math.min(b, q.bottom)];
            }
        }
        return {left: l, top: t, right: rt, bottom: b};
    };
    const overlap = (a, b) =>
        Math.min(a.right, b.right) - Math.max(a.left, b.left) > 1
        && Math.min(a.bottom, b.bottom) - Math.max(a.top, b.top) > 1;
    const label = (e) => e.tagName.toLowerCase() + (e.id ? "#" + e.id : "")
        + "." + String(e.className).trim().replace(/ +/g, ".")
        + (e.dataset.tile ? `[tile ${e.dataset.tile}]` : "") + (e.dataset.index ? `[card ${e.dataset.index}]` : "");
    const scope = document.querySelector(root);
    let cards = 0;
    for (const card of scope.querySelectorAll(".card:not(.back)")) {
        if (!shown(card)) continue;
        cards += 1;
        const c = card.getBoundingClientRect();
        const texts = [];
        for (const side of card.querySelectorAll(".side")) {
            const range = document.createRange();
            range.selectNodeContents(side);
            const t = range.getBoundingClientRect();
            const name = `${label(card)} ${side.className.replace("side ", "")} value`;
            if (!side.textContent.trim() || t.width < 1) problems.push(`${name}: not shown`);
            const outside = t.left < c.left - 0.5 || t.right > c.right + 0.5
                || t.top < c.top - 0.5 || t.bottom > c.bottom + 0.5;
            if (outside) problems.push(`${name} runs past its card`);
            if (t.left < -0.5 || t.right > width + 0.5) problems.push(`${name} is off the screen`);
            if (parseFloat(getComputedStyle(side).fontSize) < 11) problems.push(`${name} is smaller than 11 px`);
            texts.forEach((other) => { if (overlap(t, other)) problems.push(`${name} overlaps another value`); });
            texts.push(t);
        }
    }
    const parts = [...scope.querySelectorAll(
        ".card:not(.ghost), .tile, .tower, .lane-label, h1, h2, h3, nav a, button:not(.rule-word), select, a.button, " +
        "input, #status, #players, .seat-name, #event, #preview, #lanes, .note, .counter, .mini-lane"
    )].filter(shown);
    const header = [...document.querySelectorAll("header h1, header nav a, #rules-button")];
    if (root === "#game") parts.push(...header.filter(shown));  // the game under the header (a dialog covers it)
    const boxes = parts.map((e) => [e, clipped(e)]).filter(([, r]) => r.right - r.left > 1 && r.bottom - r.top > 1);
    for (const [e, r] of boxes) {
        if (r.left < -0.5 || r.right > width + 0.5) problems.push(`${label(e)} is off the screen`);
    }
    for (let i = 0; i < boxes.length; i += 1) {
        for (let j = i + 1; j < boxes.length; j += 1) {
            const [a, ra] = boxes[i], [b, rb] = boxes[j];
            if (a.contains(b) || b.contains(a)) continue;
            if (overlap(ra, rb)) problems.push(`${label(a)} overlaps ${label(b)}`);
        }
    }
    return {problems, cards, parts: boxes.length};
}"""


def layout(page, root: str = "body") -> dict:
    """``LAYOUT``'s findings under ``root``, once the short flip animations of the last capture have ended."""
    page.wait_for_function("() => document.getAnimations().every(a => a.playState !== 'running')")
    return page.evaluate(LAYOUT, root)


@pytest.fixture
def artefacts(tmp_path) -> Path:
    """Where the screenshots go: ``$TRINITY_WEB_ARTEFACTS`` if set, else this test's tmp_path."""
    folder = Path(ARTEFACTS) if ARTEFACTS else tmp_path
    folder.mkdir(parents=True, exist_ok=True)
    return folder


@pytest.mark.parametrize(("width", "height"), [(390, 844), (768, 1024)])
def test_a_drafted_game_at_phone_and_tablet_size_shows_every_value_and_nothing_overlaps(
    server, browser, artefacts, width, height
):
    """A whole drafted game as Black on a phone (touch) and a tablet: the layout is checked from element boxes
    at every turn, with a preview on the board too; screenshots are kept; the score reads from Black's side."""
    phone = width < 500
    context = browser.new_context(
        viewport={"width": width, "height": height}, device_scale_factor=2, is_mobile=phone, has_touch=phone
    )
    page = watched_page(context)
    try:
        rng = random.Random(width)
        page.goto(f"{server}/play")
        page.wait_for_selector("#opponent option", state="attached")
        assert layout(page)["problems"] == []
        page.screenshot(path=str(artefacts / f"{width}x{height}-setup.png"), full_page=True)
        start_game(page, opponent="random", seat="1", first="opponent")
        page.wait_for_selector("#my-deck .card")
        checked = {"draft": 0, "play": 0}
        for _ in range(60):
            page.wait_for_function(HUMAN_TURN)
            now = state(page)
            found = layout(page, "#game")
            assert found["problems"] == [], found["problems"]
            assert found["cards"] >= (16 if now["phase"] == "draft" else len(now["board"]) - now["board"].count(None))
            if now["outcome"]:
                break
            checked["draft" if now["phase"] == "draft" else "play"] += 1
            if now["phase"] == "draft":
                if checked["draft"] == 1:
                    page.screenshot(path=str(artefacts / f"{width}x{height}-draft.png"), full_page=True)
                pick = rng.choice(now["legal"])["index"]
                page.locator(f'#my-deck .card[data-index="{pick}"]').click()
                continue
            move = rng.choice(now["legal"])
            page.locator(f'#my-hand .card[data-index="{move["index"]}"]').click()
            page.wait_for_function("() => app.previews !== null")
            tile = page.locator(f'.tile[data-tile="{move["tile"]}"]')
            if phone:
                tile.tap()  # a finger cannot hover: the first tap shows the preview
            else:
                tile.hover()
            expected = check_preview(page, move["index"], move["tile"])
            found = layout(page, "#game")  # the preview marks and the card held up move nothing out of place
            assert found["problems"] == [], found["problems"]
            if expected["captured"] and not (artefacts / f"{width}x{height}-preview.png").exists():
                page.screenshot(path=str(artefacts / f"{width}x{height}-preview.png"), full_page=True)
            ply = page.evaluate("() => app.game.ply")
            if phone:
                tile.tap()
            else:
                tile.click()
            page.wait_for_function(f"() => app.game.ply > {ply}")
        final = state(page)
        # all 8 picks, then placements to the end: a lane-control win can come at the 5th placement, after two of ours
        assert final["outcome"] is not None and checked["draft"] == 8 and checked["play"] >= 2, checked
        scores = final["outcome"]["scores"]
        assert f"you {scores[1]}, Random {scores[0]}" in page.inner_text("#result")  # Black's score first: the player's
        page.screenshot(path=str(artefacts / f"{width}x{height}-end.png"), full_page=True)
        page.click("#rules-button")
        page.wait_for_selector("#rules[open]")
        found = layout(page, "#rules")
        assert found["problems"] == [] and found["cards"] >= 5, found
        box = page.locator("#rules").bounding_box()
        assert (
            box["x"] >= 0 and box["x"] + box["width"] <= width and box["y"] >= 0 and box["y"] + box["height"] <= height
        )
        page.screenshot(path=str(artefacts / f"{width}x{height}-rules.png"))
        no_script_errors(page)
    finally:
        context.close()


def test_the_rules_panel_opens_and_closes_by_keyboard_and_rule_words_explain_themselves(server, page):
    page.goto(f"{server}/play")
    page.wait_for_selector("#opponent option", state="attached")
    tab_to(page, "play-start")
    page.keyboard.press("?")  # from anywhere but a form field
    page.wait_for_selector("#rules[open]")
    assert focused(page)["id"] == "rules-close"
    for section in ("rule-cards", "rule-a", "rule-capture", "rule-aa", "rule-domino", "rule-lane", "rule-majority"):
        assert page.locator(f"#rules #{section} h3").is_visible() or page.locator(f"#{section}").count() == 1
    assert page.evaluate("() => document.getElementById('rules').matches(':modal')")  # the page behind waits
    page.keyboard.press("Escape")
    page.wait_for_selector("#rules:not([open])", state="attached")
    assert focused(page)["id"] == "play-start"  # the focus comes back where it was
    tab_to(page, "rules-button")
    page.keyboard.press("Enter")
    page.wait_for_selector("#rules[open]")
    page.keyboard.press("Enter")  # on the Close button
    page.wait_for_selector("#rules:not([open])", state="attached")
    assert focused(page)["id"] == "rules-button"

    start_game(page, opponent="random", seat="0", first="you", draft="dealt")
    page.wait_for_selector("#my-hand .card.selectable")
    assert focused(page)["key"].startswith("hand:")
    key = focused(page)["key"]
    page.keyboard.press("?")  # in the middle of a game
    page.wait_for_selector("#rules[open]")
    page.keyboard.press("Escape")
    page.wait_for_selector("#rules:not([open])", state="attached")
    assert focused(page)["key"] == key

    word = page.locator('.legend .rule-word[data-rule="domino"]')
    word.focus()  # a rule word: its hint shows on focus (and hover), and is its accessible description
    page.wait_for_selector("#tooltip:not([hidden])")
    assert "domino" in page.inner_text("#tooltip") and "once" in page.inner_text("#tooltip")
    assert word.get_attribute("aria-describedby") == "hint-domino"
    page.keyboard.press("Escape")
    assert page.locator("#tooltip").is_hidden()
    page.hover('.rule-word[data-rule="majority"]')
    page.wait_for_selector("#tooltip:not([hidden])")
    assert "Lane majority" in page.inner_text("#tooltip")
    labels = page.eval_on_selector_all(".lane-label", "ls => ls.map(l => l.textContent)")
    assert labels == ["Lane 1", "Lane 2", "Lane 3"]  # lanes are labelled on the board, numbered from 1
    no_script_errors(page)


A11Y_DOM = """() => {
    const problems = [];
    const ids = [...document.querySelectorAll("[id]")].map((e) => e.id);
    ids.filter((id, i) => ids.indexOf(id) !== i).forEach((id) => problems.push(`duplicate id ${id}`));
    for (const e of document.querySelectorAll("[aria-labelledby], [aria-describedby], [aria-controls]")) {
        for (const attr of ["aria-labelledby", "aria-describedby", "aria-controls"]) {
            for (const ref of (e.getAttribute(attr) || "").split(/\\s+/).filter(Boolean)) {
                const who = e.id || e.className;
                if (!document.getElementById(ref)) problems.push(`${attr} of ${who} names no element: ${ref}`);
            }
        }
    }
    document.querySelectorAll("img:not([alt])").forEach((e) => problems.push(`an image without alt text: ${e.src}`));
    for (const e of document.querySelectorAll("[aria-hidden=true]")) {
        const inside = e.querySelector("a[href], button, input, select, textarea, [tabindex]:not([tabindex='-1'])");
        if (inside || e.tabIndex >= 0) problems.push(`a focusable element hidden from screen readers: ${e.className}`);
    }
    for (const e of document.querySelectorAll("input:not([type=hidden]), select, textarea")) {
        const named = e.labels.length || e.getAttribute("aria-label") || e.getAttribute("aria-labelledby");
        if (!named) problems.push(`a form control without a label: ${e.id}`);
    }
    return problems;
}"""
INTERACTIVE_ROLES = {"button", "link", "combobox", "listbox", "slider", "textbox", "checkbox", "radio", "menuitem"}
NO_ROLE = {"generic", "none", "presentation", "StaticText", "InlineTextBox", ""}


def accessibility_problems(page) -> list[str]:
    """Serious problems, read from Chromium's accessibility tree (what a screen reader gets) and the DOM: a
    control or focusable element without a name or a role, an image without a name or alt text, a form control
    without a label, a duplicate id, a reference to a missing id, something focusable hidden from screen readers."""
    cdp = page.context.new_cdp_session(page)
    try:
        nodes = cdp.send("Accessibility.getFullAXTree")["nodes"]
    finally:
        cdp.detach()
    problems = []
    for node in nodes:
        if node.get("ignored"):
            continue
        role = (node.get("role") or {}).get("value", "")
        name = str((node.get("name") or {}).get("value", "") or "").strip()
        props = {p["name"]: (p.get("value") or {}).get("value") for p in node.get("properties", [])}
        where = f"{role} {node.get('backendDOMNodeId')}"
        if role in INTERACTIVE_ROLES and not name:
            problems.append(f"{where}: a control without a name")
        if role == "image" and not name:
            problems.append(f"{where}: an image without a name")
        if props.get("focusable") and role != "RootWebArea":
            if role in NO_ROLE:
                problems.append(f"{where}: focusable without a role ({name!r})")
            elif not name:
                problems.append(f"{where}: focusable without a name")
    return problems + page.evaluate(A11Y_DOM)


def test_every_page_passes_an_accessibility_check(server, page, tmp_path):
    """Setup, draft, play with a card chosen and its preview, the rules panel, a confirmation, looking back, the
    end, the watch page and the replay page: no serious accessibility problem on any of them."""
    seen = {}
    page.goto(f"{server}/play")
    page.wait_for_selector("#opponent option", state="attached")
    seen["play setup"] = accessibility_problems(page)
    start_game(page, opponent="random", seat="0", first="you")
    page.wait_for_selector("#my-deck .card.selectable")
    seen["draft"] = accessibility_problems(page)
    page.keyboard.press("?")
    page.wait_for_selector("#rules[open]")
    seen["rules"] = accessibility_problems(page)
    page.keyboard.press("Escape")
    page.click("#new-game")
    page.wait_for_selector("#confirm[open]")
    seen["confirm"] = accessibility_problems(page)
    page.click("#confirm-yes")
    start_game(page, draft="dealt", hands="hidden")
    page.wait_for_selector("#my-hand .card.selectable")
    seen["recent games"] = []  # checked below, once a game is in the list
    page.keyboard.press("Enter")  # a card chosen, a tile focused: its preview shows
    page.wait_for_function("() => app.previews !== null && document.querySelector('.tile.preview-target')")
    seen["play, card chosen"] = accessibility_problems(page)
    page.keyboard.press("Escape")
    page.locator("#my-hand .card.selectable").first.click()
    page.locator(".tile.legal").first.click()
    page.wait_for_function(HUMAN_TURN + " && app.game.ply >= 2")
    page.click("#history li:first-child button")
    page.wait_for_selector("#lookback:not([hidden])")
    seen["looking back"] = accessibility_problems(page)
    page.keyboard.press("Escape")
    page.click("#resign")
    page.click("#confirm-yes")
    page.wait_for_selector("#result:not([hidden])")
    seen["the end"] = accessibility_problems(page)
    page.click("#new-game")
    page.wait_for_selector("#recent:not([hidden])")
    seen["recent games"] = accessibility_problems(page)
    page.goto(f"{server}/watch")
    page.wait_for_selector("#agent0 option", state="attached")
    page.click("#watch-start")
    page.wait_for_selector("#step")
    page.click("#step")
    page.wait_for_function("() => app.game.ply === 1 && !app.busy")
    seen["watch"] = accessibility_problems(page)
    path, _ = _replay_file(tmp_path)
    page.goto(f"{server}/replay")
    seen["replay setup"] = accessibility_problems(page)
    page.set_input_files("#replay-file", str(path))
    page.click("#replay-load")
    page.wait_for_selector("#game:not([hidden])")
    page.click("#last")
    seen["replay"] = accessibility_problems(page)
    assert {name: found for name, found in seen.items() if found} == {}
    no_script_errors(page)


def test_the_accessibility_check_can_fail(server, page):
    """The check finds what it looks for: a nameless focusable element, a nameless button, a duplicate id."""
    page.goto(f"{server}/play")
    page.wait_for_selector("#opponent option", state="attached")
    page.evaluate(
        """() => { const d = document.createElement("div"); d.tabIndex = 0; document.body.append(d);
            const b = document.createElement("button"); document.body.append(b);
            const e = document.createElement("span"); e.id = "status"; document.body.append(e); }"""
    )
    found = " | ".join(accessibility_problems(page))
    assert (
        "focusable without a role" in found and "a control without a name" in found and "duplicate id status" in found
    )


# ---------------------------------------------------------------------- game flow


BOARD_CARDS = "ts => ts.map(t => t.querySelector('.card') ? t.querySelector('.card').dataset.card : null)"


def test_resign_look_back_resume_and_review_a_game(server, page):
    page.goto(f"{server}/play")
    start_game(page, opponent="greedy", seat="1", first="you", draft="dealt")
    for _ in range(2):  # two placements of ours, two of greedy's
        page.wait_for_function(HUMAN_TURN)
        page.locator("#my-hand .card.selectable").first.click()
        page.locator(".tile.legal").first.click()
    page.wait_for_function(HUMAN_TURN + " && app.game.ply === 4")
    game_id = page.evaluate("() => app.game.id")
    live = [t and t["card"] for t in state(page)["board"]]

    page.click("#history li:nth-child(2) button")  # look back at the position after move 2
    page.wait_for_selector("#lookback:not([hidden])")
    assert "move 2 of 4" in page.inner_text("#lookback") and page.inner_text("#status").startswith("Looking back")
    earlier = page.evaluate(f"async () => (await fetch('/api/games/{game_id}/positions/2')).json()")["state"]
    shown = page.eval_on_selector_all(".tile", BOARD_CARDS)
    assert shown == [t and t["card"] for t in earlier["board"]] and shown != live
    assert page.locator("#my-hand .card.selectable").count() == 0  # nothing to play while looking back
    assert page.locator("#history li.shown").count() == 1
    page.keyboard.press("Escape")
    assert page.locator("#lookback").is_hidden()
    assert page.eval_on_selector_all(".tile", BOARD_CARDS) == live

    page.click("#resign")  # asked first; "Keep playing" keeps it
    page.click("#confirm-no")
    assert state(page)["outcome"] is None
    page.click("#resign")
    page.click("#confirm-yes")
    page.wait_for_selector("#result:not([hidden])")
    assert page.inner_text("#status") == "You resigned: Greedy wins."
    assert page.inner_text("#result h2") == "You resigned"

    page.click("#new-game")  # a finished game: no question
    page.wait_for_selector("#recent:not([hidden])")
    entry = page.locator("#recent-list li").first
    assert "Greedy, you are Black: you resigned at move 4" in entry.inner_text()
    entry.locator("a").click()  # open it again from the list
    page.wait_for_selector("#result:not([hidden])")
    assert page.evaluate("() => app.game.id") == game_id

    page.click("#review-game")
    page.wait_for_url("**/replay?id=*")
    page.wait_for_selector("#game:not([hidden])")
    assert page.inner_text(".counter") == "position 0 of 4"
    page.click("#history li:nth-child(3) button")  # the replay's move list steps too
    assert page.inner_text(".counter") == "position 3 of 4"
    no_script_errors(page)


def test_the_page_says_when_the_engine_is_still_being_prepared(server, page):
    preparing = {
        "ready": False,
        "started": True,
        "preparing": "exact solver",
        "done": 2,
        "families": [
            {"name": n, "state": s, "seconds": None}
            for n, s in (("MCTS", "ready"), ("baselines", "ready"), ("exact solver", "preparing"))
        ],
    }
    page.route("**/api/engine", lambda route: route.fulfill(json=preparing))
    page.goto(f"{server}/play")
    page.wait_for_selector("#engine:not([hidden])")
    text = page.inner_text("#engine")
    assert "Preparing the engine (first run)" in text and "2 of 3" in text and "exact solver" in text
    page.unroute("**/api/engine")  # the real server: ready; the page asks again and the notice goes
    page.wait_for_selector("#engine", state="hidden", timeout=10_000)
    no_script_errors(page)
