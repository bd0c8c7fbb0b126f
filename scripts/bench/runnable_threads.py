"""How much parallelism a build offers the machine: its runnable threads, sampled from /proc.

Wall time on a shared machine measures the neighbours: a build whose two threads both want a
core gets one when three other engineers' jobs run. What the build *could* use does not
depend on them: a thread in state ``R`` (``/proc/<pid>/task/<tid>/stat``) is running or
waiting for a core, one in ``S``/``D`` waits for something of the build's own (a pipe, a
lock, the disk). So :class:`RunnableSampler` reads, every ``interval`` seconds (50 ms), the
state of every thread of the build's process tree (the CLI, its conversion workers, their
tesseract runs; the tree is followed through ``/proc/<pid>/task/<tid>/children``) and the
tree's CPU time (``utime + stime + cutime + cstime`` of each live process: a reaped child's
time is in its parent's ``c*time``). :func:`report` then gives, per phase of the build:

- the share of wall time with 2+ runnable threads (the build keeps two cores busy), with
  exactly one (serial) and with none (every thread waits);
- the mean number of runnable threads and the cores the tree used (CPU / wall);
- the *serial stretches*: runs of samples with fewer than two runnable threads (a single
  sample of two or more inside does not end one), with how long they lasted, the phase
  they fell in and which process held the one runnable thread most of the time
  (``parent`` is the CLI's main thread, ``parent thread`` another thread of it, such as
  the embedding-while-converting thread; ``worker <pid>``; ``tesseract``).

The sampler runs in the bench's own process, so its CPU is not the build's; it reads only
``/proc`` (Linux). Used by ``build_phases.py --runnable`` (``pdf_wild.py --runnable``).
"""

from __future__ import annotations

import collections
import itertools
import os
import threading
import time
from dataclasses import dataclass, field

_TICKS = os.sysconf("SC_CLK_TCK") if hasattr(os, "sysconf") else 100


@dataclass(frozen=True)
class Sample:
    """One look at the tree: when (seconds from the build's start), who was runnable, CPU."""

    t: float
    runnable: tuple[str, ...]
    cpu_s: float
    alive: bool = True
    """Whether the build's own process was still there (its CPU is then the tree's)."""


@dataclass
class Stretch:
    """A run of samples with fewer than two runnable threads."""

    start: float
    end: float
    phase: str
    holders: collections.Counter[str] = field(default_factory=collections.Counter)

    @property
    def seconds(self) -> float:
        return self.end - self.start

    def holder(self) -> str:
        """The process most often the one runnable, or ``nothing`` when none ever was."""
        return self.holders.most_common(1)[0][0] if self.holders else "nothing runnable"


def _read(path: str) -> str:
    try:
        with open(path, encoding="ascii", errors="replace") as fh:
            return fh.read()
    except OSError:  # the thread or process ended between the listing and the read
        return ""


def _stat_fields(text: str) -> tuple[str, list[str]]:
    """``(comm, fields after comm)`` of a ``stat`` line (comm may hold blanks)."""
    left, right = text.find("("), text.rfind(")")
    if left < 0 or right < 0:
        return "", []
    return text[left + 1 : right], text[right + 2 :].split()


class RunnableSampler(threading.Thread):
    """Sample the process tree of ``pid`` every ``interval`` s until :attr:`done` is set."""

    def __init__(self, pid: int, start: float, interval: float = 0.05) -> None:
        super().__init__(daemon=True)
        self.root = pid
        self.start_time = start
        self.interval = interval
        self.samples: list[Sample] = []
        self.done = threading.Event()

    def _tree(self) -> list[int]:
        pids, todo = [], [self.root]
        while todo:
            pid = todo.pop()
            pids.append(pid)
            try:
                tids = os.listdir(f"/proc/{pid}/task")
            except OSError:
                continue
            for tid in tids:
                todo.extend(int(c) for c in _read(f"/proc/{pid}/task/{tid}/children").split())
        return pids

    def _role(self, pid: int, tid: int, comm: str) -> str:
        if pid == self.root:
            return "parent" if tid == pid else "parent thread"
        if comm.startswith("tesseract"):
            return "tesseract"
        return f"worker {pid}"

    def sample(self) -> Sample:
        """One look at the tree now."""
        now = time.perf_counter() - self.start_time
        runnable: list[str] = []
        ticks = 0
        alive = False
        for pid in self._tree():
            comm, fields = _stat_fields(_read(f"/proc/{pid}/stat"))
            alive = alive or (pid == self.root and bool(fields) and fields[0] != "Z")
            if len(fields) > 14:  # utime, stime, cutime, cstime are fields 14-17 of stat
                ticks += sum(int(v) for v in fields[11:15])
            try:
                tids = os.listdir(f"/proc/{pid}/task")
            except OSError:
                continue
            for tid in tids:
                _, task = _stat_fields(_read(f"/proc/{pid}/task/{tid}/stat"))
                if task and task[0] == "R":
                    runnable.append(self._role(pid, int(tid), comm))
        return Sample(now, tuple(runnable), ticks / _TICKS, alive)

    def run(self) -> None:
        while not self.done.is_set():
            self.samples.append(self.sample())
            time.sleep(self.interval)


