"""Files that cannot be ingested are named and skipped; the run goes on (issue 19, item 4)."""

from __future__ import annotations

import logging
import os
import stat
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest
from ingest_corpus import sample_paragraphs, write_markdown
from klea_utils.stores.ingestion import StoresBuilder
from klea_utils.stores.utils import instantiate_vector_store
from langchain_core.embeddings import DeterministicFakeEmbedding

BAD_NAME = os.fsdecode(b"caf\xe9.md")  # Latin-1 bytes: not a UTF-8 name


def _hostile_folder(source: Path) -> None:
    write_markdown(source / "good.md", "Good", sample_paragraphs(2, seed=1))
    (source / BAD_NAME).write_bytes(b"# Cafe\n\nLatin-1 named file.\n")
    (source / "dangling.md").symlink_to(source / "missing.md")
    (source / "loop1.md").symlink_to(source / "loop2.md")
    (source / "loop2.md").symlink_to(source / "loop1.md")
    (source / "up").symlink_to(source, target_is_directory=True)


@pytest.mark.slow
def test_bad_names_and_links_are_named_and_the_build_goes_on(
    tmp_path: Path, offline: None, caplog: pytest.LogCaptureFixture
) -> None:
    source = tmp_path / "papers"
    _hostile_folder(source)
    builder = StoresBuilder(
        "huggingface:all-MiniLM-L6-v2",
        logging.getLogger("klea-test-files"),
        max_tokens=128,
        embeddings=DeterministicFakeEmbedding(size=16),
    )
    uri = f"chroma:{tmp_path / 'store'}"
    with caplog.at_level(logging.WARNING):
        builder.build(str(source), uri, "papers", worker_batch_size=5)
    log = caplog.text
    assert "caf\\xe9.md: the file name is not valid UTF-8" in log
    assert "dangling.md: a broken symbolic link" in log
    assert "loop1.md: a symbolic link loop" in log
    assert "up: a symbolic link to a folder; not followed" in log
    store = instantiate_vector_store(
        uri, "papers", DeterministicFakeEmbedding(size=16), builder.logger
    )
    ids = store.get()["ids"]
    assert ids
    assert {i.split(":")[0] for i in ids} == {"good.md"}


_AS_OTHER_USER = """
import logging, sys
from pathlib import Path
from klea_utils.stores.source_files import find_source_files
logging.basicConfig(level=logging.WARNING, format="%(levelname)s %(message)s")
files = find_source_files(Path(sys.argv[1]), logger=logging.getLogger("walk"))
print("FOUND", sorted(p.name for p in files))
"""


@pytest.mark.slow
def test_unreadable_file_and_folder_are_named(tmp_path: Path) -> None:
    """Run the walk as an unprivileged user (root reads everything) when the tests are root."""
    base = Path(tempfile.mkdtemp(prefix="klea-perm-"))
    try:
        base.chmod(0o755)
        source = base / "papers"
        write_markdown(source / "good.md", "Good", sample_paragraphs(1, seed=1))
        write_markdown(source / "secret.md", "Secret", sample_paragraphs(1, seed=2))
        write_markdown(source / "locked" / "inner.md", "Inner", sample_paragraphs(1, seed=3))
        (source / "secret.md").chmod(0)
        (source / "locked").chmod(0)
        for folder in (source,):
            folder.chmod(0o755)
        script = base / "walk.py"
        script.write_text(_AS_OTHER_USER)
        script.chmod(stat.S_IRUSR | stat.S_IRGRP | stat.S_IROTH)
        user = 65534 if os.geteuid() == 0 else None
        env = {**os.environ, "HOME": str(base), "PYTHONWARNINGS": "ignore"}
        run = subprocess.run(
            [sys.executable, str(script), str(source)],
            capture_output=True,
            text=True,
            env=env,
            user=user,
            timeout=300,
            check=False,
        )
        assert run.returncode == 0, run.stderr
        assert "FOUND ['good.md']" in run.stdout
        assert "secret.md: the file cannot be read (permission denied); skipped" in run.stderr
        assert "locked: cannot list this folder (Permission denied)" in run.stderr
    finally:
        (base / "papers" / "locked").chmod(0o755)
        subprocess.run(["rm", "-rf", str(base)], check=False)
