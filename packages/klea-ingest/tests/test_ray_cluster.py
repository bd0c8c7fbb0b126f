"""A real two-node Ray cluster on this machine loses its worker node in the middle of a build.

``ray start --head --num-cpus 1`` and a second ``ray start --address ... --num-cpus 1``
run in their own temporary folders. While ``build`` converts on the cluster, every
process of the second node is killed. The run must finish with every file converted and
stored exactly once. Teardown stops the cluster's processes (found by their temporary
folders) whatever happened. The nodes talk over loopback only: Ray turns 127.0.0.1 into the
host's network address, so the head is 127.0.0.2 and the worker node 127.0.0.3.
"""

from __future__ import annotations

import contextlib
import ipaddress
import logging
import os
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import psutil
import pytest
from ingest_corpus import sample_paragraphs, write_text_pdf
from klea_utils.stores.chunk_cache import ChunkCache

pytestmark = pytest.mark.slow
RAY = str(Path(sys.executable).with_name("ray"))
FILES = 10


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("", 0))
        return int(sock.getsockname()[1])


def _cluster_env() -> dict[str, str]:
    env = dict(os.environ)
    env.update(
        RAY_AUTH_MODE="disabled",
        RAY_ENABLE_UV_RUN_RUNTIME_ENV="0",
        RAY_USAGE_STATS_ENABLED="0",
        HF_HUB_OFFLINE="1",
    )
    return env


def _processes_of(folder: Path) -> list[psutil.Process]:
    """Every process started for the Ray node whose temporary folder is ``folder``."""
    found: dict[int, psutil.Process] = {}
    for proc in psutil.process_iter(["cmdline"]):
        try:
            if any(str(folder) in part for part in proc.info["cmdline"] or []):
                found[proc.pid] = proc
                for child in proc.children(recursive=True):
                    found[child.pid] = child
        except psutil.Error:
            continue
    found.pop(os.getpid(), None)
    return list(found.values())


def _kill(processes: list[psutil.Process]) -> None:
    for proc in processes:
        with contextlib.suppress(psutil.Error):
            proc.kill()
    psutil.wait_procs(processes, timeout=10)


@dataclass
class Cluster:
    address: str
    head_dir: Path
    worker_dir: Path


def _ray_start(args: list[str], env: dict[str, str]) -> None:
    done = subprocess.run(
        [RAY, "start", *args], env=env, capture_output=True, text=True, timeout=240
    )
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-2000:]


@pytest.fixture(scope="module")
def two_nodes(tmp_path_factory: pytest.TempPathFactory, offline: None) -> Iterator[Cluster]:
    # Short folders: Ray's socket paths must fit in 107 bytes.
    head_dir = Path(tmp_path_factory.mktemp("rh"))
    worker_dir = Path(tmp_path_factory.mktemp("rw"))
    env = _cluster_env()
    port = _free_port()
    try:
        _ray_start(
            [
                "--head",
                "--node-ip-address=127.0.0.2",
                "--num-cpus=1",
                f"--port={port}",
                f"--temp-dir={head_dir}",
                f"--ray-client-server-port={_free_port()}",
                f"--dashboard-agent-listen-port={_free_port()}",
                "--include-dashboard=false",
                "--disable-usage-stats",
            ],
            env,
        )
        address = (head_dir / "ray_current_cluster").read_text(encoding="utf-8").strip()
        _ray_start(
            [
                f"--address={address}",
                "--node-ip-address=127.0.0.3",
                "--num-cpus=1",
                f"--temp-dir={worker_dir}",
                f"--dashboard-agent-listen-port={_free_port()}",
                "--disable-usage-stats",
            ],
            env,
        )
        yield Cluster(address, head_dir, worker_dir)
    finally:
        _kill(_processes_of(worker_dir))
        _kill(_processes_of(head_dir))


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
        victims = _processes_of(cluster.worker_dir)
        killed.extend(p.pid for p in victims)
        _kill(victims)


def _watch_peers(cluster: Cluster, stop: threading.Event, peers: set[str]) -> None:
    """Collect the remote addresses the cluster's processes talk to while the run goes on."""
    while not stop.is_set():
        for proc in _processes_of(cluster.head_dir) + _processes_of(cluster.worker_dir):
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
    command = [
        str(Path(sys.executable).with_name("klea-stores-create")),
        "build",
        str(source),
        "--store",
        f"chroma:{tmp_path / 'chroma'}",
        "--collection",
        "papers",
        "--max-tokens",
        "120",
        "--ray",
        two_nodes.address,
        "-v",
    ]
    try:  # the driver runs as a user would run it: the CLI, in its own process
        done = subprocess.run(
            command, env=_cluster_env(), capture_output=True, text=True, timeout=600
        )
    finally:
        stop.set()
        killer.join(timeout=30)
        watcher.join(timeout=30)

    output = done.stdout + done.stderr
    assert done.returncode == 0, output[-3000:]
    assert killed, "the worker node was never killed: the run ended before a file was cached"
    assert not _processes_of(two_nodes.worker_dir)
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
