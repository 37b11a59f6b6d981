// The board and the hands drawn: tiles and towers, the cards on them and in the hands, and why a tile refuses a card.
// A click, a tap (twice on touch: the first previews), a drag or a key on them goes to games.js and keys.js through
// actions.js (a drawing module imports no controller).

import { COLOURS, LANES, POSITIONS, app, $, tileNo, laneNo, el } from "./state.js";
import { actions } from "./actions.js";
import { notify } from "./notices.js";
import { cardElement, sidesText, seatName } from "./cards.js";
import { touching, showPreview } from "./previews.js";
import { setRoving } from "./focus.js";

export function canAct(view) {
  const state = view.state;
  return view.viewer !== null && !app.lookback && !state.outcome && state.to_move === view.viewer && !app.busy;
}

export function legalTiles(view, index) {
  return new Set(view.state.legal.filter((m) => m.index === index && m.tile !== null).map((m) => m.tile));
}

function tileName(state, t, mark) {
  const here = state.board[t];
  const where = `tile ${tileNo(t)}, lane ${laneNo(Math.floor(t / POSITIONS))}`;
  const what = here ? `${COLOURS[here.owner]} ${here.card}` : "empty";
  const marks = { placed: ", just placed", captured: ", just captured", domino: ", just flipped by the domino" };
  return `${where}: ${what}${marks[mark] || ""}`;
}

function tileNumber(t) {
  const number = el("span", "tile-number", tileNo(t));
  number.setAttribute("aria-hidden", "true"); // the tile's name says it
  return number;
}

export function renderBoard(view) {
  const state = view.state;
  const board = $("board");
  board.replaceChildren();
  board.classList.toggle("looking-back", Boolean(app.lookback));
  const last = state.last && state.last.kind === "place" ? state.last : null;
  const fallen = state.outcome && state.outcome.termination === "lane_control" ? state.outcome : null;
  const interactive = view.viewer !== null && !app.lookback && state.phase === "play" && !state.outcome;
  const placing = canAct(view) && state.phase === "play";
  const legal = placing && app.selected !== null ? legalTiles(view, app.selected) : new Set();
  app.armedTile = null;
  for (let lane = 0; lane < LANES; lane += 1) {
    const label = el("div", "lane-label", `Lane ${laneNo(lane)}`);
    label.setAttribute("aria-hidden", "true");
    board.append(label);
    const tower = (seat) => {
      const down = fallen && fallen.lane === lane && fallen.winner !== seat;
      const node = el("div", `tower ${seat === 0 ? "white" : "black"}${down ? " fallen" : ""}`, down ? "fallen" : seat === 0 ? "W" : "B");
      node.setAttribute("role", "img");
      node.setAttribute("aria-label", `${COLOURS[seat]}'s tower, lane ${laneNo(lane)}${down ? ", fallen" : ""}`);
      return node;
    };
    board.append(tower(0));
    for (let pos = 0; pos < POSITIONS; pos += 1) {
      const t = lane * POSITIONS + pos;
      const tile = el("div", "tile");
      tile.dataset.tile = String(t);
      const here = state.board[t];
      let mark = "";
      if (here) {
        if (last && last.tile === t) mark = "placed";
        else if (last && last.captured.includes(t)) mark = "captured";
        else if (last && last.domino.includes(t)) mark = "domino";
        const card = cardElement(here.card, here.owner, mark);
        card.append(tileNumber(t)); // in the card's empty top-left corner: the move list names tiles by number
        tile.append(card);
        if (mark) tile.classList.add(mark);
        if (fallen && fallen.lane === lane) tile.classList.add("won-lane");
      } else {
        tile.append(tileNumber(t));
      }
      tile.setAttribute("aria-label", tileName(state, t, mark));
      if (interactive) {
        tile.dataset.focus = `tile:${t}`;
        tile.setAttribute("role", "button");
        tile.setAttribute("aria-disabled", legal.has(t) ? "false" : "true");
        tile.setAttribute("aria-describedby", "preview");
        tile.tabIndex = t === app.roving.board ? 0 : -1;
        tile.addEventListener("keydown", (event) => actions.boardKey(event, view, t));
        tile.addEventListener("focus", () => {
          app.roving.board = t;
          setRoving(board, tile);
          app.hoverTile = t;
          showPreview();
        });
        tile.addEventListener("blur", () => {
          if (app.hoverTile === t) app.hoverTile = null;
          showPreview();
        });
      } else {
        tile.setAttribute("role", "img");
      }
      if (interactive && !legal.has(t)) tile.addEventListener("click", () => notify(refusedTile(view, t)));
      tile.addEventListener("pointerdown", (event) => {
        app.pointer = event.pointerType;
      });
      if (legal.has(t)) {
        tile.classList.add("legal");
        tile.addEventListener("click", () => {
          if (app.pointer === "touch" && app.armedTile !== t) {
            // a finger cannot hover: the first tap shows what the placement would do, the second places
            app.armedTile = t;
            app.hoverTile = t;
            showPreview();
            $("preview").textContent += " Tap the tile again to place the card.";
            notify("");
            return;
          }
          actions.placeOn(view, t);
        });
      }
      tile.addEventListener("mouseenter", () => {
        app.hoverTile = t;
        showPreview();
      });
      tile.addEventListener("mouseleave", () => {
        if (app.hoverTile === t) app.hoverTile = board.contains(document.activeElement) ? Number(document.activeElement.dataset.tile) : null;
        showPreview();
      });
      tile.addEventListener("dragover", (event) => {
        if (placing && app.selected !== null && legalTiles(view, app.selected).has(t)) {
          event.preventDefault();
          if (app.hoverTile !== t) {
            app.hoverTile = t;
            showPreview();
          }
        }
      });
      tile.addEventListener("drop", (event) => {
        event.preventDefault();
        actions.placeOn(view, t);
      });
      board.append(tile);
    }
    board.append(tower(1));
  }
}

