"""rlpyt's contract, kept at the edge of rlrun.

What lives here exists only so that code written for rlpyt runs after ``rlpyt`` is replaced by
``rlrun`` in its imports. The core (every other package under ``rlrun``) never imports it; the package
root attaches it once (see :mod:`rlrun.compat.star_imports`). A change that serves rlpyt's users and
no one else belongs here; ``docs/architecture.md`` draws the line.
"""
