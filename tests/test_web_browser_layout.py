"""Layout and accessibility in a real headless Chromium (``web_browser``): drafted games at phone (390x844, touch) and
tablet (768x1024) size where every card value is checked to be on screen and nothing to overlap, and an
accessibility check of every page from Chromium's accessibility tree (and that the check can fail).

``TRINITY_WEB_ARTEFACTS=folder`` keeps the phone and tablet screenshots there (else in pytest's tmp_path).
"""

from __future__ import annotations

import os
import random
from pathlib import Path

import pytest
import web_browser
from web_browser import HUMAN_TURN, check_preview, no_script_errors, replay_file, start_game, state, watched_page

pytestmark = pytest.mark.browser  # make test-web runs them (CI too); the default suite leaves them out
server, browser, page = web_browser.server, web_browser.browser, web_browser.page  # shared fixtures, found by name
ARTEFACTS = os.environ.get("TRINITY_WEB_ARTEFACTS")


# ---------------------------------------------------------------------- layout at phone and tablet size


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


# ---------------------------------------------------------------------- accessibility


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
    path, _ = replay_file(tmp_path)
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
