"""One store run per collection at a time (issue 19, item 8)."""

from __future__ import annotations

import fcntl
import os
import subprocess
import sys
from pathlib import Path

import pytest
from ingest_store_support import make_builder, write_source
from klea_utils.stores.cli import app
from klea_utils.stores.ingest_exceptions import CollectionBusyError
from langchain_core.embeddings import DeterministicFakeEmbedding
from typer.testing import CliRunner


def _held_lock(path: Path) -> int:
    path.parent.mkdir(parents=True, exist_ok=True)
    fd = os.open(path, os.O_RDWR | os.O_CREAT)
    fcntl.flock(fd, fcntl.LOCK_EX)  # what a running build in another process holds
    return fd


def test_second_run_of_a_collection_is_refused(tmp_path: Path) -> None:
    source, uri = tmp_path / "src", f"chroma:{tmp_path / 'store'}"
    results = [write_source(source, "a.md", ["one paragraph about synapses"])]
    builder = make_builder(DeterministicFakeEmbedding(size=16))
    lock = source / ".klea-cache" / "papers.lock"
    fd = _held_lock(lock)
    try:
        with pytest.raises(CollectionBusyError, match=r"papers.*another run.*papers\.lock"):
            builder.store_all(iter(results), uri, "papers", source)
        # another collection of the same folder is not held up
        assert builder.store_all(iter(results), uri, "other", source).files_added == 1
    finally:
        os.close(fd)
    assert builder.store_all(iter(results), uri, "papers", source).files_added == 1


def test_cli_says_so_in_one_line(tmp_path: Path) -> None:
    source = tmp_path / "src"
    write_source(source, "a.md", ["one paragraph about synapses"])
    fd = _held_lock(source / ".klea-cache" / "papers.lock")
    try:
        result = CliRunner().invoke(
            app,
            ["store", str(source), "--store", f"chroma:{tmp_path / 's'}", "--collection", "papers"],
        )
    finally:
        os.close(fd)
    assert result.exit_code == 1
    assert "is being built by another run" in result.output
    assert "Traceback" not in result.output


def test_a_killed_run_leaves_no_lock(tmp_path: Path) -> None:
    lock = tmp_path / "src" / ".klea-cache" / "papers.lock"
    code = (
        "import sys, time\n"
        "from klea_utils.stores._ingest.store.collection_lock import collection_lock\n"
        "with collection_lock(sys.argv[1], 'papers'):\n"
        "    print('held', flush=True); time.sleep(60)\n"
    )
    with subprocess.Popen(
        [sys.executable, "-c", code, str(tmp_path / "src")], stdout=subprocess.PIPE, text=True
    ) as proc:
        assert proc.stdout is not None
        assert proc.stdout.readline().strip() == "held"
        fd = os.open(lock, os.O_RDWR)
        with pytest.raises(BlockingIOError):
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        proc.kill()
    fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)  # the kernel released it
    os.close(fd)
