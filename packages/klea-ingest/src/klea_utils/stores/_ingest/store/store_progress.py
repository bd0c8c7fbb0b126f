"""Progress display for the store phase: files done and chunks embedded against a total.

Given the run's plan (chunks to embed per file, see
:func:`~klea_utils.stores._ingest.store.store_plan.planned_chunks`) the display shows
``chunks embedded N/TOTAL`` and ``files F/FILES``: a live rich line on a terminal, log
lines otherwise. The total is what this run embeds (unchanged files count for nothing) and
is corrected as files arrive, so it always ends equal to the chunks embedded. Without a
plan (a one-pass iterator of results) chunks are counted without a total.
"""

from __future__ import annotations

import logging
import sys
import time
from collections.abc import Mapping

from klea_utils.stores._ingest.progress import TerminalBar

__all__ = ["LOG_INTERVAL_S", "StoreProgress"]

LOG_INTERVAL_S = 30.0
"""Seconds after which a progress line is logged anyway when output is not a terminal."""


def _of(done: int, total: int | None) -> str:
    return f"{done}" if total is None else f"{done}/{total}"


class StoreProgress(TerminalBar):
    """A live line on a terminal; progress lines in the log otherwise.

    Off a terminal, with a plan, one line opens the run (``Storing F file(s): N chunk(s) to
    embed``) and one is logged about every tenth of the files (``Stored f/F file(s), n/N
    chunk(s) embedded``), leaving out lines where only unchanged files went by; without a
    plan, every ``log_every`` files. While one large file is
    being embedded, or between files, a line is also logged every :data:`LOG_INTERVAL_S`
    seconds, so a log shows a long run moving. A run with nothing to embed logs none.

    Args:
        logger: Receives the progress lines off a terminal.
        log_every: Files between progress lines when there is no plan.
        plan: Chunks this run expects to embed, per file name.
    """

    def __init__(
        self, logger: logging.Logger, log_every: int = 50, *, plan: Mapping[str, int] | None = None
    ) -> None:
        self.logger = logger
        self.log_every = log_every
        self.files = 0
        self.chunks = 0
        self._plan = None if plan is None else dict(plan)
        self.files_total = None if plan is None else len(plan)
        self.chunks_total = None if plan is None else sum(plan.values())
        self._live = sys.stderr.isatty()
        self._file = ""
        self._file_chunks = 0
        self._file_done = 0
        self._last_line = time.monotonic()
        self._logged_chunks = 0  # chunks embedded when the last "Stored" line was logged

    def __enter__(self) -> StoreProgress:
        if self._live:
            from rich.console import Console
            from rich.progress import (
                BarColumn,
                MofNCompleteColumn,
                Progress,
                SpinnerColumn,
                TextColumn,
                TimeElapsedColumn,
            )

            bar = Progress(
                SpinnerColumn(),
                TextColumn("[bold]storing[/] {task.fields[file]}"),
                BarColumn(),
                TextColumn("chunks embedded"),
                MofNCompleteColumn(),
                TextColumn("files {task.fields[files]}"),
                TimeElapsedColumn(),
                console=Console(stderr=True),
                transient=True,
            )
            self._start(bar, "store", self.chunks_total, file="", files=self._files_text())
        elif self.chunks_total:
            self.logger.info(
                "Storing %d file(s): %d chunk(s) to embed", self.files_total, self.chunks_total
            )
        return self

    def _files_text(self) -> str:
        return _of(self.files, self.files_total)

    def _chunks_text(self) -> str:
        return _of(self.chunks, self.chunks_total)

    def _arrived(self, name: str, embeds: int) -> None:
        """Correct the plan with what ``name`` really embeds (a file may not have been planned)."""
        if self._plan is None or self.chunks_total is None or self.files_total is None:
            return
        if name not in self._plan:
            self.files_total += 1
        planned = self._plan.pop(name, 0)
        if embeds != planned:
            self.chunks_total += embeds - planned
            self._update(total=self.chunks_total, files=self._files_text())

    def begin_file(self, name: str, chunks: int, *, done: int = 0) -> None:
        """Start embedding ``chunks`` chunks of ``name`` (``done`` of them already stored)."""
        self._arrived(name, chunks - done)
        self._file, self._file_chunks, self._file_done = name, chunks, done
        self._update(file=name)

    def advance(self, chunks: int) -> None:
        """Count ``chunks`` more chunks embedded."""
        self.chunks += chunks
        self._file_done += chunks
        if self._update(completed=self.chunks):
            return
        if self._file and self._due():
            self.logger.info(
                "Storing %s: %d of %d chunk(s) embedded (%s in all)",
                self._file,
                self._file_done,
                self._file_chunks,
                self._chunks_text(),
            )

    def _due(self) -> bool:
        now = time.monotonic()
        if now - self._last_line < LOG_INTERVAL_S:
            return False
        self._last_line = now
        return True

    def _step_due(self) -> bool:
        if self.files_total is None:
            return self.files % self.log_every == 0
        if not self.chunks_total:
            return False  # nothing to embed: the summary says so
        if self.files == self.files_total:
            return True
        if self.chunks == self._logged_chunks:
            return False  # unchanged files only since the last line: nothing to report
        step = max(1, self.files_total // 10)
        return self.files % step == 0 or self._due()

    def file_done(self, name: str, *, skipped: bool) -> None:
        """Count one file processed (stored or skipped as unchanged)."""
        if skipped:
            self._arrived(name, 0)
        self.files += 1
        self._file = ""
        if self._update(file=name, files=self._files_text()):
            pass
        elif self._step_due():
            self._last_line, self._logged_chunks = time.monotonic(), self.chunks
            self.logger.info(
                "Stored %s file(s), %s chunk(s) embedded", self._files_text(), self._chunks_text()
            )
        if not skipped:
            self.logger.debug("stored %s", name)
