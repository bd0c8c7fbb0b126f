"""The API reference renders cross-references: no Sphinx roles or ``File:`` lines on its pages.

The docstrings keep their Sphinx roles (for ``help()``); the Griffe extension that
mkdocs.yml enables rewrites them while the site is built. This test loads every module
the reference pages document through that extension, as mkdocstrings does.
"""

from __future__ import annotations

import importlib.util
import re
from pathlib import Path
from types import ModuleType

import griffe
import pytest

ROOT = Path(__file__).resolve().parents[1]
SEARCH_PATHS = [
    ROOT / "packages" / name / "src" for name in ("sci-etl-search", "klea-retrieval", "klea-ingest")
]
LEFTOVER = re.compile(
    r":(?:py:)?(?:class|func|meth|attr|data|mod|exc|obj|const):`|^\s*File: \S+\.py", re.M
)


def extension_module() -> ModuleType:
    path = ROOT / "scripts" / "docs" / "griffe_sphinx_roles.py"
    spec = importlib.util.spec_from_file_location("griffe_sphinx_roles", path)
    assert spec is not None
    assert spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def documented_modules() -> list[str]:
    found = []
    for page in sorted((ROOT / "docs" / "reference").glob("*.md")):
        found += re.findall(r"^::: (\S+)", page.read_text(encoding="utf-8"), re.M)
    return found


def test_mkdocs_enables_the_extension() -> None:
    config = (ROOT / "mkdocs.yml").read_text(encoding="utf-8")
    assert "scripts/docs/griffe_sphinx_roles.py:SphinxRoles" in config


def test_roles_become_optional_links_resolved_in_scope() -> None:
    roles = extension_module()
    loader = griffe.GriffeLoader(
        search_paths=[str(p) for p in SEARCH_PATHS],
        extensions=griffe.load_extensions(roles.SphinxRoles()),
    )
    module = loader.load("sci_etl_core.search.hybrid_async")
    docstring = module["AsyncHybridSearcher"].docstring.value
    assert (
        '<autoref identifier="sci_etl_core.exceptions.EmbeddingError" optional>'
        "<code>EmbeddingError</code></autoref>"
    ) in docstring
    # A short name resolves against the module of the docstring.
    assert 'identifier="sci_etl_core.search.hybrid_async.SearchOutcome.degraded"' in docstring
    text = roles.render_roles(
        "See :class:`title <a.B>` and :func:`~x.y.z`::\n\n    code\n\nFile: pkg/mod.py", module
    )
    assert text == (
        'See <autoref identifier="a.B" optional><code>title</code></autoref> and '
        '<autoref identifier="x.y.z" optional><code>z</code></autoref>:\n\n    code'
    )


@pytest.fixture(scope="module")
def loaded() -> griffe.GriffeLoader:
    loader = griffe.GriffeLoader(
        search_paths=[str(p) for p in SEARCH_PATHS],
        extensions=griffe.load_extensions(extension_module().SphinxRoles()),
    )
    for package in ("sci_etl_core", "klea_utils"):
        loader.load(package)
    return loader


@pytest.mark.parametrize("path", documented_modules())
def test_reference_docstrings_have_no_roles_left(path: str, loaded: griffe.GriffeLoader) -> None:
    obj = loaded.modules_collection[path]
    leftovers = []

    def walk(node: griffe.Object) -> None:
        if node.docstring is not None and LEFTOVER.search(node.docstring.value):
            leftovers.append(node.path)
        for member in node.members.values():
            if not member.is_alias:
                walk(member)  # type: ignore[arg-type]

    walk(obj)
    assert leftovers == []
