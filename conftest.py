"""Shared pytest configuration: hypothesis profiles, and a private ONNX export folder.

Select a profile with ``HYPOTHESIS_PROFILE`` (``dev`` by default, ``ci`` under CI).

Tests never write into the user's ``~/.cache/klea/onnx``: before collection,
``KLEA_ONNX_CACHE`` (which klea-retrieval's ONNX query embedder honours) is pointed at a
folder of this session, removed at its end, so the MiniLM is exported at most once per
session (by the first test that needs it) and subprocesses inherit the folder. Set
``KLEA_TEST_ONNX_CACHE`` to a folder to share one export between sessions
(``scripts/test`` does, for its four pytest runs); that folder is left in place.
Likewise ``KLEA_TERM_COUNTS_CACHE`` (the library word counts the passage focus keeps) is
pointed at a folder of this session, removed at its end.
"""

from __future__ import annotations

import os
import shutil
import tempfile

import pytest
from hypothesis import HealthCheck, settings

settings.register_profile("dev", max_examples=100, deadline=None)
settings.register_profile(
    "ci",
    max_examples=200,
    deadline=None,
    derandomize=True,
    suppress_health_check=[HealthCheck.too_slow],
    print_blob=True,
)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "ci" if os.environ.get("CI") else "dev"))


ONNX_CACHE_ENV_VAR = "KLEA_ONNX_CACHE"
TEST_ONNX_CACHE_ENV_VAR = "KLEA_TEST_ONNX_CACHE"


def pytest_configure(config: pytest.Config) -> None:
    """Point ``KLEA_ONNX_CACHE`` at this session's folder (see the module docstring)."""
    previous = os.environ.get(ONNX_CACHE_ENV_VAR)
    shared = os.environ.get(TEST_ONNX_CACHE_ENV_VAR)
    folder = shared or tempfile.mkdtemp(prefix="klea-onnx-")
    os.environ[ONNX_CACHE_ENV_VAR] = folder

    def restore() -> None:
        if previous is None:
            os.environ.pop(ONNX_CACHE_ENV_VAR, None)
        else:
            os.environ[ONNX_CACHE_ENV_VAR] = previous
        if not shared:
            shutil.rmtree(folder, ignore_errors=True)

    config.add_cleanup(restore)


def pytest_sessionstart(session: pytest.Session) -> None:
    """Keep the library word counts in a folder of this session (see the docstring)."""
    previous = os.environ.get("KLEA_TERM_COUNTS_CACHE")
    folder = tempfile.mkdtemp(prefix="klea-term-counts-")
    os.environ["KLEA_TERM_COUNTS_CACHE"] = folder

    def restore() -> None:
        if previous is None:
            os.environ.pop("KLEA_TERM_COUNTS_CACHE", None)
        else:
            os.environ["KLEA_TERM_COUNTS_CACHE"] = previous
        shutil.rmtree(folder, ignore_errors=True)

    session.config.add_cleanup(restore)
