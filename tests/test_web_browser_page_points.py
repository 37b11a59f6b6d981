"""Issue 51's page points in a real headless Chromium (``web_browser``), each at desktop and phone size: the Replay page
names its players as Play and Watch do; the agent lists are wide enough on a desktop for their longest entry; a refusal
notice leaves the board where it was; the Rules dialog's domino picture stays under its sticky title. Item 6, what a
newcomer met: what your move captured stays on the board a moment before the computer's reply covers it.
"""

from __future__ import annotations

import pytest
import web_browser
from web_browser import (
    HUMAN_TURN,
    api_previews,
    focused,
    no_script_errors,
    replay_file,
    sized_page,
    state,
    walk_board,
)

from trinity_env.agents import make
from trinity_env.core import Replay
from trinity_env.evaluation.match import play_game
from trinity_env.spec.config import make_config
from trinity_env.web.replays import REVIEW_MAX_EMPTY

pytestmark = pytest.mark.browser  # make test-web runs them (CI too); the default suite leaves them out
server, browser = web_browser.server, web_browser.browser  # shared fixtures, found by name
SIZES = {"desktop": (1280, 800), "phone": (390, 844)}


@pytest.fixture(params=sorted(SIZES))
def sized(request, browser):
    context, page = sized_page(browser, request.param, SIZES[request.param])
    yield page
    context.close()


def test_the_replay_page_names_the_players_as_play_and_watch_do(server, sized, tmp_path):
    """It said ``level:2`` and ``human``; Play says ``Level 2 — ...`` and Watch the same."""
    states = []
    play_game((make("mcts:2"), make("random")), make_config(draft="dealt"), 4, states.append)
    path = tmp_path / "replay.json"
    Replay.from_states(states, agents=["level:2", "human"]).save(path)
    sized.goto(f"{server}/replay")
    sized.set_input_files("#replay-file", str(path))
    sized.click("#replay-form button[type=submit]")
    sized.wait_for_function("() => app.replay && document.getElementById('players').textContent")
    players = sized.locator("#players").inner_text()
    assert players.startswith("Level 2 \u2014 ") and " vs Human (Black)" in players, players
    assert "level:2" not in players and "human" not in players
    no_script_errors(sized)


TEXT_FITS = """(id) => {
    // the select's box holds its longest entry: text width by the select's own font, plus its padding and arrow
    const select = document.getElementById(id);
    const style = getComputedStyle(select);
    const context = document.createElement("canvas").getContext("2d");
    context.font = `${style.fontWeight} ${style.fontSize} ${style.fontFamily}`;
    const longest = Math.max(...[...select.options].map((o) => context.measureText(o.text).width));
    const box = select.getBoundingClientRect();
    return {needed: longest + parseFloat(style.paddingLeft) + parseFloat(style.paddingRight) + 20, width: box.width,
            right: box.right, screen: document.documentElement.clientWidth, options: select.options.length};
}"""


@pytest.mark.parametrize("where, ids", [("play", ["opponent"]), ("watch", ["agent0", "agent1"])])
def test_an_agent_list_shows_its_longest_entry_on_a_desktop_and_fits_a_phone(server, sized, where, ids):
    """The opponent list cut its entries short on a desktop (``Level 1 — first steps: moves at ran``)."""
    sized.goto(f"{server}/{where}")
    sized.wait_for_function(f"() => document.getElementById('{ids[0]}').options.length > 3")
    for select in ids:
        fits = sized.evaluate(TEXT_FITS, select)
        assert fits["right"] <= fits["screen"] + 0.5  # never off the screen
        if sized.size == "desktop":
            assert fits["width"] >= fits["needed"], fits
    no_script_errors(sized)


def test_a_refusal_notice_leaves_the_board_where_it_was(server, sized):
    """The notice was a paragraph above the board: it pushed the board down a line when it came (and up when it
    went). Now it lies over the window's foot, in view, and the board stays put."""
    sized.goto(f"{server}/play")
    sized.wait_for_selector("#opponent option", state="attached")
    for field, value in {"opponent": "level:1", "seat": "0", "first": "you", "play-draft": "dealt"}.items():
        sized.select_option(f"#{field}", value)
    sized.click("#play-start")
    sized.wait_for_function(HUMAN_TURN)
    board = "() => { const r = document.getElementById('board').getBoundingClientRect(); return [r.top, r.left]; }"
    before = sized.evaluate(board)
    tile = sized.locator('.tile[data-tile="7"]')
    if sized.size == "phone":
        tile.tap(force=True)
    else:
        tile.click(force=True)  # no card chosen yet: refused, with the reason
    notice = sized.locator("#notice")
    assert notice.is_visible() and notice.inner_text()
    assert sized.evaluate(board) == before
    box = notice.bounding_box()
    assert box["y"] >= 0 and box["y"] + box["height"] <= SIZES[sized.size][1]  # in view without scrolling
    no_script_errors(sized)


