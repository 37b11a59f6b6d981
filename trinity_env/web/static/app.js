// Trinity Towers in the browser: the Play, Watch and Replay pages over the server's JSON API.
// Plain JavaScript, no build step, nothing loaded from elsewhere. The server holds every game:
// the page keeps only its id (in the address and in localStorage), so a reload loses nothing.
// The rules live on the server only: what a placement would capture is asked of the engine
// (GET /api/games/{id}/previews/{ply}), never worked out here.
// The code is ES modules, one concern each, loaded by the browser as they are (<script type="module">): this
// one starts the page and imports the rest.

import { app, $ } from "./state.js";
import { api } from "./api.js";
import { showError } from "./notices.js";
import { storageKey, fillAgentLists, showSetup, checkEngine } from "./setup.js";
import { startPlay, startWatch, resume } from "./games.js";
import { uploadReplay, openReplay } from "./replays.js";
import { globalKey } from "./keys.js";
import { initRules, initHints, initConfirm } from "./dialogs.js";

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
