"""Is an Atari policy network still alive? The share of each ReLU layer's units that fire on real frames.

    python benchmarks/active_units.py RUN_DIR/checkpoints/itr_000031249.ckpt [MORE.ckpt ...]
    python benchmarks/active_units.py --fresh --set orthogonal_init=True      # a newly built network

For each checkpoint of an ``rlrun train`` run with ``AtariFfModel`` (A2C, PPO), it rebuilds the model from the
run's ``params.json`` (the ``model`` and ``env`` sections), loads the weights, feeds it ``--frames`` observations
of the run's game played with random actions (seeded), and prints, for each ReLU layer, the share of units active
on at least one observation, and the standard deviation over observations of the policy's probabilities and of
the value. A layer at 0 gives the same output for every observation: the policy cannot depend on the game
any more, and since a unit that never fires gets no gradient, training cannot bring it back.
"""

from __future__ import annotations

import argparse
import ast
import json
import sys
from pathlib import Path
from typing import Any

import numpy as np
import torch

from rlrun.envs.atari.atari_env import AtariEnv
from rlrun.models.pg.atari_ff_model import AtariFfModel


def observations(game: str, n: int, seed: int = 0, **env_kwargs: Any) -> torch.Tensor:
    """``n`` observations of ``game`` under random actions, one every 4 steps."""
    env = AtariEnv(game=game, **env_kwargs)
    env.seed(seed)
    rng = np.random.default_rng(seed)
    frames = [env.reset()]
    while len(frames) < 4 * n:
        observation, _, done, _ = env.step(int(rng.integers(env.action_space.n)))
        frames.append(env.reset() if done else observation)
    env.close()
    return torch.as_tensor(np.stack(frames[::4][:n]))


def activity(model: torch.nn.Module, x: torch.Tensor) -> tuple[dict[str, float], float, float]:
    """Per ReLU layer, the share of units active on at least one of ``x``; the std over ``x`` of pi and v."""
    outputs: dict[str, torch.Tensor] = {}
    hooks = [
        module.register_forward_hook(lambda _m, _i, out, name=name: outputs.__setitem__(name, out.detach()))
        for name, module in model.named_modules()
        if isinstance(module, torch.nn.ReLU)
    ]
    try:
        with torch.no_grad():
            pi, v = model(x)
    finally:
        for hook in hooks:
            hook.remove()
    alive = {name: float((out.reshape(len(x), -1) > 0).any(0).float().mean()) for name, out in outputs.items()}
    return alive, float(pi.std(0).mean()), float(v.std())


def load_model(checkpoint: Path, image_shape: tuple[int, ...], n_actions: int) -> AtariFfModel:
    params = json.loads((checkpoint.parent.parent / "params.json").read_text(encoding="utf-8"))
    model = AtariFfModel(image_shape, n_actions, **params.get("model", {}))
    state = torch.load(checkpoint, map_location="cpu", weights_only=False)["agent"]
    model.load_state_dict({key.removeprefix("model."): value for key, value in state.items()})
    return model


def run_env(checkpoint: Path) -> dict[str, Any]:
    params = json.loads((checkpoint.parent.parent / "params.json").read_text(encoding="utf-8"))
    return dict(params.get("env", {}))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("checkpoints", nargs="*", type=Path)
    parser.add_argument("--fresh", action="store_true", help="also a newly built network (seed 0)")
    parser.add_argument("--set", dest="model_kwargs", action="append", default=[], metavar="KEY=VALUE",
                        help="AtariFfModel keyword for --fresh, e.g. orthogonal_init=True")  # fmt: skip
    parser.add_argument("--game", default="pong", help="for --fresh (checkpoints use their run's game)")
    parser.add_argument("--frames", type=int, default=100, help="observations to feed")
    args = parser.parse_args(argv)
    if not args.checkpoints and not args.fresh:
        parser.error("give checkpoints, or --fresh")
    torch.set_num_threads(1)
    rows: list[tuple[str, AtariFfModel, torch.Tensor]] = []
    if args.fresh:
        x = observations(args.game, args.frames)
        kwargs = dict(kv.split("=", 1) for kv in args.model_kwargs)
        torch.manual_seed(0)
        model = AtariFfModel(tuple(x.shape[1:]), AtariEnv(game=args.game).action_space.n,
                             **{k: ast.literal_eval(v) for k, v in kwargs.items()})  # fmt: skip
        rows.append(("fresh " + " ".join(args.model_kwargs), model, x))
    for checkpoint in args.checkpoints:
        env_kwargs = run_env(checkpoint)
        game = env_kwargs.pop("game", "pong")
        x = observations(game, args.frames, **env_kwargs)
        n_actions = AtariEnv(game=game).action_space.n
        rows.append((str(checkpoint), load_model(checkpoint, tuple(x.shape[1:]), n_actions), x))
    for label, model, x in rows:
        alive, pi_std, v_std = activity(model, x)
        layers = "  ".join(f"{name} {share:.2f}" for name, share in alive.items())
        print(f"{label}\n  active units: {layers}\n  std over observations: pi {pi_std:.2g}, v {v_std:.2g}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
