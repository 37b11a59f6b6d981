// Games (play and watch): starting, resuming, choosing a hand card and placing it, the agents' moves on a timer (the
// reply after your captures shown a moment later), resigning, and looking back at an earlier position.

import { SPEEDS, POSITIONS, app, $, replyPauseMs, stopTimer } from "./state.js";
import { api } from "./api.js";
import { showError, notify, announce } from "./notices.js";
import { confirmStep } from "./dialogs.js";
import { legalTiles } from "./board.js";
import { current, render, describe } from "./render.js";
import { storageKey, showSetup, showBoard } from "./setup.js";

export async function startPlay(event) {
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

export async function startWatch(event) {
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

export async function resume(id) {
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
  dropReplyWait();
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

export async function newGame() {
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

export async function resign() {
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

export async function reviewGame() {
  const game = app.game;
  if (!game) return;
  try {
    const upload = await api("POST", `/api/games/${game.id}/review`, {});
    location.assign(`/replay?id=${upload.id}`);
  } catch (err) {
    showError(err.message);
  }
}

export function schedule() {
  stopTimer();
  const game = app.game;
  if (!game || game.state.outcome || !game.agent_to_move) return;
  // asked for at once: after a move of yours that captured, only the reply's showing waits (holdReply)
  if (game.mode === "play") app.timer = setTimeout(advance, 0);
  else if (app.autoplay) app.timer = setTimeout(advance, SPEEDS[$("speed") ? $("speed").value : "normal"]);
}

export async function advance() {
  const game = app.game;
  if (!game || app.busy) return;
  app.busy = true;
  let reply = null;
  try {
    reply = await api("POST", `/api/games/${game.id}/advance`, { ply: game.ply });
  } catch (err) {
    app.autoplay = false;
    showError(err.message);
  }
  if (reply) await replyWait();
  app.busy = false;
  if (!reply || app.game !== game) return; // refused, or the game was left meanwhile
  app.game = reply;
  render();
  announceMoves();
  schedule();
}

// The pause after a move of yours that captured: its captures stay on the board (marked) before the computer's
// reply covers them. The reply is asked for at once; only its showing waits, until app.replyUntil or a skip.
function holdReply(view) {
  const step = view.state.last;
  const took = step && step.kind === "place" && step.player === view.human && step.captured.length + step.domino.length > 0;
  const pause = replyPauseMs();
  app.replyUntil = view.mode === "play" && view.agent_to_move && took && pause > 0 ? performance.now() + pause : 0;
}

function replyWait() {
  const wait = app.replyUntil - performance.now();
  if (!app.replyUntil || wait <= 0) {
    app.replyUntil = 0;
    return Promise.resolve();
  }
  return new Promise((resolve) => {
    const done = () => {
      clearTimeout(timer);
      app.replyRelease = null;
      app.replyUntil = 0;
      resolve();
    };
    const timer = setTimeout(done, wait);
    app.replyRelease = done;
  });
}

// "Show the reply" and Escape: the reply shows as soon as it is in
export function showReplyNow() {
  if (!app.replyUntil) return;
  if (app.replyRelease) app.replyRelease();
  else {
    app.replyUntil = 0;
    render();
  }
}

function dropReplyWait() {
  if (app.replyRelease) app.replyRelease();
  app.replyUntil = 0;
}

export async function play(action, focusAfter) {
  const game = app.game;
  if (!game || app.busy) return;
  app.busy = true;
  app.selected = null;
  app.hoverTile = null;
  showError("");
  notify("");
  try {
    app.game = await api("POST", `/api/games/${game.id}/move`, { action, ply: game.ply });
    holdReply(app.game);
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

export function placeOn(view, tile) {
  if (app.selected === null) return;
  const move = view.state.legal.find((m) => m.index === app.selected && m.tile === tile);
  if (move) play(move.action, `hand:${app.selected}`);
}

function nearestTile(tiles, from) {
  // the tile of `tiles` fewest arrow-key steps from tile `from` (ties: the lower number): where the keyboard lands
  const steps = (t) => Math.abs(Math.floor(t / POSITIONS) - Math.floor(from / POSITIONS)) + Math.abs((t % POSITIONS) - (from % POSITIONS));
  return [...tiles].sort((a, b) => steps(a) - steps(b) || a - b)[0];
}

export function chooseCard(view, index, byKey) {
  // a hand card chosen: the keyboard goes on to the board, to the tile it last used (the centre at first) or, taken,
  // the free tile nearest it, so it lands in the same place turn after turn; a click or a tap leaves the focus on the
  // card, so no tile shows a placement before one is pointed at or touched
  const legal = legalTiles(view, index);
  app.selected = index;
  notify("");
  const tile = legal.has(app.roving.board) ? app.roving.board : nearestTile(legal, app.roving.board);
  app.roving.board = tile;
  app.focusNext = byKey ? `tile:${tile}` : `hand:${index}`;
  if (!byKey) app.hoverTile = null;
  render();
  announce(`${view.state.players[view.viewer].hand.find((h) => h.index === index).card} chosen. Arrow keys move between tiles, Enter places it, Escape puts it back.`);
}

export function putBack() {
  // the chosen card clicked again: not chosen any more
  app.selected = null;
  render();
}

export function toggleAutoplay() {
  app.autoplay = !app.autoplay;
  app.focusNext = "#autoplay";
  render();
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

export async function lookBack(ply) {
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

export function endLookback(focus) {
  if (!app.lookback) return;
  app.lookback = null;
  app.focusNext = focus || `move:${app.game.ply - 1}`;
  render();
  announce("Back to the game. " + $("status").textContent);
}
