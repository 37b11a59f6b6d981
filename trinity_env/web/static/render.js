// What is shown: the position on any page, and the parts of the page around the board (status, controls,
// event line, result, lane table, move list, review), drawn anew from `app` on every change. Its buttons call the
// controllers through actions.js; the controllers import this module to redraw.

import { COLOURS, SPEEDS, app, $, tileNo, laneNo, listTiles, el, engineReady, replyWaiting } from "./state.js";
import { actions } from "./actions.js";
import { focusKey, restoreFocus } from "./focus.js";
import { ruleWord } from "./dialogs.js";
import { seatName } from "./cards.js";
import { loadPreviews, touching, showPreview } from "./previews.js";
import { renderBoard, renderSides } from "./board.js";
import { renderDraft } from "./draft.js";

export function current() {
  // The position shown and who sits where, for any page.
  if (app.page === "replay" && app.replay) {
    const frames = app.replay.frames;
    return {
      state: frames[app.frame],
      viewer: null,
      names: app.replay.names || COLOURS, // the players as Play and Watch name them (the server's), else the colours
      history: frames.slice(1).map((f) => f.last),
      shown: app.frame,
    };
  }
  const game = app.game;
  const names = game.seats.map((s) => (s.kind === "human" ? "You" : s.short));
  const state = app.lookback ? app.lookback.state : game.state;
  return { state, viewer: game.human, names, history: game.history, shown: app.lookback ? app.lookback.ply : game.ply };
}

export function render() {
  if ((app.page === "replay" && !app.replay) || (app.page !== "replay" && !app.game)) return;
  const wanted = app.focusNext || focusKey(document.activeElement);
  const forced = Boolean(app.focusNext);
  app.focusNext = null;
  const view = current();
  const state = view.state;
  renderControls();
  renderLookback(view);
  renderStatus(view);
  renderBoard(view);
  renderSides(view);
  renderDraft(view);
  renderEvent(view);
  renderResult(view);
  renderLanes(view);
  renderHistory(view);
  renderReview();
  document.body.dataset.phase = state.phase;
  document.body.dataset.reply = app.page !== "replay" && !app.lookback && replyWaiting() ? "waiting" : ""; // your captures shown
  showPreview();
  loadPreviews();
  if (forced || !document.activeElement || document.activeElement === document.body) restoreFocus(wanted);
  const lost = !document.activeElement || document.activeElement === document.body;
  if (lost && state.outcome && !app.lookback && app.page !== "replay" && $("new-game")) $("new-game").focus(); // the game just ended
}

function scoreLine(view, outcome) {
  // the player's own score first; for a spectator, the winner's
  const first = view.viewer !== null ? view.viewer : outcome.winner !== null ? outcome.winner : 0;
  return `${outcome.scores[first]}–${outcome.scores[1 - first]}`;
}

function howItEnded(outcome) {
  if (outcome.termination === "resignation") return "by resignation";
  return `on the ${outcome.termination_text}`;
}

function laneWin(view, outcome, head) {
  // a lane-control win is won by the lane, not by the lane scores: the status says so, the result shows the scores
  const who = view.viewer === outcome.winner ? "you control" : `${seatName(view, outcome.winner)} controls`;
  return `${head}: ${who} lane ${laneNo(outcome.lane)}, so its far tower falls.`;
}

function renderStatus(view) {
  const state = view.state;
  const status = $("status");
  let text;
  if (app.lookback) {
    text = `Looking back: the position after move ${app.lookback.ply} of ${app.game.ply}.`;
  } else if (state.outcome) {
    const o = state.outcome;
    if (o.termination === "resignation" && view.viewer !== null) text = `You resigned: ${view.names[o.winner]} wins.`;
    else if (o.winner === null) text = `Draw, ${scoreLine(view, o)}.`;
    else {
      const head = view.viewer !== null ? (o.winner === view.viewer ? "You win" : "You lose") : `${seatName(view, o.winner)} wins`;
      text = o.termination === "lane_control" ? laneWin(view, o, head) : `${head} ${scoreLine(view, o)} ${howItEnded(o)}.`;
    }
  } else if (view.viewer !== null && state.to_move === view.viewer) {
    const me = state.players[view.viewer];
    const place = touching() ? "Your move: tap a card of your hand, then a highlighted tile twice (the first tap shows what it would capture)." : "Your move: choose a card from your hand, then a highlighted tile.";
    text = state.phase === "draft" ? `Your pick (${me.picked + 1} of 8): choose a card from your deck.` : place;
  } else if (view.viewer !== null && replyWaiting()) {
    text = `${yourCaptures(state.last)} ${view.names[state.to_move]} replies in a moment${touching() ? "" : " (Escape shows it now)"}.`;
  } else if (view.viewer !== null) {
    text = `${view.names[state.to_move]} is thinking…${engineReady() ? "" : " (preparing the engine, first run only)"}`;
  } else {
    text = `${seatName(view, state.to_move)} to ${state.phase === "draft" ? "pick" : "move"}.`;
  }
  status.textContent = text;
  status.dataset.over = state.outcome ? "1" : "0";
  const rules = app.page === "replay" ? app.replay.rules : app.game.rules;
  const parts = [rules.draft === "pick" ? "drafted hands" : rules.draft === "dealt" ? "dealt hands" : "a puzzle position"];
  parts.push(rules.open_hands ? "open hands" : "hidden hands");
  parts.push(`${COLOURS[state.first_player]} places first`);
  $("players").textContent = `${seatName(view, 0)} vs ${seatName(view, 1)} · ${parts.join(", ")}`;
}

