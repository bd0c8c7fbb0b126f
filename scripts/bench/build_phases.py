"""Run ``klea-stores-create build`` and time its phases; optionally the same build of another ref.

Used by ``pdf_wild.py`` and ``ingest.py``. One build is one process tree: the CLI, its
spawned conversion workers and their tesseract processes. The build runs with ``-v``, and
its phases are cut at log lines the CLI prints at INFO on stderr, which the code before this
bench prints too (so the baseline is timed the same way):

- *conversion+chunking*: from ``N source file(s): ...`` to ``Conversion: ...`` (or to the
  first line when nothing is left to convert);
- *embedding+store*: from there to ``Store <uri> collection ...``;
- *rest*: the whole run less those two (start-up and imports, the metadata template, the
  citation links, exit).

At each cut the CLI process's CPU time is read (``psutil``: its own user+system time plus
that of its reaped children; every conversion worker, and the tesseract runs it waited for,
has been joined before ``Conversion:`` is logged). The whole run's CPU time is the
``RUSAGE_CHILDREN`` difference around it. Cores used = CPU / wall.

*Against the code before the work* (``--baseline-ref REF``): ``git worktree add --detach``
of REF in a temporary folder, then the same build run with this interpreter and virtual
environment, the checkout's ``packages/*/src`` folders replaced on ``sys.path`` by the
baseline's (spawned workers inherit that ``sys.path``). Dependencies are this venv's, so a
ref that needs other dependencies is not comparable this way.
"""

from __future__ import annotations

import contextlib
import os
import re
import resource
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

import psutil
from runnable_threads import RunnableReport, RunnableSampler, print_report, report

ROOT = Path(__file__).resolve().parents[2]
PHASES = ("conversion+chunking", "embedding+store", "rest")

CHECKOUT_IMPORTS = """
import sys
here, there = sys.argv[1], sys.argv[2]
if there:
    sys.path = [p for p in sys.path if not p.startswith(here + "/packages/")]
    sys.path[1:1] = [there + "/packages/" + d + "/src"
                     for d in ("klea-ingest", "klea-retrieval", "sci-etl-search")]
"""
"""The opening of a ``python -c`` program run as ``-c PROGRAM HERE THERE ...``: with
``THERE`` (another checkout) not empty, the klea packages are imported from it instead of
from ``HERE`` (this one); the program's own arguments start at ``sys.argv[3]``."""

_BOOT = (
    CHECKOUT_IMPORTS
    + """
sys.argv = ["klea-stores-create", *sys.argv[3:]]
from klea_utils.stores.cli import main
main()
"""
)
_START = re.compile(r"\d+ source file\(s\): \d+ cached, (\d+) to convert")
_CONVERTED = re.compile(r"Conversion: \d+ ok")
_STORED = re.compile(r"Store .+ collection '")


@dataclass
class PhaseFigures:
    """Wall and CPU seconds of one phase (or of the whole run)."""

    wall_s: float
    cpu_s: float

    def row(self, name: str, pages: int) -> str:
        cores = self.cpu_s / self.wall_s if self.wall_s > 0 else 0.0
        per_wall = pages / (self.wall_s / 60) if self.wall_s > 0 else 0.0
        per_cpu = pages / (self.cpu_s / 60) if self.cpu_s > 0 else 0.0
        return (
            f"{name:<22} {self.wall_s:8.1f} {self.cpu_s:8.1f} {cores:6.2f} "
            f"{per_wall:10.1f} {per_cpu:10.1f}"
        )


@dataclass
class TimedBuild:
    """One build: exit status, output, phases, whole run, peak RSS."""

    label: str
    returncode: int
    stdout: str
    stderr: str
    phases: dict[str, PhaseFigures]
    total: PhaseFigures
    peak_rss_tree: int = 0
    peak_rss_process: int = 0
    peak_workers_alive: int = 0
    marks: dict[str, tuple[float, float]] = field(default_factory=dict)
    runnable: RunnableReport | None = None
    """The build's runnable threads per phase (``runnable_threads.py``), when sampled."""


