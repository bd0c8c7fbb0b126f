"""A damaged, foreign or unopenable --db is named for what it is (issue 19, item 6)."""

from __future__ import annotations

import sqlite3
from pathlib import Path

from search_cli_support import index_corpus, run_cli


def _damage(db: Path) -> None:
    """Overwrite every page after the first two with garbage: the header still reads."""
    data = bytearray(db.read_bytes())
    page = int.from_bytes(data[16:18], "big") or 65536
    for offset in range(2 * page, len(data), page):
        data[offset : offset + page] = bytes([0xA5]) * min(page, len(data) - offset)
    db.write_bytes(bytes(data))


def test_check_says_a_damaged_file_is_damaged(tmp_path: Path) -> None:
    _, db = index_corpus(tmp_path)
    run_cli("maintain", "optimize", "--db", db)  # everything in the main file, no -wal
    for suffix in ("-wal", "-shm"):
        Path(f"{db}{suffix}").unlink(missing_ok=True)
    _damage(db)
    checked = run_cli("maintain", "check", "--db", db)
    assert checked.returncode == 1
    assert "the file is damaged" in checked.stderr
    assert "rebuild-index cannot repair it" in checked.stderr
    assert "repair it with: sci-etl-search maintain rebuild-index" not in checked.stderr
    assert "Traceback" not in checked.stderr


def test_facets_on_a_foreign_or_junk_file(tmp_path: Path) -> None:
    foreign = tmp_path / "other.db"
    with sqlite3.connect(foreign) as connection:
        connection.execute("CREATE TABLE notes (body TEXT)")
    connection.close()
    result = run_cli("facets", "year", "--db", foreign)
    assert result.returncode == 1
    assert "not a sci-etl-search text index" in result.stderr
    assert "not tagged" not in result.stderr

    junk = tmp_path / "junk.db"
    junk.write_bytes(b"this is no database at all " * 200)
    result = run_cli("facets", "year", "--db", junk)
    assert result.returncode == 1
    assert "the file is damaged" in result.stderr
    assert "not tagged" not in result.stderr
