// Trinity Towers in the browser: the Play, Watch and Replay pages over the server's JSON API.
// Plain JavaScript, no build step, nothing loaded from elsewhere. The server holds every game:
// the page keeps only its id (in the address and in localStorage), so a reload loses nothing.
// The rules live on the server only: what a placement would capture is asked of the engine
// (GET /api/games/{id}/previews/{ply}), never worked out here.
// The code is ES modules, one concern each, loaded by the browser as they are (<script type="module">), in layers
// whose imports point only down (tests/test_web_layers.py): the state and the API; the tools around them (notices,
// focus, dialogs); what draws the page (cards, previews, board, draft, render); what handles input and runs games
// and replays (setup, games, replays, keys); and this module, which starts the page. The drawing modules reach the
// controllers through actions.js, whose handlers this module registers first.

import { app, $ } from "./state.js";
import { api } from "./api.js";
import { register } from "./actions.js";
import { showError } from "./notices.js";
import { initRules, initHints, initConfirm } from "./dialogs.js";
import { storageKey, fillAgentLists, showSetup, checkEngine } from "./setup.js";
import { startPlay, startWatch, resume, play, chooseCard, putBack, placeOn, newGame, resign, reviewGame, advance, toggleAutoplay, lookBack, endLookback, showReplyNow } from "./games.js";
import { uploadReplay, openReplay, goToFrame, loadReview, newReplay } from "./replays.js";
import { globalKey, boardKey, handKey, deckKey } from "./keys.js";

register({ play, chooseCard, putBack, placeOn, boardKey, handKey, deckKey, newGame, resign, reviewGame, advance, toggleAutoplay, lookBack, endLookback, showReplyNow, goToFrame, loadReview, newReplay });

document.addEventListener("DOMContentLoaded", init);

async function init() {
  const path = location.pathname.replace(/\/+$/, "");
  app.page = ["play", "watch", "replay"].find((p) => path === `/${p}`) || "play";
  $(`nav-${app.page}`).classList.add("current");
  $(`nav-${app.page}`).setAttribute("aria-current", "page");
  document.body.dataset.page = app.page;
  $("play-form").addEventListener("submit", startPlay);
  $("watch-form").addEventListener("submit", startWatch);
  $("replay-form").addEventListener("submit", uploadReplay);
  initRules();
  initHints();
  initConfirm();
  document.addEventListener("keydown", globalKey);
  // The first API answer brings the browser's client cookie: ask one thing first, then the rest, so that two
  // requests without a cookie never get two different tokens (the later would orphan the earlier's games).
  await checkEngine();
  if (app.page !== "replay") {
    try {
      app.agents = await api("GET", "/api/agents");
      fillAgentLists(app.agents);
    } catch (err) {
      showError(err.message);
      return;
    }
  }
  const params = new URLSearchParams(location.search);
  if (app.page === "replay") {
    const id = params.get("id");
    if (id) await openReplay(id);
    else showSetup();
    return;
  }
  const id = params.get("game") || localStorage.getItem(storageKey());
  if (id) await resume(id);
  else showSetup();
}
