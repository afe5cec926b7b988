"""One language for the command line and the examples: the CLI takes the examples' (rlpyt's) option
names as aliases, a mistyped option gets the nearest real one suggested, and --help tells the defaults."""

from __future__ import annotations

import pytest

from rlrun.cli import build_parser, main, suggest_option


@pytest.mark.parametrize(
    "alias, canonical, value",
    [
        ("--n_steps", "--steps", "5000"),
        ("--n-steps", "--steps", "5000"),
        ("--log_interval_steps", "--log-interval", "1000"),
        ("--cuda_idx", "--cuda-idx", "1"),
        ("--run_ID", "--run-id", "3"),
        ("--n_parallel", "--workers", "2"),
        ("--sample_mode", "--sampler", "cpu"),
        ("--batch_T", "--batch-T", "8"),
    ],
)
def test_the_examples_option_names_are_aliases_of_the_clis(alias, canonical, value):
    parser = build_parser()
    by_alias = parser.parse_args(["train", alias, value])
    by_name = parser.parse_args(["train", canonical, value])
    assert vars(by_alias) == vars(by_name)


def test_a_mistyped_option_gets_the_nearest_one_suggested_and_exit_2(capsys):
    assert main(["train", "--algo", "ppo", "--env", "CartPole-v1", "--n_stpes", "10", "--lgo-interval", "5"]) == 2
    err = capsys.readouterr().err
    assert "--n_stpes: did you mean --n_steps?" in err or "--n_stpes: did you mean --n-steps?" in err
    assert "--lgo-interval: did you mean --log-interval?" in err
    assert "rlrun train --help" in err and err.startswith("usage: rlrun train")


def test_an_option_with_no_near_name_is_called_what_it_is(capsys):
    assert main(["play", "some_run", "--zzzzzz"]) == 2
    assert "--zzzzzz: not an option of this command" in capsys.readouterr().err
    assert suggest_option("--episods", ["--episodes", "--render", "-h"]) == "--episodes"
    assert suggest_option("--qqq", ["--episodes"]) is None


def test_train_help_says_where_each_default_comes_from(capsys):
    with pytest.raises(SystemExit):
        main(["train", "--help"])
    out = " ".join(capsys.readouterr().out.split())
    assert "default: the config's, printed at the start, e.g. 100k on CartPole" in out
    assert "(default: auto)" in out and "default: one per usable CPU" in out
