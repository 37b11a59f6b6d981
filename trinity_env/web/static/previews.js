// Previews: what a placement would do, asked of the engine (GET /api/games/{id}/previews/{ply}), shown on the
// board in place.

import { POSITIONS, app, $, tileNo, laneNo, listTiles } from "./state.js";
import { api } from "./api.js";
import { showError } from "./notices.js";
import { cardElement } from "./cards.js";

function previewable() {
  const game = app.game;
  return Boolean(game && game.mode === "play" && !app.lookback && !game.state.outcome && game.state.phase === "play" && game.state.to_move === game.human);
}

export async function loadPreviews() {
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

export function touching() {
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

export function showPreview() {
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
