"""MkDocs hook (mkdocs.yml ``hooks:``): the Sphinx roles of rlrun's docstrings as links in the API reference.

The docstrings name other objects the Sphinx way, ``:class:`~rlrun.runners.minibatch_rl.MinibatchRl```.
Rendered as Markdown that would read ``:class:MinibatchRl`` with the full path. Here a role around a
full ``rlrun.`` path becomes a cross-reference that mkdocs-autorefs resolves to the object's entry
(plain code where the object has none), shown as its last part with ``~`` or as the title of
``Title <target>``, as Sphinx does; a role around a short name becomes plain code.
"""

from __future__ import annotations

import re
from typing import Any

_ROLE = re.compile(
    r":(?:class|meth|func|mod|attr|data|exc|obj):<code>(?P<tilde>~?)(?P<body>[^<]+?)(?P<call>\(\))?</code>"
)
_TITLED = re.compile(r"(?P<title>.*?)\s*&lt;(?P<target>[\w.\s]+)&gt;", re.S)  # Sphinx's "Title <target>" form


def _replace(match: re.Match[str]) -> str:
    titled = _TITLED.fullmatch(match["body"].strip())
    if titled:
        target, shown = "".join(titled["target"].split()), " ".join(titled["title"].split())
    else:
        target = "".join(match["body"].split())  # a reference the docstring wrapped over two lines
        shown = target.rsplit(".", 1)[-1] if match["tilde"] else target
    shown += match["call"] or ""
    if target.startswith("rlrun.") and re.fullmatch(r"[\w.]+", target):
        return f'<autoref identifier="{target}" optional><code>{shown}</code></autoref>'
    return f"<code>{shown}</code>"


def on_page_content(html: str, **kwargs: Any) -> str:
    return _ROLE.sub(_replace, html)
