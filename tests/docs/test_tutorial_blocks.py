"""Every Python block of every tutorial (docs/tutorial_*.md) runs as written, on its own.

Tutorials added later are picked up by the glob. Each block runs as a script in a fresh process, in a
working folder of its page, and must exit 0; the conventions are in ``doc_blocks``. Blocks keep their
step budgets small, so a page runs in well under a minute on 2 cores.
"""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parent))
from doc_blocks import DOCS, python_blocks, run_block  # noqa: E402

TUTORIALS = sorted(DOCS.glob("tutorial_*.md"))
BLOCK_TIMEOUT_S = (
    300  # a block takes 1-26 s of CPU; the margin is for a loaded machine (20 s of CPU took 165 s at load 16)
)


def test_there_are_tutorials_with_code():
    assert len(TUTORIALS) >= 3
    for page in TUTORIALS:
        assert python_blocks(page), f"{page.name} has no ```python block"


@pytest.mark.parametrize("page", TUTORIALS, ids=[p.stem for p in TUTORIALS])
def test_tutorials_have_no_fragments(page):
    fragments = [b.id for b in python_blocks(page) if b.is_fragment]
    assert not fragments, f"tutorial blocks must run as written; fragments at {fragments}"


@pytest.mark.timeout(900)
@pytest.mark.parametrize("page", TUTORIALS, ids=[p.stem for p in TUTORIALS])
@pytest.mark.integration
def test_every_block_of_the_tutorial_runs_alone_and_exits_0(page, tmp_path):
    for block in python_blocks(page):
        result = run_block(block, tmp_path, timeout=BLOCK_TIMEOUT_S)
        assert result.returncode == 0, (
            f"{block.id} exited with {result.returncode}.\n--- stdout (end) ---\n{result.stdout[-3000:]}"
            f"\n--- stderr (end) ---\n{result.stderr[-5000:]}"
        )


def test_the_custom_env_tutorial_guards_its_training_code_for_spawned_workers():
    # Its sampler starts workers with spawn, which import the script: training at module level would
    # run again in every worker.
    blocks = python_blocks(DOCS / "tutorial_custom_env.md")
    training = [b for b in blocks if "runner.train()" in b.code]
    assert training
    for block in training:
        assert 'if __name__ == "__main__":' in block.code, block.id
