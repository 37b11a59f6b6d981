// Trinity Towers in the browser: the Play, Watch and Replay pages over the server's JSON API.
// Plain JavaScript, no build step, nothing loaded from elsewhere. The server holds every game:
// the page keeps only its id (in the address and in localStorage), so a reload loses nothing.
// The rules live on the server only: what a placement would capture is asked of the engine
// (GET /api/games/{id}/previews/{ply}), never worked out here.
"use strict";

const COLOURS = ["White", "Black"];
const LANES = 3;
const POSITIONS = 5;
const SPEEDS = { slow: 1500, normal: 700, fast: 250 };
const ENGINE_POLL = 1000; // ms between questions to GET /api/engine while the engine is being prepared
const RECENT_SHOWN = 8;
const RULE_SECTIONS = {
  draft: "rule-draft",
  capture: "rule-capture",
  domino: "rule-domino",
  a: "rule-a",
  lane: "rule-lane",
  tower: "rule-lane",
  majority: "rule-majority",
  preview: "rule-capture",
};

const app = {
  page: "play",
  agents: null, // GET /api/agents
  engine: null, // GET /api/engine
  game: null, // a game view (play and watch)
  replay: null, // an uploaded replay's view
  frame: 0, // the replay position shown
  reviews: {}, // replay reviews by ply
  selected: null, // deck index of the hand card chosen (play)
  busy: false,
  autoplay: false,
  timer: null,
  previews: null, // {id, ply, byKey: Map("index:tile" -> what that placement would do)}
  previewsLoading: null,
  hoverTile: null, // the tile under the pointer or focused, whose preview shows
  lookback: null, // {ply, state}: an earlier position of the game shown instead of the current one
  positions: {}, // earlier positions fetched, by ply
  roving: { board: 7, hand: null, deck: null }, // the item of each keyboard group that Tab reaches
  focusNext: null, // what to focus after the next render
  pointer: null, // the kind of the last pointer on a tile ("mouse", "touch", "pen")
  armedTile: null, // the tile a first tap previewed (a second tap places)
  announcedPly: 0, // the moves up to here have been announced
  confirmResolve: null,
  rulesReturn: null,
};

const $ = (id) => document.getElementById(id);
// Tiles and lanes are numbered from 1 in everything the page says (tile 1 to 15, lane 1 to 3); the API and the
// data-tile attributes keep the rules' indices from 0.
const tileNo = (t) => t + 1;
const laneNo = (lane) => lane + 1;

function el(tag, className, text) {
  const node = document.createElement(tag);
  if (className) node.className = className;
  if (text !== undefined && text !== null) node.textContent = String(text);
  return node;
}

// ------------------------------------------------------------------ the API

async function api(method, path, body) {
  const options = { method, headers: { Accept: "application/json" } };
  if (body !== undefined) {
    options.headers["Content-Type"] = "application/json";
    options.body = typeof body === "string" ? body : JSON.stringify(body);
  }
  let response;
  try {
    response = await fetch(path, options);
  } catch (err) {
    const error = new Error("the server cannot be reached: is `trinity serve` still running?");
    error.status = 0;
    throw error;
  }
  let data = null;
  try {
    data = await response.json();
  } catch (err) {
    data = null;
  }
  if (!response.ok) {
    const error = new Error((data && data.error) || `${response.status} ${response.statusText}`);
    error.status = response.status;
    throw error;
  }
  return data;
}

function showError(message) {
  const box = $("error");
  box.textContent = message || "";
  box.hidden = !message;
}

function notify(text) {
  // why something was refused, shown where it is seen (role=status: read out too), on touch as on a mouse
  const box = $("notice");
  box.textContent = text || "";
  box.hidden = !text;
  if (!text) return;
  const rect = box.getBoundingClientRect();
  if (rect.top < 0 || rect.bottom > window.innerHeight) box.scrollIntoView({ block: "nearest" });
}

function announce(text) {
  // the live region: a screen reader reads each move as it happens
  if (text) $("announce").textContent = text;
}

// ------------------------------------------------------------------ start-up

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

function storageKey() {
  return `trinity.${app.page}.game`;
}

function signed(value) {
  return value > 0 ? `+${value}` : value < 0 ? `\u2212${-value}` : "0";
}

function levelName(agent) {
  return `Level ${agent.name.split(":")[1]}`;
}

function agentText(agent, ladder) {
  // the list's words: the name and how it plays, weakest first; the rating is a detail (agentAbout)
  if (agent.group === "ladder") {
    const at = ladder.findIndex((l) => l.name === agent.name);
    const end = at === 0 ? " (weakest)" : at === ladder.length - 1 ? " (strongest)" : "";
    return `${agent.short}: ${agent.about}${end}`;
  }
  const same = ladder.find((l) => l.spec === agent.spec);
  return `${agent.short} \u2014 ${agent.about}${same ? ` (plays as ${levelName(same)})` : ""}`;
}

function agentAbout(agent, ladder) {
  // the detail under the list: how it plays and its measured strength against the ladder's ends
  const rated = agent.group === "ladder" ? agent : ladder.find((l) => l.spec === agent.spec);
  const what = `${agent.short} ${agent.about}.`;
  if (!rated || !ladder.length) return `${what} Not measured on the difficulty ladder.`;
  const low = ladder[0];
  const high = ladder[ladder.length - 1];
  const same = rated === agent ? "" : ` It plays exactly as ${levelName(rated)}.`;
  return `${what}${same} Rating ${signed(rated.elo)} (Elo, measured in games between the ladder's levels: ${levelName(low)} ${signed(low.elo)}, ${levelName(high)} ${signed(high.elo)}; higher is stronger).`;
}

function showAgentAbout() {
  const agent = app.agents && app.agents.agents.find((a) => a.name === $("opponent").value);
  $("opponent-about").textContent = agent ? agentAbout(agent, app.agents.ladder) : "";
}

function fillAgentLists(data) {
  const groups = {
    ladder: "Difficulty ladder, weakest first",
    baseline: "Simple strategies",
    search: "Searchers (more lines tried: stronger)",
    trained: "Trained networks",
    added: "Added by this server",
  };
  for (const id of ["opponent", "agent0", "agent1"]) {
    const select = $(id);
    select.replaceChildren();
    for (const [group, title] of Object.entries(groups)) {
      const members = data.agents.filter((a) => a.group === group);
      if (!members.length) continue;
      const optgroup = el("optgroup");
      optgroup.label = title;
      for (const agent of members) {
        const option = el("option", null, agentText(agent, data.ladder));
        option.value = agent.name;
        optgroup.append(option);
      }
      select.append(optgroup);
    }
  }
  $("opponent").value = data.default;
  $("opponent").addEventListener("change", showAgentAbout);
  showAgentAbout();
  $("agent0").value = data.agents.some((a) => a.name === "greedy") ? "greedy" : data.default;
  $("agent1").value = data.agents.some((a) => a.name === "mcts:100") ? "mcts:100" : data.default;
}

function showSetup() {
  stopTimer();
  app.game = null;
  app.replay = null;
  app.lookback = null;
  $("game").hidden = true;
  for (const page of ["play", "watch", "replay"]) $(`${page}-setup`).hidden = page !== app.page;
  loadRecent();
}

function showBoard() {
  for (const page of ["play", "watch", "replay"]) $(`${page}-setup`).hidden = true;
  $("recent").hidden = true;
  $("game").hidden = false;
}

// ------------------------------------------------------------------ the engine (compiled in the background at start)

async function checkEngine() {
  try {
    app.engine = await api("GET", "/api/engine");
  } catch (err) {
    app.engine = null;
    return;
  }
  renderEngine();
  if (!app.engine.ready) setTimeout(checkEngine, ENGINE_POLL);
  else if (app.game || app.replay) render();
}

function engineReady() {
  return !app.engine || app.engine.ready;
}

function renderEngine() {
  const box = $("engine");
  const engine = app.engine;
  box.hidden = !engine || engine.ready;
  if (box.hidden) {
    box.textContent = "";
    return;
  }
  const total = engine.families.length;
  const now = engine.preparing ? `: compiling the ${engine.preparing}` : "";
  box.textContent = `Preparing the engine (first run)… ${engine.done} of ${total} parts ready${now}. The computer's moves and the solver wait for it; later starts skip this.`;
}

