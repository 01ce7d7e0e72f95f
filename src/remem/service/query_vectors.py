"""Query vectors for recall: embedded beside the full-text and key searches, and remembered.

The query's embedding (about 6-7 ms of CPU for a short query with the bundled model run as
int8, one thread; :mod:`remem.providers.onnx_nbits`) is the largest single cost of a recall, and it does not depend on the database. So
recall starts it on a worker thread (:meth:`QueryVectors.start`) and runs its full-text and
key searches meanwhile; onnxruntime and sqlite3 both release the GIL, so on two cores the
wall time is about the larger of the two instead of their sum (CPU time is unchanged). The
vector is the one the caller's thread would compute: same session, same single intra-op
thread. Whether to overlap is decided once per process (:func:`second_core_free`).

Work that needs only the vector can be chained on that thread (:meth:`QueryVectors.start_then`):
recall's in-RAM vector ranking on SQLite (``stores.sqlite.vecindex.CandidatePlan``) then runs
beside the full-text reads instead of after the main thread waited (at 1M items: 9 of 31 ms).

Agents repeat queries, so the last :data:`CACHE_MAX` vectors are kept per process, keyed by
(model id, dimensions, text): the memory's recorded model, which ``compute``
(``EmbeddingService.query_vector``) checks against the configured embedder.
"""

from __future__ import annotations

import os
import threading
from collections import OrderedDict
from collections.abc import Callable, Mapping
from concurrent.futures import Future, ThreadPoolExecutor
from typing import Any

CACHE_MAX = 512
"""Query vectors remembered per process."""
WORKERS = 4
"""Threads embedding queries at once (concurrent recalls of a server)."""

_pool: tuple[int, ThreadPoolExecutor] | None = None
_pool_lock = threading.Lock()


def _executor() -> ThreadPoolExecutor:
    """The process's pool; a forked child (a worker process) builds its own."""
    global _pool
    pid = os.getpid()
    with _pool_lock:
        if _pool is None or _pool[0] != pid:
            _pool = (pid, ThreadPoolExecutor(WORKERS, thread_name_prefix="remem-query"))
        return _pool[1]


OVERLAP_ENV = "REMEM_QUERY_OVERLAP"
"""Environment variable that forces the overlap on (``on``/``1``) or off (``off``/``0``);
unset or ``auto``: on when the process may run on more than one CPU."""

_overlap: bool | None = None


def decide_overlap(environ: Mapping[str, str], usable_cpus: int) -> bool:
    """Whether recall embeds its query on a second thread beside its searches.

    Args:
        environ: the process environment (read for :data:`OVERLAP_ENV`).
        usable_cpus: CPUs this process may run on.

    Returns:
        The forced value when :data:`OVERLAP_ENV` says ``on``/``off``, else ``usable_cpus > 1``.
        On a machine that is busy all the time, turning it off can pay: the two threads then
        only take turns on one core (measured once: p95 worse than running both in turn).
    """
    value = environ.get(OVERLAP_ENV, "auto").strip().lower()
    if value in ("1", "on", "true", "yes"):
        return True
    if value in ("0", "off", "false", "no"):
        return False
    return usable_cpus > 1


def _usable_cpus() -> int:
    try:
        return len(os.sched_getaffinity(0))
    except (AttributeError, OSError):  # not Linux
        return os.cpu_count() or 1


def second_core_free() -> bool:
    """:func:`decide_overlap` for this process, decided on its first recall and kept (it used
    to read the load average on every recall)."""
    global _overlap
    if _overlap is None:
        _overlap = decide_overlap(os.environ, _usable_cpus())
    return _overlap


class QueryVectors:
    """A bounded LRU of query vectors and the thread that computes missing ones."""

    def __init__(self, max_size: int = CACHE_MAX) -> None:
        self._max = max_size
        self._cache: OrderedDict[tuple[Any, str], Any] = OrderedDict()
        self._lock = threading.Lock()

    def start(self, model: tuple[str | None, int | None], text: str,
              compute: Callable[[str], Any], *, background: bool = True
              ) -> Callable[[], Any]:
        """Begins computing ``compute(text)`` (a float32 vector or None) unless it is cached;
        ``background=False``: it is computed by the caller when it asks for it.

        Returns:
            A function that waits for the vector and returns it (re-raising what ``compute``
            raised); None results are returned but not cached.
        """
        wait = self.start_then(model, text, compute, None, background=background)
        return lambda: wait()[0]

    def start_then(self, model: tuple[str | None, int | None], text: str,
                   compute: Callable[[str], Any], then: Callable[[Any], Any] | None, *,
                   background: bool = True) -> Callable[[], tuple[Any, Any]]:
        """:meth:`start`, and ``then(vector)`` run on the worker thread right after the
        vector is there (also for a cached vector), so the caller need not do it after it
        waited: recall's in-RAM vector ranking (``CandidatePlan.run``).

        Returns:
            A function that waits and returns ``(vector, then(vector))``; the second is None
            when ``then`` is None, the vector is None, ``background`` is False, or ``then``
            raised (the caller then does that work itself).
        """
        key = (model, text)
        with self._lock:
            vec = self._cache.get(key)
            if vec is not None:
                self._cache.move_to_end(key)
        if vec is not None:
            if then is None or not background:
                return lambda: (vec, None)
            after = _executor().submit(_then, then, vec)
            return lambda: (vec, after.result())

        def job(t: str) -> tuple[Any, Any]:
            got = compute(t)
            return got, _then(then, got) if then is not None and got is not None else None

        future: Future | None = _executor().submit(job, text) if background else None

        def wait() -> tuple[Any, Any]:
            got, extra = future.result() if future is not None else (compute(text), None)
            if got is not None:
                got.setflags(write=False)  # shared by later recalls of the same text
                self._put(key, got)
            return got, extra

        return wait

    def _put(self, key: tuple[Any, str], vec: Any) -> None:
        with self._lock:
            self._cache[key] = vec
            self._cache.move_to_end(key)
            while len(self._cache) > self._max:
                self._cache.popitem(last=False)


def _then(then: Callable[[Any], Any], vec: Any) -> Any:
    """``then(vec)``, or None when it raised: what it computes is an optimisation the
    caller redoes (an error it meets, the caller meets again)."""
    try:
        return then(vec)
    except Exception:  # noqa: BLE001 - see the docstring
        return None


SHARED = QueryVectors()
"""The process's query vectors (every memory; the key names the model)."""
