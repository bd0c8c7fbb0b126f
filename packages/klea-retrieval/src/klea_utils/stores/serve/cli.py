"""``klea-serve``: load the stores once, then answer agents over MCP and people over HTTP.

Usage::

    klea-serve [--stores-config FILE | --store COLLECTION=URI ... --bm25-store PATH ...]
               [--fts5-index INDEX.sqlite [--vectors VECTORS.sqlite]] [--papers FOLDER]
               [--embedding-model SPEC] [--rerank MODEL] [-k N]
               [--mcp | --host 127.0.0.1 --port 8765 [--token ... | --no-auth]
                        [--allowed-host NAME ...] [--cors-origin ORIGIN ...]]

``--mcp`` speaks MCP over stdio (for an agent that starts the server itself); otherwise
an HTTP server answers the JSON API under ``/api``, the search page at ``/`` and MCP's
streamable HTTP transport at ``/mcp``, behind the checks of
:mod:`klea_utils.stores.serve.http.access`. The HTTP server opens its socket before the
stores and models load (:mod:`klea_utils.stores.serve.lifecycle.startup`): ``/api/health`` says
when they are ready, the other routes wait for them. Progress lines go to stderr. Exit
status, as for the other command lines: 0 on a clean stop; 1 when the work fails (a store,
index or model cannot load, a missing extra), with one ``klea-serve: error:`` line on
stderr; 2 for bad arguments (a usage message, or one line for a stores configuration,
store argument or access setting that is wrong, such as a non-loopback ``--host`` without
a token).
"""

from __future__ import annotations

import contextlib
import functools
import logging
import os
import sys
from collections.abc import Sequence
from pathlib import Path
from types import SimpleNamespace
from typing import TYPE_CHECKING, Annotated

import typer
from klea_utils.stores._retrieval.cli_options import (
    Bm25Stores,
    Context,
    ContextTokens,
    Domains,
    Quiet,
    Rerank,
    StoreUris,
    Verbose,
    Version,
    check_context,
    log_level,
    run_app,
)

if TYPE_CHECKING:
    from klea_utils.stores.config import RetrieverConfig
    from klea_utils.stores.serve.core.options import ServeOptions
    from klea_utils.stores.serve.http.access import AccessPolicy
    from klea_utils.stores.serve.operations.klea_service import KleaService

__all__ = ["app", "default_fts5_index", "main"]

DEFAULT_PORT = 8765
# Literals here so that --help imports nothing heavy; a test keeps them equal to the constants.
_STORES_ENV = "KLEA_STORES_CONFIG_FILE"
_TOKEN_ENV = "KLEA_SERVE_TOKEN"

_HELP = f"""Serve the stores to agents (MCP) and people (a search page), loaded once.

Stores: --stores-config FILE, or --store COLLECTION=URI and --bm25-store PATH (both \
repeatable), or the file named by ${_STORES_ENV}.

Access: the HTTP server answers only requests whose Host is a loopback name, the --host \
it binds or an --allowed-host. Binding anything but loopback needs a token (--token, \
--token-file or ${_TOKEN_ENV}), sent as "Authorization: Bearer TOKEN" to /api and /mcp, \
or --no-auth to serve without one on purpose.

Exit status: 0 clean stop; 1 a store, index or model could not load; 2 usage error (a bad \
option, stores configuration, store argument or access setting).
"""

app = typer.Typer(
    name="klea-serve",
    add_completion=False,
    pretty_exceptions_enable=False,
    rich_markup_mode=None,
    context_settings={"help_option_names": ["-h", "--help"]},
)


def default_fts5_index(config: RetrieverConfig) -> Path | None:
    """The first ``fts5:`` BM25 store of ``config``, the default search index."""
    from klea_utils.stores.retrieval.bm25 import FTS5_SCHEME

    for domain in config.domains.values():
        for store in domain.bm25_stores:
            if store.path.startswith(FTS5_SCHEME):
                return Path(store.path[len(FTS5_SCHEME) :])
    return None


def _progress(message: str) -> None:
    print(f"klea-serve: {message}", file=sys.stderr, flush=True)


