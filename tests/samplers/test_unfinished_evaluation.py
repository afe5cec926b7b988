"""Evaluation episodes cut at eval_max_steps: a warning only when no episode finished (rlpyt's example_1
settings finish 4 Pong games of 5 at the first evaluation, and must not warn)."""

from __future__ import annotations

import logging

from rlrun.samplers.base import report_unfinished_evaluation

_log = logging.getLogger("rlrun.samplers.test")


def test_some_finished_episodes_are_a_result_and_the_cut_ones_are_only_noted(caplog):
    with caplog.at_level(logging.INFO, logger="rlrun.samplers.test"):
        report_unfinished_evaluation(_log, 0, n_finished=4, n_unfinished=1, eval_max_steps=10_000)
    (record,) = caplog.records
    assert record.levelno == logging.INFO
    assert "4 episode(s) finished and 1 were still running at eval_max_steps=10000" in record.getMessage()


def test_no_finished_episode_warns_to_raise_eval_max_steps(caplog):
    with caplog.at_level(logging.INFO, logger="rlrun.samplers.test"):
        report_unfinished_evaluation(_log, 3, n_finished=0, n_unfinished=2, eval_max_steps=4)
    (record,) = caplog.records
    assert record.levelno == logging.WARNING
    assert "2 episode(s) were still running at eval_max_steps=4" in record.getMessage()
    assert "raise eval_max_steps" in record.getMessage()


def test_nothing_cut_says_nothing(caplog):
    with caplog.at_level(logging.INFO, logger="rlrun.samplers.test"):
        report_unfinished_evaluation(_log, 0, n_finished=5, n_unfinished=0, eval_max_steps=10_000)
    assert caplog.records == []
