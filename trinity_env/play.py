"""A person against an agent in the terminal: the board drawn, legal moves listed, bad input explained."""

from __future__ import annotations

import random
import sys
from collections.abc import Callable
from pathlib import Path
from typing import TextIO

from trinity_env.agents.spec import player
from trinity_env.core import ArgumentError, Card, GameState, IllegalMoveError, Phase, Replay, TrinityError
from trinity_env.core.files import read_json
from trinity_env.core.replay import HUMAN
from trinity_env.core.writes import write_text
from trinity_env.prepare import families_for, warm
from trinity_env.spec.agent import visible_state
from trinity_env.spec.config import DraftMode, EnvConfig, make_config
from trinity_env.spec.observation import observation_dict

HELP = (
    "Draft: type a card (7A24) or its deck number. Play: type a card and a tile (7A24 3). "
    "Tiles are 0-14, 5*lane + position. 'moves' lists legal moves, 'quit' stops."
)


def parse_move(text: str, state: GameState) -> int:
    """The action id a person's line means in ``state``; ``IllegalMoveError`` for a move the rules forbid here,
    ``ArgumentError`` for a line that is not a move (``CardError`` for a bad card)."""
    player = state.to_move
    deck = state.decks[player]
    words = text.replace("@", " ").replace(",", " ").split()
    if state.phase == Phase.DRAFT:
        if len(words) != 1:
            raise ArgumentError("pick one card: type it (7A24) or its deck number (0-15)")
        word = words[0]
        if word.isdigit() and len(word) <= 2:  # a deck number; four digits are a card like 5555
            index = int(word)
            if not 0 <= index < len(deck):
                raise IllegalMoveError(f"deck numbers are 0-{len(deck) - 1}")
        else:
            card = Card(word)
            index = next((i for i, s in enumerate(state.status[player]) if s == 0 and deck[i] == card), -1)
            if index < 0:
                raise IllegalMoveError(f"{card} is not among your unpicked cards")
        if index not in state.legal_actions():
            raise IllegalMoveError(f"you cannot pick {deck[index]} now (already picked, or over the A limit)")
        return index
    if len(words) != 2:
        raise ArgumentError("type a card and a tile, like: 7A24 3")
    card, tile_text = Card(words[0]), words[1]
    if not tile_text.lstrip("-").isdigit():
        raise IllegalMoveError(f"the tile must be a number 0-14, got {tile_text!r}")
    return state.play(card, int(tile_text)).last.action


def play_in_terminal(
    opponent: object,
    *,
    seat: str | int = "random",
    seed: int | None = None,
    config: str | None = None,
    read: Callable[[str], str] | None = None,
    out: TextIO | None = None,
    save: str | Path | None = None,
) -> GameState:
    """Play one game against ``opponent`` (a spec string, an ``AgentSpec``, an ``Agent``, a policy function or any
    other ``Player``: ``agents.spec.player``); returns the final state.

    ``read`` gets a line (default ``input``), ``out`` takes the text (default standard output).
    ``save``: write the game as a replay there when it ends (finished, quit, end of input or
    Ctrl-C), for ``trinity review`` or the web app's replay view. Bad arguments raise
    ``ArgumentError`` (``ConfigError``, ``AgentSpecError``) before the game starts; Ctrl-C at the
    prompt ends the line and raises ``KeyboardInterrupt``.
    """
    if save is not None and Path(save).is_dir():
        raise ArgumentError(f"--save {save} is a folder: give a file path for the replay")
    env_config = make_config(config) if config else make_config()
    states: list[GameState] = []
    seats: list[str] = []  # who sits where, once the seats are drawn (the replay's agents)
    try:
        final = _play(opponent, seat, seed, env_config, read, out, states.append, seats)
    finally:
        if save is not None and states:
            replay = Replay.from_states(states, open_hands=env_config.open_hands, agents=seats or None)
            _save(replay, save, out)
    return final


def _save(replay: Replay, path: str | Path, out: TextIO | None) -> None:
    """Write ``replay`` to ``path``, if it is one a reader can load: a game left in its draft is not."""
    out = sys.stdout if out is None else out
    try:
        Replay.from_dict(replay.to_dict()).final_state()
    except TrinityError as err:
        print(f"no replay saved: the game stopped where a replay cannot ({err})", file=out)
        return
    write_text(path, replay.to_json(indent=1) + "\n")
    print(f"replay saved to {path}", file=out)


