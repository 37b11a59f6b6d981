"""The keyboard in a real headless Chromium (``web_browser``): a drafted game played to the end by keyboard only, each
placement's preview checked against the engine's and against what the move then did, the focus kept across every
re-render; the rules panel opened and closed by keyboard, and the rule words' hints.
"""

from __future__ import annotations

import random

import pytest
import web_browser
from web_browser import (
    HUMAN_TURN,
    check_preview,
    focused,
    no_script_errors,
    start_game,
    state,
    tab_to,
    walk,
    walk_board,
)

pytestmark = pytest.mark.browser  # make test-web runs them (CI too); the default suite leaves them out
server, browser, page = web_browser.server, web_browser.browser, web_browser.page  # shared fixtures, found by name


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

    # A dialog's close event runs a task after it closes (the browser has given the focus back by then): what has the
    # focus when it runs keeps it. Here a rule word focused at once (what a busy machine did to this test in CI).
    page.keyboard.press("?")
    page.wait_for_selector("#rules[open]")
    page.evaluate(  # resolves once the close event has run: this listener comes after the page's own
        """() => new Promise((done) => { const rules = document.getElementById('rules');
                  rules.addEventListener('close', () => done(), { once: true });
                  rules.close();
                  document.querySelector('.legend .rule-word[data-rule="capture"]').focus(); })"""
    )
    assert page.evaluate("() => document.activeElement.dataset.rule") == "capture"
    assert "Captured:" in page.inner_text("#tooltip") and page.locator("#tooltip").is_visible()
    page.keyboard.press("Escape")
    page.locator(f'[data-focus="{key}"]').focus()

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
