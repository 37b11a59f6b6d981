"""Issue 51's page points in a real headless Chromium (``web_browser``), each at desktop and phone size: the Replay page
names its players as Play and Watch do; the agent lists are wide enough on a desktop for their longest entry; a refusal
notice leaves the board where it was; the Rules dialog's domino picture stays under its sticky title."""

from __future__ import annotations

import pytest
import web_browser
from web_browser import HUMAN_TURN, no_script_errors, sized_page

from trinity_env.agents import make
from trinity_env.core import Replay
from trinity_env.evaluation.match import play_game
from trinity_env.spec.config import make_config

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
