// What the page tells the person: the error line, the notice under the board (why something was refused) and the
// live region a screen reader reads.

import { $ } from "./state.js";

export function showError(message) {
  const box = $("error");
  box.textContent = message || "";
  box.hidden = !message;
}

export function notify(text) {
  // why something was refused, shown where it is seen (role=status: read out too), on touch as on a mouse
  const box = $("notice");
  box.textContent = text || "";
  box.hidden = !text;
  if (!text) return;
  const rect = box.getBoundingClientRect();
  if (rect.top < 0 || rect.bottom > window.innerHeight) box.scrollIntoView({ block: "nearest" });
}

export function announce(text) {
  // the live region: a screen reader reads each move as it happens
  if (text) $("announce").textContent = text;
}