UNDER_TITLE = """() => {
    // scroll the dialog so the domino picture passes under the sticky title; what is on top there must be the title
    const dialog = document.getElementById("rules");
    const head = dialog.querySelector(".rules-head");
    const figure = dialog.querySelector(".domino-figure");
    dialog.scrollTop += figure.getBoundingClientRect().top - head.getBoundingClientRect().top + 10;
    const h = head.getBoundingClientRect();
    const over = [];
    for (const e of figure.querySelectorAll(".card, .side")) {
        const r = e.getBoundingClientRect();
        if (r.bottom <= h.top + 1 || r.top >= h.bottom - 1) continue;
        const x = (Math.max(r.left, h.left) + Math.min(r.right, h.right)) / 2, y = Math.max(r.top, h.top) + 1;
        const top = document.elementFromPoint(x, y);
        if (top && !head.contains(top)) over.push(`${e.className} at ${Math.round(x)},${Math.round(y)}`);
    }
    return {over, scrolled: dialog.scrollTop > 0};
}"""


def test_the_rules_title_stays_over_the_domino_picture(server, sized):
    """On a phone the picture's cards (which stack above their neighbours) drew over the sticky title."""
    sized.goto(f"{server}/play")
    sized.click("#rules-button")
    sized.wait_for_selector("#rules[open]")
    found = sized.evaluate(UNDER_TITLE)
    assert found["scrolled"] and found["over"] == []
    no_script_errors(sized)


# ---------------------------------------------------------------------- issue 51, item 6: what a newcomer met

NEW_GAME = """async ([seed, moves]) => {
    const post = async (path, body) => (await fetch(path, {method: "POST",
        headers: {"Content-Type": "application/json"}, body: JSON.stringify(body)})).json();
    let view = await post("/api/games", {mode: "play", opponent: "level:1", seat: 0, first: "you",
        draft: "dealt", open_hands: true, seed});
    for (let k = 0; k < moves; k += 1) {
        view = await post(`/api/games/${view.id}/move`, {action: view.state.legal[0].action, ply: view.ply});
        view = await post(`/api/games/${view.id}/advance`, {ply: view.ply});
    }
    return view.id; }"""


def seeded_game(page, server: str, seed: int = 43, moves: int = 0) -> None:
    """A dealt game against Level 1, we White and first, from ``seed``: the same cards and replies on every run;
    ``moves``: placements each made already (our first legal one)."""
    page.goto(f"{server}/play")
    page.wait_for_selector("#opponent option", state="attached")
    page.goto(f"{server}/play?game={page.evaluate(NEW_GAME, [seed, moves])}")
    page.wait_for_function(HUMAN_TURN)


def place(page, index: int, tile: int) -> None:
    """Card ``index`` of our hand onto ``tile``: a click each on a desktop, a tap and two on a phone."""
    card, target = page.locator(f'#my-hand .card[data-index="{index}"]'), page.locator(f'.tile[data-tile="{tile}"]')
    if page.size == "phone":
        card.tap()
        target.tap()
        target.tap()
    else:
        card.click()
        target.click()


def play_to_a_capture(page) -> dict:
    """Our moves (the first legal one, else) until one captures: that one played, its preview returned."""
    for _ in range(8):
        page.wait_for_function(HUMAN_TURN)
        ply = page.evaluate("() => app.game.ply")
        previews = api_previews(page)["previews"]
        taking = [p for p in previews if p["captured"]]
        move = taking[0] if taking else previews[0]
        place(page, move["index"], move["tile"])
        if taking:
            return move
        page.wait_for_function(HUMAN_TURN + f" && app.game.ply >= {ply + 2}")  # no capture: no wait
    raise AssertionError("no capture in 8 moves")


