"""klea-stores-create --fts5-stemming: a stemmed FTS5 index at ingestion time, and back."""

from __future__ import annotations

import asyncio
import json
import logging
from collections.abc import Iterator
from pathlib import Path

import pytest
from ingest_corpus import write_markdown
from klea_utils.stores.cli import app
from typer.testing import CliRunner, Result

ENV = {"KLEA_DOI_LOOKUP": "0", "COLUMNS": "200"}


def _cli(*args: str) -> Result:
    """Run klea-stores-create in this process (the embedding model loads once)."""
    result = CliRunner().invoke(app, list(args), env=ENV)
    if result.exception is not None and not isinstance(result.exception, SystemExit):
        raise result.exception
    return result


@pytest.fixture(autouse=True)
def _root_logging() -> Iterator[None]:
    """Undo the CLI's ``logging.basicConfig(force=True)`` (its handler holds CliRunner's stream)."""
    root = logging.getLogger()
    handlers, level = root.handlers[:], root.level
    yield
    root.handlers[:] = handlers
    root.setLevel(level)


def _inspect(path: Path, *words: str) -> tuple[bool, bool, dict[str, list[str]]]:
    """``(stemming, integrity_check(), {word: hit ids})`` of the index at ``path``, opened as-is."""
    from sci_etl_core.search import AsyncSqliteFts5Store
    from sci_etl_core.search.query import Term

    async def read() -> tuple[bool, bool, dict[str, list[str]]]:
        store = AsyncSqliteFts5Store(path)  # stemming=None: follow the file
        try:
            assert await store.count() > 0
            hits = {w: [h.record_id for h in await store.search(Term(w))] for w in words}
            return store.stemming, await store.integrity_check(), hits
        finally:
            await store.aclose()

    return asyncio.run(read())


@pytest.mark.slow
def test_build_with_fts5_stemming_then_switch_it_off(tmp_path: Path, offline: None) -> None:
    source = tmp_path / "papers"
    write_markdown(
        source / "enzymes.md",
        "Enzyme Kinetics",
        ["Competitive inhibition of the enzyme slows the reaction in every assay."],
    )
    fts = tmp_path / "papers.fts5.sqlite"
    common = ["--store", f"chroma:{tmp_path / 'store'}", "--collection", "papers"]
    common += ["--fts5-store", str(fts)]

    built = _cli("build", str(source), *common, "--no-ocr", "--fts5-stemming")
    assert built.exit_code == 0, built.output
    timing_lines = [line for line in built.output.splitlines() if line.startswith("Timing ")]
    assert [line.split(":")[0] for line in timing_lines] == [
        "Timing conversion",
        "Timing store",
        "Timing rest",
        "Timing build",
    ]
    assert "1 chunks," in timing_lines[1]
    assert "per CPU-min" in timing_lines[1]
    record = json.loads((source / ".klea-cache" / "papers.timing.json").read_text())
    assert set(record["phases"]) == {"conversion", "store", "rest"}
    assert record["phases"]["store"]["chunks"] == 1
    assert record["total"]["cpu_s"] > 0
    stemming, healthy, hits = _inspect(fts, "inhibiting", "inhibition")
    assert stemming is True
    assert healthy
    assert hits["inhibiting"]
    assert hits["inhibiting"] == hits["inhibition"]
    assert all(h.startswith("enzymes.md:") for h in hits["inhibiting"])

    # the same (unchanged) corpus again, now without stemming: the index is re-tokenized
    stored = _cli("store", str(source), *common, "--no-fts5-stemming")
    assert stored.exit_code == 0, stored.output
    stemming, healthy, hits = _inspect(fts, "inhibiting", "inhibition")
    assert stemming is False
    assert healthy
    assert hits["inhibiting"] == []
    assert hits["inhibition"]

    # no flag: the index keeps how it was built
    again = _cli("store", str(source), *common)
    assert again.exit_code == 0, again.output
    assert _inspect(fts)[0] is False


@pytest.mark.parametrize("command", ["build", "store"])
@pytest.mark.parametrize(
    "flag",
    ["--fts5-stemming", "--no-fts5-stemming", "--fts5-multiscript", "--no-fts5-multiscript"],
)
def test_fts5_stemming_needs_fts5_store(tmp_path: Path, command: str, flag: str) -> None:
    (tmp_path / "a.md").write_text("# A\n\ntext\n")
    args = [command, str(tmp_path), "--store", f"chroma:{tmp_path / 's'}", "--collection", "c"]
    result = CliRunner().invoke(app, [*args, flag], env={"COLUMNS": "200"})
    assert result.exit_code == 2
    assert f"Invalid value for '{flag}'" in result.output
    assert "give --fts5-store PATH too" in result.output
    assert not (tmp_path / "s").exists()