def _play(
    opponent: object,
    seat: str | int,
    seed: int | None,
    env_config: EnvConfig,
    read: Callable[[str], str] | None,
    out: TextIO | None,
    record: Callable[[GameState], None],
    seats: list[str],
) -> GameState:
    read = input if read is None else read
    out = sys.stdout if out is None else out
    if seat not in (0, 1, "0", "1", "random") or isinstance(seat, bool):
        raise ArgumentError(f"seat must be 0, 1 or 'random', got {seat!r}")
    rng = random.Random(seed)
    who = player(opponent)
    agent = who.build()
    warm(families_for([who]))
    agent.reset(rng.randrange(2**31))
    me = rng.randint(0, 1) if seat == "random" else int(seat)
    seats.extend((HUMAN, who.label) if me == 0 else (who.label, HUMAN))
    state = env_config.new_game(rng)
    record(state)
    print(f"You are player {me} ({'w' if me == 0 else 'b'}), against {agent.name}. {HELP}", file=out)
    warning = untrained_draft(who, env_config)
    if warning:
        print(warning, file=out)
    while not state.is_over:
        if state.to_move != me:
            observation = observation_dict(state, 1 - me, env_config.open_hands)
            state = state.apply(agent.act(observation, visible_state(state, env_config.open_hands)))
            record(state)
            if state.last.tile is not None:
                print(f"{agent.name} plays {state.last.card} on tile {state.last.tile}{_flips(state)}", file=out)
            else:
                print(f"{agent.name} picks a card (picks are secret)", file=out)
            continue
        _show(state, me, env_config.open_hands, out)
        try:
            line = read("your move> ").strip()
        except EOFError:
            print("\nno more input: stopping", file=out)
            return state
        except KeyboardInterrupt:
            print(file=out)  # end the prompt's line before the caller reports the interrupt
            raise
        if line in ("quit", "exit"):
            return state
        if line in ("moves", "help", "?"):
            print(_legal_moves(state), file=out)
            continue
        try:
            state = state.apply(parse_move(line, state))
            record(state)
        except TrinityError as err:
            print(f"not a legal move: {err}", file=out)
            continue
        if state.last.tile is not None:  # what the placement did, before the opponent replies
            print(f"you play {state.last.card} on tile {state.last.tile}{_flips(state)}", file=out)
    print(state, file=out)
    result = "draw" if state.winner is None else ("you win" if state.winner == me else f"{agent.name} wins")
    print(f"{result} (lane scores {state.scores[0]}-{state.scores[1]})", file=out)
    return state


def _flips(state: GameState) -> str:
    """What the last placement captured, and what those captures flipped in turn (the domino), as a clause."""
    last = state.last
    if not last.captured:
        return ": no capture"

    def tiles(found: tuple[int, ...]) -> str:
        return ("tile " if len(found) == 1 else "tiles ") + ", ".join(str(t) for t in found)

    text = f": captures {tiles(last.captured)}"
    if last.domino:
        text += f", and the captured cards flip {tiles(last.domino)} (domino)"
    return text


def untrained_draft(who: object, env_config: EnvConfig) -> str | None:
    """One warning line when a game with a draft is played by a checkpoint whose run folder's ``config.json`` says
    it trained on dealt hands only (``env: {draft: dealt}``, no ``draft_share``): its picks are untrained."""
    path = getattr(who, "path", None)
    if (
        env_config.draft is not DraftMode.PICK or not path or getattr(who, "name", None) != "file:"
    ):  # no draft: no picks
        return None
    folder = Path(path) if Path(path).is_dir() else Path(path).parent
    try:
        data = read_json(folder / "config.json", "run config")
    except (TrinityError, OSError):
        return None  # no run folder beside it (or not one a trainer wrote): nothing known
    env = data.get("env") if isinstance(data, dict) else None
    if not (isinstance(env, dict) and env.get("draft") == "dealt" and not data.get("draft_share")):
        return None
    return (
        f"warning: {who} was trained on dealt hands only ({folder / 'config.json'}: env draft 'dealt', no "
        "draft_share), so its draft picks are untrained; for the game it learned, play with --config FILE, "
        "a rules YAML holding 'draft: dealt'"
    )


def _show(state: GameState, me: int, open_hands: bool, out: TextIO) -> None:
    if state.phase == Phase.DRAFT:
        deck = state.decks[me]
        cards = [f"{i}:{c}{'*' if state.status[me][i] else ''}" for i, c in enumerate(deck)]
        print(f"your deck (* picked): {' '.join(cards)}", file=out)
        return
    text = str(state)
    if not open_hands:
        hidden = f"player {1 - me} ({'w' if me == 1 else 'b'}) hand:"
        text = "\n".join(f"{hidden} (hidden)" if line.startswith(hidden) else line for line in text.splitlines())
    print(text, file=out)


def _legal_moves(state: GameState) -> str:
    if state.phase == Phase.DRAFT:
        deck = state.decks[state.to_move]
        return "you may pick: " + " ".join(f"{a}:{deck[a]}" for a in state.legal_actions())
    moves: dict[str, list[int]] = {}
    for move in state.legal_moves():
        moves.setdefault(move.card.notation, []).append(move.tile)
    return "\n".join(f"{card}: tiles {' '.join(map(str, tiles))}" for card, tiles in moves.items())