def _error(message: object, status: int) -> typer.Exit:
    """Print one ``klea-serve: error:`` line on stderr; the exit to raise with ``status``."""
    text = " ".join(str(message).split()) or type(message).__name__
    print(f"klea-serve: error: {text}", file=sys.stderr, flush=True)
    return typer.Exit(status)


def _configure_logging(verbose: int, quiet: bool) -> None:
    level = log_level(verbose, quiet)
    logging.basicConfig(
        level=level, format="%(levelname)s %(name)s: %(message)s", stream=sys.stderr, force=True
    )
    for name in ("httpx", "chromadb", "sentence_transformers", "mcp", "uvicorn.access"):
        logging.getLogger(name).setLevel(max(level, logging.WARNING))


@app.command(help=_HELP)
def serve(
    stores_config: Annotated[
        Path | None,
        typer.Option(
            "--stores-config",
            "--stores",
            metavar="FILE",
            help=f"Stores configuration JSON file (default: ${_STORES_ENV}).",
        ),
    ] = None,
    store: StoreUris = None,
    bm25_store: Bm25Stores = None,
    domain: Domains = None,
    fts5_index: Annotated[
        Path | None,
        typer.Option(
            "--fts5-index",
            metavar="INDEX",
            help="FTS5 index for Boolean search (default: the first fts5: BM25 store).",
        ),
    ] = None,
    vectors: Annotated[
        Path | None,
        typer.Option(
            "--vectors", metavar="SQLITE", help="sci-etl vector memory for hybrid search."
        ),
    ] = None,
    papers: Annotated[
        Path | None,
        typer.Option(
            "--papers",
            metavar="FOLDER",
            exists=True,
            file_okay=False,
            dir_okay=True,
            help="The folder the stores were built from: serves its papers' pages (PNG, "
            "the passage highlighted) and files.",
        ),
    ] = None,
    embedding_model: Annotated[
        str | None,
        typer.Option(
            "--embedding-model",
            metavar="SPEC",
            help="provider:model spec (default: the one the stores configuration names, "
            "else the packaged all-MiniLM-L6-v2).",
        ),
    ] = None,
    rerank: Rerank = None,
    context: Context = None,
    context_tokens: ContextTokens = None,
    top_k: Annotated[
        int, typer.Option("-k", "--top-k", min=1, help="Passages per store and domain.")
    ] = 5,
    leg_timeout: Annotated[
        float,
        typer.Option(
            "--leg-timeout",
            metavar="SECONDS",
            help="Leave a store leg that has not answered after this long out of the answer "
            "(0: wait).",
        ),
    ] = 20.0,
    mcp: Annotated[bool, typer.Option("--mcp", help="Speak MCP over stdio.")] = False,
    host: Annotated[
        str, typer.Option("--host", help="Address to bind (anything but loopback needs a token).")
    ] = "127.0.0.1",
    port: Annotated[int, typer.Option("--port", min=0, max=65535, help="Port.")] = DEFAULT_PORT,
    token: Annotated[
        str | None,
        typer.Option(
            "--token",
            metavar="TOKEN",
            help=f"Bearer token required on /api and /mcp (default: ${_TOKEN_ENV}; at least "
            "16 characters).",
            show_default=False,
        ),
    ] = None,
    token_file: Annotated[
        Path | None,
        typer.Option("--token-file", metavar="FILE", help="Read the token from FILE."),
    ] = None,
    no_auth: Annotated[
        bool,
        typer.Option("--no-auth", help="Serve off loopback without a token, on purpose."),
    ] = False,
    allowed_host: Annotated[
        list[str] | None,
        typer.Option(
            "--allowed-host",
            metavar="NAME",
            help="Another Host name to answer, e.g. papers.lab.example (repeatable).",
        ),
    ] = None,
    cors_origin: Annotated[
        list[str] | None,
        typer.Option(
            "--cors-origin",
            metavar="ORIGIN",
            help="An origin whose pages may call the API, e.g. https://nb.lab.example "
            "(repeatable; default: none, no CORS headers).",
        ),
    ] = None,
    reload_interval: Annotated[
        float,
        typer.Option(
            "--reload-interval",
            metavar="SECONDS",
            min=0,
            help="Look this often whether the stores changed on disk, and serve them anew "
            "once they hold still (0: only on POST /api/reload).",
        ),
    ] = 2.0,
    max_body_bytes: Annotated[
        int,
        typer.Option(
            "--max-body-bytes",
            metavar="BYTES",
            min=1,
            help="Largest request body; a larger one answers 413.",
        ),
    ] = 1 << 20,
    max_query_chars: Annotated[
        int,
        typer.Option(
            "--max-query-chars",
            metavar="CHARS",
            min=1,
            help="Longest query or question; a longer one answers 422.",
        ),
    ] = 4096,
    max_concurrent: Annotated[
        int,
        typer.Option(
            "--max-concurrent",
            metavar="N",
            min=1,
            help="Requests in progress at once; past it a request answers 503 at once.",
        ),
    ] = 64,
    verbose: Verbose = 0,
    quiet: Quiet = False,
    version: Version = False,
) -> None:
    _configure_logging(verbose, quiet)
    check_context(context)
    if rerank is not None and not rerank.strip():
        raise _error("--rerank needs a cross-encoder model name or folder, got an empty value", 2)
    args = SimpleNamespace(**locals())  # every option above, by name
    if mcp:
        from klea_utils.stores.serve.mcp_tools import build_mcp_server

        service = _open(args)
        _progress("MCP on stdio")
        build_mcp_server(service).run("stdio")
        return
    access = _access(args)
    options = _checked_options(args)
    _check_files(options)
    _serve_http(options, args, access)


