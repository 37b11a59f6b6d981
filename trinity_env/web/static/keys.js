// The keyboard: arrow keys, Enter and Escape on the board, the hand and the deck, and the page's own keys
// (? opens the rules, Escape leaves a look back or shows the computer's reply without its pause).

import { LANES, POSITIONS, app, $, replyWaiting } from "./state.js";
import { notify, announce } from "./notices.js";
import { focusStep } from "./focus.js";
import { openRules, hideHint } from "./dialogs.js";
import { canAct, legalTiles, refusedTile } from "./board.js";
import { refusedPick } from "./draft.js";
import { current, render } from "./render.js";
import { play, placeOn, chooseCard, endLookback, showReplyNow } from "./games.js";

export function boardKey(event, view, t) {
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

export function handKey(event, view, hand, card, index, selectable) {
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

export function deckKey(event, deck, card, action, why) {
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

function typing(target) {
  return target && (target.isContentEditable || ["INPUT", "SELECT", "TEXTAREA"].includes(target.tagName));
}

export function globalKey(event) {
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
    } else if (!dialogOpen && replyWaiting()) {
      event.preventDefault();
      showReplyNow();
    }
  }
}
