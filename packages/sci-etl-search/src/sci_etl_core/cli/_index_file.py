"""Say what is wrong with a text index file before a command trusts it.

A command reading ``--db`` first learns which facet keys the file is tagged by; a file
that is damaged, is some other SQLite database, or cannot be opened at all would
otherwise look like an index with no keys ("key 'year' is not tagged"), and a damaged
one like an index that ``rebuild-index`` can repair. :func:`index_file_problem` opens the
file read-only and names the fault in words.
"""

from __future__ import annotations

import sqlite3
from pathlib import Path

__all__ = ["index_file_problem"]

_FTS_TABLE = "documents_fts"


def index_file_problem(db: Path, *, full_check: bool = False) -> str | None:
    """What is wrong with the text index file ``db``, or ``None`` when it looks sound.

    ``full_check`` runs ``PRAGMA integrity_check`` over every page (``maintain check``);
    otherwise only the schema is read, which is cheap.
    """
    try:
        connection = sqlite3.connect(f"{db.resolve().as_uri()}?mode=ro", uri=True)
    except sqlite3.Error as error:
        return _unreadable(error)
    try:
        if full_check:
            rows = [str(row[0]) for row in connection.execute("PRAGMA integrity_check")]
            if rows != ["ok"]:
                return _damaged(rows[0])
        tables = {str(row[0]) for row in connection.execute("SELECT name FROM sqlite_master")}
    except sqlite3.DatabaseError as error:
        text = str(error)
        if "not a database" in text or "malformed" in text or "corrupt" in text:
            return _damaged(text)
        return _unreadable(error)
    finally:
        connection.close()
    if _FTS_TABLE not in tables:
        return (
            "is an SQLite database but not a sci-etl-search text index "
            f"(it has no {_FTS_TABLE} table)"
        )
    return None


def _damaged(detail: str) -> str:
    return (
        f"the file is damaged ({detail}); rebuild-index cannot repair it: restore it from "
        "a backup, or delete it and index the sources again"
    )


def _unreadable(error: sqlite3.Error) -> str:
    return (
        f"the file cannot be opened ({error}); check that it and its folder are readable "
        "(SQLite also needs to read the -wal and -shm files beside it)"
    )
