"""A store rebuilt while ``klea-serve`` runs, served without a restart or a failed request.

:class:`LiveService` is the :class:`~klea_utils.stores.serve.core.service.Service` the HTTP
routes and the MCP tools call; it runs each operation on the current service.
:meth:`LiveService.reload` opens a new service from the stores as they are now, in a worker
thread while the current one keeps answering, then swaps it in: a request runs wholly on the
service it started on, and the old one is closed once its last request has answered. Reloads
come from ``POST /api/reload`` or from :meth:`LiveService.watch`, which polls the size and
modification time of the stores configuration, the store files and their sidecar manifests
(a few ``stat`` calls every ``interval`` seconds) and reloads once a change has held still
for one interval, so a build in progress is not reopened after every file. The first service
may be a :class:`~klea_utils.stores.serve.lifecycle.startup.StartingService` still loading:
a reload waits for it, and watching starts once it is loaded.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import time
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from klea_utils.stores.serve.core.options import ServeOptions
from klea_utils.stores.serve.core.params import SearchParams
from klea_utils.stores.serve.core.service import Service
from klea_utils.stores.serve.lifecycle.startup import StartingService
from klea_utils.stores.serve.operations.klea_service import KleaService
from klea_utils.stores.serve.operations.opening import open_service
from klea_utils.stores.serve.papers.citations import citation_paths
from pydantic import BaseModel

__all__ = ["LiveService", "store_files"]

_log = logging.getLogger(__name__)

Fingerprint = tuple[tuple[str, int, int] | tuple[str, int] | tuple[str], ...]
_FTS5 = "fts5:"
_SIDECAR = ".klea.json"  # klea-ingest's manifest next to a BM25 corpus or FTS5 index
_SQLITE_HEADER = b"SQLite format 3\x00"


def store_files(options: ServeOptions, config_file: Path | None = None) -> list[Path]:
    """The files whose change means the served stores changed.

    The stores configuration, each BM25 corpus and ``fts5:`` index with its sidecar
    manifest, each Chroma store's ``chroma.sqlite3``, the search index and the vector
    memory, and each domain's citation-links file. Server stores (Qdrant, PGVector) have no file to
    watch: ``POST /api/reload`` reopens them.
    """
    files = [config_file] if config_file is not None else []
    for domain in options.config.domains.values():
        for store in domain.bm25_stores:
            path = Path(store.path.removeprefix(_FTS5))
            files += [path, path.with_name(path.name + _SIDECAR)]
        for vector in domain.vector_stores:
            scheme, _, location = vector.path.partition(":")
            if scheme == "chroma":
                files.append(Path(location).expanduser() / "chroma.sqlite3")
    files += [p for p in (options.fts5_index, options.vectors) if p is not None]
    files += citation_paths(options.config)
    return list(dict.fromkeys(files))


def _is_sqlite(path: Path) -> bool:
    try:
        with path.open("rb") as handle:
            return handle.read(16) == _SQLITE_HEADER
    except OSError:
        return False


def fingerprint(files: Iterable[Path]) -> Fingerprint:
    """Size and modification time of each file (a missing one counts as such).

    An SQLite file counts by its size alone: opening one touches it (Chroma's client
    does on every open), so its time would make each reload trigger the next; a store
    written grows, and its manifest beside it changes time too.
    """
    stamps: list[tuple[str, int, int] | tuple[str, int] | tuple[str]] = []
    for path in files:
        try:
            stat = os.stat(path)
        except OSError:
            stamps.append((str(path),))
            continue
        if _is_sqlite(path):
            stamps.append((str(path), stat.st_size))
        else:
            stamps.append((str(path), stat.st_mtime_ns, stat.st_size))
    return tuple(stamps)


def _forget_cached_clients() -> None:
    """Let the next Chroma client read its store as it is now.

    Chroma keeps one system per folder for the process, with the vector index as it was
    when first opened; without this a reopened store would answer from the old index.
    Clients already open keep working.
    """
    try:
        from chromadb.api.shared_system_client import SharedSystemClient
    except ImportError:
        return
    SharedSystemClient.clear_system_cache()


@dataclass
class _Generation:
    service: KleaService | StartingService
    number: int
    active: int = 0
    """Requests running on ``service``: it is closed once they have answered."""


class LiveService:
    """The current :class:`KleaService`, swapped for a freshly opened one on reload.

    The :class:`~klea_utils.stores.serve.core.service.Service` of a running server: each
    operation runs wholly on the service current when it was called, which counts it, so
    a retired service is closed once its last request has answered.

    ``load_options`` reads the stores afresh (the command line re-reads its stores
    configuration); ``config_file`` is watched besides the stores; ``interval`` is the
    polling period of :meth:`watch` (0: no polling, ``POST /api/reload`` only).
    """

    def __init__(
        self,
        service: KleaService | StartingService,
        load_options: Callable[[], ServeOptions],
        *,
        config_file: Path | None = None,
        interval: float = 2.0,
        drain_timeout: float = 300.0,
        progress: Callable[[str], None] = lambda _: None,
    ) -> None:
        self._generation = _Generation(service, 1)
        self._load_options = load_options
        self.config_file = config_file
        self.interval = interval
        self.drain_timeout = drain_timeout
        self._progress = progress
        self._lock = asyncio.Lock()
        self._tasks: set[asyncio.Task[None]] = set()
        self._watcher: asyncio.Task[None] | None = None

    @property
    def current(self) -> KleaService | StartingService:
        """The service new requests run on."""
        return self._generation.service

    @property
    def generation(self) -> int:
        """How many services have been opened (1 before the first reload)."""
        return self._generation.number

    # -- the operations, each on the current service -------------------------------------

    @contextlib.contextmanager
    def _request(self) -> Iterator[Service]:
        """The current service, counted as in use until the block ends (typed as the
        protocol, so mypy checks both kinds of service against it)."""
        generation = self._generation
        generation.active += 1
        try:
            yield generation.service
        finally:
            generation.active -= 1

    @property
    def options(self) -> ServeOptions:
        """The current service's options."""
        return self.current.options

    @property
    def query_schema(self) -> type[BaseModel]:
        """The current service's query schema (a reload may change its filter fields)."""
        return self.current.query_schema

    def to_metadata_filter(self, values: dict[str, Any] | None) -> dict[str, Any] | None:
        """:meth:`KleaService.to_metadata_filter` of the current service."""
        return self.current.to_metadata_filter(values)

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
        """:meth:`KleaService.retrieve` on the current service."""
        with self._request() as service:
            return await service.retrieve(
                query,
                k=k,
                filter=filter,
                domains=domains,
                context=context,
                context_tokens=context_tokens,
            )

    async def search(self, params: SearchParams) -> dict[str, Any]:
        """:meth:`KleaService.search`, on the current service."""
        with self._request() as service:
            return await service.search(params)

    async def graph(
        self, record_ids: Sequence[str], edge_kinds: Sequence[str] | None = None
    ) -> dict[str, Any]:
        """:meth:`KleaService.graph` on the current service."""
        with self._request() as service:
            return await service.graph(record_ids, edge_kinds)

    async def get_document(self, file_name: str) -> dict[str, Any]:
        """:meth:`KleaService.get_document` on the current service."""
        with self._request() as service:
            return await service.get_document(file_name)

    async def page_image(
        self, file_name: str, page: int, *, chunk: str | None = None, dpi: int = 150
    ) -> bytes:
        """:meth:`KleaService.page_image` on the current service."""
        with self._request() as service:
            return await service.page_image(file_name, page, chunk=chunk, dpi=dpi)

    async def paper_file(self, file_name: str) -> Path:
        """:meth:`KleaService.paper_file` on the current service."""
        with self._request() as service:
            return await service.paper_file(file_name)

    async def citations(self, file_name: str) -> dict[str, Any]:
        """:meth:`KleaService.citations` on the current service."""
        with self._request() as service:
            return await service.citations(file_name)

    async def facets(
        self, keys: Sequence[str] | None = None, query: str | None = None
    ) -> dict[str, Any]:
        """:meth:`KleaService.facets` on the current service."""
        with self._request() as service:
            return await service.facets(keys, query)

    async def health(self) -> dict[str, Any]:
        """:meth:`KleaService.health` of the current service."""
        with self._request() as service:
            return await service.health()

    # -- reloading -----------------------------------------------------------------------

    def watched(self) -> list[Path]:
        """The files :meth:`watch` polls for the current stores."""
        return store_files(self.current.options, self.config_file)

    def _loaded_current(self) -> KleaService:
        """The current service, waiting for it when it is still loading at start-up."""
        current = self.current
        return current.wait() if isinstance(current, StartingService) else current

    def _open_next(self) -> KleaService:
        current = self._loaded_current()
        options = self._load_options()
        # A configuration keeps the stores it opened (``loaded_object``), and the command
        # line's configuration file is cached while unchanged: open from a fresh copy.
        config = type(options.config).model_validate(options.config.model_dump())
        options = replace(options, config=config)
        model = current.pipeline.vector.embeddings
        if model is not None:  # the model does not change with the stores: keep it loaded
            options = replace(options, embedding_model=model)
        _forget_cached_clients()
        return open_service(options, progress=self._progress)

    async def reload(self, reason: str = "requested") -> dict[str, Any]:
        """Open the stores as they are now and serve them from the next request on.

        Raises:
            Exception: Whatever opening the stores raised; the current service stays.
        """
        async with self._lock:
            started = time.perf_counter()
            self._progress(f"reloading the stores ({reason}) ...")
            service = await asyncio.to_thread(self._open_next)
            old = self._generation
            self._generation = _Generation(service, old.number + 1)
            self._spawn(self._retire(old))
            seconds = time.perf_counter() - started
            self._progress(f"serving the reloaded stores (generation {old.number + 1})")
            return {"reloaded": True, "generation": old.number + 1, "seconds": round(seconds, 2)}

    async def _retire(self, old: _Generation) -> None:
        deadline = time.monotonic() + self.drain_timeout
        while old.active and time.monotonic() < deadline:
            await asyncio.sleep(0.05)
        if old.active:
            _log.warning("closing stores with %d request(s) still running", old.active)
        await old.service.aclose()

    def _spawn(self, coroutine: Any) -> None:
        task = asyncio.get_running_loop().create_task(coroutine)
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    async def watch(self) -> None:
        """Reload whenever the watched files changed and then held still for an interval.

        While the stores still load at start-up, watching starts once they are open
        (opening Chroma touches its files).
        """
        current = self.current
        if isinstance(current, StartingService):
            with contextlib.suppress(Exception):  # a failed start stops the server
                await current.ready()
        last = fingerprint(self.watched())
        pending: Fingerprint | None = None
        while True:
            await asyncio.sleep(self.interval)
            now = fingerprint(self.watched())
            if now == last or now != pending:
                pending = None if now == last else now
                continue
            try:
                await self.reload("the stores changed on disk")
            except Exception as exc:  # keep serving what is open; a later change retries
                self._progress(
                    f"warning: the stores could not be reopened ({exc}); still serving "
                    "the previous ones"
                )
            # A change made while reopening shows as a change from ``now`` and reloads
            # again; a new configuration may name other files, whose state starts here.
            files = self.watched()
            same = [Path(stamp[0]) for stamp in now] == files
            last, pending = (now if same else fingerprint(files)), None

    def start_watching(self) -> None:
        """Start :meth:`watch` on the running loop (nothing when ``interval`` is 0)."""
        if self.interval > 0 and self._watcher is None:
            self._watcher = asyncio.get_running_loop().create_task(self.watch())

    async def aclose(self) -> None:
        """Stop watching, let retiring services finish, close the current one."""
        if self._watcher is not None:
            self._watcher.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._watcher
        if self._tasks:
            await asyncio.gather(*self._tasks, return_exceptions=True)
        await self.current.aclose()
