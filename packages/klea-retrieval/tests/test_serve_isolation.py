"""The ``serve`` extra stays apart: nothing in klea-retrieval's core imports it."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

SERVE_ONLY = ("mcp", "fastapi", "starlette", "uvicorn", "klea_utils.stores.serve")

PROBE = """
import importlib, json, sys
for name in {modules!r}:
    importlib.import_module(name)
print(json.dumps(sorted(sys.modules)))
"""

CORE = [
    "klea_utils.stores.config",
    "klea_utils.stores.filters",
    "klea_utils.stores.utils",
    "klea_utils.stores.query_schema",
    "klea_utils.stores.embedding_models",
    "klea_utils.stores.pipeline",
    "klea_utils.stores.langchain_retriever",
    "klea_utils.stores.retrieve_cli",
    "klea_utils.stores.retrieval.bm25",
    "klea_utils.stores.retrieval.vs",
    "klea_utils.stores.retrieval.fts5_index",
]


def _loaded(modules: list[str]) -> list[str]:
    result = subprocess.run(
        [sys.executable, "-c", PROBE.format(modules=modules)],
        capture_output=True,
        text=True,
        check=True,
    )
    return list(json.loads(result.stdout))


def _serve_modules(loaded: list[str]) -> list[str]:
    return [
        name for name in loaded if name.startswith(SERVE_ONLY) or name.split(".")[0] in SERVE_ONLY
    ]


def test_the_core_loads_nothing_of_serve():
    assert _serve_modules(_loaded(CORE)) == []


@pytest.mark.parametrize("module", ["klea_utils.stores.serve", "klea_utils.stores.serve.cli"])
def test_the_serve_package_and_cli_import_lightly(module):
    # The console script must answer --help and report a missing extra without the SDK.
    assert [m for m in _serve_modules(_loaded([module])) if not m.startswith("klea_utils")] == []