// ------------------------------------------------------------------ your recent games

async function loadRecent() {
  const box = $("recent");
  box.hidden = true;
  if (app.page === "replay") return;
  let data;
  try {
    data = await api("GET", "/api/games");
  } catch (err) {
    return; // the list is a convenience: the setup form works without it
  }
  if (app.game || app.replay) return; // a game opened meanwhile
  const games = data.games.filter((g) => g.mode === app.page).slice(0, RECENT_SHOWN);
  const list = $("recent-list");
  list.replaceChildren();
  for (const game of games) {
    const item = el("li");
    item.append(el("span", "what", recentText(game)), el("span", "when", `${ago(game.updated)}`));
    const link = el("a", "button", game.phase === "over" ? "Open" : "Resume");
    link.href = `/${game.mode}?game=${game.id}`;
    link.setAttribute("aria-label", `${game.phase === "over" ? "Open" : "Resume"}: ${recentText(game)}`);
    item.append(link);
    list.append(item);
  }
  box.hidden = games.length === 0;
}

function recentText(game) {
  const moves = `move ${game.ply}`;
  if (game.mode === "watch") {
    const names = `${game.seats[0]} vs ${game.seats[1]}`;
    if (!game.outcome) return `${names}, ${moves}, ${game.phase === "draft" ? "drafting" : "in play"}`;
    const o = game.outcome;
    if (o.winner === null) return `${names}: a draw`;
    const how = o.termination === "lane_control" ? `by controlling lane ${laneNo(o.lane)}` : `${o.scores[o.winner]}–${o.scores[1 - o.winner]}`;
    return `${names}: ${COLOURS[o.winner]} won ${how}`;
  }
  const me = game.human;
  const who = `${game.seats[1 - me]}, you are ${COLOURS[me]}`;
  if (!game.outcome) return `${who}: ${moves}, ${game.phase === "draft" ? "drafting" : "in play"}`;
  const o = game.outcome;
  if (o.termination === "resignation") return `${who}: you resigned at move ${game.ply}`;
  if (o.winner === null) return `${who}: a draw`;
  if (o.termination === "lane_control") return `${who}: you ${o.winner === me ? "won" : "lost"}, lane ${laneNo(o.lane)} controlled`;
  return `${who}: you ${o.winner === me ? "won" : "lost"} ${o.scores[me]}–${o.scores[1 - me]}`;
}

function ago(seconds) {
  const minutes = Math.max(0, Math.round((Date.now() / 1000 - seconds) / 60));
  if (minutes < 1) return "just now";
  if (minutes < 60) return `${minutes} min ago`;
  const hours = Math.round(minutes / 60);
  return hours < 48 ? `${hours} h ago` : `${Math.round(hours / 24)} days ago`;
}

// ------------------------------------------------------------------ games (play and watch)

async function startPlay(event) {
  event.preventDefault();
  const seat = $("seat").value;
  const body = {
    mode: "play",
    opponent: $("opponent").value,
    seat: seat === "random" ? "random" : Number(seat),
    first: $("first").value,
    draft: $("play-draft").value,
    open_hands: $("play-hands").value === "open",
  };
  await createGame(body);
}

async function startWatch(event) {
  event.preventDefault();
  const first = $("first-player").value;
  const body = {
    mode: "watch",
    agents: [$("agent0").value, $("agent1").value],
    first_player: first === "random" ? "random" : Number(first),
    draft: $("watch-draft").value,
  };
  await createGame(body);
}

async function createGame(body) {
  showError("");
  try {
    const view = await api("POST", "/api/games", body);
    app.autoplay = false;
    openGame(view);
  } catch (err) {
    showError(err.message);
  }
}

async function resume(id) {
  try {
    openGame(await api("GET", `/api/games/${encodeURIComponent(id)}`));
  } catch (err) {
    localStorage.removeItem(storageKey());
    history.replaceState(null, "", location.pathname);
    showSetup();
    // a 404: forgotten by the server, or not this browser's (games and replays belong to the cookie that made them)
    const gone = "That game is no longer on the server, or was started in another browser: start a new one.";
    showError(err.status === 404 ? gone : err.message);
  }
}

function openGame(view) {
  app.game = view;
  app.selected = null;
  app.previews = null;
  app.lookback = null;
  app.positions = {};
  app.hoverTile = null;
  app.announcedPly = view.ply;
  app.roving = { board: 7, hand: null, deck: null };
  app.armedTile = null;
  notify("");
  localStorage.setItem(storageKey(), view.id);
  history.replaceState(null, "", `${location.pathname}?game=${view.id}`);
  showBoard();
  app.focusNext = "first";
  render();
  announce($("status").textContent);
  schedule();
}

function gameInProgress() {
  const game = app.game;
  return Boolean(game && game.mode === "play" && !game.state.outcome);
}

async function newGame() {
  if (gameInProgress()) {
    const leave = await confirmStep(
      "Leave this game?",
      "It stays on the server for a while: you can come back to it from “Your recent games”.",
      "Leave it",
      "Keep playing",
    );
    if (!leave) return;
  }
  localStorage.removeItem(storageKey());
  history.replaceState(null, "", location.pathname);
  showError("");
  showSetup();
  const start = $(`${app.page}-start`);
  if (start) start.focus();
}

async function resign() {
  const game = app.game;
  if (!gameInProgress()) return;
  const opponent = game.seats[1 - game.human].short;
  const sure = await confirmStep("Resign this game?", `${opponent} wins. You can still look back at the game and review it.`, "Resign", "Keep playing");
  if (!sure || app.game !== game) return;
  if (app.busy) {
    showError("the agent is thinking: resign after its move");
    return;
  }
  app.busy = true;
  try {
    app.game = await api("POST", `/api/games/${game.id}/resign`, {});
    app.positions = {};
    app.selected = null;
    app.lookback = null;
  } catch (err) {
    showError(err.message);
  } finally {
    app.busy = false;
  }
  app.focusNext = "#new-game";
  render();
  announce($("status").textContent);
}

async function reviewGame() {
  const game = app.game;
  if (!game) return;
  try {
    const upload = await api("POST", `/api/games/${game.id}/review`, {});
    location.assign(`/replay?id=${upload.id}`);
  } catch (err) {
    showError(err.message);
  }
}

function stopTimer() {
  clearTimeout(app.timer);
  app.timer = null;
}

function schedule() {
  stopTimer();
  const game = app.game;
  if (!game || game.state.outcome || !game.agent_to_move) return;
  if (game.mode === "play") app.timer = setTimeout(advance, 0); // no artificial pause: the move shows as soon as it is made
  else if (app.autoplay) app.timer = setTimeout(advance, SPEEDS[$("speed") ? $("speed").value : "normal"]);
}

async function advance() {
  const game = app.game;
  if (!game || app.busy) return;
  app.busy = true;
  let ok = false;
  try {
    app.game = await api("POST", `/api/games/${game.id}/advance`, { ply: game.ply });
    ok = true;
  } catch (err) {
    app.autoplay = false;
    showError(err.message);
  } finally {
    app.busy = false;
  }
  if (app.game !== game || ok) render();
  if (ok) {
    announceMoves();
    schedule();
  }
}

async function play(action, focusAfter) {
  const game = app.game;
  if (!game || app.busy) return;
  app.busy = true;
  app.selected = null;
  app.hoverTile = null;
  showError("");
  notify("");
  try {
    app.game = await api("POST", `/api/games/${game.id}/move`, { action, ply: game.ply });
  } catch (err) {
    showError(err.message);
    if (err.status === 409) {
      try {
        app.game = await api("GET", `/api/games/${game.id}`);
      } catch (again) {
        showError(again.message);
      }
    }
  } finally {
    app.busy = false;
  }
  if (focusAfter) app.focusNext = focusAfter;
  render();
  announceMoves();
  schedule();
}

function announceMoves() {
  const game = app.game;
  if (!game) return;
  const view = current();
  const fresh = game.history.slice(app.announcedPly).map((step) => describe(view, step));
  app.announcedPly = game.ply;
  const status = $("status").textContent;
  announce([...fresh, status].filter(Boolean).join(". "));
}

