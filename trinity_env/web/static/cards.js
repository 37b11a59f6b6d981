// The smallest pieces the page draws: a card (its four values, its owner), its sides in words, and a seat's name.

import { COLOURS, el } from "./state.js";

export function sidesText(notation) {
  const [top, right, bottom, left] = notation.split("");
  return `top ${top}, right ${right}, bottom ${bottom}, left ${left}`;
}

export function cardElement(notation, owner, extra) {
  const card = el("div", `card${owner === 0 ? " white" : owner === 1 ? " black" : ""}${extra ? ` ${extra}` : ""}`);
  const [top, right, bottom, left] = notation.split("");
  card.append(el("span", "side top", top), el("span", "side left", left), el("span", "owner", owner === 0 ? "w" : owner === 1 ? "b" : ""), el("span", "side right", right), el("span", "side bottom", bottom));
  for (const part of card.children) part.setAttribute("aria-hidden", "true");
  card.dataset.card = notation;
  return card;
}

export function seatName(view, seat) {
  const name = view.names[seat];
  return name === COLOURS[seat] ? name : `${name} (${COLOURS[seat]})`;
}
