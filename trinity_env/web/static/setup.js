// The setup forms and what surrounds a game: the agent lists, the setup/board switch, the engine's preparation
// (compiled in the background at start) and your recent games.

import { COLOURS, ENGINE_POLL, RECENT_SHOWN, app, $, laneNo, el, stopTimer } from "./state.js";
import { api } from "./api.js";
import { render } from "./render.js";

export function storageKey() {
  return `trinity.${app.page}.game`;
}

function signed(value) {
  return value > 0 ? `+${value}` : value < 0 ? `\u2212${-value}` : "0";
}

function levelName(agent) {
  return `Level ${agent.name.split(":")[1]}`;
}

function agentText(agent, ladder) {
  // the list's words: the name and how it plays, weakest first; the rating is a detail (agentAbout)
  if (agent.group === "ladder") {
    const at = ladder.findIndex((l) => l.name === agent.name);
    const end = at === 0 ? " (weakest)" : at === ladder.length - 1 ? " (strongest)" : "";
    return `${agent.short}: ${agent.about}${end}`;
  }
  const same = ladder.find((l) => l.spec === agent.spec);
  return `${agent.short} \u2014 ${agent.about}${same ? ` (plays as ${levelName(same)})` : ""}`;
}

function agentAbout(agent, ladder) {
  // the detail under the list: how it plays and its measured strength against the ladder's ends
  const rated = agent.group === "ladder" ? agent : ladder.find((l) => l.spec === agent.spec);
  const what = `${agent.short} ${agent.about}.`;
  if (!rated || !ladder.length) return `${what} Not measured on the difficulty ladder.`;
  const low = ladder[0];
  const high = ladder[ladder.length - 1];
  const same = rated === agent ? "" : ` It plays exactly as ${levelName(rated)}.`;
  return `${what}${same} Rating ${signed(rated.elo)} (Elo, measured in games between the ladder's levels: ${levelName(low)} ${signed(low.elo)}, ${levelName(high)} ${signed(high.elo)}; higher is stronger).`;
}

function showAgentAbout() {
  const agent = app.agents && app.agents.agents.find((a) => a.name === $("opponent").value);
  $("opponent-about").textContent = agent ? agentAbout(agent, app.agents.ladder) : "";
}

export function fillAgentLists(data) {
  const groups = {
    ladder: "Difficulty ladder, weakest first",
    baseline: "Simple strategies",
    search: "Searchers (more lines tried: stronger)",
    trained: "Trained networks",
    added: "Added by this server",
  };
  for (const id of ["opponent", "agent0", "agent1"]) {
    const select = $(id);
    select.replaceChildren();
    for (const [group, title] of Object.entries(groups)) {
      const members = data.agents.filter((a) => a.group === group);
      if (!members.length) continue;
      const optgroup = el("optgroup");
      optgroup.label = title;
      for (const agent of members) {
        const option = el("option", null, agentText(agent, data.ladder));
        option.value = agent.name;
        optgroup.append(option);
      }
      select.append(optgroup);
    }
  }
  $("opponent").value = data.default;
  $("opponent").addEventListener("change", showAgentAbout);
  showAgentAbout();
  $("agent0").value = data.agents.some((a) => a.name === "greedy") ? "greedy" : data.default;
  $("agent1").value = data.agents.some((a) => a.name === "mcts:100") ? "mcts:100" : data.default;
}

export function showSetup() {
  stopTimer();
  app.game = null;
  app.replay = null;
  app.lookback = null;
  $("game").hidden = true;
  for (const page of ["play", "watch", "replay"]) $(`${page}-setup`).hidden = page !== app.page;
  loadRecent();
}

export function showBoard() {
  for (const page of ["play", "watch", "replay"]) $(`${page}-setup`).hidden = true;
  $("recent").hidden = true;
  $("game").hidden = false;
}

export async function checkEngine() {
  try {
    app.engine = await api("GET", "/api/engine");
  } catch (err) {
    app.engine = null;
    return;
  }
  renderEngine();
  if (!app.engine.ready) setTimeout(checkEngine, ENGINE_POLL);
  else if (app.game || app.replay) render();
}

function renderEngine() {
  const box = $("engine");
  const engine = app.engine;
  box.hidden = !engine || engine.ready;
  if (box.hidden) {
    box.textContent = "";
    return;
  }
  const total = engine.families.length;
  const now = engine.preparing ? `: compiling the ${engine.preparing}` : "";
  box.textContent = `Preparing the engine (first run)… ${engine.done} of ${total} parts ready${now}. The computer's moves and the solver wait for it; later starts skip this.`;
}

async function loadRecent() {
  const box = $("recent");
  box.hidden = true;
  if (app.page === "replay") return;
  let data;
  try {
    data = await api("GET", "/api/games");
  } catch (err) {
    return; // the list is a convenience: the setup form works without it
  }
  if (app.game || app.replay) return; // a game opened meanwhile
  const games = data.games.filter((g) => g.mode === app.page).slice(0, RECENT_SHOWN);
  const list = $("recent-list");
  list.replaceChildren();
  for (const game of games) {
    const item = el("li");
    item.append(el("span", "what", recentText(game)), el("span", "when", `${ago(game.updated)}`));
    const link = el("a", "button", game.phase === "over" ? "Open" : "Resume");
    link.href = `/${game.mode}?game=${game.id}`;
    link.setAttribute("aria-label", `${game.phase === "over" ? "Open" : "Resume"}: ${recentText(game)}`);
    item.append(link);
    list.append(item);
  }
  box.hidden = games.length === 0;
}

function recentText(game) {
  const moves = `move ${game.ply}`;
  if (game.mode === "watch") {
    const names = `${game.seats[0]} vs ${game.seats[1]}`;
    if (!game.outcome) return `${names}, ${moves}, ${game.phase === "draft" ? "drafting" : "in play"}`;
    const o = game.outcome;
    if (o.winner === null) return `${names}: a draw`;
    const how = o.termination === "lane_control" ? `by controlling lane ${laneNo(o.lane)}` : `${o.scores[o.winner]}–${o.scores[1 - o.winner]}`;
    return `${names}: ${COLOURS[o.winner]} won ${how}`;
  }
  const me = game.human;
  const who = `${game.seats[1 - me]}, you are ${COLOURS[me]}`;
  if (!game.outcome) return `${who}: ${moves}, ${game.phase === "draft" ? "drafting" : "in play"}`;
  const o = game.outcome;
  if (o.termination === "resignation") return `${who}: you resigned at move ${game.ply}`;
  if (o.winner === null) return `${who}: a draw`;
  if (o.termination === "lane_control") return `${who}: you ${o.winner === me ? "won" : "lost"}, lane ${laneNo(o.lane)} controlled`;
  return `${who}: you ${o.winner === me ? "won" : "lost"} ${o.scores[me]}–${o.scores[1 - me]}`;
}

function ago(seconds) {
  const minutes = Math.max(0, Math.round((Date.now() / 1000 - seconds) / 60));
  if (minutes < 1) return "just now";
  if (minutes < 60) return `${minutes} min ago`;
  const hours = Math.round(minutes / 60);
  return hours < 48 ? `${hours} h ago` : `${Math.round(hours / 24)} days ago`;
}
