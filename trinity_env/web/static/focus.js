// Focus, kept across re-renders: every focusable part carries a data-focus key, and each keyboard group (board,
// hand, deck) has one item that Tab reaches (roving tabindex).

export function focusKey(node) {
  if (!node || node === document.body || !node.closest) return null;
  const keyed = node.closest("[data-focus]");
  return keyed ? keyed.dataset.focus : null;
}

export function focusable(node) {
  return node && !node.hidden && node.offsetParent !== null;
}

export function restoreFocus(key) {
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

export function setRoving(container, node) {
  for (const item of container.querySelectorAll("[data-focus]")) item.tabIndex = item === node ? 0 : -1;
}

// Arrow keys among a row of cards: focus the one `target` names, clamped to the row's ends.
export function focusStep(event, cards, target) {
  event.preventDefault();
  const next = cards[Math.max(0, Math.min(cards.length - 1, target))];
  if (next) next.focus();
}
