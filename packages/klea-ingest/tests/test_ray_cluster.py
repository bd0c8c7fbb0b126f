"""A real two-node Ray cluster on this machine loses its worker node in the middle of a build.

``ray start --head --num-cpus 1`` and a second ``ray start --address ... --num-cpus 1``
run in their own temporary folders. While ``build`` converts on the cluster, every
process of the second node is killed. The run must finish with every file converted and
stored exactly once. The cluster comes from ``ingest_ray_cluster``: loopback nodes
(127.0.0.2 the head, 127.0.0.3 the second node) whose processes teardown kills, found by
their temporary folders, whatever happened.
"""

from __future__ import annotations

import contextlib
import ipaddress
import logging
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import psutil
import pytest
from ingest_corpus import sample_paragraphs, write_text_pdf
from ingest_ray_cluster import Cluster, kill, processes_of, ray_cluster, run_cli
from klea_utils.stores.chunk_cache import ChunkCache

pytestmark = pytest.mark.slow
FILES = 10


@pytest.fixture(scope="module")
def two_nodes(tmp_path_factory: pytest.TempPathFactory, offline: None) -> Iterator[Cluster]:
    with ray_cluster(tmp_path_factory) as cluster:
        yield cluster


def _corpus(root: Path) -> Path:
    root.mkdir()
    for i in range(FILES):
        write_text_pdf(root / f"p{i:02d}.pdf", f"Paper {i}", sample_paragraphs(8, seed=i))
    return root


def _kill_worker_node_when_busy(
    cluster: Cluster, source: Path, stop: threading.Event, killed: list[int]
) -> None:
    """Kill the second node once the first file is cached (the run is then in full flow)."""
    cache = ChunkCache(source)
    while not stop.is_set() and not cache.entries():
        time.sleep(0.2)
    if not stop.is_set():
        victims = processes_of(cluster.worker_dir)
        killed.extend(p.pid for p in victims)
        kill(victims)


def _watch_peers(cluster: Cluster, stop: threading.Event, peers: set[str]) -> None:
    """Collect the remote addresses the cluster's processes talk to while the run goes on."""
    while not stop.is_set():
        for proc in processes_of(cluster.head_dir) + processes_of(cluster.worker_dir):
            with contextlib.suppress(psutil.Error):
                peers.update(c.raddr.ip for c in proc.net_connections("inet") if c.raddr)
        time.sleep(0.5)


def _is_loopback(ip: str) -> bool:
    return ipaddress.ip_address(ip.removeprefix("::ffff:")).is_loopback


def test_losing_a_node_mid_run_still_stores_every_file_once(
    two_nodes: Cluster, tmp_path: Path
) -> None:
    source = _corpus(tmp_path / "papers")
    stop, killed = threading.Event(), []
    killer = threading.Thread(
        target=_kill_worker_node_when_busy, args=(two_nodes, source, stop, killed), daemon=True
    )
    killer.start()
    peers: set[str] = set()
    watcher = threading.Thread(target=_watch_peers, args=(two_nodes, stop, peers), daemon=True)
    watcher.start()
    args = ["build", str(source), "--store", f"chroma:{tmp_path / 'chroma'}"]
    args += ["--collection", "papers", "--max-tokens", "120", "--ray", two_nodes.address, "-v"]
    try:  # the driver runs as a user would run it: the CLI, in its own process
        done = run_cli(*args)
    finally:
        stop.set()
        killer.join(timeout=30)
        watcher.join(timeout=30)

    output = done.stdout + done.stderr
    assert done.returncode == 0, output[-3000:]
    assert killed, "the worker node was never killed: the run ended before a file was cached"
    assert not processes_of(two_nodes.worker_dir)
    assert "Conversion: 10 ok, 0 with zero chunks, 0 failed" in output
    assert len(ChunkCache(source).entries()) == FILES
    expected = _expected_ids(source)
    stored = _stored_ids(tmp_path / "chroma")
    assert len(stored) == len(set(stored))
    assert sorted(stored) == sorted(expected)
    assert peers, "no connection of the cluster was seen"
    assert all(_is_loopback(ip) for ip in peers), f"the cluster left loopback: {sorted(peers)}"


def _expected_ids(source: Path) -> list[str]:
    from klea_utils.stores.chunk_cache import iter_cached_files

    return [
        f"{cached.file_path.name}:{i}"
        for cached in iter_cached_files(source)
        for i in range(len(cached.docs))
    ]


def _stored_ids(folder: Path) -> list[Any]:
    from klea_utils.stores.utils import instantiate_vector_store

    store = instantiate_vector_store(f"chroma:{folder}", "papers", None, logging.getLogger("t"))
    return list(store.get(include=[])["ids"])
