"""A large file's embedding resumes where a killed run stopped; progress is logged off a
terminal (issue 19, item 5)."""

from __future__ import annotations

import logging
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from ingest_store_support import CountingEmbeddings, make_builder, write_source
from klea_utils.stores._ingest.store import store_progress
from klea_utils.stores.utils import instantiate_vector_store
from langchain_core.embeddings import DeterministicFakeEmbedding

pytestmark = pytest.mark.slow

_CHUNKS = 40

_KILLED_RUN = """
import sys, time
sys.path.insert(0, {tests!r})
from pathlib import Path
from ingest_store_support import make_builder, write_source
from langchain_core.embeddings import DeterministicFakeEmbedding

count = Path(sys.argv[3])

class Slow(DeterministicFakeEmbedding):
    def embed_documents(self, texts):
        time.sleep(0.3)
        vectors = super().embed_documents(texts)
        count.write_text(str(int(count.read_text() or 0) + len(texts)) if count.exists() else
                         str(len(texts)))
        return vectors

source = Path(sys.argv[1])
results = [write_source(source, "big.md", [f"big chunk {{i}} text" for i in range({n})])]
make_builder(Slow(size=16), batch=4).store_all(iter(results), sys.argv[2], "papers", source)
"""


def test_killed_large_file_resumes_where_it_stopped(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    source, uri, count = tmp_path / "src", f"chroma:{tmp_path / 'store'}", tmp_path / "count"
    script = tmp_path / "killed.py"
    script.write_text(_KILLED_RUN.format(tests=str(Path(__file__).parent), n=_CHUNKS))
    env = {**os.environ, "PYTHONWARNINGS": "ignore"}
    with subprocess.Popen(
        [sys.executable, str(script), str(source), uri, str(count)], env=env
    ) as proc:
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline and proc.poll() is None:
            if count.exists() and count.read_text() and int(count.read_text()) >= 16:
                break
            time.sleep(0.02)
        os.kill(proc.pid, signal.SIGKILL)
    assert 16 <= int(count.read_text()) < _CHUNKS

    monkeypatch.setattr(store_progress, "LOG_INTERVAL_S", 0.0)
    embeddings = CountingEmbeddings(DeterministicFakeEmbedding(size=16))
    builder = make_builder(embeddings, batch=4)
    builder.logger.setLevel(logging.INFO)
    results = [write_source(source, "big.md", [f"big chunk {i} text" for i in range(_CHUNKS)])]
    with caplog.at_level(logging.INFO):
        summary = builder.store_all(iter(results), uri, "papers", source)
    assert summary.files_resumed == 1
    assert 0 < embeddings.embedded <= _CHUNKS - 12  # at least three batches were kept
    assert "resuming an interrupted file" in caplog.text
    assert "Storing big.md: " in caplog.text
    assert f"of {_CHUNKS} chunk(s) embedded" in caplog.text
    store = instantiate_vector_store(uri, "papers", embeddings, builder.logger)
    got = store.get()
    assert sorted(got["ids"]) == sorted(f"big.md:{i}" for i in range(_CHUNKS))
    assert dict(zip(got["ids"], got["documents"], strict=True))["big.md:7"] == "big chunk 7 text"
