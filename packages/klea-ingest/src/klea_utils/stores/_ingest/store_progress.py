"""Progress display for the store phase: files done and chunks embedded (rich)."""

from __future__ import annotations

import logging
import sys

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


class StoreProgress(TerminalBar):
    """A live line on a terminal; periodic log lines otherwise."""

    def __init__(self, logger: logging.Logger, log_every: int = 50) -> None:
        self.logger = logger
        self.log_every = log_every
        self.files = 0
        self.chunks = 0
        self._live = sys.stderr.isatty()

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

    def advance(self, chunks: int) -> None:
        """Count ``chunks`` more chunks embedded."""
        self.chunks += chunks
        self._update(completed=self.chunks)

    def file_done(self, name: str, *, skipped: bool) -> None:
        """Count one file processed (stored or skipped as unchanged)."""
        self.files += 1
        if not self._update(file=name) and self.files % self.log_every == 0:
            self.logger.info("Stored %d file(s), %d chunk(s) embedded", self.files, self.chunks)
        if not skipped:
            self.logger.debug("stored %s", name)
