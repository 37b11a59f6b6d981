"""OpenSpiel's MCTS bot against the project's greedy agent on Trinity Towers.

The game is the OpenSpiel registration of ``trinity_env.integrations.openspiel``
(``pyspiel.load_game("python_trinity_towers", ...)``) with dealt hands and open hands: after
the deal nothing is hidden, so MCTS, which searches the true state, plays fairly. The
greedy agent (``trinity_env.agents.make("greedy")``) sees only its own observation, built
from the state by the project's encoder, and is wrapped as an OpenSpiel bot. Seats
alternate game by game.

Needs OpenSpiel (``pip install "trinity-towers[openspiel]"``).

Usage: python examples/openspiel_mcts.py [--games N] [--simulations S] [--rollouts R] [--seed S]
"""

from __future__ import annotations

import argparse

import numpy as np
import pyspiel
from open_spiel.python.algorithms import mcts

from trinity_env.agents import make
from trinity_env.integrations.openspiel import GAME_NAME
from trinity_env.spec.observation import action_mask, encode_observation


class AgentBot(pyspiel.Bot):
    """A project agent (``trinity_env.agents``) as an OpenSpiel bot: it sees only its seat's observation."""

    def __init__(self, agent, player: int, open_hands: bool):
        pyspiel.Bot.__init__(self)
        self.agent, self.player, self.open_hands = agent, player, open_hands

    def step(self, state) -> int:
        game = state.game_state
        observation = {
            "observation": encode_observation(game, self.player, self.open_hands),
            "action_mask": action_mask(game, self.player),
        }
        return int(self.agent.act(observation, game if self.open_hands and game.phase != "draft" else None))


def play(game, bots, rng: np.random.RandomState) -> list[float]:
    """One game; chance nodes (first player, the deal) are sampled from ``rng``."""
    state = game.new_initial_state()
    while not state.is_terminal():
        if state.is_chance_node():
            outcomes, probabilities = zip(*state.chance_outcomes())
            state.apply_action(int(rng.choice(outcomes, p=probabilities)))
        else:
            state.apply_action(bots[state.current_player()].step(state))
    return state.returns()


def main(argv: list[str] | None = None) -> float:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--games", type=int, default=6)
    parser.add_argument("--simulations", type=int, default=200, help="MCTS simulations per move")
    parser.add_argument("--rollouts", type=int, default=1, help="random rollouts per evaluated leaf")
    parser.add_argument("--uct-c", type=float, default=2.0)
    parser.add_argument("--opponent", default="greedy", help="an agent spec of trinity_env.agents (default greedy)")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args(argv)

    open_hands = True
    game = pyspiel.load_game(GAME_NAME, {"draft": "dealt", "open_hands": open_hands})
    rng = np.random.RandomState(args.seed)
    evaluator = mcts.RandomRolloutEvaluator(args.rollouts, np.random.RandomState(args.seed + 1))
    wins = draws = 0
    for number in range(args.games):
        seat = number % 2  # MCTS's seat
        bot = mcts.MCTSBot(game, args.uct_c, args.simulations, evaluator, random_state=np.random.RandomState(number))
        opponent = AgentBot(make(args.opponent), 1 - seat, open_hands)
        returns = play(game, [bot, opponent] if seat == 0 else [opponent, bot], rng)
        wins += returns[seat] > 0
        draws += returns[seat] == 0
        print(f"game {number + 1}: MCTS (seat {seat}) {'wins' if returns[seat] > 0 else 'loses'}")
    rate = wins / args.games
    print(
        f"MCTS ({args.simulations} simulations) against {args.opponent}: wins {wins} of {args.games} games ({rate:.0%})"
    )
    return rate


if __name__ == "__main__":
    main()