// ------------------------------------------------------------------ looking back at an earlier position

async function lookBack(ply) {
  const game = app.game;
  if (!game) return;
  if (ply >= game.ply) {
    endLookback(`move:${game.ply - 1}`);
    return;
  }
  let position = app.positions[ply];
  if (!position) {
    try {
      position = await api("GET", `/api/games/${game.id}/positions/${ply}`);
    } catch (err) {
      showError(err.message);
      return;
    }
    if (app.game !== game && (!app.game || app.game.id !== game.id)) return;
    app.positions[ply] = position;
  }
  app.lookback = { ply, state: position.state };
  app.focusNext = `move:${ply - 1}`;
  render();
  announce(`Looking back at the position after move ${ply} of ${app.game.ply}. Escape returns to the game.`);
}

function endLookback(focus) {
  if (!app.lookback) return;
  app.lookback = null;
  app.focusNext = focus || `move:${app.game.ply - 1}`;
  render();
  announce("Back to the game. " + $("status").textContent);
}

// ------------------------------------------------------------------ replays

async function uploadReplay(event) {
  event.preventDefault();
  showError("");
  const file = $("replay-file").files[0];
  if (!file) {
    showError("choose a replay file first");
    return;
  }
  if (file.size > 1024 * 1024) {
    showError("that file is over 1 MB: a replay is a few KB");
    return;
  }
  try {
    const view = await api("POST", "/api/replays", await file.text());
    openReplayView(view);
  } catch (err) {
    showError(err.message);
  }
}

async function openReplay(id) {
  try {
    openReplayView(await api("GET", `/api/replays/${encodeURIComponent(id)}`));
  } catch (err) {
    history.replaceState(null, "", location.pathname);
    showSetup();
    // a 404: forgotten by the server, or not this browser's (games and replays belong to the cookie that made them)
    const gone = "That replay is no longer on the server, or was uploaded in another browser: upload it again.";
    showError(err.status === 404 ? gone : err.message);
  }
}

function openReplayView(view) {
  app.replay = view;
  app.reviews = {};
  app.frame = 0;
  history.replaceState(null, "", `${location.pathname}?id=${view.id}`);
  showBoard();
  app.focusNext = "#next";
  render();
}

function goToFrame(frame, focus) {
  if (!app.replay) return;
  app.frame = Math.max(0, Math.min(app.replay.plies, frame));
  if (focus) app.focusNext = focus;
  render();
  const step = app.replay.frames[app.frame].last;
  announce(`Position ${app.frame} of ${app.replay.plies}. ${describe(current(), step)}`);
}

async function loadReview(ply) {
  const replay = app.replay;
  if (!replay || !replay.reviewable[ply] || app.reviews[ply]) return;
  app.reviews[ply] = { pending: true };
  try {
    app.reviews[ply] = await api("GET", `/api/replays/${replay.id}/review/${ply}`);
  } catch (err) {
    app.reviews[ply] = { available: false, reason: err.message };
  }
  if (app.replay === replay && app.frame === ply) render();
}

// ------------------------------------------------------------------ previews: what a placement would do, from the engine

function previewable() {
  const game = app.game;
  return Boolean(game && game.mode === "play" && !app.lookback && !game.state.outcome && game.state.phase === "play" && game.state.to_move === game.human);
}

async function loadPreviews() {
  const game = app.game;
  if (!previewable()) return;
  const key = `${game.id}:${game.ply}`;
  if ((app.previews && app.previews.key === key) || app.previewsLoading === key) return;
  app.previewsLoading = key;
  try {
    const data = await api("GET", `/api/games/${game.id}/previews/${game.ply}`);
    const byKey = new Map(data.previews.map((p) => [`${p.index}:${p.tile}`, p]));
    if (app.game && `${app.game.id}:${app.game.ply}` === key) {
      app.previews = { key, ply: data.ply, byKey };
      showPreview();
    }
  } catch (err) {
    if (err.status !== 409) showError(err.message); // a 409: the game moved on meanwhile
  } finally {
    if (app.previewsLoading === key) app.previewsLoading = null;
  }
}

function previewFor(tile) {
  const game = app.game;
  if (!previewable() || app.selected === null || tile === null || !app.previews) return null;
  if (app.previews.key !== `${game.id}:${game.ply}`) return null;
  return app.previews.byKey.get(`${app.selected}:${tile}`) || null;
}

function listTiles(tiles) {
  const numbers = tiles.map(tileNo);
  if (numbers.length === 1) return `tile ${numbers[0]}`;
  return `tiles ${numbers.slice(0, -1).join(", ")} and ${numbers[numbers.length - 1]}`;
}

function touching() {
  // a finger, not a mouse: the last pointer on a card or tile was a touch, or the device has no hovering pointer
  return app.pointer ? app.pointer === "touch" : window.matchMedia("(hover: none), (pointer: coarse)").matches;
}

const TWO_TAPS = "Tap a highlighted tile once to see what your card would capture there, and tap it again to place it.";

function previewText(p) {
  const game = app.game;
  const me = game.human;
  let text = `${p.card} on tile ${tileNo(p.tile)}`;
  if (!p.captured.length) text += " captures nothing";
  else text += ` captures ${listTiles(p.captured)}`;
  if (p.domino.length) text += `; the domino flips ${listTiles(p.domino)}`;
  const o = p.outcome;
  if (o && o.termination === "lane_control") return `${text}: it completes lane ${laneNo(o.lane)} and wins the game.`;
  if (o) {
    const result = o.winner === null ? "a draw" : o.winner === me ? "you win" : "you lose";
    return `${text}: it fills the board, ${result} ${o.scores[me]}–${o.scores[1 - me]}.`;
  }
  const lane = Math.floor(p.tile / POSITIONS);
  const counts = p.lanes[lane].counts;
  return `${text}. Lane ${laneNo(lane)} would hold ${counts[me]} of your cards and ${counts[1 - me]} of theirs.`;
}

function showPreview() {
  // marks the board in place (no re-render, so focus and hover stay where they are)
  const board = $("board");
  for (const node of board.querySelectorAll(".preview-target, .preview-captured, .preview-domino")) {
    node.classList.remove("preview-target", "preview-captured", "preview-domino");
  }
  for (const ghost of board.querySelectorAll(".card.ghost")) ghost.remove();
  for (const number of board.querySelectorAll(".tile-number")) number.hidden = false;
  const box = $("preview");
  const p = previewFor(app.hoverTile);
  board.classList.toggle("previewing", Boolean(p));
  delete box.dataset.tile;
  if (!p) {
    if (previewable() && app.selected !== null) {
      const how = touching() ? TWO_TAPS : "Point at or move to a highlighted tile: the engine shows what your card would capture there.";
      box.textContent = app.previews ? how : "asking the engine what each placement would do…";
    } else box.textContent = "";
    return;
  }
  const tile = board.querySelector(`.tile[data-tile="${p.tile}"]`);
  if (tile) {
    tile.classList.add("preview-target");
    const number = tile.querySelector(".tile-number");
    if (number) number.hidden = true;
    const ghost = cardElement(p.card, app.game.human, "ghost");
    ghost.setAttribute("aria-hidden", "true");
    tile.append(ghost);
  }
  for (const [list, mark] of [[p.captured, "preview-captured"], [p.domino, "preview-domino"]]) {
    for (const t of list) {
      const card = board.querySelector(`.tile[data-tile="${t}"] .card`);
      if (card) card.classList.add(mark);
    }
  }
  box.textContent = previewText(p);
  box.dataset.tile = String(p.tile);
  box.dataset.captured = p.captured.join(",");
  box.dataset.domino = p.domino.join(",");
}

// ------------------------------------------------------------------ what is shown

function current() {
  // The position shown and who sits where, for any page.
  if (app.page === "replay" && app.replay) {
    const frames = app.replay.frames;
    return {
      state: frames[app.frame],
      viewer: null,
      names: app.replay.agents || COLOURS, // the agents the replay names, else the colours
      history: frames.slice(1).map((f) => f.last),
      shown: app.frame,
    };
  }
  const game = app.game;
  const names = game.seats.map((s) => (s.kind === "human" ? "You" : s.short));
  const state = app.lookback ? app.lookback.state : game.state;
  return { state, viewer: game.human, names, history: game.history, shown: app.lookback ? app.lookback.ply : game.ply };
}