def phase_of(t: float, marks: dict[str, float]) -> str:
    """The build phase at ``t`` from the marks' times (``start``, ``converted``, ``stored``)."""
    if t < marks.get("start", float("inf")):
        return "start-up"
    if t < marks.get("converted", float("inf")):
        return "conversion+chunking"
    if t < marks.get("stored", float("inf")):
        return "embedding+store"
    return "finish"


PHASES = ("start-up", "conversion+chunking", "embedding+store", "finish")


@dataclass
class PhaseParallelism:
    """What one phase offered: seconds with 2+, 1 and 0 runnable threads; CPU; mean."""

    wall_s: float = 0.0
    two_plus_s: float = 0.0
    one_s: float = 0.0
    none_s: float = 0.0
    cpu_s: float = 0.0
    runnable_s: float = 0.0
    """Runnable threads times seconds (the mean is this over ``wall_s``)."""

    def as_dict(self) -> dict[str, float | None]:
        wall = self.wall_s or float("nan")
        return {
            "wall_s": round(self.wall_s, 1),
            "share_2plus": round(self.two_plus_s / wall, 3) if self.wall_s else None,
            "share_1": round(self.one_s / wall, 3) if self.wall_s else None,
            "share_0": round(self.none_s / wall, 3) if self.wall_s else None,
            "mean_runnable": round(self.runnable_s / wall, 2) if self.wall_s else None,
            "cpu_s": round(self.cpu_s, 1),
            "cores": round(self.cpu_s / wall, 2) if self.wall_s else None,
        }


@dataclass
class RunnableReport:
    """Per-phase parallelism and the serial stretches of one build."""

    phases: dict[str, PhaseParallelism]
    stretches: list[Stretch]
    samples: int
    interval_s: float

    def as_dict(self, longest: int = 20) -> dict[str, object]:
        return {
            "samples": self.samples,
            "mean_interval_s": round(self.interval_s, 3),
            "phases": {name: p.as_dict() for name, p in self.phases.items()},
            "serial_stretches": [
                {
                    "start_s": round(s.start, 2),
                    "seconds": round(s.seconds, 2),
                    "phase": s.phase,
                    "holder": s.holder(),
                }
                for s in sorted(self.stretches, key=lambda s: -s.seconds)[:longest]
            ],
        }


def report(
    samples: list[Sample], marks: dict[str, float], min_stretch: float = 0.5
) -> RunnableReport:
    """Fold ``samples`` into per-phase figures and stretches of at least ``min_stretch`` s."""
    phases = {name: PhaseParallelism() for name in PHASES}
    stretches: list[Stretch] = []
    current: Stretch | None = None
    blip = 0  # samples of 2+ inside the current stretch, in a row
    samples = [s for s in samples if s.alive]  # the exit's last look holds no CPU
    for here, after in itertools.pairwise(samples):
        dt = after.t - here.t
        phase = phase_of(here.t, marks)
        p = phases[phase]
        count = len(here.runnable)
        p.wall_s += dt
        p.cpu_s += after.cpu_s - here.cpu_s
        p.runnable_s += count * dt
        if count >= 2:
            p.two_plus_s += dt
        elif count == 1:
            p.one_s += dt
        else:
            p.none_s += dt
        if count < 2:
            blip = 0
            if current is None or current.phase != phase:
                current = _close(current, stretches, min_stretch)
                current = Stretch(here.t, after.t, phase)
            current.end = after.t
            current.holders.update(here.runnable)
        elif current is not None:
            blip += 1
            if blip > 1:
                current = _close(current, stretches, min_stretch)
    _close(current, stretches, min_stretch)
    span = samples[-1].t - samples[0].t if len(samples) > 1 else 0.0
    interval = span / (len(samples) - 1) if len(samples) > 1 else 0.0
    return RunnableReport(phases, stretches, len(samples), interval)


def _close(stretch: Stretch | None, into: list[Stretch], minimum: float) -> None:
    if stretch is not None and stretch.seconds >= minimum:
        into.append(stretch)


def print_report(label: str, rep: RunnableReport, longest: int = 8) -> None:
    """The per-phase table and the longest serial stretches of one build."""
    print(
        f"\n-- {label}: runnable threads of the build ({rep.samples} samples, one every "
        f"{1000 * rep.interval_s:.0f} ms)"
    )
    print(
        f"{'phase':<22} {'wall s':>8} {'>=2 run':>8} {'1 run':>7} {'0 run':>7} "
        f"{'mean':>6} {'cores':>6} {'serial s':>9}"
    )
    serial = collections.Counter[str]()
    for s in rep.stretches:
        serial[s.phase] += s.seconds
    for name, p in rep.phases.items():
        if not p.wall_s:
            continue
        d = p.as_dict()
        print(
            f"{name:<22} {p.wall_s:8.1f} {d['share_2plus']:8.2f} {d['share_1']:7.2f} "
            f"{d['share_0']:7.2f} {d['mean_runnable']:6.2f} {d['cores']:6.2f} "
            f"{serial[name]:9.1f}"
        )
    if rep.stretches:
        print(f"longest stretches with fewer than 2 runnable threads (of {len(rep.stretches)}):")
        for s in sorted(rep.stretches, key=lambda s: -s.seconds)[:longest]:
            print(f"  {s.seconds:6.1f} s at {s.start:7.1f} s  {s.phase:<20} {s.holder()}")