function yourCaptures(step) {
  // what your move took, while the reply waits: the tiles are ringed on the board (amber, violet for the domino)
  const parts = [];
  if (step.captured.length) parts.push(`captured ${listTiles(step.captured)} (amber)`);
  if (step.domino.length) parts.push(`the domino flipped ${listTiles(step.domino)} (violet)`);
  return `Your move ${parts.join(" and ")}.`;
}

function renderLookback(view) {
  const box = $("lookback");
  box.replaceChildren();
  box.hidden = !app.lookback;
  if (!app.lookback) return;
  const step = view.history[app.lookback.ply - 1];
  box.append(el("span", null, `Looking back at move ${app.lookback.ply} of ${app.game.ply}: ${describe(view, step)}. `));
  const back = el("button", "secondary", "Back to the game");
  back.type = "button";
  back.id = "lookback-exit";
  back.dataset.focus = "#lookback-exit";
  back.addEventListener("click", () => actions.endLookback());
  box.append(back);
}

function renderControls() {
  const box = $("controls");
  box.replaceChildren();
  const button = (label, id, handler, disabled, className) => {
    const b = el("button", className || null, label);
    b.type = "button";
    b.id = id;
    b.dataset.focus = `#${id}`;
    b.disabled = Boolean(disabled);
    b.addEventListener("click", handler);
    box.append(b);
    return b;
  };
  if (app.page === "replay") {
    const last = app.replay.plies;
    button("« Start", "to-start", () => actions.goToFrame(0, "#to-start"), app.frame === 0);
    button("◀ Back", "prev", () => actions.goToFrame(app.frame - 1, "#prev"), app.frame === 0);
    button("Next ▶", "next", () => actions.goToFrame(app.frame + 1, "#next"), app.frame === last);
    button("End »", "last", () => actions.goToFrame(last, "#last"), app.frame === last);
    const slider = el("input");
    slider.type = "range";
    slider.id = "frame";
    slider.dataset.focus = "#frame";
    slider.min = "0";
    slider.max = String(last);
    slider.value = String(app.frame);
    slider.setAttribute("aria-label", "position in the game");
    slider.addEventListener("input", () => actions.goToFrame(Number(slider.value), "#frame"));
    box.append(slider, el("span", "counter", `position ${app.frame} of ${last}`));
    button("Upload another", "again", () => actions.newReplay());
    return;
  }
  const game = app.game;
  const over = Boolean(game.state.outcome);
  if (game.mode === "watch") {
    button("Step", "step", () => actions.advance(), over);
    button(app.autoplay ? "Pause" : "Play", "autoplay", () => actions.toggleAutoplay(), over);
    const speed = el("select");
    speed.id = "speed";
    speed.dataset.focus = "#speed";
    speed.setAttribute("aria-label", "speed");
    for (const name of Object.keys(SPEEDS)) {
      const option = el("option", null, name);
      option.value = name;
      speed.append(option);
    }
    speed.value = app.speed || "normal";
    speed.addEventListener("change", () => {
      app.speed = speed.value;
    });
    box.append(speed);
  } else if (!over) {
    if (replyWaiting()) button("Show the reply", "show-reply", () => {
      app.focusNext = `hand:${app.roving.hand}`; // the button goes with the wait: the focus to your hand
      actions.showReplyNow();
    });
    button("Resign", "resign", () => actions.resign(), false, "secondary");
  }
  const again = button("New game", "new-game", () => actions.newGame());
  if (over) again.setAttribute("aria-describedby", "result"); // the result is read with the button the focus lands on
  if (game.replay_available && over && game.state.phase !== "draft") button("Review this game", "review-game", () => actions.reviewGame());
  if (game.replay_available) {
    const link = el("a", "button", "Download the replay");
    link.id = "download";
    link.dataset.focus = "#download";
    link.href = `/api/games/${game.id}/replay`;
    link.download = `trinity-${game.id.slice(0, 8)}.json`;
    box.append(link);
  }
}