def _cpu(proc: psutil.Process) -> float:
    times = proc.cpu_times()
    return times.user + times.system + times.children_user + times.children_system


class _TreeSampler(threading.Thread):
    """Peak RSS of a process tree (sum, largest process) and most conversion workers at once."""

    def __init__(self, pid: int) -> None:
        super().__init__(daemon=True)
        self.root = psutil.Process(pid)
        self.peak_sum = 0
        self.peak_one = 0
        self.peak_workers = 0
        self.done = threading.Event()

    def run(self) -> None:
        while not self.done.is_set():
            try:
                procs = [self.root, *self.root.children(recursive=True)]
            except psutil.Error:
                break
            rss, workers = [], 0
            for proc in procs:
                with contextlib.suppress(psutil.Error):
                    rss.append(proc.memory_info().rss)
                    workers += proc.ppid() == self.root.pid and "spawn_main" in " ".join(
                        proc.cmdline()
                    )
            self.peak_sum = max(self.peak_sum, sum(rss))
            self.peak_one = max(self.peak_one, max(rss, default=0))
            self.peak_workers = max(self.peak_workers, workers)
            time.sleep(0.1)


def run_plan(
    baseline_ref: str | None, also: list[str], build_arg: list[str]
) -> list[tuple[str, bool, list[str]]]:
    """The builds to time, as ``(label, of the baseline tree, build arguments)``: the
    baseline ref (if any), each ``--also 'LABEL:ARGS'`` variant, then this code."""
    plan: list[tuple[str, bool, list[str]]] = []
    if baseline_ref:
        plan.append((f"baseline {baseline_ref}", True, build_arg))
    for variant in also:
        label, _, extra = variant.partition(":")
        plan.append((label, False, [*build_arg, *extra.split()]))
    plan.append(("this code", False, build_arg))
    return plan


@contextlib.contextmanager
def baseline_tree(ref: str | None) -> Iterator[Path | None]:
    """A detached worktree of ``ref`` (removed afterwards), or ``None`` without a ref."""
    if not ref:
        yield None
        return
    folder = Path(tempfile.mkdtemp(prefix="klea-baseline-")) / "tree"
    subprocess.run(
        ["git", "-C", str(ROOT), "worktree", "add", "--detach", "--quiet", str(folder), ref],
        check=True,
    )
    try:
        yield folder
    finally:
        subprocess.run(
            ["git", "-C", str(ROOT), "worktree", "remove", "--force", str(folder)], check=False
        )


def run_build(
    label: str,
    code: Path | None,
    build_args: list[str],
    env_extra: dict[str, str] | None = None,
    *,
    runnable: bool = False,
) -> TimedBuild:
    """Run ``klea-stores-create build *build_args`` with ``code``'s sources (None: this tree);
    with ``runnable``, also sample its runnable threads every 50 ms (``runnable_threads.py``)."""
    cmd = [sys.executable, "-c", _BOOT, str(ROOT), str(code or ""), "build", "-v", *build_args]
    env = {**os.environ, "HF_HUB_OFFLINE": "1", "PYTHONUNBUFFERED": "1", **(env_extra or {})}
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)
    watched = psutil.Process(proc.pid)
    sampler = _TreeSampler(proc.pid)
    sampler.start()
    threads = RunnableSampler(proc.pid, start) if runnable else None
    if threads is not None:
        threads.start()
    out: list[str] = []
    reader = threading.Thread(target=lambda: out.append(proc.stdout.read() if proc.stdout else ""))
    reader.start()
    marks: dict[str, tuple[float, float]] = {}
    err: list[str] = []
    assert proc.stderr is not None
    for line in proc.stderr:
        err.append(line)
        mark = _mark_of(line, marks)
        if mark is not None:
            with contextlib.suppress(psutil.Error):
                marks[mark] = (time.perf_counter() - start, _cpu(watched))
            nothing_to_convert = _START.search(line)
            if mark == "start" and nothing_to_convert and nothing_to_convert.group(1) == "0":
                marks["converted"] = marks.get("start", (0.0, 0.0))
    proc.wait()
    reader.join()
    wall = time.perf_counter() - start
    sampler.done.set()
    sampler.join()
    if threads is not None:
        threads.done.set()
        threads.join()
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    total = PhaseFigures(wall, cpu)
    return TimedBuild(
        label,
        proc.returncode,
        "".join(out),
        "".join(err),
        _phases(marks, total),
        total,
        sampler.peak_sum,
        max(sampler.peak_one, after.ru_maxrss * 1024),
        sampler.peak_workers,
        marks,
        None if threads is None else report(threads.samples, {k: v[0] for k, v in marks.items()}),
    )


