"""The Ray dispatcher's rules, driven by a scripted stand-in for the ``ray`` module.

Each file's fate is scripted by its name: ``ok`` files convert, ``error`` files fail in
Docling, ``crash`` files kill every worker that converts them, ``once`` files kill the
first worker only, ``big`` files leave the worker over a 100-byte memory cap. As on Ray,
a worker runs its calls in the order they were sent, a dead worker answers every later
call with an error, and a worker over its cap answers later calls ``deferred``. The real
cluster is exercised by test_ray_parity, test_ray_cluster and test_ray_gpu_placement;
here the retry, poison, retirement, pipelining and node-naming rules are checked in
milliseconds.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass, field
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest
from klea_utils.stores._ingest.workers.ray_conversion import convert_on_ray
from klea_utils.stores._ingest.workers.ray_worker import RayFileResult, over_cap
from klea_utils.stores.chunk_cache import ChunkCache, compute_file_hash
from klea_utils.stores.chunk_worker import ChunkWorkerConfig
from klea_utils.stores.ingest_exceptions import ClusterError
from langchain_core.documents import Document


class RayError(Exception):
    pass


class RayActorError(RayError):
    pass


@dataclass(eq=False)
class Ref:
    value: Any = None
    name: str = ""
    error: BaseException | None = None


@dataclass
class Actor:
    ray: FakeRay
    index: int
    options: dict[str, Any]
    converted: list[str] = field(default_factory=list)
    killed: bool = False
    dead: bool = False
    rss: int = 1

    def __post_init__(self) -> None:
        actor = self

        class Method:
            def __init__(self, fn: Any) -> None:
                self.fn = fn

            def remote(self, *args: Any) -> Ref:
                return self.fn(*args)

        self.node_id = Method(lambda: Ref("node-a"))
        self.convert = Method(lambda name, h, data, path: actor._convert(name, h, path))
        self.__ray_terminate__ = Method(lambda: Ref(None))

    def _convert(self, name: str, file_hash: str, path: str) -> Ref:
        self.ray.events.append(("send", name))
        if self.dead or self.killed:
            return Ref(error=RayActorError("The actor died unexpectedly"))
        cap = self.options["mem_limit_bytes"]
        if self.converted and cap is not None and self.rss > cap:
            return Ref(RayFileResult(deferred=True))
        self.converted.append(name)
        self.ray.log.append((name, self.index))
        seen = self.ray.attempts.setdefault(name, 0)
        self.ray.attempts[name] = seen + 1
        if name.startswith("crash") or (name.startswith("once") and seen == 0):
            self.dead = True
            return Ref(error=RayActorError("The actor died unexpectedly"))
        if name.startswith("big"):
            self.rss = 1000
        if name.startswith("error"):
            return Ref(RayFileResult(error=f"{path}: ValueError: bad table", rss=self.rss))
        doc = Document(page_content=f"text of {name}", metadata={"file_name": name})
        return Ref(RayFileResult(docs=[doc], metadata={"title": name}, rss=self.rss), name)


class FakeRay:
    def __init__(self, cpus: int = 2) -> None:
        self.cpus = cpus
        self.actors: list[Actor] = []
        self.attempts: dict[str, int] = {}
        self.log: list[tuple[str, int]] = []
        self.events: list[tuple[str, str]] = []
        self.options: list[dict[str, Any]] = []
        self.init_args: list[tuple[Any, ...]] = []
        self.gpus = 0
        self.exceptions = SimpleNamespace(RayError=RayError, RayActorError=RayActorError)

    def remote(self, cls: Any) -> Any:
        ray = self

        class RemoteClass:
            def options(self, **kwargs: Any) -> RemoteClass:
                ray.options.append(kwargs)
                return self

            def remote(self, *args: Any) -> Actor:
                ray.init_args.append(args)
                actor = Actor(ray, len(ray.actors), args[0])
                ray.actors.append(actor)
                return actor

        return RemoteClass()

    def cluster_resources(self) -> dict[str, float]:
        return {"CPU": float(self.cpus), "GPU": float(self.gpus)}

    def available_resources(self) -> dict[str, float]:
        return self.cluster_resources()

    def nodes(self) -> list[dict[str, Any]]:
        return [{"NodeID": "node-a", "NodeManagerAddress": "10.0.0.7", "Alive": True}]

    def wait(
        self, refs: list[Ref], num_returns: int, timeout: float
    ) -> tuple[list[Ref], list[Ref]]:
        return refs[:num_returns], refs[num_returns:]

    def get(self, ref: Ref) -> Any:
        if ref.name:
            self.events.append(("answer", ref.name))
        if ref.error is not None:
            raise ref.error
        return ref.value

    def kill(self, actor: Actor) -> None:
        actor.killed = True


def _run(
    tmp_path: Path,
    names: list[str],
    batch: int = 10,
    cpus: int = 2,
    device: str = "cpu",
    mem_limit: int | None = None,
    gpus: int = 3,
) -> Any:
    items = []
    for name in names:
        path = tmp_path / name
        path.write_text(f"# {name}\n", encoding="utf-8")
        items.append((str(path), compute_file_hash(path)))
    config = ChunkWorkerConfig(
        source_path=str(tmp_path),
        max_tokens=50,
        tokenizer_model="unused",
        do_ocr=False,
        mem_limit_bytes=mem_limit,
        log_level=logging.INFO,
        device=device,
    )
    ray = FakeRay(cpus)
    ray.gpus = gpus
    results = convert_on_ray(ray, logging.getLogger("test-ray-dispatch"), config, items, batch)
    return ray, {r.file_name: r for r in results}, items


def test_files_convert_and_are_cached_by_the_driver(tmp_path: Path) -> None:
    _, results, items = _run(tmp_path, ["ok1.md", "ok2.md", "ok3.md"])
    assert {r.status for r in results.values()} == {"ok"}
    cache = ChunkCache(tmp_path)
    for path, file_hash in items:
        cached = cache.load(Path(path), file_hash)
        assert cached is not None
        assert cached.docs[0].page_content == f"text of {Path(path).name}"
    assert results["ok1.md"].file_headings_entry == {"DEFAULT": {"title": "ok1.md"}}


def test_a_file_that_kills_two_workers_is_poison_and_the_run_goes_on(tmp_path: Path) -> None:
    ray, results, _ = _run(tmp_path, ["ok1.md", "crash.md", "ok2.md"])
    assert results["ok1.md"].status == results["ok2.md"].status == "ok"
    poison = results["crash.md"]
    assert poison.status == "failed"
    assert "poison file: it killed 2 conversion workers" in (poison.error or "")
    assert "10.0.0.7" in (poison.error or "")
    assert ray.attempts["crash.md"] == 2
    second = [index for name, index in ray.log if name == "crash.md"][1]
    assert ray.actors[second].converted == ["crash.md"], "the retry runs alone in a fresh worker"


def test_a_file_that_kills_one_worker_is_retried_and_converted(tmp_path: Path) -> None:
    _, results, _ = _run(tmp_path, ["once.md", "ok1.md"])
    assert results["once.md"].status == "ok"


def test_conversion_errors_name_the_node(tmp_path: Path) -> None:
    _, results, _ = _run(tmp_path, ["error.md"])
    assert results["error.md"].status == "failed"
    assert results["error.md"].error.endswith("(on node 10.0.0.7)")
    assert str(tmp_path / "error.md") in results["error.md"].error


@pytest.mark.parametrize(("batch", "actors"), [(1, 4), (2, 2), (10, 1)])
def test_workers_are_replaced_after_their_batch(tmp_path: Path, batch: int, actors: int) -> None:
    ray, results, _ = _run(tmp_path, ["ok1.md", "ok2.md", "ok3.md", "ok4.md"], batch, cpus=1)
    assert {r.status for r in results.values()} == {"ok"}
    assert len(ray.actors) == actors
    assert all(len(a.converted) <= batch for a in ray.actors)


@pytest.mark.parametrize(
    ("device", "gpus", "worker_device", "actors"),
    [("cpu", None, "cpu", 2), ("cuda:1", 1, "cuda", 3), ("cuda", 1, "cuda", 3)],
)
def test_a_cuda_run_asks_for_one_gpu_per_worker(
    tmp_path: Path, device: str, gpus: int | None, worker_device: str, actors: int
) -> None:
    names = [f"ok{i}.md" for i in range(6)]
    ray, results, _ = _run(tmp_path, names, cpus=2, device=device)
    assert {r.status for r in results.values()} == {"ok"}
    assert {o.get("num_gpus") for o in ray.options} == {gpus}
    assert {o["num_cpus"] for o in ray.options} == {1}
    assert {args[0]["device"] for args in ray.init_args} == {worker_device}
    assert len(ray.actors) == actors  # one per CPU, or one per GPU on a CUDA run


def test_a_cuda_run_on_a_cluster_without_gpu_is_refused(tmp_path: Path) -> None:
    with pytest.raises(ClusterError, match="the Ray cluster has no GPU for a conversion worker"):
        _run(tmp_path, ["ok1.md"], device="cuda", gpus=0)


def test_the_node_of_each_finished_file_is_logged_at_debug_level(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.DEBUG, logger="test-ray-dispatch")
    _run(tmp_path, ["ok1.md", "error.md", "ok2.md"], cpus=1)
    finished = [r.getMessage() for r in caplog.records if r.levelno == logging.DEBUG]
    assert sorted(finished) == [
        f"Ray worker on node 10.0.0.7 finished {name}" for name in ("error.md", "ok1.md", "ok2.md")
    ]


def test_a_worker_is_sent_its_next_file_before_it_answers(tmp_path: Path) -> None:
    ray, results, _ = _run(tmp_path, ["ok1.md", "ok2.md", "ok3.md"], cpus=1)
    assert {r.status for r in results.values()} == {"ok"}
    assert ray.events[:3] == [("send", "ok1.md"), ("send", "ok2.md"), ("answer", "ok1.md")]


def test_files_queued_behind_a_crash_are_retried_but_not_blamed(tmp_path: Path) -> None:
    ray, results, _ = _run(tmp_path, ["crash.md", "ok1.md", "ok2.md"], cpus=1)
    assert results["crash.md"].status == "failed"
    assert results["ok1.md"].status == results["ok2.md"].status == "ok"
    assert ray.events[:2] == [("send", "crash.md"), ("send", "ok1.md")]
    # ok1.md died with the first worker but is not retried alone: only crash.md is.
    converted = [actor.converted for actor in ray.actors]
    assert converted == [["crash.md"], ["crash.md"], ["ok1.md", "ok2.md"]]


def test_a_worker_over_its_cap_converts_nothing_more(tmp_path: Path) -> None:
    names = ["big1.md", "ok1.md", "big2.md", "ok2.md", "ok3.md"]
    ray, results, _ = _run(tmp_path, names, cpus=1, mem_limit=100)
    assert {r.status for r in results.values()} == {"ok"}
    assert [actor.converted for actor in ray.actors] == [
        ["big1.md"],
        ["ok1.md", "big2.md"],
        ["ok2.md", "ok3.md"],
    ]
    assert all(count == 1 for count in ray.attempts.values())


@pytest.mark.parametrize(
    ("rss", "cap", "over"), [(10, 5, True), (5, 5, False), (None, 5, False), (10, None, False)]
)
def test_over_cap(rss: int | None, cap: int | None, over: bool) -> None:
    assert over_cap(rss, cap) is over
