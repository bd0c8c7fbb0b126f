"""A conversion worker's resident memory, and whether it is over the cap (``--mem-limit``).

Both the process-pool batches (:mod:`.batch_conversion`) and the Ray workers
(:mod:`.ray_worker`) stop taking files once their memory is over the cap.
"""

from __future__ import annotations

__all__ = ["over_cap", "rss_bytes"]


def rss_bytes() -> int | None:
    """This process's resident memory in bytes, or ``None`` where it cannot be read."""
    try:
        import psutil

        return int(psutil.Process().memory_info().rss)
    except Exception:  # RSS unavailable on this platform: the batch size bounds the worker
        return None


def over_cap(rss: int | None, cap: int | None) -> bool:
    """Whether resident memory ``rss`` is over the cap (never when either is unknown)."""
    return cap is not None and rss is not None and rss > cap
