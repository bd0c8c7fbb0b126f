"""The build's document embedder: onnxruntime for the packaged MiniLM on the CPU, torch for
the rest; the manifest records the vectors, and a store written one way answers queries
embedded the other way with the same chunks."""

from __future__ import annotations

import json
import logging
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st
from ingest_store_support import make_builder, write_source
from klea_utils.stores._ingest.store.concurrent_runs import ConcurrentRuns
from klea_utils.stores._ingest.store.document_embedder import (
    ONNX_DOCUMENTS_ENV_VAR,
    TEXTS_PER_RUN,
    VARIANT_ONNX,
    VARIANT_ONNX_INT8,
    VARIANT_TORCH,
    embed_device,
    embedder_identity,
    gpu_batch_size,
    load_document_embedder,
    load_overlap_embedder,
    vectors_key,
)
from klea_utils.stores._ingest.store.int8_minilm import int8_minilm_path
from klea_utils.stores._ingest.store.manifest import manifest_path
from klea_utils.stores.exceptions import EmbeddingModelError
from klea_utils.stores.onnx_minilm import OnnxMiniLMEmbeddings, available_cores
from klea_utils.stores.utils import instantiate_vector_store
from realpapers import DATA

pytestmark = pytest.mark.slow
LOG = logging.getLogger("test-document-embedder")
MINILM = "huggingface:all-MiniLM-L6-v2"


def test_every_name_of_the_packaged_minilm_writes_the_same_vectors() -> None:
    assert vectors_key(MINILM) == vectors_key("huggingface:sentence-transformers/all-MiniLM-L6-v2")
    assert vectors_key("huggingface:BAAI/bge-small-en-v1.5") != vectors_key(MINILM)
    assert vectors_key("ollama:nomic-embed-text") == "ollama:nomic-embed-text"


