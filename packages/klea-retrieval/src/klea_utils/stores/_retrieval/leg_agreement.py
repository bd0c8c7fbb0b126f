"""The places inside a file that the legs leave open to the focus.

The focus (:mod:`~klea_utils.stores._retrieval.passage_focus`) re-orders a file's
passages by the question's words. The legs that read the question differently (the
embedder, the lexical index) also rank the file's passages, and where they agree their
order is stronger evidence than the focus's word counts: on the development papers a
passage every leg ranked first in its file was moved to second by a passage the legs put
seventh to tenth.

A passage's places among its file's passages in each list (its *file-rank* there) give
it a *best* place (the highest any list gives it) and, when every list holds it, a
*worst* place. Both are known only when the lists come from two legs or more (a domain
asked through one leg only is ordered by the focus freely). The focus then orders each
file's passages as before, within two limits (:func:`order_within_legs`):

- ``keep_worst``: a passage never ends below its worst place (a passage every leg ranks
  first in its file keeps first place);
- ``lift``: a passage never ends more than ``lift`` places above its best place (the
  focus may lift a passage the legs put deep in the file, but not past all the passages
  the legs put before it).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass

from langchain_core.documents import Document

__all__ = ["LegPlaces", "leg_places", "order_within_legs"]


@dataclass(frozen=True)
class LegPlaces:
    """A passage's places in its file over the legs' lists (1: first).

    Attributes:
        best: The highest place any list gives it.
        worst: The lowest place every list gives it (``None``: a list misses it).
    """

    best: int
    worst: int | None

    def __post_init__(self) -> None:
        if self.best < 1 or (self.worst is not None and self.worst < self.best):
            raise ValueError(f"places must be 1 <= best <= worst, got {self.best}, {self.worst}")


def leg_places(
    lists: Sequence[tuple[str, Sequence[Document]]],
    key_of: Callable[[Document], str],
    file_of: Callable[[Document], str],
) -> dict[str, LegPlaces]:
    """Each passage's places in its file, by ``key_of``; empty unless the lists come
    from two legs or more.

    ``lists``: ``(leg, passages best first)`` per list.
    """
    if len({leg for leg, _ in lists}) < 2:
        return {}
    best: dict[str, int] = {}
    worst: dict[str, int] = {}
    seen: dict[str, int] = {}
    for _, passages in lists:
        places: dict[str, int] = {}
        counted: set[str] = set()
        for doc in passages:
            key = key_of(doc)
            if key in counted:
                continue
            counted.add(key)
            file = file_of(doc)
            places[file] = places.get(file, 0) + 1
            best[key] = min(best.get(key, places[file]), places[file])
            worst[key] = max(worst.get(key, 0), places[file])
            seen[key] = seen.get(key, 0) + 1
    return {
        key: LegPlaces(place, worst[key] if seen[key] == len(lists) else None)
        for key, place in best.items()
    }


def order_within_legs(
    ranked: Sequence[int],
    places: Mapping[int, LegPlaces],
    keep_worst: bool = True,
    lift: int | None = None,
) -> list[int]:
    """``ranked`` (one file's passages, best focused first) within the legs' limits.

    At each place the best focused passage that ``lift`` allows there goes (none
    allowed: the one allowed soonest), unless the places left would then be too few for
    the passages whose worst place is near: then the one of the nearest worst place goes.
    Worst places come from rankings of the same passages, so at most ``p`` passages have
    a worst place of ``p`` or above, and every one is kept. A passage without places is
    free.
    """
    deadlines = {
        i: worst
        for i in ranked
        if keep_worst and i in places and (worst := places[i].worst) is not None
    }
    waiting = list(ranked)
    out: list[int] = []
    while waiting:
        place = len(out) + 1
        if lift is None:
            chosen = waiting[0]
        else:

            def earliest(i: int) -> int:
                return places[i].best - lift if i in places else 1

            allowed = [i for i in waiting if earliest(i) <= place]
            chosen = allowed[0] if allowed else min(waiting, key=earliest)
        pending = sorted(deadlines[i] for i in waiting if i in deadlines and i != chosen)
        # the n-th nearest worst place left must be at least n places after this one
        if any(worst < place + n for n, worst in enumerate(pending, start=1)):
            chosen = min((i for i in waiting if i in deadlines), key=lambda i: deadlines[i])
        out.append(chosen)
        waiting.remove(chosen)
    return out
