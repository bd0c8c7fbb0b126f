"""A CUDA run on a real Ray cluster converts on the node that has a GPU, and only there.

The cluster (``ingest_ray_cluster``) is two loopback nodes on this machine: the head
(127.0.0.2, one CPU, no GPU) and a second node (127.0.0.3, one CPU, one GPU). The GPU is
*declared, not physical*: ``ray start --num-gpus 1`` gives a CPU-only host a logical
``GPU`` resource that Ray schedules by, with no device behind it. The run therefore only
does what needs no CUDA device: ``chunk`` (it embeds nothing) of text PDFs, which take the
model-free PDF path and never touch the device. What it proves is placement: each
conversion actor of a ``--device cuda`` run asks Ray for a GPU, so a mixed cluster
converts on its GPU hosts. The driver logs the node of every finished file at debug
level; that is how the test knows where each file was converted. The test can fail: a
driver on a host with several nodes attaches to the head, and Ray puts an actor that
asks for a CPU only on the driver's node while it has a free CPU, so without the GPU
request the files are converted on the head.

Without any GPU in the cluster, a CUDA run stops with a ``ClusterError`` naming the GPU
before a worker starts.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterator
from pathlib import Path

import pytest
from ingest_corpus import sample_paragraphs, write_text_pdf
from ingest_ray_cluster import HEAD_IP, WORKER_IP, run_cli, start_head, start_worker, stop_node
from klea_utils.stores.chunk_cache import ChunkCache

pytestmark = pytest.mark.slow
FILES = 4
FINISHED = re.compile(r"Ray worker on node (\S+) finished (\S+)")


@pytest.fixture(scope="module")
def head(tmp_path_factory: pytest.TempPathFactory, offline: None) -> Iterator[str]:
    """A head node without GPU (``--num-gpus 0``); yields the cluster's address."""
    folder = Path(tmp_path_factory.mktemp("rh"))
    address = None
    try:
        address = start_head(folder, cpus=1, gpus=0)
        yield address
    finally:
        stop_node(folder, address)


@pytest.fixture
def gpu_node(head: str, tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """A second node declaring one (logical) GPU, joined for one test; yields the address."""
    folder = Path(tmp_path_factory.mktemp("rw"))
    try:
        start_worker(head, folder, cpus=1, gpus=1)
        yield head
    finally:
        stop_node(folder)


def _corpus(root: Path) -> Path:
    root.mkdir()
    for i in range(FILES):
        write_text_pdf(root / f"g{i}.pdf", f"Paper {i}", sample_paragraphs(4, seed=i))
    return root


def _chunk(source: Path, address: str, *extra: str) -> tuple[int, str]:
    done = run_cli(
        "chunk", str(source), "--device", "cuda", "--max-tokens", "120", "--ray", address, *extra
    )
    return done.returncode, done.stdout + done.stderr


# Runs first (file order): the head alone, before the GPU node of the next test joins.
def test_a_cuda_run_on_a_cluster_without_gpu_fails_naming_the_gpu(
    head: str, tmp_path: Path
) -> None:
    source = _corpus(tmp_path / "papers")
    code, output = _chunk(source, head, "-v")
    assert code == 1, output[-3000:]
    assert "1 node(s), 1 CPU(s), 0 GPU(s)" in output
    assert "error: the Ray cluster has no GPU for a conversion worker" in output
    assert not ChunkCache(source).entries()


def test_a_cuda_run_converts_every_file_on_the_gpu_node_only(gpu_node: str, tmp_path: Path) -> None:
    source = _corpus(tmp_path / "papers")
    # Two files per worker: the run starts two actors in turn, each placed by Ray anew.
    code, output = _chunk(source, gpu_node, "--worker-batch-size", "2", "-vv")
    assert code == 0, output[-3000:]
    assert "2 node(s), 2 CPU(s), 1 GPU(s)" in output
    finished = FINISHED.findall(output)
    nodes = {node for node, _ in finished}
    assert nodes == {WORKER_IP}, f"files converted on {nodes}, the GPU node is {WORKER_IP}"
    assert HEAD_IP not in nodes
    converted = Counter(name for _, name in finished)
    assert converted == Counter({f"g{i}.pdf": 1 for i in range(FILES)})
    assert len(ChunkCache(source).entries()) == FILES
    assert f"Chunked {FILES} of {FILES} file(s)." in output
