"""Logging for ``klea-stores-create``: the levels of ``-v``/``-vv``/``-q`` and of libraries."""

from __future__ import annotations

import logging
import os
import sys
from typing import Any

__all__ = ["THIRD_PARTY_LOGGERS", "configure_logging"]

THIRD_PARTY_LOGGERS = (
    "docling",
    "docling_core",
    "docling_parse",
    "transformers",
    "sentence_transformers",
    "huggingface_hub",
    "chromadb",
    "httpx",
    "urllib3",
    "PIL",
    "rapidocr",
)
"""Loggers kept at WARNING unless -vv: their INFO lines would run through the progress bar."""


class _CurrentStderr(logging.StreamHandler):  # type: ignore[type-arg]
    """Writes each record to ``sys.stderr`` as it is when the record is emitted.

    A handler that kept the stream it was configured with would write to a closed one
    after a caller (a test runner, an embedding application) swapped ``sys.stderr`` back.
    """

    @property
    def stream(self) -> Any:
        return sys.stderr

    @stream.setter
    def stream(self, value: Any) -> None:
        """Ignored: the stream is always the current ``sys.stderr``."""


def configure_logging(verbose: int = 0, quiet: bool = False, debug: bool = False) -> logging.Logger:
    """Configure logging for -v/-q: WARNING by default, INFO with -v, DEBUG with -vv."""
    verbose = 2 if debug else verbose
    level = (
        logging.ERROR
        if quiet
        else (logging.DEBUG if verbose > 1 else logging.INFO if verbose else logging.WARNING)
    )
    logging.basicConfig(
        level=level, format="%(levelname)s %(message)s", handlers=[_CurrentStderr()], force=True
    )
    from klea_utils.stores._ingest.library_noise import route_library_noise

    route_library_noise()  # libraries' warnings: to the log at INFO (-v), not raw to stderr
    if verbose < 2:  # transformers' "Loading weights" bar, also in the workers
        os.environ.setdefault("HF_HUB_DISABLE_PROGRESS_BARS", "1")
    for name in THIRD_PARTY_LOGGERS:
        logging.getLogger(name).setLevel(
            logging.DEBUG if verbose > 1 else max(level, logging.WARNING)
        )
    return logging.getLogger("klea-stores-create")
