"""The bench's runnable-thread measure (``scripts/bench/runnable_threads.py``, issue 40).

Its fold of samples into phases and serial stretches, and one real sampling of a process
tree from ``/proc``: two busy processes under a shell are two runnable threads.
"""

from __future__ import annotations

import subprocess
import sys
import time
from pathlib import Path

sys.path.append(str(Path(__file__).resolve().parents[1] / "scripts" / "bench"))

from runnable_threads import RunnableSampler, Sample, report

MARKS = {"start": 1.0, "converted": 3.0, "stored": 4.0}


def _samples(counts: list[int], step: float = 0.1) -> list[Sample]:
    """One look every ``step`` s with ``counts[i]`` runnable; each busy thread (two at
    most, the cores) adds ``step`` CPU-s until the next look."""
    out, cpu = [], 0.0
    for i, n in enumerate(counts):
        out.append(Sample(i * step, ("worker 7",) * n, cpu_s=cpu))
        cpu += step * min(n, 2)
    return out


def test_shares_and_stretches_per_phase() -> None:
    # start-up 0-1 s one thread; conversion 1-3 s two, with one 0.5 s serial dip;
    # store 3-4 s one thread with a lone sample of two inside; finish 4-4.5 s none
    counts = [1] * 10 + [2] * 8 + [1] * 5 + [2] * 7 + [1] * 4 + [2] + [1] * 5 + [0] * 6
    rep = report(_samples(counts), MARKS, min_stretch=0.3)
    conversion = rep.phases["conversion+chunking"]
    assert round(conversion.wall_s, 6) == 2.0
    assert round(conversion.two_plus_s / conversion.wall_s, 6) == 0.75
    assert round(conversion.cpu_s, 6) == 3.5
    store = rep.phases["embedding+store"]
    assert round(store.one_s, 6) == 0.9
    assert round(store.two_plus_s, 6) == 0.1
    got = [(s.phase, round(s.seconds, 6), s.holder()) for s in rep.stretches]
    assert got == [
        ("start-up", 1.0, "worker 7"),
        ("conversion+chunking", 0.5, "worker 7"),
        ("embedding+store", 1.0, "worker 7"),  # one sample of two does not end a stretch
        ("finish", 0.5, "nothing runnable"),
    ]


def test_a_dead_build_adds_no_cpu() -> None:
    samples = [*_samples([2, 2, 2]), Sample(0.3, (), cpu_s=0.0, alive=False)]
    rep = report(samples, {}, min_stretch=10)
    assert round(rep.phases["start-up"].cpu_s, 6) == 0.4  # not the dead look's 0
    assert round(rep.phases["start-up"].wall_s, 6) == 0.2


def test_two_busy_processes_are_two_runnable_threads() -> None:
    busy = "import time\nend = time.time() + 1.0\nwhile time.time() < end: pass\n"
    script = f"{sys.executable} -c '{busy}' & {sys.executable} -c '{busy}' & wait"
    proc = subprocess.Popen(["sh", "-c", script])
    sampler = RunnableSampler(proc.pid, time.perf_counter(), interval=0.02)
    sampler.start()
    proc.wait()
    sampler.done.set()
    sampler.join()
    rep = report(sampler.samples, {})
    start_up = rep.phases["start-up"]
    assert start_up.two_plus_s / start_up.wall_s > 0.5
    assert start_up.cpu_s > 0.5