function render() {
  if ((app.page === "replay" && !app.replay) || (app.page !== "replay" && !app.game)) return;
  const wanted = app.focusNext || focusKey(document.activeElement);
  const forced = Boolean(app.focusNext);
  app.focusNext = null;
  const view = current();
  const state = view.state;
  renderControls();
  renderLookback(view);
  renderStatus(view);
  renderBoard(view);
  renderSides(view);
  renderDraft(view);
  renderEvent(view);
  renderResult(view);
  renderLanes(view);
  renderHistory(view);
  renderReview();
  document.body.dataset.phase = state.phase;
  showPreview();
  loadPreviews();
  if (forced || !document.activeElement || document.activeElement === document.body) restoreFocus(wanted);
  const lost = !document.activeElement || document.activeElement === document.body;
  if (lost && state.outcome && !app.lookback && app.page !== "replay" && $("new-game")) $("new-game").focus(); // the game just ended
}

// ------------------------------------------------------------------ focus (kept across re-renders)

function focusKey(node) {
  if (!node || node === document.body || !node.closest) return null;
  const keyed = node.closest("[data-focus]");
  return keyed ? keyed.dataset.focus : null;
}

function focusable(node) {
  return node && !node.hidden && node.offsetParent !== null;
}

function restoreFocus(key) {
  if (!key) return;
  let node = document.querySelector(`[data-focus="${CSS.escape(key)}"]`);
  if (!focusable(node)) node = fallbackFocus(key);
  if (focusable(node)) node.focus({ preventScroll: key !== "first" });
}

function fallbackFocus(key) {
  const [kind, value] = key.split(":");
  const rovingIn = (id) => document.querySelector(`#${id} [tabindex="0"]`);
  if (kind === "first" || kind === "deck" || kind === "hand") {
    const deck = rovingIn("my-deck");
    if (deck && kind !== "hand") return deck;
    const hand = nearestHandCard(Number(value));
    if (hand) return hand;
    if (kind === "first") return document.querySelector("#controls button");
  }
  if (kind === "move") {
    const moves = document.querySelectorAll("#history button");
    return moves.length ? moves[Math.min(Number(value), moves.length - 1)] : null;
  }
  if (kind === "tile") return rovingIn("board");
  return null;
}

function nearestHandCard(index) {
  const cards = [...document.querySelectorAll("#my-hand .card[data-focus]")];
  if (!cards.length) return null;
  if (Number.isNaN(index)) return cards.find((c) => c.tabIndex === 0) || cards[0];
  return cards.find((c) => Number(c.dataset.index) >= index) || cards[cards.length - 1];
}

function setRoving(container, node) {
  for (const item of container.querySelectorAll("[data-focus]")) item.tabIndex = item === node ? 0 : -1;
}

// ------------------------------------------------------------------ the parts of the page

function seatName(view, seat) {
  const name = view.names[seat];
  return name === COLOURS[seat] ? name : `${name} (${COLOURS[seat]})`;
}

function scoreLine(view, outcome) {
  // the player's own score first; for a spectator, the winner's
  const first = view.viewer !== null ? view.viewer : outcome.winner !== null ? outcome.winner : 0;
  return `${outcome.scores[first]}–${outcome.scores[1 - first]}`;
}

function howItEnded(outcome) {
  if (outcome.termination === "resignation") return "by resignation";
  return `on the ${outcome.termination_text}`;
}

function laneWin(view, outcome, head) {
  // a lane-control win is won by the lane, not by the lane scores: the status says so, the result shows the scores
  const who = view.viewer === outcome.winner ? "you control" : `${seatName(view, outcome.winner)} controls`;
  return `${head}: ${who} lane ${laneNo(outcome.lane)}, so its far tower falls.`;
}

function renderStatus(view) {
  const state = view.state;
  const status = $("status");
  let text;
  if (app.lookback) {
    text = `Looking back: the position after move ${app.lookback.ply} of ${app.game.ply}.`;
  } else if (state.outcome) {
    const o = state.outcome;
    if (o.termination === "resignation" && view.viewer !== null) text = `You resigned: ${view.names[o.winner]} wins.`;
    else if (o.winner === null) text = `Draw, ${scoreLine(view, o)}.`;
    else {
      const head = view.viewer !== null ? (o.winner === view.viewer ? "You win" : "You lose") : `${seatName(view, o.winner)} wins`;
      text = o.termination === "lane_control" ? laneWin(view, o, head) : `${head} ${scoreLine(view, o)} ${howItEnded(o)}.`;
    }
  } else if (view.viewer !== null && state.to_move === view.viewer) {
    const me = state.players[view.viewer];
    const place = touching() ? "Your move: tap a card of your hand, then a highlighted tile twice (the first tap shows what it would capture)." : "Your move: choose a card from your hand, then a highlighted tile.";
    text = state.phase === "draft" ? `Your pick (${me.picked + 1} of 8): choose a card from your deck.` : place;
  } else if (view.viewer !== null) {
    text = `${view.names[state.to_move]} is thinking…${engineReady() ? "" : " (preparing the engine, first run only)"}`;
  } else {
    text = `${seatName(view, state.to_move)} to ${state.phase === "draft" ? "pick" : "move"}.`;
  }
  status.textContent = text;
  status.dataset.over = state.outcome ? "1" : "0";
  const rules = app.page === "replay" ? app.replay.rules : app.game.rules;
  const parts = [rules.draft === "pick" ? "drafted hands" : rules.draft === "dealt" ? "dealt hands" : "a puzzle position"];
  parts.push(rules.open_hands ? "open hands" : "hidden hands");
  parts.push(`${COLOURS[state.first_player]} places first`);
  $("players").textContent = `${seatName(view, 0)} vs ${seatName(view, 1)} · ${parts.join(", ")}`;
}

function renderLookback(view) {
  const box = $("lookback");
  box.replaceChildren();
  box.hidden = !app.lookback;
  if (!app.lookback) return;
  const step = view.history[app.lookback.ply - 1];
  box.append(el("span", null, `Looking back at move ${app.lookback.ply} of ${app.game.ply}: ${describe(view, step)}. `));
  const back = el("button", "secondary", "Back to the game");
  back.type = "button";
  back.id = "lookback-exit";
  back.dataset.focus = "#lookback-exit";
  back.addEventListener("click", () => endLookback());
  box.append(back);
}

function renderControls() {
  const box = $("controls");
  box.replaceChildren();
  const button = (label, id, handler, disabled, className) => {
    const b = el("button", className || null, label);
    b.type = "button";
    b.id = id;
    b.dataset.focus = `#${id}`;
    b.disabled = Boolean(disabled);
    b.addEventListener("click", handler);
    box.append(b);
    return b;
  };
  if (app.page === "replay") {
    const last = app.replay.plies;
    button("« Start", "to-start", () => goToFrame(0, "#to-start"), app.frame === 0);
    button("◀ Back", "prev", () => goToFrame(app.frame - 1, "#prev"), app.frame === 0);
    button("Next ▶", "next", () => goToFrame(app.frame + 1, "#next"), app.frame === last);
    button("End »", "last", () => goToFrame(last, "#last"), app.frame === last);
    const slider = el("input");
    slider.type = "range";
    slider.id = "frame";
    slider.dataset.focus = "#frame";
    slider.min = "0";
    slider.max = String(last);
    slider.value = String(app.frame);
    slider.setAttribute("aria-label", "position in the game");
    slider.addEventListener("input", () => goToFrame(Number(slider.value), "#frame"));
    box.append(slider, el("span", "counter", `position ${app.frame} of ${last}`));
    button("Upload another", "again", () => newReplay());
    return;
  }
  const game = app.game;
  const over = Boolean(game.state.outcome);
  if (game.mode === "watch") {
    button("Step", "step", () => advance(), over);
    button(app.autoplay ? "Pause" : "Play", "autoplay", () => {
      app.autoplay = !app.autoplay;
      app.focusNext = "#autoplay";
      render();
      schedule();
    }, over);
    const speed = el("select");
    speed.id = "speed";
    speed.dataset.focus = "#speed";
    speed.setAttribute("aria-label", "speed");
    for (const name of Object.keys(SPEEDS)) {
      const option = el("option", null, name);
      option.value = name;
      speed.append(option);
    }
    speed.value = app.speed || "normal";
    speed.addEventListener("change", () => {
      app.speed = speed.value;
    });
    box.append(speed);
  } else if (!over) {
    button("Resign", "resign", resign, false, "secondary");
  }
  const again = button("New game", "new-game", newGame);
  if (over) again.setAttribute("aria-describedby", "result"); // the result is read with the button the focus lands on
  if (game.replay_available && over && game.state.phase !== "draft") button("Review this game", "review-game", reviewGame);
  if (game.replay_available) {
    const link = el("a", "button", "Download the replay");
    link.id = "download";
    link.dataset.focus = "#download";
    link.href = `/api/games/${game.id}/replay`;
    link.download = `trinity-${game.id.slice(0, 8)}.json`;
    box.append(link);
  }
}