REPLY_IN = """() => { const entries = performance.getEntriesByType("resource");
    const move = entries.filter((e) => e.name.endsWith("/move")).pop();
    return entries.some((e) => e.name.endsWith("/advance") && e.startTime > move.startTime && e.responseEnd > 0); }"""
"""The computer's reply to our last move has come back from the server."""


def test_what_your_move_captured_stays_marked_until_you_see_it(server, browser):
    """The computer answered at once: a move's captures were covered by its reply before a newcomer saw them. Now
    the reply is asked for at once but shown after a pause (here long, so the test waits for the marker, not the
    clock), the captured tiles ringed and the status naming them; "Show the reply" (a tap) or Escape ends it."""
    for size, viewport in SIZES.items():
        context, page = sized_page(browser, size, viewport, reply_pause_ms=600_000)
        try:
            seeded_game(page, server)
            move = play_to_a_capture(page)
            page.wait_for_selector("body[data-reply=waiting]")
            ply = page.evaluate("() => app.game.ply")
            page.wait_for_function(REPLY_IN)  # the reply is in, and still not shown
            assert page.evaluate("() => app.game.ply") == ply and state(page)["last"]["tile"] == move["tile"]
            ringed = sorted(
                int(t) for t in page.eval_on_selector_all(".tile.captured", "ts => ts.map(t => t.dataset.tile)")
            )
            assert ringed == sorted(move["captured"])
            tiles = " and ".join(str(t + 1) for t in sorted(move["captured"]))
            assert f"Your move captured tile{'s' if len(move['captured']) > 1 else ''} " in page.inner_text("#status")
            assert tiles.split(" and ")[-1] in page.inner_text("#status")
            if size == "phone":
                page.locator("#show-reply").tap()
            else:
                page.keyboard.press("Escape")
            page.wait_for_function(HUMAN_TURN + f" && app.game.ply === {ply + 1}")
            assert page.evaluate("() => document.body.dataset.reply") == ""
            assert page.locator("#show-reply").count() == 0
            no_script_errors(page)
        finally:
            context.close()


def test_the_reply_comes_by_itself_and_reduced_motion_still_marks_the_captures(server, browser):
    """The page's own pause ends by itself; under prefers-reduced-motion the captured cards do not flip (no animation)
    but are ringed all the same; "Show the reply" by keyboard leaves the focus in the hand."""
    context, page = sized_page(browser, "desktop", SIZES["desktop"], reply_pause_ms=None, reduced_motion="reduce")
    try:
        seeded_game(page, server)
        move = play_to_a_capture(page)
        page.wait_for_selector("body[data-reply=waiting]")
        marks = page.evaluate(
            """() => [...document.querySelectorAll('.tile.captured .card')].map(c => [
                getComputedStyle(c).animationName, getComputedStyle(c).boxShadow !== 'none'])"""
        )
        assert len(marks) == len(move["captured"]) and all(name == "none" and ring for name, ring in marks), marks
        ply = page.evaluate("() => app.game.ply")
        page.wait_for_function(HUMAN_TURN + f" && app.game.ply === {ply + 1}")  # no skip: the pause ends
        page.evaluate("() => localStorage.setItem('trinity.replyPauseMs', '600000')")
        play_to_a_capture(page)
        page.wait_for_selector("#show-reply")
        page.focus("#show-reply")
        page.keyboard.press("Enter")
        page.wait_for_function(HUMAN_TURN + f" && app.game.ply >= {ply + 3}")
        assert (focused(page)["key"] or "").startswith("hand:"), focused(page)
        no_script_errors(page)
    finally:
        context.close()


BOXES = """() => {
    const box = (sel) => { const r = document.querySelector(sel).getBoundingClientRect();
        return {top: r.top, bottom: r.bottom, left: r.left, right: r.right}; };
    return {board: box("#board"), log: box("#history"), title: box("#moves-title"), main: box(".game-main"),
            last: box("#history li:last-child"), panels: box("#game > .panels"), height: window.innerHeight,
            width: document.documentElement.clientWidth, scrolled: document.documentElement.scrollWidth, y: scrollY};
}"""


