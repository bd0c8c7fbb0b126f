"""Ray parity: the sample corpus built through a local Ray instance equals the local build.

One private Ray instance (2 CPUs, so two conversion workers) serves the module. The local
path and the Ray path (conversion and, with ``ray_embed``, embedding on Ray) build the
same copy of ``examples/corpus/papers``; chunk ids, texts, metadata, the BM25 corpus and
the FTS5 index must be identical, and the vectors equal to float precision.
"""

from __future__ import annotations

import logging
import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from ingest_store_support import fts5_records
from klea_utils.stores.chunk_cache import iter_cached_files
from klea_utils.stores.ingestion import StoresBuilder
from klea_utils.stores.retrieval.bm25 import read_corpus

pytestmark = pytest.mark.slow
MODEL = "huggingface:all-MiniLM-L6-v2"
SAMPLE = Path(__file__).resolve().parents[3] / "examples" / "corpus" / "papers"


@pytest.fixture(scope="module")
def local_ray(offline: None) -> Iterator[Any]:
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("RAY_ENABLE_UV_RUN_RUNTIME_ENV", "0")
        import ray

        ray.init(
            address="local",
            num_cpus=2,
            object_store_memory=200 * 1024**2,
            include_dashboard=False,
            log_to_driver=False,
        )
        try:
            yield ray
        finally:
            ray.shutdown()


def _build(work: Path, ray_address: str | None) -> dict[str, Any]:
    source = work / "papers"
    shutil.copytree(SAMPLE, source)
    builder = StoresBuilder(
        MODEL,
        logging.getLogger("klea-test-ray"),
        max_tokens=200,
        embed_batch_size=16,
        ray_address=ray_address,
        ray_embed=ray_address is not None,
    )
    store_uri = f"chroma:{work / 'chroma'}"
    builder.build(
        str(source),
        store_uri,
        "papers",
        bm25_path=str(work / "bm25.pkl"),
        fts5_path=str(work / "fts5.sqlite"),
    )
    return {
        "cache": _cache(source),
        "chroma": _chroma(work / "chroma"),
        "bm25": [(d.id, d.page_content, d.metadata) for d in read_corpus(work / "bm25.pkl")],
        "fts5": _fts5_bodies(work / "fts5.sqlite"),
        "failures": sorted((source / ".klea-cache").glob("*fail*")),
    }


def _cache(source: Path) -> dict[str, Any]:
    return {
        cached.file_path.name: (
            [(d.page_content, d.metadata) for d in cached.docs],
            cached.metadata,
            cached.headings,
        )
        for cached in iter_cached_files(source)
    }


def _chroma(folder: Path) -> dict[str, Any]:
    from klea_utils.stores.utils import instantiate_vector_store

    store = instantiate_vector_store(f"chroma:{folder}", "papers", None, logging.getLogger("t"))
    got = store.get(include=["documents", "metadatas", "embeddings"])
    rows = zip(got["ids"], got["documents"], got["metadatas"], got["embeddings"], strict=True)
    return {i: (doc, meta, [float(x) for x in vec]) for i, doc, meta, vec in rows}


def test_ray_build_matches_local_build(local_ray: Any, tmp_path: Path) -> None:
    local = _build(tmp_path / "local", None)
    on_ray = _build(tmp_path / "ray", "local")

    assert local["cache"], "the local build cached nothing"
    assert on_ray["cache"] == local["cache"]
    assert on_ray["bm25"] == local["bm25"]
    assert on_ray["fts5"] == local["fts5"]
    assert on_ray["failures"] == [] or [p.name for p in on_ray["failures"]] == [
        p.name for p in local["failures"]
    ]
    assert sorted(on_ray["chroma"]) == sorted(local["chroma"])
    for chunk_id, (text, meta, vector) in local["chroma"].items():
        ray_text, ray_meta, ray_vector = on_ray["chroma"][chunk_id]
        assert (ray_text, ray_meta) == (text, meta), chunk_id
        assert ray_vector == pytest.approx(vector, abs=1e-5), chunk_id


def _fts5_bodies(path: Path) -> dict[str, Any]:
    return {i: (d.body, d.title, d.metadata) for i, d in fts5_records(path).items()}
