// What the page tells the person: the error line, the notice over the window's foot (why something was refused) and the
// live region a screen reader reads.

import { $ } from "./state.js";

export function showError(message) {
  const box = $("error");
  box.textContent = message || "";
  box.hidden = !message;
}

export function notify(text) {
  // why something was refused, over the bottom of the window (role=status: read out too), on touch as on a mouse;
  // it takes no room in the page, so nothing moves when it comes or goes
  const box = $("notice");
  box.textContent = text || "";
  box.hidden = !text;
}

export function announce(text) {
  // the live region: a screen reader reads each move as it happens
  if (text) $("announce").textContent = text;
}
