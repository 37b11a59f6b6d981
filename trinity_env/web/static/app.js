// Trinity Towers in the browser: the Play, Watch and Replay pages over the server's JSON API.
// Plain JavaScript, no build step, nothing loaded from elsewhere. The server holds every game:
// the page keeps only its id (in the address and in localStorage), so a reload loses nothing.
"use strict";

const COLOURS = ["White", "Black"];
const LANES = 3;
const POSITIONS = 5;
const SPEEDS = { slow: 1500, normal: 700, fast: 250 };
const AGENT_DELAY = 450; // ms before asking for an agent's move, so a person sees each step

const app = {
  page: "play",
  agents: null, // GET /api/agents
  game: null, // a game view (play and watch)
  replay: null, // an uploaded replay's view
  frame: 0, // the replay position shown
  reviews: {}, // replay reviews by ply
  selected: null, // deck index of the hand card chosen (play)
  busy: false,
  autoplay: false,
  timer: null,
};

const $ = (id) => document.getElementById(id);

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

// ------------------------------------------------------------------ start-up

document.addEventListener("DOMContentLoaded", init);

async function init() {
  const path = location.pathname.replace(/\/+$/, "");
  app.page = ["play", "watch", "replay"].find((p) => path === `/${p}`) || "play";
  $(`nav-${app.page}`).classList.add("current");
  document.body.dataset.page = app.page;
  $("play-form").addEventListener("submit", startPlay);
  $("watch-form").addEventListener("submit", startWatch);
  $("replay-form").addEventListener("submit", uploadReplay);
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

function fillAgentLists(data) {
  const groups = { ladder: "Difficulty ladder", baseline: "Baselines", search: "MCTS search", trained: "Trained agents" };
  for (const id of ["opponent", "agent0", "agent1"]) {
    const select = $(id);
    select.replaceChildren();
    for (const [group, title] of Object.entries(groups)) {
      const members = data.agents.filter((a) => a.group === group);
      if (!members.length) continue;
      const optgroup = el("optgroup");
      optgroup.label = title;
      for (const agent of members) {
        const option = el("option", null, agent.label);
        option.value = agent.name;
        optgroup.append(option);
      }
      select.append(optgroup);
    }
  }
  $("opponent").value = data.default;
  $("agent0").value = data.agents.some((a) => a.name === "greedy") ? "greedy" : data.default;
  $("agent1").value = data.agents.some((a) => a.name === "mcts:100") ? "mcts:100" : data.default;
}

function showSetup() {
  stopTimer();
  app.game = null;
  app.replay = null;
  $("game").hidden = true;
  for (const page of ["play", "watch", "replay"]) $(`${page}-setup`).hidden = page !== app.page;
}

function showBoard() {
  for (const page of ["play", "watch", "replay"]) $(`${page}-setup`).hidden = true;
  $("game").hidden = false;
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
  localStorage.setItem(storageKey(), view.id);
  history.replaceState(null, "", `${location.pathname}?game=${view.id}`);
  showBoard();
  render();
  schedule();
}

function newGame() {
  localStorage.removeItem(storageKey());
  history.replaceState(null, "", location.pathname);
  showError("");
  showSetup();
}

function stopTimer() {
  clearTimeout(app.timer);
  app.timer = null;
}

function schedule() {
  stopTimer();
  const game = app.game;
  if (!game || game.state.outcome || !game.agent_to_move) return;
  if (game.mode === "play") app.timer = setTimeout(advance, AGENT_DELAY);
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
  if (ok) schedule();
}

async function play(action) {
  const game = app.game;
  if (!game || app.busy) return;
  app.busy = true;
  app.selected = null;
  showError("");
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
  render();
  schedule();
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
  render();
}

function goToFrame(frame) {
  if (!app.replay) return;
  app.frame = Math.max(0, Math.min(app.replay.plies, frame));
  render();
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

// ------------------------------------------------------------------ what is shown

function current() {
  // The position shown and who sits where, for any page.
  if (app.page === "replay" && app.replay) {
    const frames = app.replay.frames;
    return {
      state: frames[app.frame],
      viewer: null,
      names: ["White", "Black"],
      history: frames.slice(1, app.frame + 1).map((f) => f.last),
    };
  }
  const game = app.game;
  const names = game.seats.map((s) => (s.kind === "human" ? "You" : s.short));
  return { state: game.state, viewer: game.human, names, history: game.history };
}

function render() {
  if ((app.page === "replay" && !app.replay) || (app.page !== "replay" && !app.game)) return;
  const view = current();
  const state = view.state;
  renderControls();
  renderStatus(view);
  renderBoard(view);
  renderSides(view);
  renderDraft(view);
  renderEvent(view);
  renderResult(view);
  renderLanes(state);
  renderHistory(view);
  renderReview();
  document.body.dataset.phase = state.phase;
}

function seatName(view, seat) {
  const name = view.names[seat];
  return name === COLOURS[seat] ? name : `${name} (${COLOURS[seat]})`;
}

function renderStatus(view) {
  const state = view.state;
  const status = $("status");
  let text;
  if (state.outcome) {
    const o = state.outcome;
    const how = o.termination === "lane_control" ? `by controlling lane ${o.lane}` : `on the ${o.termination_text}`;
    if (o.winner === null) text = `Draw, lane scores ${o.scores[0]}-${o.scores[1]}.`;
    else if (view.viewer !== null) text = `${o.winner === view.viewer ? "You win" : "You lose"} ${how}, lane scores ${o.scores[0]}-${o.scores[1]}.`;
    else text = `${seatName(view, o.winner)} wins ${how}, lane scores ${o.scores[0]}-${o.scores[1]}.`;
  } else if (view.viewer !== null && state.to_move === view.viewer) {
    const me = state.players[view.viewer];
    text = state.phase === "draft" ? `Your pick (${me.picked + 1} of 8): choose a card from your deck.` : "Your move: choose a card from your hand, then a highlighted tile.";
  } else if (view.viewer !== null) {
    text = `${view.names[state.to_move]} is thinking…`;
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

function renderControls() {
  const box = $("controls");
  box.replaceChildren();
  const button = (label, id, handler, disabled) => {
    const b = el("button", null, label);
    b.type = "button";
    b.id = id;
    b.disabled = Boolean(disabled);
    b.addEventListener("click", handler);
    box.append(b);
    return b;
  };
  if (app.page === "replay") {
    const last = app.replay.plies;
    button("« Start", "first", () => goToFrame(0), app.frame === 0);
    button("◀ Back", "prev", () => goToFrame(app.frame - 1), app.frame === 0);
    button("Next ▶", "next", () => goToFrame(app.frame + 1), app.frame === last);
    button("End »", "last", () => goToFrame(last), app.frame === last);
    const slider = el("input");
    slider.type = "range";
    slider.id = "frame";
    slider.min = "0";
    slider.max = String(last);
    slider.value = String(app.frame);
    slider.setAttribute("aria-label", "position in the game");
    slider.addEventListener("input", () => goToFrame(Number(slider.value)));
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
      renderControls();
      schedule();
    }, over);
    const speed = el("select");
    speed.id = "speed";
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
  }
  button("New game", "new-game", newGame);
  if (game.replay_available) {
    const link = el("a", "button", "Download the replay");
    link.id = "download";
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

function cardElement(notation, owner, extra) {
  const card = el("div", `card${owner === 0 ? " white" : owner === 1 ? " black" : ""}${extra ? ` ${extra}` : ""}`);
  const [top, right, bottom, left] = notation.split("");
  card.append(el("span", "side top", top), el("span", "side left", left), el("span", "owner", owner === 0 ? "w" : owner === 1 ? "b" : ""), el("span", "side right", right), el("span", "side bottom", bottom));
  card.dataset.card = notation;
  card.title = notation;
  return card;
}

function myTurn(view) {
  const state = view.state;
  return view.viewer !== null && !state.outcome && state.to_move === view.viewer && !app.busy;
}

function legalTiles(view, index) {
  return new Set(view.state.legal.filter((m) => m.index === index && m.tile !== null).map((m) => m.tile));
}

function renderBoard(view) {
  const state = view.state;
  const board = $("board");
  board.replaceChildren();
  const last = state.last && state.last.kind === "place" ? state.last : null;
  const fallen = state.outcome && state.outcome.termination === "lane_control" ? state.outcome : null;
  const playing = myTurn(view) && state.phase === "play";
  const legal = playing && app.selected !== null ? legalTiles(view, app.selected) : new Set();
  for (let lane = 0; lane < LANES; lane += 1) {
    const tower = (seat) => {
      const down = fallen && fallen.lane === lane && fallen.winner !== seat;
      const node = el("div", `tower ${seat === 0 ? "white" : "black"}${down ? " fallen" : ""}`, seat === 0 ? "W" : "B");
      node.title = `${COLOURS[seat]}'s tower, lane ${lane}${down ? " (fallen)" : ""}`;
      return node;
    };
    board.append(tower(0));
    for (let pos = 0; pos < POSITIONS; pos += 1) {
      const t = lane * POSITIONS + pos;
      const tile = el("div", "tile");
      tile.dataset.tile = String(t);
      const here = state.board[t];
      if (here) {
        let mark = "";
        if (last && last.tile === t) mark = "placed";
        else if (last && last.captured.includes(t)) mark = "captured";
        else if (last && last.domino.includes(t)) mark = "domino";
        tile.append(cardElement(here.card, here.owner, mark));
        if (mark) tile.classList.add(mark);
      } else {
        tile.append(el("span", "tile-number", t));
      }
      if (legal.has(t)) {
        tile.classList.add("legal");
        tile.addEventListener("click", () => placeOn(view, t));
      }
      tile.addEventListener("dragover", (event) => {
        if (playing && app.selected !== null && legalTiles(view, app.selected).has(t)) event.preventDefault();
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

function placeOn(view, tile) {
  if (app.selected === null) return;
  const move = view.state.legal.find((m) => m.index === app.selected && m.tile === tile);
  if (move) play(move.action);
}

function markLegalTiles(view) {
  const legal = app.selected === null ? new Set() : legalTiles(view, app.selected);
  for (const tile of $("board").querySelectorAll(".tile")) {
    tile.classList.toggle("legal", legal.has(Number(tile.dataset.tile)));
  }
}

function renderSides(view) {
  const state = view.state;
  const bottomSeat = view.viewer !== null ? view.viewer : 0;
  const places = [
    ["side-top", 1 - bottomSeat],
    ["side-bottom", bottomSeat],
  ];
  const playing = myTurn(view) && state.phase === "play";
  const usable = new Set(state.legal.map((m) => m.index));
  for (const [id, seat] of places) {
    const box = $(id);
    box.replaceChildren();
    box.dataset.seat = String(seat);
    const player = state.players[seat];
    const moving = !state.outcome && state.to_move === seat;
    const title = el("div", `seat-name${moving ? " moving" : ""}`, `${seatName(view, seat)}${moving ? " · to move" : ""}`);
    box.append(title);
    const hand = el("div", "hand");
    hand.id = seat === view.viewer ? "my-hand" : `hand-${seat}`;
    if (state.phase === "draft") {
      hand.append(el("span", "note", `${player.picked} of 8 cards picked`));
    } else if (player.hand === null) {
      for (let i = 0; i < player.hand_size; i += 1) hand.append(el("div", "card back", ""));
      if (!player.hand_size) hand.append(el("span", "note", "no cards left"));
      else hand.append(el("span", "note", "hidden hand"));
    } else {
      for (const entry of player.hand) {
        const selectable = playing && seat === view.viewer && usable.has(entry.index);
        const card = cardElement(entry.card, seat, selectable ? "selectable" : "");
        card.dataset.index = String(entry.index);
        if (selectable) {
          if (app.selected === entry.index) card.classList.add("selected");
          card.tabIndex = 0;
          card.draggable = true;
          card.addEventListener("click", () => {
            app.selected = app.selected === entry.index ? null : entry.index;
            render();
          });
          card.addEventListener("keydown", (event) => {
            if (event.key === "Enter" || event.key === " ") {
              event.preventDefault();
              card.click();
            }
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

function renderDraft(view) {
  const state = view.state;
  const box = $("draft");
  box.replaceChildren();
  box.hidden = state.phase !== "draft";
  if (box.hidden) return;
  const picking = myTurn(view);
  const legal = new Map(state.legal.map((m) => [m.index, m.action]));
  const seats = view.viewer !== null ? [view.viewer] : [0, 1];
  for (const seat of seats) {
    const player = state.players[seat];
    const title = view.viewer !== null ? "Your deck: pick 8 cards (at most " : `${seatName(view, seat)}'s deck (at most `;
    box.append(el("h3", null, `${title}${state.max_a_cards} A cards)`));
    const deck = el("div", "deck");
    deck.id = seat === view.viewer ? "my-deck" : `deck-${seat}`;
    if (!player.deck) {
      deck.append(el("span", "note", "hidden"));
    } else {
      for (const entry of player.deck) {
        const picked = entry.status !== "unpicked";
        const canPick = picking && legal.has(entry.index);
        const card = cardElement(entry.card, picked ? seat : null, `${picked ? "picked" : ""}${canPick ? " selectable" : ""}`);
        card.dataset.index = String(entry.index);
        if (canPick) {
          card.tabIndex = 0;
          card.addEventListener("click", () => play(legal.get(entry.index)));
          card.addEventListener("keydown", (event) => {
            if (event.key === "Enter" || event.key === " ") {
              event.preventDefault();
              play(legal.get(entry.index));
            }
          });
        } else if (!picked && picking) {
          card.classList.add("unavailable");
          card.title = `${entry.card}: over the A-card limit`;
        }
        deck.append(card);
      }
    }
    box.append(deck);
  }
  if (view.viewer !== null) {
    const other = state.players[1 - view.viewer];
    box.append(el("p", "note", `${view.names[1 - view.viewer]} has picked ${other.picked} of 8 (picks are secret).`));
  }
}

function describe(view, step) {
  if (!step) return "";
  const who = seatName(view, step.player);
  if (step.kind === "pick") return step.card ? `${who} picked ${step.card}` : `${who} picked a card (secret)`;
  let text = `${who} placed ${step.card} on tile ${step.tile}`;
  const flips = [];
  if (step.captured.length) flips.push(`captured ${step.captured.length} (tile${step.captured.length > 1 ? "s" : ""} ${step.captured.join(", ")})`);
  if (step.domino.length) flips.push(`domino flipped ${step.domino.length} (tile${step.domino.length > 1 ? "s" : ""} ${step.domino.join(", ")})`);
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
  if (outcome.winner === null) headline = "Draw";
  else if (view.viewer !== null) headline = outcome.winner === view.viewer ? "You win!" : `${view.names[outcome.winner]} wins`;
  else headline = `${seatName(view, outcome.winner)} wins`;
  const how = outcome.termination === "lane_control" ? `${COLOURS[outcome.winner]} controls lane ${outcome.lane}: its far tower falls.` : `Game over on the ${outcome.termination_text}: lanes scored.`;
  box.append(el("h2", null, headline), el("p", null, `${how} Lane scores ${outcome.scores[0]}-${outcome.scores[1]}.`));
}

function renderLanes(state) {
  const table = $("lanes");
  table.replaceChildren();
  const head = el("tr");
  for (const text of ["Lane", "White cards", "Black cards", "White points", "Black points"]) head.append(el("th", null, text));
  table.append(head);
  const totals = [0, 0];
  for (const lane of state.lanes) {
    const row = el("tr");
    row.append(el("td", null, lane.lane), el("td", null, lane.counts[0]), el("td", null, lane.counts[1]), el("td", null, lane.points[0]), el("td", null, lane.points[1]));
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
  list.replaceChildren();
  for (const step of view.history) list.append(el("li", step && step.kind === "place" ? "place" : "pick", describe(view, step)));
  list.scrollTop = list.scrollHeight;
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
  if (!review) {
    loadReview(ply);
    box.append(el("p", "note", "solving…"));
    return;
  }
  if (review.pending) {
    box.append(el("p", "note", "solving…"));
    return;
  }
  if (!review.available) {
    box.append(el("p", "note", review.reason));
    return;
  }
  const mover = COLOURS[review.to_move];
  const value = review.value === 1 ? "wins" : review.value === 0 ? "draws" : "loses";
  const best = review.best_moves.map((m) => `${m.card} on ${m.tile}`).join(", ");
  const known = app.replay.rules.open_hands === false ? " (both hands known, though the game hid them)" : "";
  const lines = [`With perfect play from here${known}, ${mover} (to move) ${value}.`];
  lines.push(review.value === -1 ? "Every move loses." : `Moves that keep this: ${best}.`);
  if (review.played) {
    const played = `${review.played.card} on ${review.played.tile}`;
    lines.push(review.played_best ? `The move played, ${played}, is one of them.` : `The move played, ${played}, is a mistake.`);
  }
  const p = el("p", review.played_best === false ? "mistake" : "good", lines.join(" "));
  p.id = "review-text";
  box.append(p, el("p", "note", `${review.nodes.toLocaleString()} positions searched in ${review.seconds} s`));
}
