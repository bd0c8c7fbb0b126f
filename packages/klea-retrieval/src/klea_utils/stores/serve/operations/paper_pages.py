"""The pages and files of the library's papers, for ``GET /api/papers/...``.

:class:`PaperPages` answers with files of the papers folder only, looked up by the file
name and hash the stores hold (:mod:`~klea_utils.stores.serve.papers.library_files`), and
renders a page with a passage's regions framed
(:mod:`~klea_utils.stores.serve.papers.page_image`). A paper, passage or page the library
does not hold, or a papers folder not given, is a ``LookupError`` (404); a file changed
since the stores were built a :class:`~klea_utils.stores.serve.core.service.
PaperFileChangedError` (409).
"""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

from klea_utils.stores._retrieval.regions import regions_of
from klea_utils.stores.serve.core.service import DocumentNotFoundError
from klea_utils.stores.serve.papers.catalogue import PaperCatalogue
from klea_utils.stores.serve.papers.library_files import LibraryFiles, PaperFileMissingError
from klea_utils.stores.serve.papers.page_image import page_png

__all__ = ["PaperPages"]


class PaperPages:
    """Page images and original files of the papers of ``catalogue``, read from ``folder``."""

    def __init__(self, catalogue: PaperCatalogue, folder: Path | None) -> None:
        self.catalogue = catalogue
        self.files = LibraryFiles(folder, self._stored_hash) if folder is not None else None

    def _stored_hash(self, file_name: str) -> str | None:
        metadata = self.catalogue.paper_metadata([file_name]).get(file_name) or {}
        value = metadata.get("file_hash")
        return value if isinstance(value, str) else None

    def _path(self, file_name: str) -> Path:
        if self.files is None:
            raise PaperFileMissingError(
                "klea-serve was started without --papers (the folder the stores were built "
                "from): it serves no files or page images"
            )
        return self.files.path(file_name)

    def _regions(self, file_name: str, chunk: str) -> list[dict[str, Any]]:
        paper = self.catalogue.paper(file_name)
        if paper is None:
            raise DocumentNotFoundError(f"no paper {file_name!r} in the library")
        for passage in paper.passages:
            if passage.id == chunk:
                return regions_of(passage.metadata)
        raise DocumentNotFoundError(f"paper {file_name!r} has no passage {chunk!r}")

    async def file(self, file_name: str) -> Path:
        """The paper's file, checked against its stored hash."""
        return await asyncio.to_thread(self._path, file_name)

    async def image(self, file_name: str, page: int, *, chunk: str | None, dpi: int) -> bytes:
        """Page ``page`` as PNG with the passage ``chunk``'s regions framed."""

        def render() -> bytes:
            regions = self._regions(file_name, chunk) if chunk is not None else []
            return page_png(self._path(file_name), page, dpi=dpi, regions=regions)

        return await asyncio.to_thread(render)
