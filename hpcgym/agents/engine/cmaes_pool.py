"""The worker pool that plays CMA-ES candidates, shared by the score and order searches.

A search (:func:`hpcgym.agents.engine.score.search`, :func:`hpcgym.agents.engine.order.search`)
plays each candidate of a generation on the same training episodes. :class:`CandidatePool`
hands every ``(candidate's weights, episode index)`` task to the search's
``play(setting, weights, index)``, a module-level function, either in worker processes (each
given the search's setting once, by the pool's initializer, and keeping whatever it caches per
setting, such as the episodes' jobs) or, with one worker, in this process. The results come back
in task order, so what a search finds does not depend on how many workers played it.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from concurrent.futures import ProcessPoolExecutor
from types import TracebackType
from typing import Any, Generic, TypeVar

S = TypeVar("S")
"""The setting of a search (hashable: a frozen dataclass), the same for every task."""
R = TypeVar("R")
"""What playing one candidate on one episode gives."""

Play = Callable[[S, tuple[float, ...], int], R]
"""``play(setting, weights, episode index)``: one candidate on one episode."""

_STATE: list[tuple[Callable[..., Any], Any]] = []
"""This process's ``(play, setting)``, set by :func:`_init_worker`."""


def _init_worker(play: Callable[..., Any], setting: Any) -> None:
    """Give this process the search's ``play`` and setting (the pool's initializer)."""
    _STATE[:] = [(play, setting)]


def _run(task: tuple[tuple[float, ...], int]) -> Any:
    """Play one task with this process's ``play`` and setting."""
    play, setting = _STATE[0]
    weights, index = task
    return play(setting, weights, index)


class CandidatePool(Generic[S, R]):
    """Plays CMA-ES candidates on a search's training episodes (module doc).

    Args:
        play: ``play(setting, weights, index)``, a module-level function (workers import it).
        setting: What every task shares (the preset's arguments, the episodes' seeds, ...).
        workers: Processes playing the tasks (1: this process, no pool).
        chunksize: Tasks sent to a worker at a time.

    Use it as a context manager, or call :meth:`close`, to stop the workers.
    """

    def __init__(self, play: Play[S, R], setting: S, workers: int, chunksize: int) -> None:
        self._chunksize = chunksize
        self._pool: ProcessPoolExecutor | None = None
        if workers > 1:
            self._pool = ProcessPoolExecutor(
                workers, initializer=_init_worker, initargs=(play, setting)
            )
        else:
            _init_worker(play, setting)

    def played(self, candidates: Iterable[Sequence[float]], episodes: int) -> list[R]:
        """Every candidate on episodes ``0 .. episodes - 1``: candidate-major, in that order."""
        tasks = [(tuple(map(float, x)), i) for x in candidates for i in range(episodes)]
        if self._pool is None:
            return [_run(t) for t in tasks]
        return list(self._pool.map(_run, tasks, chunksize=self._chunksize))

    def close(self) -> None:
        """Stop the workers (none with one worker)."""
        if self._pool is not None:
            self._pool.shutdown()

    def __enter__(self) -> CandidatePool[S, R]:
        return self

    def __exit__(
        self,
        kind: type[BaseException] | None,
        error: BaseException | None,
        trace: TracebackType | None,
    ) -> None:
        self.close()
