// What the page's parts do when used: a table of the controllers' handlers (games.js, replays.js, keys.js), filled
// once by app.js at start. The modules that draw the page (board, draft, render) call through it, so that no import
// points up a layer (tests/test_web_layers.py): state < tools < drawing < controllers < app.

const NAMES = [
  "play", // (action, focusAfter): a pick or a placement sent to the server
  "chooseCard", // (view, index, byKey): a hand card chosen
  "putBack", // the chosen card clicked again: put back
  "placeOn", // (view, tile): the chosen card placed
  "boardKey", // (event, view, tile): a key on a tile
  "handKey", // (event, view, hand, card, index, selectable): a key on a hand card
  "deckKey", // (event, deck, card, action, why): a key on a deck card
  "newGame",
  "resign",
  "reviewGame",
  "advance", // the agent to move moves (Watch's Step)
  "toggleAutoplay", // Watch's Play and Pause
  "lookBack", // (ply): the position after move ply
  "endLookback", // (focus)
  "showReplyNow", // the computer's reply without its pause
  "goToFrame", // (frame, focus): a replay's position
  "loadReview", // (ply): the solver's review of a replay's position
  "newReplay",
];

export const actions = Object.fromEntries(
  NAMES.map((name) => [
    name,
    () => {
      throw new Error(`the page's handler ${name} is not registered (app.js registers them at start)`);
    },
  ]),
);

const registered = new Set();

// app.js, once: every name above, each to its handler
export function register(handlers) {
  for (const [name, handler] of Object.entries(handlers)) {
    if (!NAMES.includes(name)) throw new Error(`no page handler is called ${name}`);
    actions[name] = handler;
    registered.add(name);
  }
  const missing = NAMES.filter((name) => !registered.has(name));
  if (missing.length) throw new Error(`page handlers not registered: ${missing.join(", ")}`);
}
