"""What a seat may see through the web API (``trinity serve`` through Starlette's TestClient): hidden hands, the
previews of each placement (never depending on the opponent's hidden hand) and looking back at earlier positions."""

from __future__ import annotations

import dataclasses
import random

import pytest

# web_client skips this module without Starlette
from web_client import TestClient, core_state, error, new_game, owner, play_out, small_client

from trinity_env.core import Replay
from trinity_env.web import views as web_views

# ---------------------------------------------------------------------- hidden hands


def test_hidden_hands_stay_hidden_until_the_end_and_dealt_hands_skip_the_draft(client):
    view = new_game(client, seat=1, first="you", draft="dealt", open_hands=False, seed=3)
    assert view["state"]["phase"] == "play" and view["state"]["to_move"] == 1 and view["rules"]["open_hands"] is False
    assert view["state"]["players"][0]["hand"] is None and view["state"]["players"][0]["hand_size"] == 8
    assert len(view["state"]["players"][1]["hand"]) == 8

    def check(view: dict) -> None:
        if not view["state"]["outcome"]:
            assert view["state"]["players"][0]["hand"] is None

    final = play_out(client, view, random.Random(2), check)
    assert final["state"]["players"][0]["hand"] is not None
    replay = Replay.from_json(client.get(f"/api/games/{final['id']}/replay").text)
    assert replay.rules["draft"] == "dealt" and replay.rules["open_hands"] is False


# ---------------------------------------------------------------------- previews of each placement


def _previews(client: TestClient, view: dict) -> dict:
    response = client.get(f"/api/games/{view['id']}/previews/{view['ply']}")
    assert response.status_code == 200, response.text
    return response.json()


def test_previews_are_what_each_move_does_on_many_random_positions():
    """Every legal placement's preview against the rules core, then the move played: what it captured and
    flipped is what its preview said, on positions of drafted and dealt games, open and hidden hands."""
    client = small_client()
    rng = random.Random(5)
    positions = flips = endings = 0
    for seed in range(16):
        view = new_game(
            client,
            seed=seed,
            seat=seed % 2,
            draft=("pick", "dealt")[seed % 2 == 0 and seed % 4 == 0],
            open_hands=seed % 3 != 0,
            opponent=("random", "greedy")[seed % 2],
        )
        while not view["state"]["outcome"]:
            if view["agent_to_move"]:
                view = client.post(f"/api/games/{view['id']}/advance", json={"ply": view["ply"]}).json()
                continue
            if view["state"]["phase"] == "draft":
                move = rng.choice(view["state"]["legal"])
                view = client.post(f"/api/games/{view['id']}/move", json={"action": move["action"], "ply": view["ply"]})
                view = view.json()
                continue
            data = _previews(client, view)
            state = core_state(client, view)
            assert data["ply"] == view["ply"] and data["to_move"] == view["human"]
            by_action = {p["action"]: p for p in data["previews"]}
            assert set(by_action) == {m["action"] for m in view["state"]["legal"]} == set(state.legal_actions())
            for action, preview in by_action.items():
                after = state.apply(action)
                assert (preview["tile"], preview["captured"], preview["domino"]) == (
                    after.last.tile,
                    list(after.last.captured),
                    list(after.last.domino),
                )
                assert preview["card"] == after.last.card.notation and preview["index"] == after.last.deck_index
                assert preview["lanes"] == web_views.lanes_json(after)
                if after.outcome is None:
                    assert preview["outcome"] is None
                else:
                    endings += 1
                    assert preview["outcome"]["winner"] == after.outcome.winner
                    assert preview["outcome"]["termination"] == after.outcome.termination.value
                    assert preview["outcome"]["lane"] == after.outcome.lane
                    assert preview["outcome"]["scores"] == list(after.outcome.scores)
            positions += 1
            chosen = by_action[rng.choice(sorted(by_action))]
            view = client.post(f"/api/games/{view['id']}/move", json={"action": chosen["action"], "ply": view["ply"]})
            view = view.json()
            last = view["state"]["last"]
            assert (last["tile"], last["captured"], last["domino"]) == (
                chosen["tile"],
                chosen["captured"],
                chosen["domino"],
            )
            flips += bool(last["captured"])
    assert positions >= 100 and flips >= 20 and endings >= 10


