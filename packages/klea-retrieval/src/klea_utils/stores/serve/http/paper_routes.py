"""``GET /api/papers/{file_name}/pages/{page}.png`` and ``GET /api/papers/{file_name}/file``.

A page of a paper as PNG (``dpi`` 36-300, default 150; ``chunk``: a passage id whose
regions are framed) and the paper's original file, for "open at page". Both read only
files of the papers folder (``--papers``), looked up by the file name and hash the stores
hold: a paper, passage or page the library does not hold, or a file gone from the folder,
answers 404; a file changed since the stores were built answers 409; no answer names a
path.
"""

# No ``from __future__ import annotations``: FastAPI reads the route annotations at run
# time, and one of them is a type built per app (the file name's length limit).

from typing import Annotated, Any

from fastapi import FastAPI, HTTPException, Path, Query
from fastapi.responses import FileResponse, Response
from klea_utils.stores.serve.core.options import ServeLimits
from klea_utils.stores.serve.core.service import PaperFileChangedError, Service
from klea_utils.stores.serve.http.openapi import answers

__all__ = ["add_paper_routes"]

_PNG: dict[int | str, dict[str, Any]] = {
    200: {"content": {"image/png": {}}, "description": "The page as PNG."}
}
_PDF: dict[int | str, dict[str, Any]] = {
    200: {"content": {"application/pdf": {}}, "description": "The paper's file."}
}


def _refusal(exc: Exception) -> HTTPException:
    if isinstance(exc, PaperFileChangedError):
        return HTTPException(status_code=409, detail=str(exc))
    return HTTPException(status_code=404, detail=str(exc))


def add_paper_routes(app: FastAPI, service: Service, limits: ServeLimits) -> None:
    """Add the page-image and file routes of ``service`` to ``app``."""
    FileName = Annotated[str, Path(min_length=1, max_length=limits.max_item_chars)]  # noqa: N806

    @app.get(
        "/api/papers/{file_name}/pages/{page}.png",
        summary="A page of a paper, the passage highlighted",
        response_class=Response,
        responses={**_PNG, **answers(404, 409)},
    )
    async def page_image(
        file_name: FileName,
        page: Annotated[int, Path(ge=1, le=100_000)],
        chunk: Annotated[str | None, Query(max_length=limits.max_item_chars)] = None,
        dpi: Annotated[int, Query(ge=36, le=300)] = 150,
    ) -> Response:
        """The page as PNG at ``dpi``; with ``chunk`` (a passage id) its regions framed."""
        try:
            png = await service.page_image(file_name, page, chunk=chunk, dpi=dpi)
        except (LookupError, PaperFileChangedError) as exc:
            raise _refusal(exc) from exc
        return Response(png, media_type="image/png", headers={"Cache-Control": "no-cache"})

    @app.get(
        "/api/papers/{file_name}/file",
        summary="A paper's original file",
        response_class=FileResponse,
        responses={**_PDF, **answers(404, 409)},
    )
    async def paper_file(file_name: FileName) -> FileResponse:
        """The file the stores were built from (``Content-Disposition: inline``)."""
        try:
            path = await service.paper_file(file_name)
        except (LookupError, PaperFileChangedError) as exc:
            raise _refusal(exc) from exc
        media = "application/pdf" if path.suffix.lower() == ".pdf" else "application/octet-stream"
        return FileResponse(
            path, media_type=media, filename=path.name, content_disposition_type="inline"
        )
