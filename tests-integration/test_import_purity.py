"""``sci_etl_core.search`` must load nothing outside the standard library and ``sci_etl_core``."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

PROBE = """
import json, sys
before = set(sys.modules)
import sci_etl_core.search as search
{body}
loaded = sorted(
    name for name in set(sys.modules) - before
    if name.split(".")[0] not in sys.stdlib_module_names and name.split(".")[0] != "sci_etl_core"
)
print(json.dumps(loaded))
"""

BODIES = {
    "import": "",
    "parse_query": "search.parse_query('title:galaxy AND NEAR(dwarf halo*, 5) -quasar')",
    "every public name": "[getattr(search, n) for n in search.__all__]",
}


@pytest.mark.parametrize("body", list(BODIES.values()), ids=list(BODIES))
def test_search_core_loads_only_the_standard_library(body: str) -> None:
    result = subprocess.run(
        [sys.executable, "-c", PROBE.format(body=body)],
        capture_output=True,
        text=True,
        check=True,
    )
    assert json.loads(result.stdout) == []


WALK = """
import importlib, json, pkgutil, sys
import sci_etl_core.search as search
for module in pkgutil.walk_packages(search.__path__, "sci_etl_core.search."):
    importlib.import_module(module.name)
loaded = [name for name in sys.modules if name.split(".")[0].startswith("langchain")]
print(json.dumps(sorted(loaded)))
"""


def test_no_search_module_loads_langchain() -> None:
    """The LangChain retriever is an extra outside ``sci_etl_core.search``, never inside it."""
    import langchain_core  # the workspace installs the extra, so the probe can fail

    assert langchain_core.__name__ == "langchain_core"
    result = subprocess.run(
        [sys.executable, "-c", WALK], capture_output=True, text=True, check=True
    )
    assert json.loads(result.stdout) == []


def test_no_search_source_names_langchain() -> None:
    import ast
    from pathlib import Path

    import sci_etl_core.search as search

    offenders = []
    for path in sorted(Path(search.__path__[0]).rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            names = (
                [alias.name for alias in node.names]
                if isinstance(node, ast.Import)
                else [node.module or ""]
                if isinstance(node, ast.ImportFrom)
                else []
            )
            offenders += [f"{path.name}: {n}" for n in names if n.startswith("langchain")]
    assert offenders == []