def test_a_preview_never_depends_on_the_opponents_hidden_hand():
    """With hidden hands, the previews of a position are the same whichever of its unplayed deck cards the
    opponent really holds: they are computed on what the player sees (``seen_by``), not the server's state."""
    client = small_client()
    checked = 0
    for seed in range(6):
        view = new_game(client, seed=seed, seat=0, first="you", draft="dealt", open_hands=False)
        rng = random.Random(seed)
        while not view["state"]["outcome"]:
            if view["agent_to_move"]:
                view = client.post(f"/api/games/{view['id']}/advance", json={"ply": view["ply"]}).json()
                continue
            state = core_state(client, view)
            served = _previews(client, view)["previews"]
            other = 1 - view["human"]
            unplayed = [i for i, s in enumerate(state.status[other]) if s != 2]
            held = sum(1 for s in state.status[other] if s == 1)
            for trial in range(3):  # other hands of the same size from the cards the opponent has not played
                hand = set(random.Random(trial).sample(unplayed, held))
                status = list(state.status)
                status[other] = tuple(2 if s == 2 else 1 if i in hand else 0 for i, s in enumerate(state.status[other]))
                swapped = dataclasses.replace(state, status=tuple(status))
                assert web_views.placement_previews(swapped, view["human"], False) == served
            seen = web_views.seen_by(state, view["human"], False)
            assert sum(1 for s in seen.status[other] if s == 1) == held  # the size is public, and kept
            assert seen.status[view["human"]] == state.status[view["human"]]
            checked += 1
            move = rng.choice(view["state"]["legal"])
            view = client.post(f"/api/games/{view['id']}/move", json={"action": move["action"], "ply": view["ply"]})
            view = view.json()
    assert checked >= 30


def test_previews_are_only_for_the_player_to_move_in_the_play_phase(client):
    drafting = new_game(client, seat=0, first="you", draft="pick")
    assert "draft" in error(client.get(f"/api/games/{drafting['id']}/previews/0"), 409)
    waiting = new_game(client, seat=1, first="opponent", draft="dealt")
    assert "not your turn" in error(client.get(f"/api/games/{waiting['id']}/previews/0"), 409)
    mine = new_game(client, seat=0, first="you", draft="dealt")
    assert "at move 0, not 3" in error(client.get(f"/api/games/{mine['id']}/previews/3"), 409)
    assert len(client.get(f"/api/games/{mine['id']}/previews/0").json()["previews"]) == len(mine["state"]["legal"])
    watch = client.post("/api/games", json={"mode": "watch", "agents": ["random", "random"], "draft": "dealt"}).json()
    assert "two agents" in error(client.get(f"/api/games/{watch['id']}/previews/0"), 409)
    done = play_out(client, new_game(client, draft="dealt"), random.Random(1))
    assert "over" in error(client.get(f"/api/games/{done['id']}/previews/{done['ply']}"), 409)


@pytest.mark.parametrize("ply", ["-1", "1e3", "abc", "99999", "0x1", "%20", "1.0", "\u0661"])
@pytest.mark.parametrize("route", ["previews", "positions"])
def test_a_ply_in_the_path_must_be_a_short_whole_number(client, ply, route):
    view = new_game(client, seat=0, first="you", draft="dealt")
    assert "ply must be a whole number" in error(client.get(f"/api/games/{view['id']}/{route}/{ply}"), 400)


# ---------------------------------------------------------------------- looking back


def test_looking_back_shows_each_earlier_position_as_the_seat_saw_it():
    client = small_client()
    view = new_game(client, seat=0, first="you", draft="pick", open_hands=False, seed=4)
    rng = random.Random(4)
    while view["ply"] < 22:  # the draft (16 picks) and a few placements
        if view["agent_to_move"]:
            view = client.post(f"/api/games/{view['id']}/advance", json={"ply": view["ply"]}).json()
        else:
            move = rng.choice(view["state"]["legal"])
            view = client.post(f"/api/games/{view['id']}/move", json={"action": move["action"], "ply": view["ply"]})
            view = view.json()
    states = client.app.app.state.store.game(view["id"], owner(client)).states
    for ply in range(view["ply"] + 1):
        shown = client.get(f"/api/games/{view['id']}/positions/{ply}").json()
        assert shown["ply"] == ply and shown["state"]["legal"] == []
        assert shown["state"] == {**web_views.state_json(states[ply], 0, False), "legal": []}
        them = shown["state"]["players"][1]
        assert them["hand"] is None and (them["deck"] is None or states[ply].phase != "draft")
    assert "ply must be 0-" in error(client.get(f"/api/games/{view['id']}/positions/{view['ply'] + 1}"), 422)
    final = play_out(client, view, rng)
    start = client.get(f"/api/games/{final['id']}/positions/1").json()["state"]
    assert start["players"][1]["deck"] is not None  # the game is over: looking back shows everything now
