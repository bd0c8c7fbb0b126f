"""How many conversion workers run at once: the usable cores, as far as memory allows.

``--workers auto`` (the default) is :func:`auto_workers`: the cores this process may run on
(``os.sched_getaffinity``, so a container's or ``taskset``'s limit counts), but no more
workers than the memory available now holds at the per-worker cap (``--worker-mem-limit``),
and at least one. Without a cap, memory does not limit the count.
"""

from __future__ import annotations

import os

__all__ = ["auto_workers", "resolve_workers", "usable_cores"]


def usable_cores() -> int:
    """The CPU cores this process may run on (at least 1)."""
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except AttributeError:  # no sched_getaffinity on this platform (macOS, Windows)
        return max(1, os.cpu_count() or 1)


def _available_memory() -> int | None:
    try:
        import psutil

        return int(psutil.virtual_memory().available)
    except Exception:  # psutil missing or unreadable here: memory does not limit the count
        return None


def auto_workers(mem_limit_bytes: int | None) -> int:
    """min(usable cores, available memory // ``mem_limit_bytes``), at least 1."""
    count = usable_cores()
    available = _available_memory()
    if mem_limit_bytes is not None and available is not None:
        count = min(count, available // mem_limit_bytes)
    return max(1, count)


def resolve_workers(workers: int | None, mem_limit_bytes: int | None) -> int:
    """``workers`` as asked, or :func:`auto_workers` for ``None``.

    Raises:
        ValueError: ``workers`` is below 1.
    """
    if workers is None:
        return auto_workers(mem_limit_bytes)
    if workers < 1:
        raise ValueError(f"workers must be >= 1 (or None for auto), got {workers}")
    return workers
