"""The store client's modules are imported while the workers convert (issue 40)."""

from __future__ import annotations

import subprocess
import sys

import pytest
from klea_utils.stores._ingest.store.warm_imports import BACKEND_MODULES, warm_store_imports

_PROBE = """
import sys
from klea_utils.stores._ingest.store.warm_imports import warm_store_imports
assert "chromadb" not in sys.modules and "langchain_chroma" not in sys.modules
thread = warm_store_imports("chroma:/nowhere/store")
thread.join()
print(sorted(m for m in ("chromadb", "langchain_chroma") if m in sys.modules))
"""


def test_a_chroma_build_imports_its_client_in_a_thread() -> None:
    out = subprocess.run(
        [sys.executable, "-c", _PROBE], capture_output=True, text=True, check=True, timeout=120
    )
    assert out.stdout.split("\n")[-2] == "['chromadb', 'langchain_chroma']"


@pytest.mark.parametrize("uri", ["memory:", "/a/folder", "", "weaviate:http://host"])
def test_a_store_without_known_modules_starts_nothing(uri: str) -> None:
    assert warm_store_imports(uri) is None


def test_a_module_that_is_not_installed_is_left_to_the_store_phase(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setitem(BACKEND_MODULES, "chroma", ("klea_no_such_module_40", "json"))
    thread = warm_store_imports("chroma:/x")
    assert thread is not None
    thread.join(timeout=30)
    assert not thread.is_alive()
    assert "klea_no_such_module_40" not in sys.modules
