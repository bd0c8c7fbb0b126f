"""What an FTS5 store file records about itself, and the checks it imposes (internal).

:class:`IndexState` holds one store's settings (path, facet keys, weights, the
tokenizer asked for) beside what the open file says (its tokenizer, the facet keys
it has tags built for). It is settled when the worker opens the file and consulted
by every operation, always on the worker thread.
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Iterable
from pathlib import Path

from sci_etl_core.exceptions import SearchStoreError
from sci_etl_core.search._sqlite_schema import UNICODE61_TOKENIZE, settle_tokenizer
from sci_etl_core.search.filters import tag_in_range
from sci_etl_core.search.query import Node
from sci_etl_core.search.stemming import FTS5_PORTER_TOKENIZE, PorterTokenizer
from sci_etl_core.search.tokenize import Tokenizer, Unicode61Tokenizer

__all__ = ["BUILT_KEYS", "IndexState", "read_built_keys", "tokenize_for"]

BUILT_KEYS = "facet_keys_built"
"""The ``index_settings`` row listing, as a JSON array, the facet keys tags are built for."""

_PORTER = PorterTokenizer()
_UNICODE61 = Unicode61Tokenizer()


def tokenize_for(stemming: bool) -> str:
    """Return the FTS5 ``tokenize`` argument of an index built with or without stemming."""
    return FTS5_PORTER_TOKENIZE if stemming else UNICODE61_TOKENIZE


class IndexState:
    """One store's settings and what its open file records, checked before each query."""

    def __init__(
        self,
        path: str,
        facet_keys: frozenset[str],
        weights: tuple[float, float, float],
        wanted_tokenize: str | None,
    ) -> None:
        self.path = path
        self.facet_keys = facet_keys
        self.weights = weights
        self.wanted_tokenize = wanted_tokenize
        self.file_tokenize: str | None = None
        self.built: frozenset[str] = frozenset()

    @property
    def stemming(self) -> bool:
        """Whether queries match stemmed words: the file's tokenizer, else the one asked for."""
        tokenize = self.file_tokenize or self.wanted_tokenize or UNICODE61_TOKENIZE
        return tokenize == FTS5_PORTER_TOKENIZE

    @property
    def tokenizer(self) -> Tokenizer:
        """The pure-Python twin of the index's tokenizer."""
        return _PORTER if self.stemming else _UNICODE61

    def on_open(self, connection: sqlite3.Connection, found_version: int) -> None:
        """Settle the tokenizer and read the built facet keys of a newly opened file."""
        self.prepare_reader(connection)
        self.file_tokenize = settle_tokenizer(connection, self.wanted_tokenize)
        row = connection.execute(
            'SELECT "value" FROM "index_settings" WHERE "name" = ?', (BUILT_KEYS,)
        ).fetchone()
        empty = connection.execute('SELECT NOT EXISTS (SELECT 1 FROM "documents")').fetchone()[0]
        if row is None or empty:
            if row is None or json.loads(row[0]) != sorted(self.facet_keys):
                self.write_built(connection, self.facet_keys)
            self.built = self.facet_keys
            return
        try:
            built = json.loads(row[0])
        except json.JSONDecodeError as exc:
            raise SearchStoreError(
                f"{self.path}: cannot open the text index: index_settings.{BUILT_KEYS} "
                f"is not JSON ({exc})"
            ) from exc
        self.built = frozenset(str(key) for key in built)

    @staticmethod
    def prepare_reader(connection: sqlite3.Connection) -> None:
        """Give a connection the SQL functions the store's queries call."""
        connection.create_function("tag_in_range", 3, tag_in_range, deterministic=True)

    def write_built(self, connection: sqlite3.Connection, keys: frozenset[str]) -> None:
        """Record ``keys`` as the facet keys whose tags the file holds."""
        connection.execute(
            'INSERT INTO "index_settings"("name", "value") VALUES (?, ?) '
            'ON CONFLICT("name") DO UPDATE SET "value" = excluded."value"',
            (BUILT_KEYS, json.dumps(sorted(keys))),
        )
        self.built = keys

    def require_tokenizer(self, query: Node | None) -> None:
        """Refuse a query while the file's tokenizer differs from the one asked for."""
        wanted, found = self.wanted_tokenize, self.file_tokenize
        if query is None:
            return
        if wanted is not None and found is not None and wanted != found:
            built = "with" if found == FTS5_PORTER_TOKENIZE else "without"
            raise SearchStoreError(
                f"{self.path}: cannot query the text index: it was built {built} stemming "
                f"but the store was opened with stemming={wanted == FTS5_PORTER_TOKENIZE}; "
                "call rebuild_index() to re-tokenize it, or open it with stemming=None"
            )

    def require_built(self, keys: Iterable[str]) -> None:
        """Refuse a filter or count by a key the file has no tags built for."""
        missing = sorted(set(keys) - self.built)
        if missing:
            raise SearchStoreError(
                f"{self.path}: cannot filter or count by {', '.join(map(repr, missing))}: "
                "the file has no tags built for it yet; call rebuild_tags()"
            )


def read_built_keys(path: str | Path) -> tuple[str, ...] | None:
    """Return the facet keys the file at ``path`` records as built, read-only, sorted.

    ``None`` when the file does not exist, is not readable as a text index, or records
    no keys yet.
    """
    file = Path(path)
    if not file.is_file():
        return None
    try:
        connection = sqlite3.connect(f"{file.resolve().as_uri()}?mode=ro", uri=True)
        try:
            row = connection.execute(
                'SELECT "value" FROM "index_settings" WHERE "name" = ?', (BUILT_KEYS,)
            ).fetchone()
        finally:
            connection.close()
        keys = json.loads(row[0]) if row is not None else None
    except (sqlite3.Error, TypeError, ValueError):
        return None
    if not isinstance(keys, list):
        return None
    return tuple(sorted(str(key) for key in keys))
