"""The ``rlrun`` command (also ``python -m rlrun``): ``rlrun train``, ``plot``, ``play`` and ``doctor``."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence

from rlrun.cli import doctor, play, plot, train

__all__ = ["main", "build_parser"]

COMMANDS = {
    "train": (train, "train an algorithm on an env from a ready-made config, with overrides"),
    "plot": (plot, "draw learning curves (return against steps and wall time) from run folders"),
    "play": (play, "load the agent a `rlrun train` run saved and play whole episodes with it"),
    "doctor": (doctor, "check this machine before a long run: torch and the GPU, ale-py, MuJoCo, cores, memory"),
}


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="rlrun", description="rlrun's command line.")
    commands = parser.add_subparsers(dest="command", metavar="COMMAND", required=True)
    for name, (module, summary) in COMMANDS.items():
        sub = commands.add_parser(name, help=summary, description=module.__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)  # fmt: skip
        module.add_arguments(sub)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    module, _ = COMMANDS[args.command]
    try:
        return module.main(args)
    except (FileNotFoundError, KeyError) as error:
        print(f"rlrun {args.command}: {error}", file=sys.stderr)
        return 2
