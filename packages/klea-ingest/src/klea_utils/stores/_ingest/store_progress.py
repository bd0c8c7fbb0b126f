"""Progress display for the store phase: files done and chunks embedded (rich)."""

from __future__ import annotations

import logging
import sys
import time

from klea_utils.stores._ingest.progress import TerminalBar
from rich.console import Console
from rich.progress import (
    BarColumn,
    MofNCompleteColumn,
    Progress,
    SpinnerColumn,
    TextColumn,
    TimeElapsedColumn,
)

LOG_INTERVAL_S = 30.0
"""Seconds between progress lines inside one large file when output is not a terminal."""


class StoreProgress(TerminalBar):
    """A live line on a terminal; periodic log lines otherwise.

    Off a terminal a line is logged every ``log_every`` files and, while one large file is
    being embedded, every :data:`LOG_INTERVAL_S` seconds, so a log shows a long run moving.
    """

    def __init__(self, logger: logging.Logger, log_every: int = 50) -> None:
        self.logger = logger
        self.log_every = log_every
        self.files = 0
        self.chunks = 0
        self._live = sys.stderr.isatty()
        self._file = ""
        self._file_chunks = 0
        self._file_done = 0
        self._last_line = time.monotonic()

    def __enter__(self) -> StoreProgress:
        if self._live:
            bar = Progress(
                SpinnerColumn(),
                TextColumn("[bold]storing[/] {task.fields[file]}"),
                BarColumn(),
                MofNCompleteColumn(),
                TextColumn("chunks embedded"),
                TimeElapsedColumn(),
                console=Console(stderr=True),
                transient=True,
            )
            self._start(bar, "store", None, file="")
        return self

    def begin_file(self, name: str, chunks: int, *, done: int = 0) -> None:
        """Start embedding ``chunks`` chunks of ``name`` (``done`` of them already stored)."""
        self._file, self._file_chunks, self._file_done = name, chunks, done

    def advance(self, chunks: int) -> None:
        """Count ``chunks`` more chunks embedded."""
        self.chunks += chunks
        self._file_done += chunks
        if self._update(completed=self.chunks):
            return
        now = time.monotonic()
        if self._file and now - self._last_line >= LOG_INTERVAL_S:
            self._last_line = now
            self.logger.info(
                "Storing %s: %d of %d chunk(s) embedded",
                self._file,
                self._file_done,
                self._file_chunks,
            )

    def file_done(self, name: str, *, skipped: bool) -> None:
        """Count one file processed (stored or skipped as unchanged)."""
        self.files += 1
        self._file = ""
        if not self._update(file=name) and self.files % self.log_every == 0:
            self.logger.info("Stored %d file(s), %d chunk(s) embedded", self.files, self.chunks)
        if not skipped:
            self.logger.debug("stored %s", name)
