// The draft drawn: each player's deck, picking 8 cards from it (through actions.js), and why a card cannot be picked.

import { app, $, el } from "./state.js";
import { actions } from "./actions.js";
import { notify } from "./notices.js";
import { setRoving } from "./focus.js";
import { ruleWord } from "./dialogs.js";
import { sidesText, cardElement, seatName } from "./cards.js";
import { canAct } from "./board.js";

export function renderDraft(view) {
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
          card.addEventListener("keydown", (event) => actions.deckKey(event, deck, card, canPick ? legal.get(entry.index) : null, why));
        } else {
          card.setAttribute("role", "img");
          card.setAttribute("aria-label", `${entry.card}${why}`);
        }
        if (canPick) card.addEventListener("click", () => actions.play(legal.get(entry.index)));
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

export function refusedPick(view, entry, overLimit) {
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
