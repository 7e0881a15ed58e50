"""Running units over `jobs` worker processes; a case's units stay together on one worker
(its oracle and artefacts are made once), cases are handed out in order."""
from __future__ import annotations

import itertools
import queue
import threading
from typing import Callable, Iterable

from .results import Result
from .units import Unit
from .worker import Worker, WorkerConfig


def _by_case(units: Iterable[Unit]) -> list[list[Unit]]:
    return [list(g) for _, g in itertools.groupby(units, key=lambda u: u.case)]


def run_units(units: list[Unit], config: WorkerConfig, jobs: int,
              on_result: Callable[[Result], None]) -> None:
    """Run every unit; `on_result` is called (under a lock) once per unit, as results come."""
    groups: queue.Queue = queue.Queue()
    for group in _by_case(units):
        groups.put(group)
    lock = threading.Lock()
    errors: list[BaseException] = []

    def serve() -> None:
        worker = Worker(config)
        try:
            while True:
                try:
                    group = groups.get_nowait()
                except queue.Empty:
                    return
                for unit in group:
                    result = worker.run(unit)
                    with lock:
                        on_result(result)
        except BaseException as e:  # a worker that cannot start: surface it, stop the others
            errors.append(e)
            while not groups.empty():
                try:
                    groups.get_nowait()
                except queue.Empty:
                    break
        finally:
            worker.close()

    threads = [threading.Thread(target=serve, daemon=True) for _ in range(max(1, jobs))]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    if errors:
        raise errors[0]