@given(st.integers(min_value=0, max_value=2**40))
def test_the_gpu_batch_is_a_power_of_two_sized_to_free_memory(free: int) -> None:
    batch = gpu_batch_size(free)
    assert 32 <= batch <= 1024
    assert batch & (batch - 1) == 0
    assert batch * 16 * 2**20 <= max(free // 4, 32 * 16 * 2**20)
    assert gpu_batch_size(free * 2) >= batch


def test_auto_is_the_gpu_only_where_torch_sees_one() -> None:
    import torch

    assert embed_device("auto") == ("cuda" if torch.cuda.is_available() else "cpu")
    assert embed_device("cuda:1") == "cuda:1"


def test_auto_asks_torch_only_where_a_gpu_driver_is_present() -> None:
    """Issue 40: a build's parent embeds during conversion; on a machine without a GPU
    driver it does not import torch (2 CPU-s, 0.5 GiB) to learn it has no GPU."""
    import os
    import subprocess
    import sys

    from klea_utils.stores._ingest.store.document_embedder import GPU_DEVICE_FILES

    code = (
        "import sys\n"
        "from klea_utils.stores._ingest.store.document_embedder import embed_device\n"
        "print(embed_device('auto'), 'torch' in sys.modules)\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True
    ).stdout.split()
    if not any(os.path.exists(path) for path in GPU_DEVICE_FILES):
        assert out == ["cpu", "False"]
    else:  # a GPU driver: torch decides
        assert out[1] == "True"


@pytest.mark.parametrize("device", ["gpu", "cuda:", "cuda:one", "CPU"])
def test_a_device_the_embedder_does_not_know_is_refused_by_name(device: str) -> None:
    with pytest.raises(EmbeddingModelError, match=f"got '{device}'"):
        load_document_embedder(MINILM, device, LOG)


def test_the_packaged_minilm_on_the_cpu_runs_int8_on_onnxruntime_with_every_core() -> None:
    """One intra-op thread, a text per core at once (a short text's run splits poorly)."""
    embedder = load_document_embedder(MINILM, "cpu", LOG)
    assert embedder.variant == VARIANT_ONNX_INT8
    assert isinstance(embedder.embeddings, ConcurrentRuns)
    assert embedder.embeddings.runs == available_cores()
    model = embedder.embeddings.model
    assert isinstance(model, OnnxMiniLMEmbeddings)
    assert model.threads == 1
    assert model.batch_size == TEXTS_PER_RUN == 1
    overlap = load_overlap_embedder(MINILM, "cpu")
    assert overlap is not None
    assert isinstance(overlap.embeddings, ConcurrentRuns)
    assert overlap.embeddings.runs == 1
    assert embedder_identity(overlap) == embedder_identity(embedder)


def test_texts_run_at_once_get_the_vectors_of_one_run_after_another() -> None:
    """Real paragraphs on two and three threads of one session: the exact vectors of the
    same session running them in turn, in the callers' order, a repeated text once."""
    model = load_overlap_embedder(MINILM, "cpu")
    assert model is not None
    texts = _reference_paragraphs(24)
    texts = [*texts, texts[3], texts[0]]
    in_turn = [model.embeddings.embed_documents([text])[0] for text in texts]
    for runs in (2, 3):
        at_once = ConcurrentRuns(model.embeddings, runs)
        try:
            assert at_once.embed_documents(texts) == in_turn
            assert at_once.embed_documents(texts[5:6]) == in_turn[5:6]
            assert at_once.embed_documents([]) == []
        finally:
            at_once.close()


def test_concurrent_runs_refuse_fewer_than_one() -> None:
    model = load_overlap_embedder(MINILM, "cpu")
    assert model is not None
    with pytest.raises(ValueError, match="runs must be >= 1, got 0"):
        ConcurrentRuns(model.embeddings, 0)


@pytest.mark.parametrize(("value", "variant"), [("fp32", VARIANT_ONNX), ("1", VARIANT_ONNX_INT8)])
def test_the_fp32_export_when_asked(
    monkeypatch: pytest.MonkeyPatch, value: str, variant: str
) -> None:
    monkeypatch.setenv(ONNX_DOCUMENTS_ENV_VAR, value)
    embedder = load_document_embedder(MINILM, "cpu", LOG)
    assert embedder.variant == variant
    assert isinstance(embedder.embeddings, ConcurrentRuns)
    assert embedder.embeddings.onnx_path is not None
    assert embedder.embeddings.onnx_path.name.endswith(".int8-u8-ffn-fp32.onnx") == (
        variant == VARIANT_ONNX_INT8
    )


def test_torch_when_asked_with_its_threads_set(monkeypatch: pytest.MonkeyPatch) -> None:
    import torch

    monkeypatch.setenv(ONNX_DOCUMENTS_ENV_VAR, "0")
    torch.set_num_threads(1)
    embedder = load_document_embedder(MINILM, "cpu", LOG)
    assert embedder.variant == VARIANT_TORCH
    assert torch.get_num_threads() == available_cores()


@pytest.mark.parametrize("value", ["int", "8", "onnx", "torch"])
def test_an_unknown_onnx_documents_value_is_refused_by_name(
    monkeypatch: pytest.MonkeyPatch, value: str
) -> None:
    monkeypatch.setenv(ONNX_DOCUMENTS_ENV_VAR, value)
    with pytest.raises(EmbeddingModelError, match=f"{ONNX_DOCUMENTS_ENV_VAR}='{value}'"):
        load_document_embedder(MINILM, "cpu", LOG)


def _reference_paragraphs(limit: int) -> list[str]:
    assert DATA is not None
    text = (DATA.parent / "reference" / "2412.19437_deepseek-v3.md").read_text(encoding="utf-8")
    paragraphs = [p.strip() for p in text.split("\n\n") if len(p.strip()) > 200]
    return paragraphs[:limit]


QUESTIONS = [
    "How much money was spent on the long-context extension stage of training?",
    "What bandwidth does the intra-node GPU interconnect provide?",
    "How does the model balance the load of its experts without an auxiliary loss?",
    "multi-token prediction objective",
]


def test_a_store_written_by_onnxruntime_answers_torch_queries_alike(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from klea_utils.stores.embedding_models import SentenceTransformerEmbeddings, load_embeddings

    source, uri = tmp_path / "src", f"chroma:{tmp_path / 'store'}"
    builder = make_builder(None, batch=64)  # type: ignore[arg-type]  # the build's own embedder
    result = write_source(source, "deepseek.md", _reference_paragraphs(60))
    builder.store_all(iter([result]), uri, "papers", source)
    section = json.loads(manifest_path(source, "papers").read_text())["stores"]
    (record,) = section.values()
    assert record["vectors"] == MINILM
    assert record["embedders"] == [VARIANT_ONNX_INT8]
    onnx = OnnxMiniLMEmbeddings()
    torch_model = load_embeddings(device="cpu")
    assert isinstance(torch_model, SentenceTransformerEmbeddings)
    by_onnx, by_torch = (
        instantiate_vector_store(uri, "papers", model, LOG) for model in (onnx, torch_model)
    )
    for question in QUESTIONS:
        top_onnx = [d.id for d in by_onnx.similarity_search(question, k=3)]
        top_torch = [d.id for d in by_torch.similarity_search(question, k=3)]
        assert len(top_onnx) == 3
        assert top_onnx == top_torch, question


def test_int8_documents_keep_the_fp32_vectors_and_answers() -> None:
    """The int8 variant (the default): quantised once and reused, cosine >= 0.995 to fp32
    on real paragraphs, fp32 query vectors find their top 3 over the int8 vectors within
    the fp32 top 4 (a paragraph within about 0.02 of the next may swap with it: "multi-token
    prediction objective" swaps its 3rd and 4th, 0.023 apart in fp32); a paragraph's vector
    is the same alone and among the others (its activations are scaled by its own values
    only). The answer checks proper are the development questions and SciFact
    (docs/benchmarks.md)."""
    import numpy as np

    embedder = load_document_embedder(MINILM, "cpu", LOG)
    assert embedder.variant == VARIANT_ONNX_INT8
    assert isinstance(embedder.embeddings, ConcurrentRuns)
    fp32 = OnnxMiniLMEmbeddings()
    assert embedder.embeddings.onnx_path == int8_minilm_path(fp32.onnx_path)
    made = embedder.embeddings.onnx_path.stat().st_mtime_ns
    again = load_document_embedder(MINILM, "cpu", LOG).embeddings
    assert isinstance(again, ConcurrentRuns)
    assert again.onnx_path is not None
    assert again.onnx_path.stat().st_mtime_ns == made, "quantised once, then reused"

    texts = _reference_paragraphs(60)
    by_int8 = np.asarray(embedder.embeddings.embed_documents(texts))
    by_fp32 = np.asarray(fp32.embed_documents(texts))
    cosines = np.sum(by_int8 * by_fp32, axis=1)
    assert cosines.mean() >= 0.995
    assert cosines.min() >= 0.99
    alone = np.asarray(embedder.embeddings.embed_documents(texts[7:8] + texts[:1]))
    assert np.array_equal(alone[0], by_int8[7]), "a vector depends on its text only"
    assert np.array_equal(alone[1], by_int8[0])
    for question in QUESTIONS:
        query = np.asarray(fp32.embed_query(question))
        int8_top, fp32_top = (
            list(np.argsort(-(vectors @ query))[:4]) for vectors in (by_int8, by_fp32)
        )
        assert set(int8_top[:3]) <= set(fp32_top), question
        assert len(set(int8_top[:3]) & set(fp32_top[:3])) >= 2, question


def test_vectors_of_another_model_force_a_rebuild(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    from ingest_store_support import CountingEmbeddings, minilm

    counting = CountingEmbeddings(minilm())
    source, uri = tmp_path / "src", f"chroma:{tmp_path / 'store'}"
    results = [
        write_source(source, "a.md", [f"paragraph {i} on cortical columns" for i in range(3)])
    ]
    make_builder(counting).store_all(iter(results), uri, "papers", source)
    path = manifest_path(source, "papers")
    raw: dict[str, Any] = json.loads(path.read_text())
    (record,) = raw["stores"].values()
    assert record["vectors"] == MINILM
    assert record["embedders"] == ["CountingEmbeddings"]

    counting.embedded = 0
    assert make_builder(counting).store_all(iter(results), uri, "papers", source).files_skipped == 1
    assert counting.embedded == 0, "the same model's vectors are kept"

    record["vectors"] = "huggingface:some/other-model"
    path.write_text(json.dumps(raw))
    summary = make_builder(counting).store_all(iter(results), uri, "papers", source)
    assert summary.files_added == 1
    assert counting.embedded == 3
    assert "holds vectors of huggingface:some/other-model" in caplog.text
    (record,) = json.loads(path.read_text())["stores"].values()
    assert record["vectors"] == MINILM


class _Remote:
    def __init__(self, fn: Any) -> None:
        self.fn = fn

    def remote(self, *args: Any) -> Any:
        return self.fn(*args)


class _FakeRay:
    """Ray as RayEmbeddings sees it: actor options and devices recorded (no GPU here)."""

    def __init__(self) -> None:
        self.options: list[dict[str, Any]] = []
        self.devices: list[str] = []

    def cluster_resources(self) -> dict[str, float]:
        return {"CPU": 4.0, "GPU": 2.0}

    def remote(self, cls: Any) -> Any:
        ray = self

        class Handle:
            def options(self, **kwargs: Any) -> Handle:
                ray.options.append(kwargs)
                return self

            def remote(self, spec: str, device: str) -> Any:
                ray.devices.append(device)
                actor = type("Actor", (), {})()
                actor.embedder_variant = _Remote(lambda: "torch" if device != "cpu" else "x")
                return actor

        return Handle()

    def get(self, value: Any) -> Any:
        return value


@pytest.mark.parametrize(
    ("device", "gpus", "actors", "worker_device"),
    [("cuda:1", 1, 2, "cuda"), ("cuda", 1, 2, "cuda"), ("cpu", None, 4, "cpu")],
)
def test_ray_embedding_workers_ask_for_a_gpu_on_a_cuda_run(
    monkeypatch: pytest.MonkeyPatch, device: str, gpus: int | None, actors: int, worker_device: str
) -> None:
    from klea_utils.stores._ingest.workers import ray_cluster
    from klea_utils.stores._ingest.workers.ray_embeddings import RayEmbeddings

    fake = _FakeRay()
    monkeypatch.setattr(ray_cluster, "connect", lambda address, logger: fake)
    embeddings = RayEmbeddings(MINILM, "auto", device=device, logger=LOG)
    assert len(embeddings._pool()) == actors
    assert {o.get("num_gpus") for o in fake.options} == {gpus}
    assert set(fake.devices) == {worker_device}
    assert embeddings.variant == ("ray/x" if device == "cpu" else "ray/torch")
