"""Benchmark: chunks per second through ``StoresBuilder.store_all`` vs plain ``add_documents``.

Both paths embed the same chunks with the packaged all-MiniLM-L6-v2 model into the same
backend (a fresh collection each), in batches of ``--batch`` chunks. ``store_all`` adds the
manifest, metadata policy, per-file batching and the BM25 corpus on top. Target: the ratio
``store_all / add_documents`` is at least 0.9.

    uv run --frozen python scripts/bench/store.py --chunks 600 --files 30 --backend chroma
"""

from __future__ import annotations

import argparse
import hashlib
import logging
import tempfile
import time
from pathlib import Path

from klea_utils.stores._ingest.store.vector_run import stored_docs
from klea_utils.stores.embedding_models import load_embeddings
from klea_utils.stores.ingestion import StoresBuilder
from klea_utils.stores.utils import instantiate_vector_store
from langchain_core.documents import Document

WORDS = [
    "neuron",
    "synapse",
    "cortex",
    "dendrite",
    "axon",
    "spike",
    "plasticity",
    "network",
    "model",
    "membrane",
]


def _results(source: Path, files: int, per_file: int) -> list[tuple[str, list[Document], Path]]:
    out = []
    for f in range(files):
        texts = [
            " ".join(WORDS[(f * 7 + c * 3 + w) % len(WORDS)] for w in range(60)) + f" {f}-{c}"
            for c in range(per_file)
        ]
        path = source / f"paper{f:04d}.md"
        path.write_text("\n\n".join(texts))
        digest = hashlib.sha256(path.read_bytes()).hexdigest()
        meta = {
            "file_name": path.name,
            "file_hash": digest,
            "headings": ["H"],
            "title": f"P{f}",
            "authors": ["Ankur Sinha"],
            "year": 2020,
        }
        out.append((digest, [Document(page_content=t, metadata=dict(meta)) for t in texts], path))
    return out


def _uri(backend: str, root: Path) -> str:
    return f"{backend}:{root / backend}"


def main() -> None:
    """Run the benchmark and print chunks/s for both paths and their ratio."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--chunks", type=int, default=600)
    parser.add_argument("--files", type=int, default=30)
    parser.add_argument("--batch", type=int, default=64)
    parser.add_argument("--backend", choices=("chroma", "qdrant"), default="chroma")
    args = parser.parse_args()
    logger = logging.getLogger("bench")
    embeddings = load_embeddings("huggingface:all-MiniLM-L6-v2", device="cpu")
    embeddings.embed_documents(["warm up"] * 8)
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        source = root / "src"
        source.mkdir()
        results = _results(source, args.files, max(1, args.chunks // args.files))
        total = sum(len(d) for _, d, _ in results)
        uri = _uri(args.backend, root)

        direct = instantiate_vector_store(uri, "direct", embeddings, logger, create=True)
        start = time.perf_counter()
        all_docs = [d for _, docs, path in results for d in stored_docs(path.name, docs)]
        for i in range(0, len(all_docs), args.batch):
            part = all_docs[i : i + args.batch]
            direct.add_documents(part, ids=[d.id for d in part])
        direct_s = time.perf_counter() - start

        builder = StoresBuilder(
            "huggingface:all-MiniLM-L6-v2",
            logger,
            embed_batch_size=args.batch,
            embeddings=embeddings,
        )
        start = time.perf_counter()
        builder.store_all(iter(results), uri, "viastore", source, bm25_path=str(root / "c.bm25"))
        store_s = time.perf_counter() - start

    print(f"backend={args.backend} chunks={total} files={args.files} batch={args.batch}")
    print(f"add_documents: {total / direct_s:8.1f} chunks/s ({direct_s:.2f} s)")
    print(f"store_all:     {total / store_s:8.1f} chunks/s ({store_s:.2f} s)")
    print(f"ratio store_all/add_documents: {direct_s / store_s:.2f} (target >= 0.9)")


if __name__ == "__main__":
    main()
