"""A real Ray cluster of loopback nodes on this machine, for the cluster tests.

Each node is a ``ray start`` in its own short temporary folder (Ray's socket paths must
fit in 107 bytes). The nodes talk over loopback only: Ray turns 127.0.0.1 into the
host's network address, so the head is :data:`HEAD_IP` and a second node
:data:`WORKER_IP`. Each node declares its CPUs and GPUs (``--num-gpus``; 0 unless asked,
so a host with a GPU runs the same tests). :func:`stop_node` kills every process found
by a node's temporary folder (and a head's client server by its GCS address), whatever
happened to the node, so no Ray process stays.
The driver runs as a user runs it: the ``klea-stores-create`` CLI, in its own process
(:func:`run_cli`), so the test process never joins the cluster.
"""

from __future__ import annotations

import contextlib
import os
import socket
import subprocess
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import psutil
import pytest

__all__ = [
    "HEAD_IP",
    "WORKER_IP",
    "Cluster",
    "cluster_env",
    "kill",
    "processes_of",
    "ray_cluster",
    "run_cli",
    "start_head",
    "start_worker",
    "stop_node",
]

RAY = str(Path(sys.executable).with_name("ray"))
CLI = str(Path(sys.executable).with_name("klea-stores-create"))
HEAD_IP = "127.0.0.2"
WORKER_IP = "127.0.0.3"


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("", 0))
        return int(sock.getsockname()[1])


def cluster_env() -> dict[str, str]:
    """The environment of the nodes and the driver: offline, no usage stats, no uv re-run."""
    env = dict(os.environ)
    env.update(
        RAY_AUTH_MODE="disabled",
        RAY_ENABLE_UV_RUN_RUNTIME_ENV="0",
        RAY_USAGE_STATS_ENABLED="0",
        HF_HUB_OFFLINE="1",
    )
    return env


def processes_of(folder: Path, gcs_address: str | None = None) -> list[psutil.Process]:
    """Every process started for the Ray node whose temporary folder is ``folder``.

    With ``gcs_address`` (a head's), also those started with ``--address=GCS_ADDRESS``:
    the head's client server names only its GCS, and outlives the ``ray start`` that
    started it (its parent).
    """
    option = f"--address={gcs_address}" if gcs_address else None
    found: dict[int, psutil.Process] = {}
    for proc in psutil.process_iter(["cmdline"]):
        try:
            cmdline = proc.info["cmdline"] or []
            if any(str(folder) in part or part == option for part in cmdline):
                found[proc.pid] = proc
                for child in proc.children(recursive=True):
                    found[child.pid] = child
        except psutil.Error:
            continue
    found.pop(os.getpid(), None)
    return list(found.values())


def kill(processes: list[psutil.Process]) -> None:
    """Kill ``processes`` and wait (up to 10 s) until they are gone."""
    for proc in processes:
        with contextlib.suppress(psutil.Error):
            proc.kill()
    psutil.wait_procs(processes, timeout=10)


def stop_node(folder: Path, gcs_address: str | None = None) -> None:
    """Kill the processes of the node in ``folder`` (a head: give its ``gcs_address``)."""
    kill(processes_of(folder, gcs_address))


def _ray_start(args: list[str]) -> None:
    done = subprocess.run(
        [RAY, "start", *args, "--disable-usage-stats"],
        env=cluster_env(),
        capture_output=True,
        text=True,
        timeout=240,
    )
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-2000:]


def start_head(folder: Path, *, cpus: int = 1, gpus: int = 0) -> str:
    """Start a head node at :data:`HEAD_IP` in ``folder``; return the cluster's address."""
    _ray_start(
        [
            "--head",
            f"--node-ip-address={HEAD_IP}",
            f"--num-cpus={cpus}",
            f"--num-gpus={gpus}",
            f"--port={_free_port()}",
            f"--temp-dir={folder}",
            f"--ray-client-server-port={_free_port()}",
            f"--dashboard-agent-listen-port={_free_port()}",
            "--include-dashboard=false",
        ]
    )
    return (folder / "ray_current_cluster").read_text(encoding="utf-8").strip()


def start_worker(address: str, folder: Path, *, cpus: int = 1, gpus: int = 0) -> None:
    """Join a second node at :data:`WORKER_IP`, in ``folder``, to the cluster at ``address``."""
    _ray_start(
        [
            f"--address={address}",
            f"--node-ip-address={WORKER_IP}",
            f"--num-cpus={cpus}",
            f"--num-gpus={gpus}",
            f"--temp-dir={folder}",
            f"--dashboard-agent-listen-port={_free_port()}",
        ]
    )


@dataclass
class Cluster:
    """A running cluster: its address and the temporary folders of its two nodes."""

    address: str
    head_dir: Path
    worker_dir: Path


@contextlib.contextmanager
def ray_cluster(
    tmp_path_factory: pytest.TempPathFactory, *, head_gpus: int = 0, worker_gpus: int = 0
) -> Iterator[Cluster]:
    """A head and a second node, one CPU each, stopped on exit whatever happened."""
    head_dir = Path(tmp_path_factory.mktemp("rh"))
    worker_dir = Path(tmp_path_factory.mktemp("rw"))
    address = None
    try:
        address = start_head(head_dir, gpus=head_gpus)
        start_worker(address, worker_dir, gpus=worker_gpus)
        yield Cluster(address, head_dir, worker_dir)
    finally:
        stop_node(worker_dir)
        stop_node(head_dir, address)


def run_cli(*args: str, timeout: float = 600) -> subprocess.CompletedProcess[str]:
    """Run ``klea-stores-create ARGS`` in its own process, in the cluster's environment."""
    return subprocess.run(
        [CLI, *args], env=cluster_env(), capture_output=True, text=True, timeout=timeout
    )