def _access(args: SimpleNamespace) -> AccessPolicy:
    """The access policy of the flags, checked before anything loads."""
    from klea_utils.stores.exceptions import ServeAccessError
    from klea_utils.stores.serve.http.access import access_policy, is_loopback

    try:
        policy = access_policy(
            args.host,
            token=args.token,
            token_file=args.token_file,
            no_auth=args.no_auth,
            allowed_hosts=args.allowed_host or (),
            cors_origins=args.cors_origin or (),
        )
    except ServeAccessError as exc:
        raise _error(exc, 2) from None
    if args.no_auth and not is_loopback(args.host):
        _progress(
            f"warning: serving {args.host} without authentication (--no-auth): anyone who "
            "reaches the port reads the library and calls the MCP tools"
        )
    elif policy.token is not None:
        _progress("a bearer token is required on /api and /mcp")
    return policy


def _options(args: SimpleNamespace) -> ServeOptions:
    """What to load, with the stores read afresh (a reload calls this again).

    Raises:
        StoreConfigError, MetadataFilterError, FileNotFoundError: The stores are given
            wrongly.
        KleaStoresError, OSError: A store cannot be read.
    """
    from klea_utils.stores.config import query_embedding_model
    from klea_utils.stores.serve.core.options import ServeLimits, ServeOptions
    from klea_utils.stores.store_args import retriever_config_from_args

    config = retriever_config_from_args(
        args.stores_config, args.store or [], args.bm25_store or [], domains=args.domain
    )
    return ServeOptions(
        config=config,
        embedding_model=query_embedding_model(config, args.embedding_model),
        rerank=args.rerank,
        k=args.top_k,
        fts5_index=args.fts5_index or default_fts5_index(config),
        vectors=args.vectors,
        papers=args.papers,
        leg_timeout=args.leg_timeout if args.leg_timeout > 0 else None,
        context=args.context,
        **({} if args.context_tokens is None else {"context_tokens": args.context_tokens}),
        limits=ServeLimits(
            max_body_bytes=args.max_body_bytes,
            max_query_chars=args.max_query_chars,
            max_concurrent=args.max_concurrent,
        ),
    )