function newReplay() {
  history.replaceState(null, "", location.pathname);
  $("replay-file").value = "";
  showSetup();
}

function sidesText(notation) {
  const [top, right, bottom, left] = notation.split("");
  return `top ${top}, right ${right}, bottom ${bottom}, left ${left}`;
}

function cardElement(notation, owner, extra) {
  const card = el("div", `card${owner === 0 ? " white" : owner === 1 ? " black" : ""}${extra ? ` ${extra}` : ""}`);
  const [top, right, bottom, left] = notation.split("");
  card.append(el("span", "side top", top), el("span", "side left", left), el("span", "owner", owner === 0 ? "w" : owner === 1 ? "b" : ""), el("span", "side right", right), el("span", "side bottom", bottom));
  for (const part of card.children) part.setAttribute("aria-hidden", "true");
  card.dataset.card = notation;
  return card;
}

function canAct(view) {
  const state = view.state;
  return view.viewer !== null && !app.lookback && !state.outcome && state.to_move === view.viewer && !app.busy;
}

function legalTiles(view, index) {
  return new Set(view.state.legal.filter((m) => m.index === index && m.tile !== null).map((m) => m.tile));
}

function tileName(state, t, mark) {
  const here = state.board[t];
  const where = `tile ${tileNo(t)}, lane ${laneNo(Math.floor(t / POSITIONS))}`;
  const what = here ? `${COLOURS[here.owner]} ${here.card}` : "empty";
  const marks = { placed: ", just placed", captured: ", just captured", domino: ", just flipped by the domino" };
  return `${where}: ${what}${marks[mark] || ""}`;
}

function renderBoard(view) {
  const state = view.state;
  const board = $("board");
  board.replaceChildren();
  board.classList.toggle("looking-back", Boolean(app.lookback));
  const last = state.last && state.last.kind === "place" ? state.last : null;
  const fallen = state.outcome && state.outcome.termination === "lane_control" ? state.outcome : null;
  const interactive = view.viewer !== null && !app.lookback && state.phase === "play" && !state.outcome;
  const placing = canAct(view) && state.phase === "play";
  const legal = placing && app.selected !== null ? legalTiles(view, app.selected) : new Set();
  app.armedTile = null;
  for (let lane = 0; lane < LANES; lane += 1) {
    const label = el("div", "lane-label", `Lane ${laneNo(lane)}`);
    label.setAttribute("aria-hidden", "true");
    board.append(label);
    const tower = (seat) => {
      const down = fallen && fallen.lane === lane && fallen.winner !== seat;
      const node = el("div", `tower ${seat === 0 ? "white" : "black"}${down ? " fallen" : ""}`, down ? "fallen" : seat === 0 ? "W" : "B");
      node.setAttribute("role", "img");
      node.setAttribute("aria-label", `${COLOURS[seat]}'s tower, lane ${laneNo(lane)}${down ? ", fallen" : ""}`);
      return node;
    };
    board.append(tower(0));
    for (let pos = 0; pos < POSITIONS; pos += 1) {
      const t = lane * POSITIONS + pos;
      const tile = el("div", "tile");
      tile.dataset.tile = String(t);
      const here = state.board[t];
      let mark = "";
      if (here) {
        if (last && last.tile === t) mark = "placed";
        else if (last && last.captured.includes(t)) mark = "captured";
        else if (last && last.domino.includes(t)) mark = "domino";
        tile.append(cardElement(here.card, here.owner, mark));
        if (mark) tile.classList.add(mark);
        if (fallen && fallen.lane === lane) tile.classList.add("won-lane");
      } else {
        const number = el("span", "tile-number", tileNo(t));
        number.setAttribute("aria-hidden", "true");
        tile.append(number);
      }
      tile.setAttribute("aria-label", tileName(state, t, mark));
      if (interactive) {
        tile.dataset.focus = `tile:${t}`;
        tile.setAttribute("role", "button");
        tile.setAttribute("aria-disabled", legal.has(t) ? "false" : "true");
        tile.setAttribute("aria-describedby", "preview");
        tile.tabIndex = t === app.roving.board ? 0 : -1;
        tile.addEventListener("keydown", (event) => boardKey(event, view, t));
        tile.addEventListener("focus", () => {
          app.roving.board = t;
          setRoving(board, tile);
          app.hoverTile = t;
          showPreview();
        });
        tile.addEventListener("blur", () => {
          if (app.hoverTile === t) app.hoverTile = null;
          showPreview();
        });
      } else {
        tile.setAttribute("role", "img");
      }
      if (interactive && !legal.has(t)) tile.addEventListener("click", () => notify(refusedTile(view, t)));
      tile.addEventListener("pointerdown", (event) => {
        app.pointer = event.pointerType;
      });
      if (legal.has(t)) {
        tile.classList.add("legal");
        tile.addEventListener("click", () => {
          if (app.pointer === "touch" && app.armedTile !== t) {
            // a finger cannot hover: the first tap shows what the placement would do, the second places
            app.armedTile = t;
            app.hoverTile = t;
            showPreview();
            $("preview").textContent += " Tap the tile again to place the card.";
            notify("");
            return;
          }
          placeOn(view, t);
        });
      }
      tile.addEventListener("mouseenter", () => {
        app.hoverTile = t;
        showPreview();
      });
      tile.addEventListener("mouseleave", () => {
        if (app.hoverTile === t) app.hoverTile = board.contains(document.activeElement) ? Number(document.activeElement.dataset.tile) : null;
        showPreview();
      });
      tile.addEventListener("dragover", (event) => {
        if (placing && app.selected !== null && legalTiles(view, app.selected).has(t)) {
          event.preventDefault();
          if (app.hoverTile !== t) {
            app.hoverTile = t;
            showPreview();
          }
        }
      });
      tile.addEventListener("drop", (event) => {
        event.preventDefault();
        placeOn(view, t);
      });
      board.append(tile);
    }
    board.append(tower(1));
  }
}

function boardKey(event, view, t) {
  const lane = Math.floor(t / POSITIONS);
  const pos = t % POSITIONS;
  const moves = {
    ArrowLeft: [lane, Math.max(0, pos - 1)],
    ArrowRight: [lane, Math.min(POSITIONS - 1, pos + 1)],
    ArrowUp: [Math.max(0, lane - 1), pos],
    ArrowDown: [Math.min(LANES - 1, lane + 1), pos],
    Home: [lane, 0],
    End: [lane, POSITIONS - 1],
  };
  if (moves[event.key]) {
    event.preventDefault();
    const [l, p] = moves[event.key];
    const target = $("board").querySelector(`.tile[data-tile="${l * POSITIONS + p}"]`);
    if (target) target.focus();
    return;
  }
  if (event.key === "Enter" || event.key === " ") {
    event.preventDefault();
    if (app.selected === null || !legalTiles(view, app.selected).has(t)) {
      notify(refusedTile(view, t));
      return;
    }
    placeOn(view, t);
    return;
  }
  if (event.key === "Escape" && app.selected !== null) {
    event.preventDefault();
    event.stopPropagation();
    const index = app.selected;
    app.selected = null;
    app.focusNext = `hand:${index}`;
    render();
    announce("Card put back.");
  }
}

