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
from sci_etl_core.search._sqlite_schema import (
    MULTISCRIPT_KEY,
    SHADOW_FUNCTION,
    UNICODE61_TOKENIZE,
    fts_tokenize,
    is_multiscript,
    multiscript_key,
    settle_tokenizer,
)
from sci_etl_core.search.filters import tag_in_range
from sci_etl_core.search.multiscript import MultiscriptTokenizer, shadow_query, shadow_text
from sci_etl_core.search.query import Node
from sci_etl_core.search.stemming import FTS5_PORTER_TOKENIZE, PorterTokenizer
from sci_etl_core.search.tokenize import Tokenizer, Unicode61Tokenizer

__all__ = ["BUILT_KEYS", "IndexState", "read_built_keys", "tokenize_for"]

BUILT_KEYS = "facet_keys_built"
"""The ``index_settings`` row listing, as a JSON array, the facet keys tags are built for."""

_TWINS: dict[str, Tokenizer] = {
    UNICODE61_TOKENIZE: Unicode61Tokenizer(),
    FTS5_PORTER_TOKENIZE: PorterTokenizer(),
    multiscript_key(UNICODE61_TOKENIZE): MultiscriptTokenizer(),
    multiscript_key(FTS5_PORTER_TOKENIZE): PorterTokenizer(MultiscriptTokenizer()),
}


def tokenize_for(stemming: bool) -> str:
    """Return the FTS5 ``tokenize`` argument of an index built with or without stemming."""
    return FTS5_PORTER_TOKENIZE if stemming else UNICODE61_TOKENIZE


def resolve_key(stemming: str | None, multiscript: bool | None, found: str | None) -> str | None:
    """The index key asked for: each choice left ``None`` follows the file's key ``found``.

    ``stemming`` is the ``tokenize`` argument asked for (:func:`tokenize_for`), if any.
    ``None`` when nothing was asked for.
    """
    if stemming is None and multiscript is None:
        return None
    found_multiscript = found is not None and is_multiscript(found)
    found_tokenize = UNICODE61_TOKENIZE if found is None else found.split(" ", 1)[-1]
    if found is not None and not found_multiscript:
        found_tokenize = found
    tokenize = stemming or found_tokenize
    shadow = found_multiscript if multiscript is None else multiscript
    return multiscript_key(tokenize) if shadow else tokenize


class IndexState:
    """One store's settings and what its open file records, checked before each query."""

    def __init__(
        self,
        path: str,
        facet_keys: frozenset[str],
        weights: tuple[float, float, float],
        wanted_tokenize: str | None,
        wanted_multiscript: bool | None = None,
    ) -> None:
        self.path = path
        self.facet_keys = facet_keys
        self.weights = weights
        self.asked = (wanted_tokenize, wanted_multiscript)
        self.wanted_tokenize = resolve_key(wanted_tokenize, wanted_multiscript, None)
        self.file_tokenize: str | None = None
        self.built: frozenset[str] = frozenset()

    @property
    def key(self) -> str:
        """The index key queries follow: the file's, else the one asked for."""
        return self.file_tokenize or self.wanted_tokenize or UNICODE61_TOKENIZE

    @property
    def stemming(self) -> bool:
        """Whether queries match stemmed words: the file's tokenizer, else the one asked for."""
        return self.key.endswith(FTS5_PORTER_TOKENIZE)

    @property
    def multiscript(self) -> bool:
        """Whether the index holds multiscript shadow text (CJK bigrams, normalised Arabic)."""
        return is_multiscript(self.key)

    @property
    def tokenizer(self) -> Tokenizer:
        """The pure-Python twin of the index's tokenizer."""
        return _TWINS.get(self.key, _TWINS[UNICODE61_TOKENIZE])

    def fts_query(self, node: Node) -> Node:
        """The query FTS5 is asked: for a shadow index, every word written as shadow text."""
        return shadow_query(node) if self.multiscript else node

    def on_open(self, connection: sqlite3.Connection, found_version: int) -> None:
        """Settle the tokenizer and read the built facet keys of a newly opened file."""
        self.prepare_reader(connection)
        self.wanted_tokenize = resolve_key(*self.asked, fts_tokenize(connection))
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
        connection.create_function(SHADOW_FUNCTION, 1, _shadow_column, deterministic=True)

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
        if (
            found is not None
            and is_multiscript(found)
            and not found.startswith(f"{MULTISCRIPT_KEY} ")
        ):
            raise SearchStoreError(
                f"{self.path}: cannot query the text index: it was segmented by other "
                "multiscript rules than this library's; call rebuild_index() to re-tokenize it"
            )
        if wanted is not None and found is not None and wanted != found:
            raise SearchStoreError(
                f"{self.path}: cannot query the text index: {_mismatch(found, wanted)}"
            )

    def require_built(self, keys: Iterable[str]) -> None:
        """Refuse a filter or count by a key the file has no tags built for."""
        missing = sorted(set(keys) - self.built)
        if missing:
            raise SearchStoreError(
                f"{self.path}: cannot filter or count by {', '.join(map(repr, missing))}: "
                "the file has no tags built for it yet; call rebuild_tags()"
            )


def _shadow_column(value: str | None) -> str | None:
    """The SQL function a shadow index reads its text through: text to shadow text."""
    return shadow_text(value) if isinstance(value, str) else value


def _older_rules(key: str) -> bool:
    """Whether ``key`` is a shadow index segmented by another version of the rules."""
    return is_multiscript(key) and not key.startswith(f"{MULTISCRIPT_KEY} ")


def _mismatch(found: str, wanted: str) -> str:
    """Say how the file's index differs from the one asked for, and what to do."""
    stems, wants_stems = found.endswith(FTS5_PORTER_TOKENIZE), wanted.endswith(FTS5_PORTER_TOKENIZE)
    if stems != wants_stems:
        return (
            f"it was built {'with' if stems else 'without'} stemming but the store was "
            f"opened with stemming={wants_stems}; call rebuild_index() to re-tokenize it, "
            "or open it with stemming=None"
        )
    shadow = is_multiscript(found)
    return (
        f"it was built {'with' if shadow else 'without'} multiscript segmentation but the "
        f"store was opened with multiscript={not shadow}; call rebuild_index() to "
        "re-tokenize it, or open it with multiscript=None"
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
