"""Conversion progress: a rich progress bar (files done / total, current file) and a summary.

:class:`TerminalBar` is the life cycle both progress displays share (this one and
:class:`klea_utils.stores._ingest.store.store_progress.StoreProgress`): a rich bar started on entry
when stderr is a terminal, updated while there, stopped on exit.
"""

from __future__ import annotations

import logging
import sys
from types import TracebackType
from typing import Any

__all__ = ["ConversionProgress", "TerminalBar", "format_summary", "zero_chunk_reason"]


def zero_chunk_reason(file_name: str) -> str:
    """Why a converted file may have produced no chunks, by its kind (when no reason came
    with its result)."""
    if file_name.lower().endswith(".pdf"):
        return "a scanned PDF without OCR?"
    return "no text: the file is empty or holds only markup"


def format_summary(results: list[Any]) -> str:
    """Summarise ``ChunkItemResult`` objects: counts of ok, zero chunks, failed with reasons."""
    ok = [r for r in results if r.status == "ok"]
    zero = [r for r in results if r.status == "zero_chunks"]
    failed = [r for r in results if r.status == "failed"]
    lines = [f"Conversion: {len(ok)} ok, {len(zero)} with zero chunks, {len(failed)} failed"]
    lines += [
        f"  zero chunks: {r.file_name} ({r.error or zero_chunk_reason(r.file_name)})" for r in zero
    ]
    lines += [f"  failed: {r.file_name}: {r.error}" for r in failed]
    return "\n".join(lines)


class TerminalBar:
    """A rich ``Progress`` with one task, stopped on ``__exit__``; absent until started.

    Subclasses build the bar in ``__enter__`` and hand it to :meth:`_start`, then call
    :meth:`_update`, which says whether a bar is shown (else they log instead).
    """

    _progress: Any = None
    _task: Any = None

    def _start(self, progress: Any, description: str, total: int | None, **fields: Any) -> None:
        progress.start()
        self._progress = progress
        self._task = progress.add_task(description, total=total, **fields)

    def _update(self, **fields: Any) -> bool:
        if self._progress is None:
            return False
        self._progress.update(self._task, **fields)
        return True

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        if self._progress is not None:
            self._progress.stop()


class ConversionProgress(TerminalBar):
    """Progress of one conversion run, shown as a bar on a terminal and logged otherwise.

    Args:
        total: Number of files to convert.
        logger: Receives a progress line about every 10% when stderr is not a terminal.
    """

    def __init__(self, total: int, logger: logging.Logger) -> None:
        self.total = total
        self.logger = logger
        self.completed = 0

    def __enter__(self) -> ConversionProgress:
        if sys.stderr.isatty() and self.total:
            from rich.progress import (
                BarColumn,
                MofNCompleteColumn,
                Progress,
                TextColumn,
                TimeElapsedColumn,
            )

            bar = Progress(
                TextColumn("Converting"),
                BarColumn(),
                MofNCompleteColumn(),
                TimeElapsedColumn(),
                TextColumn("{task.fields[current]}"),
                transient=False,
            )
            self._start(bar, "convert", self.total, current="")
        return self

    def current(self, file_name: str) -> None:
        """Show ``file_name`` as the file being converted."""
        self._update(current=file_name)

    def done(self, result: Any) -> None:
        """Count one finished file (``ok``, ``zero_chunks`` or ``failed``)."""
        self.completed += 1
        if result.status == "failed":
            self.logger.error("Failed: %s", result.error)
        if not self._update(advance=1, current=result.file_name):
            step = max(1, self.total // 10)
            if self.completed % step == 0 or self.completed == self.total:
                self.logger.info("Converted %d/%d files", self.completed, self.total)