export function refusedTile(view, t) {
  // why a tile cannot take a card now, in words (a click, a tap or Enter on it)
  const state = view.state;
  const here = state.board[t];
  if (!canAct(view)) return app.busy || state.to_move !== view.viewer ? `Wait for your turn: ${view.names[state.to_move]} is placing.` : "";
  if (here) {
    const whose = here.owner === view.viewer ? "your" : `${COLOURS[here.owner]}'s`;
    const next = app.selected === null ? "choose a card from your hand, then an empty tile" : "choose an empty tile (highlighted)";
    return `Tile ${tileNo(t)} is taken (${whose} ${here.card}): a card goes on an empty tile only, and cards never move. ${touching() ? next.replace("choose", "tap") : next[0].toUpperCase() + next.slice(1)}.`;
  }
  return touching() ? "Tap a card of your hand first, then this tile." : "Choose a card from your hand first (Tab to your hand, then Enter), then this tile.";
}

function markLegalTiles(view) {
  const legal = app.selected === null ? new Set() : legalTiles(view, app.selected);
  for (const tile of $("board").querySelectorAll(".tile")) {
    const ok = legal.has(Number(tile.dataset.tile));
    tile.classList.toggle("legal", ok);
    if (tile.hasAttribute("aria-disabled")) tile.setAttribute("aria-disabled", ok ? "false" : "true");
  }
}

export function renderSides(view) {
  const state = view.state;
  const bottomSeat = view.viewer !== null ? view.viewer : 0;
  const places = [
    ["side-top", 1 - bottomSeat],
    ["side-bottom", bottomSeat],
  ];
  const playing = canAct(view) && state.phase === "play";
  const usable = new Set(state.legal.map((m) => m.index));
  for (const [id, seat] of places) {
    const box = $(id);
    box.replaceChildren();
    box.dataset.seat = String(seat);
    const player = state.players[seat];
    const moving = !state.outcome && state.to_move === seat;
    const mine = seat === view.viewer;
    const title = el("div", `seat-name${moving ? " moving" : ""}`, `${seatName(view, seat)}${moving ? " · to move" : ""}`);
    title.id = `seat-name-${seat}`;
    box.append(title);
    const hand = el("div", "hand");
    hand.id = mine ? "my-hand" : `hand-${seat}`;
    hand.setAttribute("role", "group");
    hand.setAttribute("aria-labelledby", title.id);
    if (state.phase === "draft") {
      hand.append(el("span", "note", `${player.picked} of 8 cards picked`));
    } else if (player.hand === null) {
      for (let i = 0; i < player.hand_size; i += 1) {
        const back = el("div", "card back", "");
        back.setAttribute("aria-hidden", "true");
        hand.append(back);
      }
      hand.append(el("span", "note", player.hand_size ? `hidden hand: ${player.hand_size} cards` : "no cards left"));
    } else {
      const interactive = mine && !app.lookback && !state.outcome;
      const indices = player.hand.map((h) => h.index);
      if (interactive && !indices.includes(app.roving.hand)) app.roving.hand = indices.find((i) => i >= (app.roving.hand ?? 0)) ?? indices[0];
      for (const entry of player.hand) {
        const selectable = playing && mine && usable.has(entry.index);
        const card = cardElement(entry.card, seat, selectable ? "selectable" : "");
        card.dataset.index = String(entry.index);
        if (interactive) {
          card.dataset.focus = `hand:${entry.index}`;
          card.setAttribute("role", "button");
          card.setAttribute("aria-label", `${entry.card}: ${sidesText(entry.card)}`);
          card.setAttribute("aria-pressed", app.selected === entry.index ? "true" : "false");
          card.setAttribute("aria-disabled", selectable ? "false" : "true");
          card.tabIndex = entry.index === app.roving.hand ? 0 : -1;
          card.addEventListener("focus", () => {
            app.roving.hand = entry.index;
            setRoving(hand, card);
          });
          card.addEventListener("keydown", (event) => actions.handKey(event, view, hand, card, entry.index, selectable));
          if (!selectable) card.addEventListener("click", () => notify(state.phase === "play" && !canAct(view) ? `Wait for your turn: ${view.names[state.to_move]} is placing.` : "That card cannot be played now."));
        } else {
          card.setAttribute("role", "img");
          card.setAttribute("aria-label", `${COLOURS[seat]} card ${entry.card}: ${sidesText(entry.card)}`);
        }
        if (selectable) {
          if (app.selected === entry.index) card.classList.add("selected");
          card.draggable = true;
          card.addEventListener("pointerdown", (event) => {
            app.pointer = event.pointerType;
          });
          card.addEventListener("click", () => {
            if (app.selected === entry.index) actions.putBack();
            else actions.chooseCard(view, entry.index, false);
          });
          card.addEventListener("dragstart", (event) => {
            app.selected = entry.index;
            event.dataTransfer.setData("text/plain", entry.card);
            for (const other of hand.querySelectorAll(".card")) other.classList.toggle("selected", other === card);
            markLegalTiles(view);
          });
        }
        hand.append(card);
      }
      if (!player.hand.length) hand.append(el("span", "note", "no cards left"));
    }
    box.append(hand);
  }
}
