// The rules panel, the hints of the rule words (a tooltip; a click opens the rules at their section) and the
// confirmation dialog.

import { app, $, el } from "./state.js";
import { focusable } from "./focus.js";

export const RULE_SECTIONS = {
  draft: "rule-draft",
  capture: "rule-capture",
  domino: "rule-domino",
  a: "rule-a",
  lane: "rule-lane",
  tower: "rule-lane",
  majority: "rule-majority",
  preview: "rule-capture",
};

export function ruleWord(text, rule) {
  const word = el("button", "rule-word", text);
  word.type = "button";
  word.dataset.rule = rule;
  word.setAttribute("aria-describedby", `hint-${rule}`);
  return word;
}

export function initRules() {
  const dialog = $("rules");
  $("rules-button").addEventListener("click", () => openRules());
  $("intro-rules").addEventListener("click", () => openRules());
  $("rules-close").addEventListener("click", () => dialog.close());
  dialog.addEventListener("close", () => {
    const back = app.rulesReturn;
    app.rulesReturn = null;
    if (!focusLeftBehind(dialog)) return; // the close event comes a task late: what has the focus by then keeps it
    if (back && document.contains(back) && focusable(back)) back.focus();
    else $("rules-button").focus();
  });
}

export function openRules(section) {
  const dialog = $("rules");
  if (dialog.open) return;
  hideHint();
  app.rulesReturn = document.activeElement && document.activeElement !== document.body ? document.activeElement : null;
  dialog.showModal();
  $("rules-close").focus();
  dialog.style.setProperty("--rules-head", `${dialog.querySelector(".rules-head").offsetHeight}px`); // scroll-margin-top
  const target = section ? $(section) : null;
  if (target) target.scrollIntoView({ block: "start" });
  else dialog.querySelector(".rules-body").scrollTop = 0;
}

export function initHints() {
  for (const word of document.querySelectorAll(".rule-word")) word.setAttribute("aria-describedby", `hint-${word.dataset.rule}`);
  const word = (event) => (event.target && event.target.closest ? event.target.closest(".rule-word") : null);
  document.addEventListener("mouseover", (event) => {
    const target = word(event);
    if (target) showHint(target);
  });
  document.addEventListener("mouseout", (event) => {
    if (word(event)) hideHint();
  });
  document.addEventListener("focusin", (event) => {
    const target = word(event);
    if (target) showHint(target);
    else hideHint();
  });
  document.addEventListener("focusout", (event) => {
    if (word(event)) hideHint();
  });
  document.addEventListener("click", (event) => {
    const target = word(event);
    if (target) openRules(RULE_SECTIONS[target.dataset.rule]);
  });
}

function showHint(target) {
  const hint = $(`hint-${target.dataset.rule}`);
  if (!hint) return;
  const tip = $("tooltip");
  tip.textContent = hint.textContent;
  tip.hidden = false;
  const box = target.getBoundingClientRect();
  const width = tip.offsetWidth;
  const left = Math.max(8, Math.min(window.scrollX + box.left, window.scrollX + document.documentElement.clientWidth - width - 8));
  tip.style.left = `${left}px`;
  tip.style.top = `${window.scrollY + box.bottom + 6}px`;
}

// After a dialog closes, whether the focus is nowhere or still in it: only then does the dialog hand it back. A dialog's
// close event is queued, so a person (or the browser's own focus restoring) may have moved the focus before it runs.
function focusLeftBehind(dialog) {
  const active = document.activeElement;
  return !active || active === document.body || dialog.contains(active);
}

export function hideHint() {
  $("tooltip").hidden = true;
}

export function initConfirm() {
  const dialog = $("confirm");
  const finish = (answer) => {
    const resolve = app.confirmResolve;
    app.confirmResolve = null;
    if (dialog.open) dialog.close();
    if (resolve) resolve(answer);
  };
  $("confirm-yes").addEventListener("click", () => finish(true));
  $("confirm-no").addEventListener("click", () => finish(false));
  dialog.addEventListener("close", () => finish(false)); // Escape
}

export function confirmStep(title, text, yes, no) {
  const dialog = $("confirm");
  const back = document.activeElement;
  $("confirm-title").textContent = title;
  $("confirm-text").textContent = text;
  $("confirm-yes").textContent = yes;
  $("confirm-no").textContent = no;
  return new Promise((resolve) => {
    app.confirmResolve = (answer) => {
      if (!answer && focusLeftBehind(dialog) && back && document.contains(back) && focusable(back)) back.focus();
      resolve(answer);
    };
    dialog.showModal();
    $("confirm-no").focus(); // the safe answer first
  });
}
