"""A `build --force` killed in the store phase, then plain re-runs (issue 19, items 3 and 5).

The BM25 corpus and the FTS5 index must converge to exactly the collection's chunks, and
the temporary corpus the kill left behind must be gone after the next run.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from ingest_store_support import make_builder, write_source
from klea_utils.stores.retrieval.bm25 import read_corpus
from klea_utils.stores.utils import instantiate_vector_store
from langchain_core.embeddings import DeterministicFakeEmbedding

pytestmark = pytest.mark.slow

_FILES = [f"f{i}.md" for i in range(6)]

_FORCED_RUN = """
import sys, time
sys.path.insert(0, {tests!r})
from pathlib import Path
from ingest_store_support import make_builder, write_source
from langchain_core.embeddings import DeterministicFakeEmbedding

class Slow(DeterministicFakeEmbedding):
    def embed_documents(self, texts):
        time.sleep(0.4)
        return super().embed_documents(texts)

source, uri, bm25, fts5 = (Path(a) for a in sys.argv[1:5])
texts = {{n: [f"{{n}} chunk {{j}} text" for j in range(3)] for n in {files!r}}}
results = [write_source(source, n, t) for n, t in texts.items()]
make_builder(Slow(size=16), batch=2).store_all(iter(results), f"chroma:{{uri}}", "papers",
          source, force=True, bm25_path=str(bm25), fts5_path=str(fts5))
"""


def _results(source: Path, names: list[str]) -> list:
    return [write_source(source, n, [f"{n} chunk {j} text" for j in range(3)]) for n in names]


def _fts5_ids(path: Path) -> set[str]:
    import asyncio

    from sci_etl_core.search import AsyncSqliteFts5Store

    async def read() -> set[str]:
        store = AsyncSqliteFts5Store(path)
        try:
            return set(await store.filter_ids())
        finally:
            await store.aclose()

    return asyncio.run(read())


def _complete(manifest: Path) -> int:
    try:
        (section,) = json.loads(manifest.read_text())["stores"].values()
    except (OSError, ValueError, KeyError):
        return 0
    return sum(e["complete"] for e in section["files"].values())


def test_killed_forced_build_then_plain_reruns_converge(tmp_path: Path) -> None:
    source, store = tmp_path / "src", tmp_path / "store"
    bm25, fts5 = tmp_path / "c.bm25", tmp_path / "c.fts5"
    uri = f"chroma:{store}"
    builder = make_builder(DeterministicFakeEmbedding(size=16), batch=2)
    kw = {"bm25_path": str(bm25), "fts5_path": str(fts5)}
    builder.store_all(iter(_results(source, [*_FILES, "gone.md"])), uri, "papers", source, **kw)
    (source / "gone.md").unlink()

    script = tmp_path / "forced.py"
    script.write_text(_FORCED_RUN.format(tests=str(Path(__file__).parent), files=_FILES))
    manifest = source / ".klea-cache" / "papers.manifest.json"
    env = {**os.environ, "PYTHONWARNINGS": "ignore"}
    args = [sys.executable, str(script), str(source), str(store), str(bm25), str(fts5)]
    seen_cleared = False
    with subprocess.Popen(args, env=env) as proc:
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline and proc.poll() is None:
            done = _complete(manifest)
            seen_cleared = seen_cleared or done < len(_FILES) + 1  # the old run had 7
            if seen_cleared and done >= 1:
                break
            time.sleep(0.02)
        os.kill(proc.pid, signal.SIGKILL)
    assert 1 <= _complete(manifest) < len(_FILES)
    assert list(tmp_path.glob(".c.bm25.*.tmp"))  # what the kill leaves behind

    for _ in range(2):  # plain re-runs
        builder.store_all(iter(_results(source, _FILES)), uri, "papers", source, **kw)
        chroma = instantiate_vector_store(uri, "papers", builder.writer.embeddings, builder.logger)
        collection = set(chroma.get()["ids"])
        assert collection == {f"{n}:{j}" for n in _FILES for j in range(3)}
        assert {d.id for d in read_corpus(bm25)} == collection
        assert len(read_corpus(bm25)) == len(collection)
        assert _fts5_ids(fts5) == collection
        assert not list(tmp_path.glob(".c.bm25.*.tmp"))
