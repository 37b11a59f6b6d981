// Replays: upload one, open it, move through its positions and ask the exact solver's review of each.

import { app, $ } from "./state.js";
import { api } from "./api.js";
import { showError, announce } from "./notices.js";
import { showSetup, showBoard } from "./setup.js";
import { current, render, describe } from "./render.js";

export async function uploadReplay(event) {
  event.preventDefault();
  showError("");
  const file = $("replay-file").files[0];
  if (!file) {
    showError("choose a replay file first");
    return;
  }
  if (file.size > 1024 * 1024) {
    showError("that file is over 1 MB: a replay is a few KB");
    return;
  }
  try {
    const view = await api("POST", "/api/replays", await file.text());
    openReplayView(view);
  } catch (err) {
    showError(err.message);
  }
}

export async function openReplay(id) {
  try {
    openReplayView(await api("GET", `/api/replays/${encodeURIComponent(id)}`));
  } catch (err) {
    history.replaceState(null, "", location.pathname);
    showSetup();
    // a 404: forgotten by the server, or not this browser's (games and replays belong to the cookie that made them)
    const gone = "That replay is no longer on the server, or was uploaded in another browser: upload it again.";
    showError(err.status === 404 ? gone : err.message);
  }
}

function openReplayView(view) {
  app.replay = view;
  app.reviews = {};
  app.frame = 0;
  history.replaceState(null, "", `${location.pathname}?id=${view.id}`);
  showBoard();
  app.focusNext = "#next";
  render();
}

export function goToFrame(frame, focus) {
  if (!app.replay) return;
  app.frame = Math.max(0, Math.min(app.replay.plies, frame));
  if (focus) app.focusNext = focus;
  render();
  const step = app.replay.frames[app.frame].last;
  announce(`Position ${app.frame} of ${app.replay.plies}. ${describe(current(), step)}`);
}

export async function loadReview(ply) {
  const replay = app.replay;
  if (!replay || !replay.reviewable[ply] || app.reviews[ply]) return;
  app.reviews[ply] = { pending: true };
  try {
    app.reviews[ply] = await api("GET", `/api/replays/${replay.id}/review/${ply}`);
  } catch (err) {
    app.reviews[ply] = { available: false, reason: err.message };
  }
  if (app.replay === replay && app.frame === ply) render();
}

export function newReplay() {
  history.replaceState(null, "", location.pathname);
  $("replay-file").value = "";
  showSetup();
}
