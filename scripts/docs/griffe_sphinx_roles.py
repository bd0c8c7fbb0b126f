"""A Griffe extension that renders the Sphinx roles of our docstrings as mkdocstrings links.

The docstrings are written for ``help()`` and Sphinx alike (``:class:`~pkg.mod.Name```).
mkdocstrings does not understand those roles, so the API reference showed them verbatim.
After a package is loaded, this extension rewrites every docstring it holds:

- ``:class:`~pkg.mod.Name``` (any of class, func, meth, attr, data, mod, exc, obj, const)
  becomes an optional autorefs link titled ``Name`` (``pkg.mod.Name`` without the ``~``,
  or the explicit title of ``:class:`title <pkg.mod.Name>```). A short name is resolved
  in the scope of the object that holds the docstring. A target that the site does not
  document renders as plain code, without a warning, so ``mkdocs build --strict`` stays
  clean.
- ``File: pkg/module.py`` lines are dropped, and a paragraph ending in ``::`` (the
  reStructuredText marker of the literal block that follows) ends in ``:``.

Enabled in mkdocs.yml under ``plugins.mkdocstrings.handlers.python.options.extensions``.
"""

from __future__ import annotations

import html
import re
from typing import Any

from griffe import Extension, Module, Object

ROLE = re.compile(
    r":(?:py:)?(?:class|func|meth|attr|data|mod|exc|obj|const):`(?P<body>[^`]+)`",
)
EXPLICIT = re.compile(r"^(?P<title>.+?)\s*<(?P<target>[^<>]+)>$", re.DOTALL)
FILE_LINE = re.compile(r"^[ \t]*File: \S+\.py[ \t]*(?:\n[ \t]*(?=\n)|\n|\Z)", re.MULTILINE)
LITERAL_MARKER = re.compile(r"(?<=\S)::[ \t]*$", re.MULTILINE)


def _resolve(obj: Object, target: str) -> str:
    """Return the full path of ``target`` as seen from ``obj``, or ``target`` unchanged."""
    head, _, rest = target.partition(".")
    scope: Any = obj
    while scope is not None:
        try:
            resolved = str(scope.resolve(head))
        except Exception:  # griffe's NameResolutionError, or a broken alias
            scope = scope.parent
            continue
        return f"{resolved}.{rest}" if rest else resolved
    return target


def render_roles(text: str, obj: Object) -> str:
    """Rewrite the Sphinx roles, ``File:`` lines and ``::`` markers of ``text``."""

    def link(match: re.Match[str]) -> str:
        body = " ".join(match["body"].split())
        explicit = EXPLICIT.match(body)
        if explicit:
            title, target = explicit["title"], explicit["target"].lstrip("~")
        else:
            target = body.lstrip("~!.")
            title = target.rsplit(".", 1)[-1] if body.startswith("~") else target
        identifier = _resolve(obj, target)
        return (
            f'<autoref identifier="{html.escape(identifier)}" optional>'
            f"<code>{html.escape(title)}</code></autoref>"
        )

    text = FILE_LINE.sub("", text).rstrip()
    text = LITERAL_MARKER.sub(":", text)
    return ROLE.sub(link, text)


class SphinxRoles(Extension):
    """Rewrite the docstrings of every loaded package once it is complete."""

    def on_package(self, *, pkg: Module, **kwargs: Any) -> None:
        """Walk ``pkg`` and rewrite each docstring it defines."""
        self._walk(pkg, set())

    def _walk(self, obj: Object, seen: set[str]) -> None:
        if obj.path in seen:
            return
        seen.add(obj.path)
        docstring = obj.docstring
        if docstring is not None:
            docstring.value = render_roles(docstring.value, obj)
            docstring.__dict__.pop("parsed", None)
        for member in obj.members.values():
            if member.is_alias:
                continue
            self._walk(member, seen)  # type: ignore[arg-type]
