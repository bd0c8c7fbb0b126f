"""What every command shares: the two consoles, error exits, and running async work.

Data goes to standard output and everything else (progress, warnings, errors) to
standard error, so ``sci-etl-search search ... --json | jq`` always reads clean JSON.
"""

from __future__ import annotations

import asyncio
import json
import sys
from collections.abc import Awaitable, Callable
from typing import Any, NoReturn, TypeVar

import typer
from rich.console import Console

from sci_etl_core.exceptions import (
    EmbeddingError,
    EmbeddingStoreError,
    SciEtlError,
    SearchQueryError,
)

__all__ = [
    "EXIT_FAILURE",
    "EXIT_USAGE",
    "err",
    "fail",
    "fail_query",
    "out",
    "print_json",
    "run_async",
    "warn",
]

EXIT_FAILURE = 1
"""Exit status when the work failed: bad input data, a store or the model."""

EXIT_USAGE = 2
"""Exit status when the command line is wrong: an option value or the query."""

PROGRAM = "sci-etl-search"

out = Console(soft_wrap=True)
"""Standard output: results only."""

err = Console(stderr=True, soft_wrap=True)
"""Standard error: progress, warnings and errors."""

T = TypeVar("T")


def fail(message: str, code: int = EXIT_FAILURE) -> NoReturn:
    """Print ``message`` as an error on standard error and exit with ``code``."""
    err.print(f"{PROGRAM}: error: {message}", markup=False, highlight=False)
    raise typer.Exit(code)


def warn(message: str) -> None:
    """Print ``message`` as a warning on standard error."""
    err.print(f"{PROGRAM}: warning: {message}", markup=False, highlight=False)


def fail_query(error: SearchQueryError, query: str) -> NoReturn:
    """Report a malformed query with a caret under the fault, and exit with status 2."""
    err.print(f"{PROGRAM}: error: invalid query: {error.message}", markup=False, highlight=False)
    err.print(error.caret_line(query), markup=False, highlight=False)
    raise typer.Exit(EXIT_USAGE)


def print_json(value: Any) -> None:
    """Write ``value`` to standard output as one JSON document and a newline."""
    sys.stdout.write(json.dumps(value, ensure_ascii=False, indent=2) + "\n")
    sys.stdout.flush()


def run_async(work: Callable[[], Awaitable[T]]) -> T:
    """Run the coroutine ``work()`` and turn library failures into error exits.

    A store or embedding failure prints its message and exits with status 1, and a
    :class:`ValueError` (a value the library rejected) exits with status 2.
    """

    async def main() -> T:
        return await work()

    try:
        return asyncio.run(main())
    except SearchQueryError as error:
        fail(f"invalid query: {error}", EXIT_USAGE)
    except EmbeddingStoreError as error:
        fail(f"vector memory: {error}")
    except EmbeddingError as error:
        fail(f"embedder: {error}")
    except SciEtlError as error:
        fail(str(error))
    except ValueError as error:
        fail(str(error), EXIT_USAGE)
    except OSError as error:
        fail(str(error))
