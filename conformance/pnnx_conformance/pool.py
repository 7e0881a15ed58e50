"""Running units over `jobs` worker processes; a case's units stay together on one worker
(its oracle and artefacts are made once), cases are handed out in order.

Several streams (units of another case set, e.g. the model zoo, each with its own worker
configuration) can share the same `jobs` slots: their cases are handed out first to last,
stream by stream, so a run never has more than `jobs` units running at once."""
from __future__ import annotations

import itertools
import queue
import threading
from dataclasses import dataclass
from typing import Callable, Iterable

from .results import Result
from .units import Unit
from .worker import Worker, WorkerConfig


@dataclass
class Stream:
    """Units run by workers made with `config`; `on_result` gets each of their results."""
    units: list[Unit]
    config: WorkerConfig
    on_result: Callable[[Result], None]


def _by_case(units: Iterable[Unit]) -> list[list[Unit]]:
    return [list(g) for _, g in itertools.groupby(units, key=lambda u: u.case)]


def run_streams(streams: list[Stream], jobs: int) -> None:
    """Run every stream's units on `jobs` slots; each `on_result` is called (under a lock) once
    per unit, as results come. Each slot keeps one worker per stream, and
    stops a stream's worker once it moves on to the next stream (streams are handed out in
    order, so it never comes back)."""
    groups: queue.Queue = queue.Queue()
    for index, stream in enumerate(streams):
        for group in _by_case(stream.units):
            groups.put((index, group))
    lock = threading.Lock()
    errors: list[BaseException] = []

    def serve() -> None:
        workers: dict[int, Worker] = {}
        try:
            while True:
                try:
                    index, group = groups.get_nowait()
                except queue.Empty:
                    return
                for done in [i for i in workers if i != index]:
                    workers.pop(done).close()
                if index not in workers:
                    workers[index] = Worker(streams[index].config)
                worker = workers[index]
                for unit in group:
                    result = worker.run(unit)
                    with lock:
                        streams[index].on_result(result)
        except BaseException as e:  # a worker that cannot start: surface it, stop the others
            errors.append(e)
            while not groups.empty():
                try:
                    groups.get_nowait()
                except queue.Empty:
                    break
        finally:
            for worker in workers.values():
                worker.close()

    threads = [threading.Thread(target=serve, daemon=True) for _ in range(max(1, jobs))]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    if errors:
        raise errors[0]