def _mark_of(line: str, marks: dict[str, tuple[float, float]]) -> str | None:
    if "start" not in marks and _START.search(line):
        return "start"
    if "converted" not in marks and _CONVERTED.search(line):
        return "converted"
    if "stored" not in marks and _STORED.search(line):
        return "stored"
    return None


def _phases(marks: dict[str, tuple[float, float]], total: PhaseFigures) -> dict[str, PhaseFigures]:
    """The three phases from the marks; a phase whose marks are missing is ``nan``."""
    nan = float("nan")

    def between(a: str, b: str) -> PhaseFigures:
        if a not in marks or b not in marks:
            return PhaseFigures(nan, nan)
        return PhaseFigures(marks[b][0] - marks[a][0], marks[b][1] - marks[a][1])

    conversion = between("start", "converted")
    store = between("converted", "stored")
    rest = PhaseFigures(
        total.wall_s - conversion.wall_s - store.wall_s,
        total.cpu_s - conversion.cpu_s - store.cpu_s,
    )
    return {PHASES[0]: conversion, PHASES[1]: store, PHASES[2]: rest}


def print_phases(runs: list[TimedBuild], pages: int) -> None:
    """One table per run, then the ratios of each run to the first (the baseline if any)."""
    head = (
        f"{'phase':<22} {'wall s':>8} {'CPU s':>8} {'cores':>6} "
        f"{'pages/wmin':>10} {'pages/cmin':>10}"
    )
    for run in runs:
        print(
            f"\n== {run.label}: exit {run.returncode}, {pages} pages, "
            f"at most {run.peak_workers_alive} conversion worker(s) alive at once, "
            f"peak RSS {run.peak_rss_tree / 2**30:.2f} GiB (tree) / "
            f"{run.peak_rss_process / 2**30:.2f} GiB (largest process)"
        )
        print(head)
        for name in PHASES:
            print(run.phases[name].row(name, pages))
        print(run.total.row("whole run", pages))
        if run.runnable is not None:
            print_report(run.label, run.runnable)
    if len(runs) < 2:
        return
    first = runs[0]
    print(f"\nratios to {first.label} (wall, CPU; below 1 is faster / cheaper)")
    for run in runs[1:]:
        for name in (*PHASES, "whole run"):
            a = first.total if name == "whole run" else first.phases[name]
            b = run.total if name == "whole run" else run.phases[name]
            print(
                f"  {run.label:<20} {name:<22} wall {b.wall_s / a.wall_s:5.2f}  "
                f"CPU {b.cpu_s / a.cpu_s:5.2f}"
            )


def summary(run: TimedBuild, pages: int) -> dict[str, object]:
    """The figures of ``run`` as JSON-ready values."""

    def figures(p: PhaseFigures) -> dict[str, float | None]:
        ok = p.wall_s == p.wall_s and p.wall_s > 0 and p.cpu_s > 0
        return {
            "wall_s": round(p.wall_s, 1),
            "cpu_s": round(p.cpu_s, 1),
            "cores": round(p.cpu_s / p.wall_s, 2) if ok else None,
            "pages_per_wall_min": round(pages / (p.wall_s / 60), 1) if ok else None,
            "pages_per_cpu_min": round(pages / (p.cpu_s / 60), 1) if ok else None,
        }

    return {
        "label": run.label,
        "exit_status": run.returncode,
        "phases": {name: figures(run.phases[name]) for name in PHASES},
        "whole_run": figures(run.total),
        "peak_workers_alive": run.peak_workers_alive,
        "runnable": None if run.runnable is None else run.runnable.as_dict(),
    }
