"""Progress display for the store phase: files done and chunks embedded (rich)."""

from __future__ import annotations

import logging
import sys
from types import TracebackType

from rich.console import Console
from rich.progress import (
    BarColumn,
    MofNCompleteColumn,
    Progress,
    SpinnerColumn,
    TextColumn,
    TimeElapsedColumn,
)


class StoreProgress:
    """A live line on a terminal; periodic log lines otherwise."""

    def __init__(self, logger: logging.Logger, log_every: int = 50) -> None:
        self.logger = logger
        self.log_every = log_every
        self.files = 0
        self.chunks = 0
        self._live = sys.stderr.isatty()
        self._progress: Progress | None = None
        self._task: int | None = None

    def __enter__(self) -> StoreProgress:
        if self._live:
            self._progress = Progress(
                SpinnerColumn(),
                TextColumn("[bold]storing[/] {task.fields[file]}"),
                BarColumn(),
                MofNCompleteColumn(),
                TextColumn("chunks embedded"),
                TimeElapsedColumn(),
                console=Console(stderr=True),
                transient=True,
            )
            self._progress.start()
            self._task = self._progress.add_task("store", total=None, file="")
        return self

    def advance(self, chunks: int) -> None:
        """Count ``chunks`` more chunks embedded."""
        self.chunks += chunks
        if self._progress is not None and self._task is not None:
            self._progress.update(self._task, completed=self.chunks)  # type: ignore[arg-type]

    def file_done(self, name: str, *, skipped: bool) -> None:
        """Count one file processed (stored or skipped as unchanged)."""
        self.files += 1
        if self._progress is not None and self._task is not None:
            self._progress.update(self._task, file=name)  # type: ignore[arg-type]
        elif self.files % self.log_every == 0:
            self.logger.info("Stored %d file(s), %d chunk(s) embedded", self.files, self.chunks)
        if not skipped:
            self.logger.debug("stored %s", name)

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        if self._progress is not None:
            self._progress.stop()