function refusedTile(view, t) {
  // why a tile cannot take a card now, in words (a click, a tap or Enter on it)
  const state = view.state;
  const here = state.board[t];
  if (!canAct(view)) return app.busy || state.to_move !== view.viewer ? `Wait for your turn: ${view.names[state.to_move]} is placing.` : "";
  if (here) {
    const whose = here.owner === view.viewer ? "your" : `${COLOURS[here.owner]}'s`;
    const next = app.selected === null ? "choose a card from your hand, then an empty tile" : "choose an empty tile (highlighted)";
    return `Tile ${tileNo(t)} is taken (${whose} ${here.card}): a card goes on an empty tile only, and cards never move. ${touching() ? next.replace("choose", "tap") : next[0].toUpperCase() + next.slice(1)}.`;
  }
  return touching() ? "Tap a card of your hand first, then this tile." : "Choose a card from your hand first (Tab to your hand, then Enter), then this tile.";
}

function placeOn(view, tile) {
  if (app.selected === null) return;
  const move = view.state.legal.find((m) => m.index === app.selected && m.tile === tile);
  if (move) play(move.action, `hand:${app.selected}`);
}

function markLegalTiles(view) {
  const legal = app.selected === null ? new Set() : legalTiles(view, app.selected);
  for (const tile of $("board").querySelectorAll(".tile")) {
    const ok = legal.has(Number(tile.dataset.tile));
    tile.classList.toggle("legal", ok);
    if (tile.hasAttribute("aria-disabled")) tile.setAttribute("aria-disabled", ok ? "false" : "true");
  }
}

function chooseCard(view, index, byKey) {
  // a hand card chosen: the keyboard goes on to the board, to a tile where it may go; a click or a tap leaves
  // the focus on the card, so no tile shows a placement before one is pointed at or touched
  const legal = legalTiles(view, index);
  app.selected = index;
  notify("");
  const tile = legal.has(app.roving.board) ? app.roving.board : Math.min(...legal);
  app.roving.board = tile;
  app.focusNext = byKey ? `tile:${tile}` : `hand:${index}`;
  if (!byKey) app.hoverTile = null;
  render();
  announce(`${view.state.players[view.viewer].hand.find((h) => h.index === index).card} chosen. Arrow keys move between tiles, Enter places it, Escape puts it back.`);
}

function renderSides(view) {
  const state = view.state;
  const bottomSeat = view.viewer !== null ? view.viewer : 0;
  const places = [
    ["side-top", 1 - bottomSeat],
    ["side-bottom", bottomSeat],
  ];
  const playing = canAct(view) && state.phase === "play";
  const usable = new Set(state.legal.map((m) => m.index));
  for (const [id, seat] of places) {
    const box = $(id);
    box.replaceChildren();
    box.dataset.seat = String(seat);
    const player = state.players[seat];
    const moving = !state.outcome && state.to_move === seat;
    const mine = seat === view.viewer;
    const title = el("div", `seat-name${moving ? " moving" : ""}`, `${seatName(view, seat)}${moving ? " · to move" : ""}`);
    title.id = `seat-name-${seat}`;
    box.append(title);
    const hand = el("div", "hand");
    hand.id = mine ? "my-hand" : `hand-${seat}`;
    hand.setAttribute("role", "group");
    hand.setAttribute("aria-labelledby", title.id);
    if (state.phase === "draft") {
      hand.append(el("span", "note", `${player.picked} of 8 cards picked`));
    } else if (player.hand === null) {
      for (let i = 0; i < player.hand_size; i += 1) {
        const back = el("div", "card back", "");
        back.setAttribute("aria-hidden", "true");
        hand.append(back);
      }
      hand.append(el("span", "note", player.hand_size ? `hidden hand: ${player.hand_size} cards` : "no cards left"));
    } else {
      const interactive = mine && !app.lookback && !state.outcome;
      const indices = player.hand.map((h) => h.index);
      if (interactive && !indices.includes(app.roving.hand)) app.roving.hand = indices.find((i) => i >= (app.roving.hand ?? 0)) ?? indices[0];
      for (const entry of player.hand) {
        const selectable = playing && mine && usable.has(entry.index);
        const card = cardElement(entry.card, seat, selectable ? "selectable" : "");
        card.dataset.index = String(entry.index);
        if (interactive) {
          card.dataset.focus = `hand:${entry.index}`;
          card.setAttribute("role", "button");
          card.setAttribute("aria-label", `${entry.card}: ${sidesText(entry.card)}`);
          card.setAttribute("aria-pressed", app.selected === entry.index ? "true" : "false");
          card.setAttribute("aria-disabled", selectable ? "false" : "true");
          card.tabIndex = entry.index === app.roving.hand ? 0 : -1;
          card.addEventListener("focus", () => {
            app.roving.hand = entry.index;
            setRoving(hand, card);
          });
          card.addEventListener("keydown", (event) => handKey(event, view, hand, card, entry.index, selectable));
          if (!selectable) card.addEventListener("click", () => notify(state.phase === "play" && !canAct(view) ? `Wait for your turn: ${view.names[state.to_move]} is placing.` : "That card cannot be played now."));
        } else {
          card.setAttribute("role", "img");
          card.setAttribute("aria-label", `${COLOURS[seat]} card ${entry.card}: ${sidesText(entry.card)}`);
        }
        if (selectable) {
          if (app.selected === entry.index) card.classList.add("selected");
          card.draggable = true;
          card.addEventListener("pointerdown", (event) => {
            app.pointer = event.pointerType;
          });
          card.addEventListener("click", () => {
            if (app.selected === entry.index) {
              app.selected = null;
              render();
            } else chooseCard(view, entry.index, false);
          });
          card.addEventListener("dragstart", (event) => {
            app.selected = entry.index;
            event.dataTransfer.setData("text/plain", entry.card);
            for (const other of hand.querySelectorAll(".card")) other.classList.toggle("selected", other === card);
            markLegalTiles(view);
          });
        }
        hand.append(card);
      }
      if (!player.hand.length) hand.append(el("span", "note", "no cards left"));
    }
    box.append(hand);
  }
}

// Arrow keys among a row of cards: focus the one `target` names, clamped to the row's ends.
function focusStep(event, cards, target) {
  event.preventDefault();
  const next = cards[Math.max(0, Math.min(cards.length - 1, target))];
  if (next) next.focus();
}

function handKey(event, view, hand, card, index, selectable) {
  const cards = [...hand.querySelectorAll(".card[data-focus]")];
  const at = cards.indexOf(card);
  const step = { ArrowLeft: -1, ArrowUp: -1, ArrowRight: 1, ArrowDown: 1 }[event.key];
  if (step) {
    focusStep(event, cards, at + step);
    return;
  }
  if (event.key === "Enter" || event.key === " ") {
    event.preventDefault();
    if (!selectable) {
      notify(view.state.phase === "play" && !canAct(view) ? `Wait for your turn: ${view.names[view.state.to_move]} is placing.` : "That card cannot be played now.");
      return;
    }
    if (app.selected === index) {
      app.selected = null;
      app.focusNext = `hand:${index}`;
      render();
      announce("Card put back.");
    } else chooseCard(view, index, true);
    return;
  }
  if (event.key === "Escape" && app.selected !== null) {
    event.preventDefault();
    event.stopPropagation();
    app.selected = null;
    app.focusNext = `hand:${index}`;
    render();
    announce("Card put back.");
  }
}

