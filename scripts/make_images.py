"""Write the pictures in docs/images/: a few rendered frames and a GIF of a whole game.

Run from the repository root: python scripts/make_images.py  (deterministic for a fixed seed).
"""

from __future__ import annotations

import argparse
from pathlib import Path

from PIL import Image

import trinity_env
from trinity_env.agents import RandomAgent
from trinity_env.spec.agent import visible_state

OUT = Path(__file__).resolve().parent.parent / "docs" / "images"


def game_frames(seed: int) -> list:
    """Every frame of one game between two random agents, draft included."""
    env = trinity_env.env(render_mode="rgb_array")
    env.reset(seed=seed)
    agents = {name: RandomAgent(seed + i) for i, name in enumerate(env.possible_agents)}
    frames = [env.render()]
    for agent in env.agent_iter():
        observation, _, terminated, truncated, _ = env.last()
        if terminated or truncated:
            env.step(None)
            continue
        env.step(agents[agent].act(observation, visible_state(env.unwrapped.game_state, True)))
        frames.append(env.render())
    return frames


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seed", type=int, default=7)
    args = parser.parse_args()
    OUT.mkdir(exist_ok=True)
    frames = [Image.fromarray(f) for f in game_frames(args.seed)]
    play = frames[16:]  # after the 16 draft picks
    for name, frame in {"start": play[0], "midgame": play[len(play) // 2], "end": play[-1]}.items():
        frame.save(OUT / f"frame_{name}.png")
    play[0].save(OUT / "game.gif", save_all=True, append_images=play[1:] + [play[-1]] * 3, duration=700, loop=0)
    print(f"wrote {len(play)} play frames to {OUT}")


if __name__ == "__main__":
    main()
