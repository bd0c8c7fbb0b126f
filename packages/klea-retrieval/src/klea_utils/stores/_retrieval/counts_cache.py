"""Library word counts kept on disk between processes, while their store is unchanged.

Counting a store's words reads all its texts (about 1.7 s of CPU for 11,500 chunks): a
``klea-retrieve`` call per question would pay it every time. The counts are kept as JSON
in ``$KLEA_TERM_COUNTS_CACHE`` when set, else ``$XDG_CACHE_HOME/klea/term-counts``
(``~/.cache/klea/term-counts``), one file per store, named by a digest of the store's
place (nothing of the path shows in the name). Each file records the store's signature
(its files' sizes and modification times, and its chunk count where the store tells): a
store written since is counted again. The cache is never needed: a file that cannot be
read or written, or holds anything but counts, is ignored (JSON only: nothing in it runs).
"""

from __future__ import annotations

import hashlib
import json
import logging
import os
import tempfile
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

__all__ = ["CACHE_ENV_VAR", "CountsCache", "cache_folder"]

CACHE_ENV_VAR = "KLEA_TERM_COUNTS_CACHE"
COUNTING_VERSION = 1
"""Bumped whenever the words are cut or stemmed differently: older files then miss."""
_LOG = logging.getLogger(__name__)

Counts = tuple[int, dict[str, int]]
"""How many passages, and how many hold each term."""


def cache_folder() -> Path:
    """Where the counts files live (see the module's description)."""
    env = os.environ.get(CACHE_ENV_VAR)
    if env:
        return Path(env).expanduser()
    base = os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache"
    return Path(base).expanduser() / "klea" / "term-counts"


@dataclass(frozen=True)
class CountsCache:
    """The counts file of one store and how to tell whether the store changed since."""

    store: str
    """What the store is, for the name of its file (a kind, a resolved place, a name)."""
    files: Sequence[Path]
    """The store's files whose size and modification time sign it (missing ones skipped)."""
    extra: Callable[[], Any] = lambda: None
    """Anything else that signs the store (a collection's chunk count)."""

    def path(self) -> Path:
        digest = hashlib.sha256(f"{COUNTING_VERSION}\0{self.store}".encode()).hexdigest()
        return cache_folder() / f"{digest[:32]}.json"

    def signature(self) -> list[Any]:
        stats = [(f.name, f.stat()) for f in self.files if f.exists()]
        return [[name, st.st_size, st.st_mtime_ns] for name, st in stats] + [self.extra()]

    def load(self, signature: list[Any]) -> Counts | None:
        """The kept counts when they were made from the store as it is now."""
        try:
            kept = json.loads(self.path().read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return None
        if not isinstance(kept, dict) or kept.get("signature") != signature:
            return None
        passages, holders = kept.get("passages"), kept.get("holders")
        if not isinstance(passages, int) or not isinstance(holders, dict):
            return None
        if not all(isinstance(t, str) and type(n) is int for t, n in holders.items()):
            return None
        return passages, holders

    def save(self, signature: list[Any], counts: Counts) -> None:
        """Keep ``counts`` (atomically); a folder that cannot be written is skipped."""
        target = self.path()
        passages, holders = counts
        payload = {"signature": signature, "passages": passages, "holders": holders}
        try:
            target.parent.mkdir(parents=True, exist_ok=True)
            handle, name = tempfile.mkstemp(dir=target.parent, suffix=".tmp")
        except OSError as exc:
            _LOG.debug("library counts not kept (%s)", type(exc).__name__)
            return
        try:
            with os.fdopen(handle, "w", encoding="utf-8") as out:
                json.dump(payload, out)
            os.replace(name, target)
        except OSError as exc:
            Path(name).unlink(missing_ok=True)
            _LOG.debug("library counts not kept (%s)", type(exc).__name__)
