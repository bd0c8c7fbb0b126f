"""Fixtures shared by the klea-ingest tests.

- ``offline`` (module scope): ``HF_HUB_OFFLINE=1`` for the whole module, so Docling and the
  tokenizer load only what the Hugging Face cache already holds.
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest


@pytest.fixture(scope="module")
def offline() -> Iterator[None]:
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("HF_HUB_OFFLINE", "1")
        yield
