"""End to end in a real headless Chromium: ``trinity serve`` in a subprocess, driven with Playwright (``web_browser``).

The pages and their flow: a whole drafted game against ``random`` by clicking (and one placement by dragging), a
reload in the middle of it, the replay downloaded; hidden dealt hands; watching two agents; a replay uploaded,
stepped through and reviewed; resigning, looking back, recent games and "Review this game"; the engine's
"preparing" notice; a game that another browser cannot open; and the bad-input paths a person can reach from the
pages. The keyboard and the rules panel: ``test_web_browser_keyboard.py``; layout and accessibility:
``test_web_browser_layout.py``.

``TRINITY_WEB_SCREENSHOT=docs/images/play-page.png`` also saves the play page for the README.
"""

from __future__ import annotations

import json
import os
import random

import pytest
import web_browser
from web_browser import HUMAN_TURN, TIMEOUT_MS, marked_tiles, no_script_errors, replay_file, start_game, state

from trinity_env.core import Move, Replay
from trinity_env.search.solver import Solver

pytestmark = pytest.mark.browser  # make test-web runs them (CI too); the default suite leaves them out
server, browser, page = web_browser.server, web_browser.browser, web_browser.page  # shared fixtures, found by name
SCREENSHOT = os.environ.get("TRINITY_WEB_SCREENSHOT")


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
                page.evaluate("() => { const log = document.getElementById('history'); log.scrollTop = 1e6; }")
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


def test_upload_a_replay_step_through_it_and_see_the_review(server, page, tmp_path):
    path, states = replay_file(tmp_path)
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
    judged = "is one of them" if Move(played.card, played.tile) in solution.best_moves else "is a mistake"
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
    path, _ = replay_file(tmp_path, seed=4)
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