function renderDraft(view) {
  const state = view.state;
  const box = $("draft");
  box.replaceChildren();
  box.hidden = state.phase !== "draft";
  if (box.hidden) return;
  const picking = canAct(view);
  const legal = new Map(state.legal.map((m) => [m.index, m.action]));
  const seats = view.viewer !== null ? [view.viewer] : [0, 1];
  for (const seat of seats) {
    const player = state.players[seat];
    const heading = el("h3");
    heading.id = `deck-title-${seat}`;
    const title = view.viewer !== null ? "Your deck: pick 8 cards (at most " : `${seatName(view, seat)}'s deck (at most `;
    heading.append(title, ruleWord(`${state.max_a_cards} A cards`, "a"), ")");
    box.append(heading);
    const deck = el("div", "deck");
    deck.id = seat === view.viewer ? "my-deck" : `deck-${seat}`;
    deck.setAttribute("role", "group");
    deck.setAttribute("aria-labelledby", heading.id);
    box.append(deck);
    if (!player.deck) {
      deck.append(el("span", "note", "hidden"));
    } else {
      const mine = seat === view.viewer && !app.lookback && !state.outcome;
      if (mine && (app.roving.deck === null || !player.deck.some((e) => e.index === app.roving.deck))) {
        const first = player.deck.find((e) => legal.has(e.index));
        app.roving.deck = first ? first.index : 0;
      }
      let struck = 0;
      for (const entry of player.deck) {
        const picked = entry.status !== "unpicked";
        const canPick = picking && legal.has(entry.index);
        const card = cardElement(entry.card, picked ? seat : null, `${picked ? "picked" : ""}${canPick ? " selectable" : ""}`);
        card.dataset.index = String(entry.index);
        const overLimit = !picked && picking && !canPick;
        if (overLimit) {
          card.classList.add("unavailable");
          card.querySelector(".owner").textContent = "\u2715"; // struck out, not picked
          struck += 1;
        } else if (picked) card.querySelector(".owner").textContent = "\u2713";
        const why = picked ? ", picked" : overLimit ? `, struck out: your hand holds ${state.max_a_cards} A cards, the most allowed` : "";
        if (mine) {
          card.dataset.focus = `deck:${entry.index}`;
          card.setAttribute("role", "button");
          card.setAttribute("aria-label", `${canPick ? "pick " : ""}${entry.card}${why}: ${sidesText(entry.card)}`);
          card.setAttribute("aria-disabled", canPick ? "false" : "true");
          card.tabIndex = entry.index === app.roving.deck ? 0 : -1;
          card.addEventListener("focus", () => {
            app.roving.deck = entry.index;
            setRoving(deck, card);
          });
          card.addEventListener("keydown", (event) => deckKey(event, deck, card, canPick ? legal.get(entry.index) : null, why));
        } else {
          card.setAttribute("role", "img");
          card.setAttribute("aria-label", `${entry.card}${why}`);
        }
        if (canPick) card.addEventListener("click", () => play(legal.get(entry.index)));
        else if (mine) card.addEventListener("click", () => notify(refusedPick(view, entry, overLimit)));
        deck.append(card);
      }
      if (mine && struck) {
        const note = el("p", "limit-note", `Struck out (striped, \u2715): ${struck === 1 ? "this card has" : "these cards have"} an A side, and your hand already holds ${state.max_a_cards} A cards, the most a hand may hold. Picked cards show \u2713.`);
        note.id = "a-limit-note";
        deck.setAttribute("aria-describedby", note.id);
        box.append(note);
      }
    }
  }
  if (view.viewer !== null) {
    const other = state.players[1 - view.viewer];
    const note = el("p", "note", `${view.names[1 - view.viewer]} has picked ${other.picked} of 8 from `);
    note.append(ruleWord("its own copy of the deck", "draft"), ": its picks never take yours (and are secret).");
    box.append(note);
  }
}

function refusedPick(view, entry, overLimit) {
  // why a card of your deck cannot be picked now, in words (a click, a tap or Enter on it)
  const state = view.state;
  if (entry.status !== "unpicked") return `You picked ${entry.card} already: pick another card of your deck.`;
  if (overLimit) {
    const max = state.max_a_cards;
    return `Not ${entry.card}: it has an A side, and your hand already holds ${max} A cards, the most a hand may hold. Pick a card with no A side.`;
  }
  if (state.outcome) return "The game is over.";
  return `Wait for your turn: ${view.names[state.to_move]} is picking.`;
}

function deckKey(event, deck, card, action, why) {
  const cards = [...deck.querySelectorAll(".card[data-focus]")];
  const at = cards.indexOf(card);
  const columns = Math.max(1, cards.filter((c) => c.offsetTop === cards[0].offsetTop).length);
  const step = { ArrowLeft: -1, ArrowRight: 1, ArrowUp: -columns, ArrowDown: columns }[event.key];
  if (step) {
    focusStep(event, cards, at + step);
    return;
  }
  if (event.key === "Enter" || event.key === " ") {
    event.preventDefault();
    if (action === null) {
      const view = current();
      const entry = view.state.players[view.viewer].deck.find((e) => `deck:${e.index}` === card.dataset.focus);
      notify(refusedPick(view, entry, card.classList.contains("unavailable")));
    } else play(action, card.dataset.focus);
  }
}

function ruleWord(text, rule) {
  const word = el("button", "rule-word", text);
  word.type = "button";
  word.dataset.rule = rule;
  word.setAttribute("aria-describedby", `hint-${rule}`);
  return word;
}

function describe(view, step) {
  if (!step) return "";
  const who = seatName(view, step.player);
  if (step.kind === "pick") return step.card ? `${who} picked ${step.card}` : `${who} picked a card (secret)`;
  const text = `${who} placed ${step.card} on tile ${tileNo(step.tile)}`;
  // why each card flipped, as the server says (step.why): the side that beat it and the value it beat
  const why = new Map((step.why || []).map((w) => [w.tile, w]));
  const beat = (t) => {
    const w = why.get(t);
    return w ? `${w.value} beats ${w.against}` : "";
  };
  const flips = [];
  if (step.captured.length) {
    const each = step.captured.map((t) => `tile ${tileNo(t)} (${beat(t)})`);
    flips.push(`it captured ${each.join(", ")}`);
  }
  for (const t of step.domino) {
    const w = why.get(t);
    const by = w ? ` because the card it captured on tile ${tileNo(w.by)} turned on it: its ${w.side} ${w.value} beats ${w.against}` : "";
    flips.push(`the domino flipped tile ${tileNo(t)}${by}`);
  }
  return flips.length ? `${text}: ${flips.join("; ")}` : text;
}

function renderEvent(view) {
  const event = $("event");
  const step = view.state.last;
  event.textContent = describe(view, step);
  event.className = `event${step && step.kind === "place" && step.captured.length ? " flash" : ""}`;
}

function renderResult(view) {
  const box = $("result");
  const outcome = view.state.outcome;
  box.replaceChildren();
  box.hidden = !outcome;
  if (!outcome) return;
  let headline;
  if (outcome.termination === "resignation") headline = view.viewer !== null ? "You resigned" : `${seatName(view, 1 - outcome.winner)} resigned`;
  else if (outcome.winner === null) headline = "Draw";
  else if (view.viewer !== null) headline = outcome.winner === view.viewer ? "You win!" : `${view.names[outcome.winner]} wins`;
  else headline = `${seatName(view, outcome.winner)} wins`;
  const text = el("p");
  if (outcome.termination === "lane_control") {
    text.append(`${COLOURS[outcome.winner]} controls `, ruleWord(`lane ${laneNo(outcome.lane)}`, "lane"), ": its ", ruleWord("far tower", "tower"), " falls.");
  } else if (outcome.termination === "resignation") {
    text.append(`${view.names[outcome.winner]} wins by resignation.`);
  } else {
    text.append(`Game over on the ${outcome.termination_text}: lanes scored by `, ruleWord("lane majority", "majority"), ".");
  }
  const me = view.viewer;
  const scores = me !== null ? `you ${outcome.scores[me]}, ${view.names[1 - me]} ${outcome.scores[1 - me]}` : `White ${outcome.scores[0]}, Black ${outcome.scores[1]}`;
  if (outcome.termination === "lane_control") {
    text.append(
      ` Lane scores of the board as it stands: ${scores}. They are counted by the rules' `,
      ruleWord("lane majority", "majority"),
      " (a lane scores for whoever owns more of its cards, a point a card; equal counts score for nobody), and on a lane-control win they decide nothing.",
    );
  } else text.append(` Lane scores: ${scores}.`);
  box.append(el("h2", null, headline), text);
}

