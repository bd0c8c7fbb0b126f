"""The build's own timing record: wall and CPU time of each phase, written beside the manifest.

:class:`BuildClock` times the phases of one ``build`` (``conversion``: scanning the cache
and converting + chunking the new files; ``store``: embedding and writing the stores;
``rest``: the metadata template and the citation links). Each phase records:

- ``wall_s``: elapsed time;
- ``cpu_s``: CPU time (user + system) of this process and of its children that ended
  during the phase (conversion workers and the tesseract runs they waited for);
- ``cores``: ``cpu_s / wall_s``, the cores the phase kept busy on average;
- ``pages`` (conversion: pages of the PDFs converted in this run) or ``chunks`` (store:
  chunks embedded), when the phase has one.

:func:`write_timing` saves the record as ``<source>/.klea-cache/<collection>.timing.json``
(``{"version": 1, "finished": ISO time, "cores_available": N, "phases": {...}, "total":
{...}}``), replacing the last build's; :meth:`BuildClock.lines` gives the one line per
phase the CLI prints.
"""

from __future__ import annotations

import json
import resource
import time
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from dataclasses import asdict, dataclass
from datetime import UTC, datetime
from pathlib import Path

from klea_utils.stores._ingest.atomic import atomic_write_bytes
from klea_utils.stores._ingest.store.manifest import manifest_path
from klea_utils.stores.onnx_minilm import available_cores

__all__ = [
    "TIMING_VERSION",
    "BuildClock",
    "PhaseTiming",
    "count_pdf_pages",
    "timing_path",
    "write_timing",
]

TIMING_VERSION = 1


def _cpu_seconds() -> float:
    """CPU time of this process and of its waited-for children, user + system."""
    own = resource.getrusage(resource.RUSAGE_SELF)
    children = resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime + children.ru_utime + children.ru_stime


@dataclass
class PhaseTiming:
    """One phase's wall and CPU seconds, and what it worked on (``None``: not counted)."""

    wall_s: float = 0.0
    cpu_s: float = 0.0
    pages: int | None = None
    chunks: int | None = None

    @property
    def cores(self) -> float:
        return self.cpu_s / self.wall_s if self.wall_s > 0 else 0.0

    def as_record(self) -> dict[str, float | int]:
        record = {k: v for k, v in asdict(self).items() if v is not None}
        record["wall_s"] = round(self.wall_s, 3)
        record["cpu_s"] = round(self.cpu_s, 3)
        record["cores"] = round(self.cores, 2)
        return record

    def line(self, name: str) -> str:
        text = f"{name}: {self.wall_s:.1f} s wall, {self.cpu_s:.1f} s CPU, {self.cores:.2f} cores"
        for label, count in (("pages", self.pages), ("chunks", self.chunks)):
            if count:
                text += (
                    f"; {count} {label}, {60 * count / max(self.wall_s, 1e-9):.0f} per wall-min,"
                    f" {60 * count / max(self.cpu_s, 1e-9):.0f} per CPU-min"
                )
        return text


class BuildClock:
    """Times the phases of one build, in the order they run (a phase may run twice: added)."""

    def __init__(self, order: Iterable[str] = ()) -> None:
        self.phases: dict[str, PhaseTiming] = {name: PhaseTiming() for name in order}

    @contextmanager
    def phase(self, name: str) -> Iterator[PhaseTiming]:
        """Time the block as (part of) phase ``name``; set its ``pages``/``chunks`` inside."""
        timing = self.phases.setdefault(name, PhaseTiming())
        wall, cpu = time.perf_counter(), _cpu_seconds()
        try:
            yield timing
        finally:
            timing.wall_s += time.perf_counter() - wall
            timing.cpu_s += _cpu_seconds() - cpu

    def total(self) -> PhaseTiming:
        phases = self.phases.values()
        return PhaseTiming(sum(p.wall_s for p in phases), sum(p.cpu_s for p in phases))

    def lines(self) -> list[str]:
        """One line per phase, then the whole build."""
        return [timing.line(name) for name, timing in self.phases.items()] + [
            self.total().line("build")
        ]

    def record(self) -> dict[str, object]:
        return {
            "version": TIMING_VERSION,
            "finished": datetime.now(UTC).isoformat(timespec="seconds"),
            "cores_available": available_cores(),
            "phases": {name: timing.as_record() for name, timing in self.phases.items()},
            "total": self.total().as_record(),
        }


def timing_path(source_dir: Path, collection_name: str) -> Path:
    """``<source_dir>/.klea-cache/<collection>.timing.json``, beside the manifest.

    Raises:
        StoreConfigError: When the collection name could escape the cache folder.
    """
    manifest = manifest_path(Path(source_dir), collection_name)
    return manifest.with_name(f"{collection_name}.timing.json")


def write_timing(clock: BuildClock, source_dir: Path, collection_name: str) -> Path:
    """Save ``clock``'s record for the collection (atomically); return the file."""
    path = timing_path(source_dir, collection_name)
    atomic_write_bytes(path, (json.dumps(clock.record(), indent=2) + "\n").encode("utf-8"))
    return path


def count_pdf_pages(paths: Iterable[Path]) -> int:
    """Pages of the PDFs among ``paths`` (a file pdfium cannot open counts none)."""
    import pypdfium2 as pdfium

    pages = 0
    for path in paths:
        if path.suffix.lower() != ".pdf":
            continue
        try:
            document = pdfium.PdfDocument(str(path))
        except (pdfium.PdfiumError, OSError):
            continue
        try:
            pages += len(document)
        finally:
            document.close()
    return pages