export function describe(view, step) {
  if (!step) return "";
  const who = seatName(view, step.player);
  if (step.kind === "pick") return step.card ? `${who} picked ${step.card}` : `${who} picked a card (secret)`;
  const text = `${who} placed ${step.card} on tile ${tileNo(step.tile)}`;
  // why each card flipped, as the server says (step.why): the side that beat it and the value it beat
  const why = new Map((step.why || []).map((w) => [w.tile, w]));
  const beat = (t) => {
    const w = why.get(t);
    return w ? `${w.value} beats ${w.against}` : "";
  };
  const flips = [];
  if (step.captured.length) {
    const each = step.captured.map((t) => `tile ${tileNo(t)} (${beat(t)})`);
    flips.push(`it captured ${each.join(", ")}`);
  }
  for (const t of step.domino) {
    const w = why.get(t);
    const by = w ? ` because the card it captured on tile ${tileNo(w.by)} turned on it: its ${w.side} ${w.value} beats ${w.against}` : "";
    flips.push(`the domino flipped tile ${tileNo(t)}${by}`);
  }
  return flips.length ? `${text}: ${flips.join("; ")}` : text;
}

function renderEvent(view) {
  const event = $("event");
  const step = view.state.last;
  event.textContent = describe(view, step);
  event.className = `event${step && step.kind === "place" && step.captured.length ? " flash" : ""}`;
}

function renderResult(view) {
  const box = $("result");
  const outcome = view.state.outcome;
  box.replaceChildren();
  box.hidden = !outcome;
  if (!outcome) return;
  let headline;
  if (outcome.termination === "resignation") headline = view.viewer !== null ? "You resigned" : `${seatName(view, 1 - outcome.winner)} resigned`;
  else if (outcome.winner === null) headline = "Draw";
  else if (view.viewer !== null) headline = outcome.winner === view.viewer ? "You win!" : `${view.names[outcome.winner]} wins`;
  else headline = `${seatName(view, outcome.winner)} wins`;
  const text = el("p");
  if (outcome.termination === "lane_control") {
    text.append(`${COLOURS[outcome.winner]} controls `, ruleWord(`lane ${laneNo(outcome.lane)}`, "lane"), ": its ", ruleWord("far tower", "tower"), " falls.");
  } else if (outcome.termination === "resignation") {
    text.append(`${view.names[outcome.winner]} wins by resignation.`);
  } else {
    text.append(`Game over on the ${outcome.termination_text}: lanes scored by `, ruleWord("lane majority", "majority"), ".");
  }
  const me = view.viewer;
  const scores = me !== null ? `you ${outcome.scores[me]}, ${view.names[1 - me]} ${outcome.scores[1 - me]}` : `White ${outcome.scores[0]}, Black ${outcome.scores[1]}`;
  if (outcome.termination === "lane_control") {
    text.append(
      ` Lane scores of the board as it stands: ${scores}. They are counted by the rules' `,
      ruleWord("lane majority", "majority"),
      " (a lane scores for whoever owns more of its cards, a point a card; equal counts score for nobody), and on a lane-control win they decide nothing.",
    );
  } else text.append(` Lane scores: ${scores}.`);
  box.append(el("h2", null, headline), text);
}

function renderLanes(view) {
  const state = view.state;
  const table = $("lanes");
  const caption = table.querySelector("caption");
  table.replaceChildren(caption);
  const head = el("tr");
  const you = (seat) => (view.viewer === seat ? " (you)" : "");
  for (const text of ["Lane", `White cards${you(0)}`, `Black cards${you(1)}`, `White points${you(0)}`, `Black points${you(1)}`]) {
    const th = el("th", null, text);
    th.scope = "col";
    head.append(th);
  }
  table.append(head);
  const totals = [0, 0];
  for (const lane of state.lanes) {
    const row = el("tr");
    row.append(el("td", null, laneNo(lane.lane)), el("td", null, lane.counts[0]), el("td", null, lane.counts[1]), el("td", null, lane.points[0]), el("td", null, lane.points[1]));
    totals[0] += lane.points[0];
    totals[1] += lane.points[1];
    table.append(row);
  }
  const total = el("tr", "total");
  const scores = state.outcome ? state.outcome.scores : totals;
  total.append(el("td", null, state.outcome ? "Final" : "Now"), el("td"), el("td"), el("td", null, scores[0]), el("td", null, scores[1]));
  table.append(total);
}