def _checked_options(args: SimpleNamespace) -> ServeOptions:
    """The options of ``args`` with the serve extra present; usage errors exit 2."""
    from klea_utils.stores._retrieval.extras import import_extra, require_extra
    from klea_utils.stores.exceptions import KleaStoresError, MetadataFilterError, StoreConfigError

    try:
        require_extra("mcp", feature="klea-serve", extra="serve")  # imported after the socket
        import_extra("fastapi", feature="klea-serve", extra="serve")
        return _options(args)
    except (StoreConfigError, MetadataFilterError, FileNotFoundError) as exc:
        raise _error(exc, 2) from None  # the stores were given wrongly
    except (KleaStoresError, OSError) as exc:
        raise _error(exc, 1) from None  # a missing extra, a store that cannot be read


def _check_files(options: ServeOptions) -> None:
    """Exit 1 before the socket opens when the search index or vector memory is missing."""
    from klea_utils.stores.serve.operations.opening import check_search_files

    try:
        check_search_files(options)
    except FileNotFoundError as exc:
        raise _error(exc, 1) from None


def _load_error(exc: BaseException) -> typer.Exit:
    """The exit for a failure to open the stores: 2 when they are given wrongly, else 1."""
    from klea_utils.stores.exceptions import MetadataFilterError, StoreConfigError

    return _error(exc, 2 if isinstance(exc, StoreConfigError | MetadataFilterError) else 1)


def _open(args: SimpleNamespace) -> KleaService:
    """Load the stores and models of ``args`` now; usage errors exit 2, failures exit 1."""
    from klea_utils.stores.exceptions import KleaStoresError
    from klea_utils.stores.serve.operations.opening import open_service
    from sci_etl_core.exceptions import SciEtlError

    options = _checked_options(args)
    try:
        # stdout is the MCP channel under --mcp: nothing loading prints may land there.
        with contextlib.redirect_stdout(sys.stderr):
            return open_service(options)
    except (KleaStoresError, SciEtlError, OSError) as exc:
        raise _load_error(exc) from None  # a store, index or model that cannot load


def _config_file(args: SimpleNamespace) -> Path | None:
    """The stores configuration file in use, if any (watched for changes)."""
    if args.store or args.bm25_store:
        return None
    named = args.stores_config or os.environ.get(_STORES_ENV)
    return Path(named) if named else None


def _serve_http(options: ServeOptions, args: SimpleNamespace, access: AccessPolicy) -> None:
    """Open the socket first, then load the stores and models in the background.

    ``/api/health`` answers from the start and says whether the stores are loaded; the
    other routes wait for them. A load that fails stops the server with its error.
    """
    import uvicorn
    from klea_utils.stores.serve.http.app import build_app
    from klea_utils.stores.serve.lifecycle.reload import LiveService
    from klea_utils.stores.serve.lifecycle.startup import StartingService
    from klea_utils.stores.serve.operations.opening import open_service

    failures: list[BaseException] = []
    server: uvicorn.Server | None = None

    def stop(exc: BaseException) -> None:
        failures.append(exc)
        if server is not None:
            server.should_exit = True

    starting = StartingService(
        options, opener=functools.partial(open_service, progress=_progress), on_failure=stop
    )
    live = LiveService(
        starting,
        functools.partial(_options, args),
        config_file=_config_file(args),
        interval=args.reload_interval,
        progress=_progress,
    )
    app_ = build_app(live, host=args.host, port=args.port, access=access)
    server = uvicorn.Server(
        uvicorn.Config(
            app_,
            host=args.host,
            port=args.port,
            log_level="warning",
            # Connections (idle keep-alives included) past this answer 503 in uvicorn
            # itself; requests in progress are limited by the app (--max-concurrent).
            limit_concurrency=4 * args.max_concurrent,
        )
    )
    shown = f"[{args.host}]" if ":" in args.host else args.host
    _progress(f"http://{shown}:{args.port}/ (API docs /api/docs, MCP /mcp)")
    _progress("loading the stores in the background; /api/health says when they are ready")
    starting.start()
    server.run()
    if failures:
        raise _load_error(failures[0])


def main(argv: Sequence[str] | None = None) -> int:
    """Console entry point; returns the exit status (0 ok, 1 failed, 2 usage error)."""
    return run_app(app, argv, "klea-serve")


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
