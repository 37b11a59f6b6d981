// The page's shared state and its smallest tools: the board's sizes, the one `app` object every module reads and
// changes, and the DOM helpers. The rules' indices (tiles 0 to 14, lanes 0 to 2) are kept; the page says them from 1.

export const COLOURS = ["White", "Black"];
export const LANES = 3;
export const POSITIONS = 5;
export const SPEEDS = { slow: 1500, normal: 700, fast: 250 };
export const ENGINE_POLL = 1000; // ms between questions to GET /api/engine while the engine is being prepared
export const RECENT_SHOWN = 8;
// After a move of yours that captured, the computer's reply waits this long (ms) so that you see what you took; its
// request goes at once (the engine thinks meanwhile), a key or a button shows it sooner. A browser may set its own in
// localStorage (trinity.replyPauseMs; 0: no pause), as the browser tests do.
export const REPLY_PAUSE_MS = 1200;

export function replyPauseMs() {
  const own = Number.parseInt(localStorage.getItem("trinity.replyPauseMs"), 10);
  return Number.isFinite(own) && own >= 0 ? own : REPLY_PAUSE_MS;
}

export const app = {
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
  replyUntil: 0, // performance.now() until which the computer's reply waits (your captures shown); 0: no wait
  replyRelease: null, // ends the wait now (the reply is in and waiting)
  confirmResolve: null,
  rulesReturn: null,
};

// the page's state, reachable from the console (and the browser tests) as `app`, as before the split
window.app = app;

export const $ = (id) => document.getElementById(id);

// Small reads and writes of `app` that modules of several layers share (tests/test_web_layers.py)
export function engineReady() {
  return !app.engine || app.engine.ready;
}

export function replyWaiting() {
  // the computer's reply waits so that your move's captures show (games.js, holdReply)
  return Boolean(app.replyUntil && app.game && app.game.agent_to_move && !app.game.state.outcome);
}

export function stopTimer() {
  clearTimeout(app.timer);
  app.timer = null;
}

// Tiles and lanes are numbered from 1 in everything the page says (tile 1 to 15, lane 1 to 3); the API and the
// data-tile attributes keep the rules' indices from 0.
export const tileNo = (t) => t + 1;
export const laneNo = (lane) => lane + 1;

export function listTiles(tiles) {
  // "tile 4", "tiles 4 and 9", "tiles 2, 4 and 9"
  const numbers = tiles.map(tileNo);
  if (numbers.length === 1) return `tile ${numbers[0]}`;
  return `tiles ${numbers.slice(0, -1).join(", ")} and ${numbers[numbers.length - 1]}`;
}

export function el(tag, className, text) {
  const node = document.createElement(tag);
  if (className) node.className = className;
  if (text !== undefined && text !== null) node.textContent = String(text);
  return node;
}
