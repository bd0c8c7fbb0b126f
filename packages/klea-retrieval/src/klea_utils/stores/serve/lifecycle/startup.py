"""``klea-serve`` answering while its stores and models still load.

Opening a large library takes seconds (importing the vector store's client, opening its
index, loading the query model). :class:`StartingService` stands where a
:class:`~klea_utils.stores.serve.operations.klea_service.KleaService` is expected from the
moment the socket is open: :meth:`StartingService.start` runs
:func:`~klea_utils.stores.serve.operations.opening.open_service` in a background thread,
``health`` answers at once and says what is ready, and every other operation waits for the
load and then runs on the loaded service, so a request sent early is slow once, never wrong
or failed. Once serving, the thread runs one retrieval (a vector store's first query reads
its index) and reads every paper's facet row, ahead of the first requests. When the load
fails, the operations raise :class:`~klea_utils.stores.exceptions.ServeStartupError` (the
HTTP API answers 503) and ``on_failure`` is called so the command can stop with its error.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import logging
import threading
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from klea_utils.stores.exceptions import ServeStartupError
from klea_utils.stores.serve.core.options import ServeOptions
from klea_utils.stores.serve.core.params import SearchParams
from klea_utils.stores.serve.core.public_errors import public_text
from klea_utils.stores.serve.core.retrieve_filter import metadata_filter, query_schema
from klea_utils.stores.serve.operations.klea_service import KleaService
from klea_utils.stores.serve.operations.opening import open_service
from pydantic import BaseModel

__all__ = ["StartingService"]

_log = logging.getLogger(__name__)


class StartingService:
    """A :class:`KleaService` being opened in the background, answering meanwhile: the
    :class:`~klea_utils.stores.serve.core.service.Service` of a server whose socket opened
    before its stores.

    ``opener`` opens the service (default: :func:`open_service` with ``progress``);
    ``on_failure`` receives the exception when it fails. Until :meth:`start` is called
    nothing loads, and requests other than ``health`` wait.
    """

    def __init__(
        self,
        options: ServeOptions,
        *,
        progress: Callable[[str], None] = lambda _: None,
        opener: Callable[[ServeOptions], KleaService] | None = None,
        on_failure: Callable[[BaseException], None] = lambda _: None,
    ) -> None:
        self.options = options
        self.query_schema: type[BaseModel] = query_schema(options.config)
        self.started = time.time()
        self._opener = opener or (lambda o: open_service(o, progress=progress))
        self._on_failure = on_failure
        self._future: concurrent.futures.Future[KleaService] = concurrent.futures.Future()
        self._thread: threading.Thread | None = None

    # -- loading -------------------------------------------------------------------------

    def start(self) -> None:
        """Open the service in a daemon thread (once)."""
        if self._thread is None:
            self._thread = threading.Thread(
                target=self._load, name="klea-serve-startup", daemon=True
            )
            self._thread.start()

    def _load(self) -> None:
        if not self._future.set_running_or_notify_cancel():
            return
        try:
            service = self._opener(self.options)
        except BaseException as exc:  # every failure reaches the waiters and on_failure
            self._future.set_exception(exc)
            self._on_failure(exc)
        else:
            self._future.set_result(service)  # requests are served from here on
            try:  # then what the first retrieve and facets would read
                service.warm()
            except Exception as exc:  # the first requests read it, or report why
                _log.warning("the stores were not read ahead: %s", exc)

    @property
    def loaded(self) -> KleaService | None:
        """The opened service, or ``None`` while loading or after a failure."""
        if self._future.done() and self._future.exception() is None:
            return self._future.result()
        return None

    def wait(self, timeout: float | None = None) -> KleaService:
        """Block until the service is open and return it (in a worker thread).

        Raises:
            ServeStartupError: The load failed.
            TimeoutError: It did not finish within ``timeout`` seconds.
        """
        try:
            return self._future.result(timeout)
        except concurrent.futures.TimeoutError:
            raise TimeoutError(f"the stores did not load within {timeout} s") from None
        except Exception as exc:
            raise _failed(exc) from exc

    async def ready(self) -> KleaService:
        """The opened service, once it is (without blocking the event loop).

        Raises:
            ServeStartupError: The load failed.
        """
        if not self._future.done():
            self.start()
        try:
            return await asyncio.wrap_future(self._future)
        except Exception as exc:
            raise _failed(exc) from exc

    # -- the operations ------------------------------------------------------------------

    async def health(self) -> dict[str, Any]:
        """The loaded service's health, or what is known while it loads or after failing."""
        service = self.loaded
        if service is not None:  # uptime counts from the start, not from the load's end
            return {**await service.health(), "uptime_s": round(time.time() - self.started, 1)}
        failure = self._future.exception() if self._future.done() else None
        return {
            "status": "failed" if failure is not None else "starting",
            "ready": False,
            "error": _described(failure),
            "domains": list(self.options.config.domains),
            "papers": None,
            "passages": None,
            "search_index": self.options.fts5_index.name if self.options.fts5_index else None,
            "search_records": None,
            "vectors": None,
            "uptime_s": round(time.time() - self.started, 1),
        }

    def to_metadata_filter(self, values: dict[str, Any] | None) -> dict[str, Any] | None:
        """See :meth:`KleaService.to_metadata_filter` (the schema needs nothing loaded)."""
        return metadata_filter(self.query_schema, values)

    async def retrieve(
        self,
        query: str,
        *,
        k: int = 5,
        filter: dict[str, Any] | None = None,
        domains: Sequence[str] | None = None,
        context: str | None = None,
        context_tokens: int | None = None,
    ) -> dict[str, Any]:
        """:meth:`KleaService.retrieve`, once the stores are open."""
        service = await self.ready()
        return await service.retrieve(
            query,
            k=k,
            filter=filter,
            domains=domains,
            context=context,
            context_tokens=context_tokens,
        )

    async def search(self, params: SearchParams) -> dict[str, Any]:
        """:meth:`KleaService.search`, once the stores are open."""
        service = await self.ready()
        return await service.search(params)

    async def graph(
        self, record_ids: Sequence[str], edge_kinds: Sequence[str] | None = None
    ) -> dict[str, Any]:
        """:meth:`KleaService.graph`, once the stores are open."""
        return await (await self.ready()).graph(record_ids, edge_kinds)

    async def get_document(self, file_name: str) -> dict[str, Any]:
        """:meth:`KleaService.get_document`, once the stores are open."""
        return await (await self.ready()).get_document(file_name)

    async def page_image(
        self, file_name: str, page: int, *, chunk: str | None = None, dpi: int = 150
    ) -> bytes:
        """:meth:`KleaService.page_image`, once the stores are open."""
        return await (await self.ready()).page_image(file_name, page, chunk=chunk, dpi=dpi)

    async def paper_file(self, file_name: str) -> Path:
        """:meth:`KleaService.paper_file`, once the stores are open."""
        return await (await self.ready()).paper_file(file_name)

    async def citations(self, file_name: str) -> dict[str, Any]:
        """:meth:`KleaService.citations`, once the stores are open."""
        return await (await self.ready()).citations(file_name)

    async def facets(
        self, keys: Sequence[str] | None = None, query: str | None = None
    ) -> dict[str, Any]:
        """:meth:`KleaService.facets`, once the stores are open."""
        return await (await self.ready()).facets(keys, query)

    async def aclose(self) -> None:
        """Close the service once its load is over (a load still running is abandoned:
        its thread is a daemon, and the process is ending)."""
        if not self._future.done():
            self._future.cancel()
            return
        service = self.loaded
        if service is not None:
            await service.aclose()


def _described(failure: BaseException | None) -> str | None:
    """What failed, for ``health`` (open to every caller: no path, no credentials)."""
    return None if failure is None else public_text(f"{type(failure).__name__}: {failure}")


def _failed(exc: BaseException) -> ServeStartupError:
    if isinstance(exc, ServeStartupError):
        return exc
    return ServeStartupError(f"the stores could not be loaded: {type(exc).__name__}: {exc}")
