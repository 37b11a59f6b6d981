"""What the browser tests share (``tests/test_web_browser*.py``, ``tests/test_web_newcomer.py``): ``trinity serve`` in a
subprocess and a headless Chromium driven with Playwright (module-scoped fixtures: one server and one browser per
test module that imports them), a page whose script errors are collected, and the steps and reads they repeat.

Needs Debian's ``chromium`` (``/usr/bin/chromium``) and the ``playwright`` package (its own browser downloads are
never used): ``make test-web`` installs both. Importing it skips the importing test module without them.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

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


def watched_page(context, reply_pause_ms: int | None = 0):
    """A new page of ``context`` whose page errors and console errors are collected in ``page.problems``;
    ``reply_pause_ms``: how long the computer's reply waits after a move of ours that captured (the page's own
    setting in localStorage; 0: no wait, as most tests want; ``None``: the page's default)."""
    page = context.new_page()
    if reply_pause_ms is not None:
        page.add_init_script(f"localStorage.setItem('trinity.replyPauseMs', '{int(reply_pause_ms)}')")
    page.set_default_timeout(TIMEOUT_MS)
    problems: list[str] = []
    page.on("pageerror", lambda err: problems.append(f"page error: {err}"))
    page.on("console", lambda msg: problems.append(f"console: {msg.text}") if msg.type == "error" else None)
    page.problems = problems
    return page


def sized_page(browser, size: str, viewport: tuple[int, int], reply_pause_ms: int | None = 0, **options):
    """A context and its watched page at ``viewport`` (width, height), touch when ``size`` is ``"phone"``, the page
    named by ``page.size``; ``options``: more of the context's (``reduced_motion``); the caller closes the context."""
    phone = size == "phone"
    context = browser.new_context(
        viewport={"width": viewport[0], "height": viewport[1]}, is_mobile=phone, has_touch=phone, **options
    )
    page = watched_page(context, reply_pause_ms)
    page.size = size
    return context, page


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


def replay_file(folder: Path, seed: int = 3) -> tuple[Path, list]:
    """A finished drafted game of ``greedy`` against ``random`` saved as ``folder/replay.json``: its path and states."""
    states = []
    play_game((make("greedy"), make("random")), make_config(draft="pick"), seed, states.append)
    path = folder / "replay.json"
    Replay.from_states(states).save(path)
    return path, states


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