function renderHistory(view) {
  const list = $("history");
  const keep = list.scrollTop;
  const following = list.scrollTop + list.clientHeight >= list.scrollHeight - 4;
  list.replaceChildren();
  view.history.forEach((step, i) => {
    const item = el("li", step && step.kind === "place" ? "place" : "pick");
    const number = el("span", "move-number", `${i + 1}.`); // its own column: a wrapped entry keeps it on its first line
    number.setAttribute("aria-hidden", "true");
    item.append(number);
    const button = el("button", null, describe(view, step));
    button.type = "button";
    button.dataset.focus = `move:${i}`;
    const shown = view.shown === i + 1;
    if (shown) {
      item.classList.add("shown");
      button.setAttribute("aria-current", "step");
    }
    button.addEventListener("click", () => (app.page === "replay" ? actions.goToFrame(i + 1, `move:${i}`) : actions.lookBack(i + 1)));
    item.append(button);
    list.append(item);
  });
  if (following && !app.lookback && app.page !== "replay") list.scrollTop = list.scrollHeight;
  else list.scrollTop = keep;
}

function notJudged(box, ply) {
  // why this position has no review, and where the game has one (or why it has none at all)
  const replay = app.replay;
  const most = replay.review_max_empty;
  const state = replay.frames[ply];
  const empty = state.board.filter((here) => here === null).length;
  const cardsNeeded = state.board.length - most;
  const reach = `The solver judges placements in positions with at most ${most} empty tiles (${cardsNeeded} cards or more on the board): those it solves exactly in moments.`;
  let why;
  if (state.outcome) why = "The game is over here: there is no move left to judge.";
  else if (state.phase === "draft") why = `This is the draft: picks are not judged. ${reach}`;
  else if (empty > most) why = `This position has ${empty} empty tiles, too many to solve exactly here. ${reach}`;
  else why = "The player to move has no legal move here.";
  const note = el("p", "note", why);
  note.id = "review-why";
  box.append(note);
  const first = replay.reviewable.indexOf(true);
  if (first >= 0) {
    const go = el("button", "secondary", `Go to position ${first}, the first judged`);
    go.type = "button";
    go.id = "review-first";
    go.dataset.focus = "#review-first";
    go.addEventListener("click", () => actions.goToFrame(first, "#next"));
    box.append(go);
    return;
  }
  const end = replay.frames[replay.plies];
  const cards = end.board.filter((here) => here !== null).length;
  const none = `This game has no position to judge: it ended after ${cards} placement${cards === 1 ? "" : "s"}, before the board had ${cardsNeeded} cards. Review a longer game, one that goes on until at most ${most} tiles are empty (a game not resigned or won by a full lane early).`;
  const p = el("p", "note", none);
  p.id = "review-none";
  box.append(p);
}

function renderReview() {
  const box = $("review");
  box.replaceChildren();
  if (app.page !== "replay" || !app.replay) {
    box.hidden = true;
    return;
  }
  box.hidden = false;
  const ply = app.frame;
  box.append(el("h3", null, "Review (exact solver)"));
  if (!app.replay.reviewable[ply]) {
    notJudged(box, ply);
    return;
  }
  const review = app.reviews[ply];
  const waiting = engineReady() ? "solving…" : "preparing the solver (first run only: compiling), then solving…";
  if (!review) {
    actions.loadReview(ply);
    box.append(el("p", "note", waiting));
    return;
  }
  if (review.pending) {
    box.append(el("p", "note", waiting));
    return;
  }
  if (!review.available) {
    box.append(el("p", "note", review.reason));
    return;
  }
  const mover = COLOURS[review.to_move];
  const value = review.value === 1 ? "wins" : review.value === 0 ? "draws" : "loses";
  const best = review.best_moves.map((m) => `${m.card} on tile ${tileNo(m.tile)}`).join(", ");
  const known = app.replay.rules.open_hands === false ? " (both hands known, though the game hid them)" : "";
  const lines = [`With perfect play from here${known}, ${mover} (to move) ${value}.`];
  lines.push(review.value === -1 ? "Every move loses." : `Moves that keep this: ${best}.`);
  if (review.played) {
    const played = `${review.played.card} on tile ${tileNo(review.played.tile)}`;
    lines.push(review.played_best ? `The move played, ${played}, is one of them.` : `The move played, ${played}, is a mistake.`);
  }
  const p = el("p", review.played_best === false ? "mistake" : "good", lines.join(" "));
  p.id = "review-text";
  box.append(p, el("p", "note", `${review.nodes.toLocaleString()} positions searched in ${review.seconds} s`));
}