def test_on_a_desktop_the_move_log_is_in_view_beside_the_board(server, sized):
    """At 1280x800 the lanes and the moves came below the board, under the fold; now they stand beside it, the log's
    heading and its latest move in view without scrolling. A phone keeps them below (one tap away)."""
    seeded_game(sized, server, moves=4)
    sized.evaluate("() => window.scrollTo(0, 0)")
    at = sized.evaluate(BOXES)
    assert at["scrolled"] <= at["width"] + 1  # nothing off the side
    if sized.size == "desktop":
        for part in ("title", "last", "board"):
            assert at[part]["top"] >= 0 and at[part]["bottom"] <= at["height"], (part, at)
        assert at["log"]["left"] >= at["board"]["right"] and at["panels"]["left"] >= at["main"]["right"]
        assert at["log"]["top"] < at["board"]["bottom"] and at["log"]["bottom"] > at["board"]["top"]  # beside it
    else:
        assert at["title"]["top"] >= at["board"]["bottom"]
        assert sized.locator(".jump a[href='#moves-title']").is_visible()
    assert sized.locator("#history li").count() == 8
    no_script_errors(sized)


REVIEW_OF_A_SHORT_GAME = """async (id) => {
    const post = async (path) => (await fetch(path, {method: "POST", headers: {"Content-Type": "application/json"},
        body: "{}"})).json();
    await post(`/api/games/${id}/resign`);
    return (await post(`/api/games/${id}/review`)).id; }"""


def test_the_review_says_why_a_position_is_not_judged_and_where_one_is(server, browser, tmp_path):
    """After a short game every position said only "no move to judge here". Now the review says why (the draft, the
    end, too many empty tiles: the solver's reach), offers the first judged position, or says the game has none."""
    context, page = sized_page(browser, "desktop", SIZES["desktop"])
    try:
        seeded_game(page, server, moves=2)  # two placements each, then resigned: a short game
        replay = page.evaluate(REVIEW_OF_A_SHORT_GAME, page.evaluate("() => app.game.id"))
        page.goto(f"{server}/replay?id={replay}")
        page.wait_for_selector("#review:not([hidden])")
        why = page.inner_text("#review-why")
        assert "15 empty tiles" in why and f"at most {REVIEW_MAX_EMPTY} empty tiles" in why, why
        none = page.inner_text("#review-none")
        assert "no position to judge" in none and "after 4 placements" in none and "Review a longer game" in none
        assert page.locator("#review-first").count() == 0
        page.click("#last")  # where it was resigned (a replay keeps the moves only): still too early to judge
        assert "11 empty tiles" in page.inner_text("#review-why") and page.locator("#review-none").is_visible()

        path, states = replay_file(tmp_path)  # a whole drafted game
        first = next(
            k
            for k, s in enumerate(states)
            if s.phase == "play" and not s.is_over and len(s.empty_tiles()) <= REVIEW_MAX_EMPTY
        )
        page.goto(f"{server}/replay")
        page.set_input_files("#replay-file", str(path))
        page.click("#replay-load")
        page.wait_for_selector("#review:not([hidden])")
        assert "This is the draft: picks are not judged." in page.inner_text("#review-why")
        go = page.locator("#review-first")
        assert (
            go.inner_text() == f"Go to position {first}, the first judged" and page.locator("#review-none").count() == 0
        )
        go.click()
        assert page.evaluate("() => app.frame") == first and page.locator("#review-why").count() == 0
        page.click("#last")
        assert page.inner_text("#review-why") == "The game is over here: there is no move left to judge."
        assert page.locator("#review-first").is_visible()
        no_script_errors(page)
    finally:
        context.close()


