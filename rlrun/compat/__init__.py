"""rlpyt's contract, kept at the edge of rlrun.

What lives here exists only so that code written for rlpyt runs after ``rlpyt`` is replaced by
``rlrun`` in its imports. The core (every other package under ``rlrun``) never imports it; the package
root attaches it once (see :mod:`rlrun.compat.star_imports`). A change that serves rlpyt's users and
no one else belongs here; ``docs/architecture.md`` draws the line.
"""

# rlpyt's module paths that only re-export names the core defines elsewhere: part of the edge, so the
# core imports the names from where they live (tests/compat/test_rlpyt_user_code.py checks it).
RLPYT_ALIAS_MODULES = (
    "rlrun.agents.dqn.atari.mixin",
    "rlrun.algos.utils",
    "rlrun.replays.frame",
    "rlrun.replays.n_step",
    "rlrun.replays.non_sequence.n_step",
    "rlrun.replays.sequence.n_step",
    "rlrun.samplers.parallel.cpu.collectors",
)
