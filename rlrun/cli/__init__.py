"""The ``rlrun`` command (also ``python -m rlrun``): ``rlrun train``, ``plot``, ``play``, ``info``, ``tune-sampler`` and ``doctor``."""

from __future__ import annotations

import argparse
import difflib
import sys
from collections.abc import Sequence

from rlrun.cli import doctor, info, play, plot, train, tune_sampler

__all__ = ["main", "build_parser", "suggest_option"]

COMMANDS = {
    "train": (train, "train an algorithm on an env from a ready-made config, with overrides"),
    "plot": (plot, "draw learning curves (return against steps and wall time) from run folders"),
    "play": (play, "load the agent a `rlrun train` run saved and play whole episodes with it"),
    "info": (info, "say what a run folder holds, how far it got, and the commands to resume, play and plot it"),
    "tune-sampler": (
        tune_sampler,
        "measure the env and the agent here and print the sampler layout --sampler auto would pick",
    ),
    "doctor": (doctor, "check this machine before a long run: torch and the GPU, ale-py, MuJoCo, cores, memory"),
}


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="rlrun", description="rlrun's command line.")
    commands = parser.add_subparsers(dest="command", metavar="COMMAND", required=True)
    for name, (module, summary) in COMMANDS.items():
        sub = commands.add_parser(name, help=summary, description=module.__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)  # fmt: skip
        module.add_arguments(sub)
    return parser


def _command_parser(parser: argparse.ArgumentParser, command: str) -> argparse.ArgumentParser:
    subparsers = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    command_parser: argparse.ArgumentParser = subparsers.choices[command]
    return command_parser


def _normal(option: str) -> str:
    return option.lower().replace("_", "-")


def suggest_option(unknown: str, options: Sequence[str]) -> str | None:
    """The option a mistyped ``unknown`` most likely meant (``--n_step`` -> ``--n-steps``), or None."""
    by_normal = {_normal(o): o for o in options if o.startswith("--")}
    name = _normal(unknown.split("=", 1)[0])
    close = difflib.get_close_matches(name, list(by_normal), n=1, cutoff=0.6)
    return by_normal[close[0]] if close else None


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args, unknown = parser.parse_known_args(argv)
    if unknown:
        command_parser = _command_parser(parser, args.command)
        options = list(command_parser._option_string_actions)
        lines = []
        for word in unknown:
            guess = suggest_option(word, options) if word.startswith("-") else None
            lines.append(f"{word}: did you mean {guess}?" if guess else f"{word}: not an option of this command")
        print(command_parser.format_usage().rstrip(), file=sys.stderr)
        print(f"rlrun {args.command}: unrecognized argument(s): " + "; ".join(lines), file=sys.stderr)
        print(f"(all options: rlrun {args.command} --help)", file=sys.stderr)
        return 2
    module, _ = COMMANDS[args.command]
    try:
        code: int = module.main(args)  # COMMANDS holds modules, whose attributes mypy reads as Any
        return code
    except (FileNotFoundError, KeyError) as error:
        print(f"rlrun {args.command}: {error}", file=sys.stderr)
        return 2