function renderLanes(view) {
  const state = view.state;
  const table = $("lanes");
  const caption = table.querySelector("caption");
  table.replaceChildren(caption);
  const head = el("tr");
  const you = (seat) => (view.viewer === seat ? " (you)" : "");
  for (const text of ["Lane", `White cards${you(0)}`, `Black cards${you(1)}`, `White points${you(0)}`, `Black points${you(1)}`]) {
    const th = el("th", null, text);
    th.scope = "col";
    head.append(th);
  }
  table.append(head);
  const totals = [0, 0];
  for (const lane of state.lanes) {
    const row = el("tr");
    row.append(el("td", null, laneNo(lane.lane)), el("td", null, lane.counts[0]), el("td", null, lane.counts[1]), el("td", null, lane.points[0]), el("td", null, lane.points[1]));
    totals[0] += lane.points[0];
    totals[1] += lane.points[1];
    table.append(row);
  }
  const total = el("tr", "total");
  const scores = state.outcome ? state.outcome.scores : totals;
  total.append(el("td", null, state.outcome ? "Final" : "Now"), el("td"), el("td"), el("td", null, scores[0]), el("td", null, scores[1]));
  table.append(total);
}

function renderHistory(view) {
  const list = $("history");
  const keep = list.scrollTop;
  const following = list.scrollTop + list.clientHeight >= list.scrollHeight - 4;
  list.replaceChildren();
  view.history.forEach((step, i) => {
    const item = el("li", step && step.kind === "place" ? "place" : "pick");
    const number = el("span", "move-number", `${i + 1}.`); // its own column: a wrapped entry keeps it on its first line
    number.setAttribute("aria-hidden", "true");
    item.append(number);
    const button = el("button", null, describe(view, step));
    button.type = "button";
    button.dataset.focus = `move:${i}`;
    const shown = view.shown === i + 1;
    if (shown) {
      item.classList.add("shown");
      button.setAttribute("aria-current", "step");
    }
    button.addEventListener("click", () => (app.page === "replay" ? goToFrame(i + 1, `move:${i}`) : lookBack(i + 1)));
    item.append(button);
    list.append(item);
  });
  if (following && !app.lookback && app.page !== "replay") list.scrollTop = list.scrollHeight;
  else list.scrollTop = keep;
}

function renderReview() {
  const box = $("review");
  box.replaceChildren();
  if (app.page !== "replay" || !app.replay) {
    box.hidden = true;
    return;
  }
  box.hidden = false;
  const ply = app.frame;
  box.append(el("h3", null, "Review (exact solver)"));
  if (!app.replay.reviewable[ply]) {
    const state = app.replay.frames[ply];
    const why = state.phase === "play" && !state.outcome ? `positions with at most ${app.replay.review_max_empty} empty tiles are solved` : "no move to judge here";
    box.append(el("p", "note", why));
    return;
  }
  const review = app.reviews[ply];
  const waiting = engineReady() ? "solving…" : "preparing the solver (first run only: compiling), then solving…";
  if (!review) {
    loadReview(ply);
    box.append(el("p", "note", waiting));
    return;
  }
  if (review.pending) {
    box.append(el("p", "note", waiting));
    return;
  }
  if (!review.available) {
    box.append(el("p", "note", review.reason));
    return;
  }
  const mover = COLOURS[review.to_move];
  const value = review.value === 1 ? "wins" : review.value === 0 ? "draws" : "loses";
  const best = review.best_moves.map((m) => `${m.card} on tile ${tileNo(m.tile)}`).join(", ");
  const known = app.replay.rules.open_hands === false ? " (both hands known, though the game hid them)" : "";
  const lines = [`With perfect play from here${known}, ${mover} (to move) ${value}.`];
  lines.push(review.value === -1 ? "Every move loses." : `Moves that keep this: ${best}.`);
  if (review.played) {
    const played = `${review.played.card} on tile ${tileNo(review.played.tile)}`;
    lines.push(review.played_best ? `The move played, ${played}, is one of them.` : `The move played, ${played}, is a mistake.`);
  }
  const p = el("p", review.played_best === false ? "mistake" : "good", lines.join(" "));
  p.id = "review-text";
  box.append(p, el("p", "note", `${review.nodes.toLocaleString()} positions searched in ${review.seconds} s`));
}

// ------------------------------------------------------------------ keys, the rules panel, hints, confirmations

function typing(target) {
  return target && (target.isContentEditable || ["INPUT", "SELECT", "TEXTAREA"].includes(target.tagName));
}

function globalKey(event) {
  const dialogOpen = $("rules").open || $("confirm").open;
  if (event.key === "?" && !typing(event.target) && !dialogOpen) {
    event.preventDefault();
    openRules();
    return;
  }
  if (event.key === "Escape") {
    hideHint();
    if (!dialogOpen && app.lookback) {
      event.preventDefault();
      endLookback();
    }
  }
}

function initRules() {
  const dialog = $("rules");
  $("rules-button").addEventListener("click", () => openRules());
  $("intro-rules").addEventListener("click", () => openRules());
  $("rules-close").addEventListener("click", () => dialog.close());
  dialog.addEventListener("close", () => {
    const back = app.rulesReturn;
    app.rulesReturn = null;
    if (back && document.contains(back) && focusable(back)) back.focus();
    else $("rules-button").focus();
  });
}

function openRules(section) {
  const dialog = $("rules");
  if (dialog.open) return;
  hideHint();
  app.rulesReturn = document.activeElement && document.activeElement !== document.body ? document.activeElement : null;
  dialog.showModal();
  $("rules-close").focus();
  dialog.style.setProperty("--rules-head", `${dialog.querySelector(".rules-head").offsetHeight}px`); // scroll-margin-top
  const target = section ? $(section) : null;
  if (target) target.scrollIntoView({ block: "start" });
  else dialog.querySelector(".rules-body").scrollTop = 0;
}

function initHints() {
  for (const word of document.querySelectorAll(".rule-word")) word.setAttribute("aria-describedby", `hint-${word.dataset.rule}`);
  const word = (event) => (event.target && event.target.closest ? event.target.closest(".rule-word") : null);
  document.addEventListener("mouseover", (event) => {
    const target = word(event);
    if (target) showHint(target);
  });
  document.addEventListener("mouseout", (event) => {
    if (word(event)) hideHint();
  });
  document.addEventListener("focusin", (event) => {
    const target = word(event);
    if (target) showHint(target);
    else hideHint();
  });
  document.addEventListener("focusout", (event) => {
    if (word(event)) hideHint();
  });
  document.addEventListener("click", (event) => {
    const target = word(event);
    if (target) openRules(RULE_SECTIONS[target.dataset.rule]);
  });
}

function showHint(target) {
  const hint = $(`hint-${target.dataset.rule}`);
  if (!hint) return;
  const tip = $("tooltip");
  tip.textContent = hint.textContent;
  tip.hidden = false;
  const box = target.getBoundingClientRect();
  const width = tip.offsetWidth;
  const left = Math.max(8, Math.min(window.scrollX + box.left, window.scrollX + document.documentElement.clientWidth - width - 8));
  tip.style.left = `${left}px`;
  tip.style.top = `${window.scrollY + box.bottom + 6}px`;
}

function hideHint() {
  $("tooltip").hidden = true;
}

function initConfirm() {
  const dialog = $("confirm");
  const finish = (answer) => {
    const resolve = app.confirmResolve;
    app.confirmResolve = null;
    if (dialog.open) dialog.close();
    if (resolve) resolve(answer);
  };
  $("confirm-yes").addEventListener("click", () => finish(true));
  $("confirm-no").addEventListener("click", () => finish(false));
  dialog.addEventListener("close", () => finish(false)); // Escape
}

function confirmStep(title, text, yes, no) {
  const dialog = $("confirm");
  const back = document.activeElement;
  $("confirm-title").textContent = title;
  $("confirm-text").textContent = text;
  $("confirm-yes").textContent = yes;
  $("confirm-no").textContent = no;
  return new Promise((resolve) => {
    app.confirmResolve = (answer) => {
      if (!answer && back && document.contains(back) && focusable(back)) back.focus();
      resolve(answer);
    };
    dialog.showModal();
    $("confirm-no").focus(); // the safe answer first
  });
}
