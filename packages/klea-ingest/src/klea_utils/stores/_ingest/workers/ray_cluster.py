"""Joining a Ray cluster for ingestion: the import, the connection and the worker slots.

Only the Ray paths import this module, so a single-machine run never imports Ray.
``address`` is what ``--ray`` takes: ``auto`` joins the cluster a ``ray start`` made on
this host (or ``RAY_ADDRESS``), ``local`` starts a private Ray instance for this process,
anything else (``host:port``, ``ray://host:10001``) is handed to ``ray.init``. A process
already connected to Ray (``ray.init`` called by the application) keeps its connection.
"""

from __future__ import annotations

import logging
import os
from typing import Any

from klea_utils.stores.ingest_exceptions import ClusterError, RayUnavailableError

__all__ = [
    "actor_options",
    "connect",
    "import_ray",
    "node_label",
    "wants_gpu",
    "worker_device",
    "worker_slots",
]

_log = logging.getLogger(__name__)


def import_ray() -> Any:
    """Import ``ray``, or raise an ``ImportError`` naming the extra to install."""
    # Ray re-runs a driver started by `uv run` through `uv run` on its workers, which
    # fails outside the project folder; the workers use the installed environment instead.
    os.environ.setdefault("RAY_ENABLE_UV_RUN_RUNTIME_ENV", "0")
    try:
        import ray
    except ImportError as exc:
        raise RayUnavailableError(
            "--ray / ray_address needs Ray: pip install 'klea-ingest[ray]' "
            "(on the driver and on every host of the cluster)"
        ) from exc
    return ray


PRIVATE_NODE_IP = "127.0.0.2"
"""Node address of the private local instance (``--ray local``): a loopback address."""


def connect(address: str, logger: logging.Logger) -> Any:
    """Connect this process to Ray at ``address`` (once); return the ``ray`` module."""
    if not address or not address.strip():
        raise ValueError("ray address must be 'auto', 'local' or host:port, got an empty string")
    ray = import_ray()
    if ray.is_initialized():
        return ray
    options: dict[str, Any] = {"log_to_driver": False, "configure_logging": False}
    if address == "local":
        # A private instance talks over loopback only. Ray replaces 127.0.0.1 with the
        # host's network address, but keeps any other loopback address.
        options.update(include_dashboard=False, _node_ip_address=PRIVATE_NODE_IP)
    try:
        ray.init(address=address, **options)
    except (ConnectionError, RuntimeError, ValueError) as exc:
        raise ClusterError(f"cannot join the Ray cluster at {address!r}: {exc}") from exc
    resources = ray.cluster_resources()
    logger.info(
        "Ray: %s cluster with %d node(s), %g CPU(s), %g GPU(s)",
        "a private local" if address == "local" else f"joined the {address}",
        len([n for n in ray.nodes() if n.get("Alive")]),
        resources.get("CPU", 0),
        resources.get("GPU", 0),
    )
    return ray


def wants_gpu(device: str) -> bool:
    """Whether a run on ``device`` asks Ray for a GPU per worker (CUDA devices only)."""
    return device == "cuda" or device.startswith("cuda:")


def worker_device(device: str) -> str:
    """The device a Ray worker uses: Ray hands it one GPU, visible to it as ``cuda``."""
    return "cuda" if wants_gpu(device) else device


def actor_options(device: str) -> dict[str, Any]:
    """Ray actor options for one worker: one CPU, plus one GPU on a CUDA run; no restarts."""
    options: dict[str, Any] = {"num_cpus": 1, "max_restarts": 0, "max_task_retries": 0}
    if wants_gpu(device):
        options["num_gpus"] = 1
    return options


def worker_slots(ray: Any, device: str) -> int:
    """How many workers the cluster holds at once: its GPUs on a CUDA run, else its CPUs."""
    resources = ray.cluster_resources()
    count = int(resources.get("GPU", 0) if wants_gpu(device) else resources.get("CPU", 0))
    if count < 1:
        kind = "GPU" if wants_gpu(device) else "CPU"
        raise ClusterError(
            f"the Ray cluster has no {kind} for a conversion worker (resources: {resources}); "
            "start its hosts with 'ray start' and check 'ray status'"
        )
    return count


def node_label(ray: Any, node_id: str) -> str:
    """A readable name of a node: its address (and name when it has one), else its id."""
    for node in ray.nodes():
        if node.get("NodeID") == node_id:
            address = str(node.get("NodeManagerAddress") or "")
            name = str(node.get("NodeName") or "")
            if name and name != address:
                return f"{name} ({address})"
            return address or node_id[:12]
    return node_id[:12]
