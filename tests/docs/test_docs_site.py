"""The docs site builds with ``mkdocs build --strict``: every nav entry has its page, every link and
docstring reference resolves, and the API reference is generated from the docstrings."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.integration

REPO = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def built_site(tmp_path_factory):
    site = tmp_path_factory.mktemp("site")
    had_site_folder = (REPO / "site").exists()  # mkdocs' default output folder, which the build must not use
    inherited = os.environ.get("PYTHONPATH")
    env = dict(
        os.environ,
        PYTHONPATH=os.pathsep.join([str(REPO), *([inherited] if inherited else [])]),
        NO_MKDOCS_2_WARNING="1",  # Material's banner about its successor, printed on every build
    )
    result = subprocess.run(
        [sys.executable, "-m", "mkdocs", "build", "--strict", "--site-dir", str(site)],
        cwd=REPO,
        env=env,
        capture_output=True,
        text=True,
        timeout=540,
    )
    return site, result, had_site_folder


@pytest.mark.timeout(600)
def test_the_site_builds_with_strict_and_leaves_nothing_in_the_repository(built_site):
    site, result, had_site_folder = built_site
    assert result.returncode == 0, f"mkdocs build --strict failed:\n{result.stdout[-3000:]}\n{result.stderr[-6000:]}"
    assert "WARNING" not in result.stderr, result.stderr[-6000:]
    assert (site / "index.html").is_file()
    assert (REPO / "site").exists() == had_site_folder


@pytest.mark.timeout(600)
def test_the_api_reference_is_generated_from_the_docstrings(built_site):
    site, result, _ = built_site
    assert result.returncode == 0
    runners = (site / "api" / "runners" / "index.html").read_text(encoding="utf-8")
    # A class and a sentence of its docstring: mkdocstrings read the code, not a hand-written page.
    assert "MinibatchRlEval" in runners
    assert "evaluates the agent before training and at every log interval" in runners
    collectors = (site / "api" / "collectors" / "index.html").read_text(encoding="utf-8")
    assert "step_env" in collectors


@pytest.mark.timeout(600)
def test_the_docstrings_sphinx_roles_become_links_not_literal_text(built_site):
    site, result, _ = built_site
    assert result.returncode == 0
    for page in sorted((site / "api").glob("*/index.html")):
        html = page.read_text(encoding="utf-8")
        for role in (":class:", ":meth:", ":func:", ":mod:", ":attr:", ":data:"):
            assert role not in html, f"{page.parent.name}: a {role} role was left as text (see mkdocs_hooks.py)"
    runners = (site / "api" / "runners" / "index.html").read_text(encoding="utf-8")
    # ``:class:`~rlrun.runners.interrupt.TrainingInterrupted``` in MinibatchRlBase's docstring:
    assert 'href="#rlrun.runners.interrupt.TrainingInterrupted"><code>TrainingInterrupted</code>' in runners


@pytest.mark.timeout(600)
def test_the_concepts_page_has_its_two_diagrams_as_text_that_needs_no_script(built_site):
    site, result, _ = built_site
    assert result.returncode == 0
    concepts = (site / "concepts" / "index.html").read_text(encoding="utf-8")
    assert "agent.sample_mode(itr)" in concepts and "bootstrap_value" in concepts  # one batch, serial
    assert "Report(completed TrajInfos)" in concepts  # one batch, with workers
    assert 'class="mermaid"' not in concepts  # Mermaid needs a script from a CDN to be drawn