def nearest_free(now: dict, index: int, last: int) -> int:
    """The rule the page states: the tile last used if card ``index`` may go there, else the free tile fewest
    arrow-key steps from it (ties: the lower number)."""
    tiles = {m["tile"] for m in now["legal"] if m["index"] == index}
    steps = lambda t: abs(t // 5 - last // 5) + abs(t % 5 - last % 5)  # noqa: E731
    return min(tiles, key=lambda t: (steps(t), t))


def test_the_keyboard_lands_on_the_tile_last_used_turn_after_turn(server, browser):
    """Choosing a card by keyboard put the focus on the lowest free tile, a different one each turn as the board
    filled. Now it goes back to the tile last used, or (taken) the free tile nearest it: checked over two turns."""
    context, page = sized_page(browser, "desktop", SIZES["desktop"])
    try:
        seeded_game(page, server)
        assert focused(page)["key"].startswith("hand:")
        page.keyboard.press("Enter")
        assert focused(page)["key"] == "tile:7"  # the centre, on an empty board
        walk_board(page, 13)
        page.keyboard.press("Enter")  # placed on tile 14
        page.wait_for_function(HUMAN_TURN + " && app.game.ply === 2")
        last = 13
        for turn in range(2):
            index = int(focused(page)["key"].split(":")[1])
            page.keyboard.press("Enter")
            now = state(page)
            expected = nearest_free(now, index, last)
            lowest = min(t for t, here in enumerate(now["board"]) if here is None)
            assert focused(page)["key"] == f"tile:{expected}" and expected != lowest, (expected, lowest)
            used = max(m["tile"] for m in now["legal"] if m["index"] == index and m["tile"] != expected)
            walk_board(page, used)  # elsewhere, then the card put back and chosen again: back on that tile
            page.keyboard.press("Escape")
            assert focused(page)["key"] == f"hand:{index}"
            page.keyboard.press("Enter")
            assert focused(page)["key"] == f"tile:{used}"
            page.keyboard.press("Enter")
            page.wait_for_function(HUMAN_TURN + f" && app.game.ply === {2 * turn + 4}")
            last = used
        no_script_errors(page)
    finally:
        context.close()


TILE_NUMBERS = """() => {
    const lum = (rgb) => {
        const [r, g, b] = rgb.match(/[\\d.]+/g).slice(0, 3).map((v) => Number(v) / 255)
            .map((v) => (v <= 0.03928 ? v / 12.92 : ((v + 0.055) / 1.055) ** 2.4));
        return 0.2126 * r + 0.7152 * g + 0.0722 * b; };
    const textBox = (e) => {
        const range = document.createRange(); range.selectNodeContents(e); return range.getBoundingClientRect(); };
    const apart = (a, b) => a.right <= b.left + 0.5 || b.right <= a.left + 0.5
        || a.bottom <= b.top + 0.5 || b.bottom <= a.top + 0.5;
    const inside = (a, b) => a.left >= b.left - 0.5 && a.right <= b.right + 0.5
        && a.top >= b.top - 0.5 && a.bottom <= b.bottom + 0.5;
    return [...document.querySelectorAll(".tile")].filter((t) => t.querySelector(".card")).map((tile) => {
        const card = tile.querySelector(".card"), number = tile.querySelector(".tile-number");
        if (!number) return {tile: Number(tile.dataset.tile), text: null};
        const box = textBox(number);
        // what is on top there (the number lets the pointer through to its card): nothing over the card
        const top = document.elementFromPoint((box.left + box.right) / 2, (box.top + box.bottom) / 2);
        const style = getComputedStyle(number);
        const fore = lum(getComputedStyle(number).color), back = lum(getComputedStyle(card).backgroundColor);
        const seen = Boolean(top && card.contains(top)) && style.visibility === "visible" && style.opacity === "1";
        return {tile: Number(tile.dataset.tile), text: number.textContent, seen,
            inCard: inside(box, card.getBoundingClientRect()),
            clear: [...card.querySelectorAll(".side")].every((side) => apart(box, textBox(side))),
            px: parseFloat(getComputedStyle(number).fontSize),
            contrast: (Math.max(fore, back) + 0.05) / (Math.min(fore, back) + 0.05)};
    });
}"""


def test_an_occupied_tile_shows_its_number(server, sized):
    """The numbers of occupied tiles hid under their cards while the move list names tiles by number. Now each card
    on the board shows its tile's number in its empty top-left corner: on top, clear of the four values, legible."""
    seeded_game(sized, server, moves=2)
    tiles = sized.evaluate(TILE_NUMBERS)
    occupied = [t for t, here in enumerate(state(sized)["board"]) if here is not None]
    assert sorted(t["tile"] for t in tiles) == occupied and len(occupied) == 4
    for t in tiles:
        assert t["text"] == str(t["tile"] + 1) and t["seen"] and t["inCard"] and t["clear"], t
        assert t["px"] >= 9 and t["contrast"] >= 4.5, t
    assert sized.eval_on_selector_all(".tile-number", "ns => ns.map(n => n.textContent)") == [
        str(k) for k in range(1, 16)
    ]
    no_script_errors(sized)
