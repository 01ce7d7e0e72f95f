"""The PostgreSQL side of ``remem bench scale``: a size's batched load as a bulk load.

On PostgreSQL the batches of a size run inside ``PostgresStore.bulk_load``: every item still
goes through ``Memory.remember_many`` (decision, ledger by ``COPY``, payloads, full-text and
vector rows by ``COPY``), but the memory's HNSW index is dropped before the first batch and
built once over every row after the last (``stores/postgres/vector_index.py``) instead of
being updated row by row. The build's wall time counts in the batched write time
(``index_build_s`` apart). The single-item sample after the batches runs with the index, as
an agent writing one fact at a time would. On SQLite nothing changes.

Measured (2026-12-02, 2 cores shared by four engineers, ``nice -n 5``, embedded PostgreSQL 18
+ pgvector 0.8 with default settings; CPU beside wall, client = the bench process, server =
every PostgreSQL process; load average 6-8 from other jobs, so wall times mostly wait):

- 10k, before (row-by-row HNSW): 9k batched items in 131.6 s wall (68/s), client CPU 17 s,
  server CPU ~65 s; recall p50 / p95 54 / 94 ms wall, 16.0 / 18.6 ms client CPU.
- 10k, after: 46.3 s wall (194/s) with a 3.6 s index build, client CPU 13 s, server CPU
  ~16 s; recall 52 / 77 ms wall, 16.0 / 18.1 ms CPU.
- 100k, after: 99k batched items in 531 s wall (186/s) with a 58.8 s build, client CPU
  ~144 s, server CPU ~141 s + ~56 s for the build; recall 81 / 114 ms wall, 18.8 / 20.8 ms
  CPU; HNSW recall@10 against exact 0.978.

- 1M, stopped (``STOP``) at 549,888 batched items after 55 min: 167 items/s over the load
  (205-320/s in the last windows as the load fell), client CPU 866 s (1.6 ms per item,
  flat), server CPU ~2 ms per item; HNSW build over 550k rows 248.5 s wall (~320 s CPU, two
  parallel workers); recall 98 / 123 ms wall, 21.6 / 25.3 ms CPU; 2.7 GB database. HNSW
  recall@10 against exact over all 100 scopes: 0.56 / 0.78 / 0.96 at ``ef_search`` 100 /
  200 / 800. Each of the 20,000 pool texts is stored ~27 times, so a query's exact top 10
  is 10 copies of one text and recall@10 becomes all-or-nothing on finding that text (the
  graph holds identical vectors as one element per <= 10 rows: a 141 MB index for 550k
  rows); 60k rows of 2,400 vectors x 25 copies alone scored 1.000, so the copies do not
  explain it by themselves. Not yet understood. 1M extrapolates to ~55-70 min of
  writes plus a ~6 min build: over the 30 min goal.

- Per-item CPU of a batch, profiled (2026-12-02, 20k items into a fresh memory, load average
  7-10, so compare CPU, not wall). Server time (``pg_stat_statements``) was spread over one
  claim-projection SELECT per item (a round trip each: the decision's read) and one
  INSERT per item into items, payloads, key_revisions and provenance (``executemany``: a
  statement per row even pipelined); the COPYs of ledger, full-text and vector rows were
  small. Now a batch reads its candidates' claim projections in one statement
  (``PostgresUnitOfWork.prefetch_claims``) and writes each read-model table in one statement
  (``stores/postgres/bulk_rows.py``):

  | step | client ms/item | server ms/item |
  | --- | --- | --- |
  | before | 1.49 | 1.36 |
  | one statement per table (items, payloads, revisions, provenance) | 1.47 | 0.99 |
  | + the batch's claim projections in one statement | 1.43 | 0.60 |
  | + rows as one JSON array, prefetch dropped per key | 1.04 | 0.50 |
  | + claim ids computed once | 1.03 | 0.48 |

  A 200k load (code of the third row) stayed flat: client 1.11-1.43, server 0.38-0.58 ms per
  item in every 20k window. Client CPU left (cProfile on CPU time, shares of a batch): full-text
  and vector rows 20% (the tsvector literal alone 11%), claim projections and held-row
  writes 20%, the prefetch with its claim ids 8%, ledger append and hashing 8%, the
  decision 7%, candidate parsing 6%; no single part left above ~11%.
  Projection for ``--items 10000,100000,1000000`` on an idle 2-core machine: 1.51 ms of CPU
  per item, client and server one after the other: 1.11M items ~28 min of writes, plus the
  HNSW builds (~1 min at 100k, ~8 min at 1M from the 550k build's 248 s) and the recall
  passes: ~37-40 min, still over the 30 min goal; on this shared machine (load 7-10) wall is
  2-4x the CPU.

- Round trips of a batch (2026-12-02, session 9; bench plan into a fresh memory, statements
  timed from the client; A/B alternating in one window, load average 7-10, so CPU and counts
  are the comparable figures): a decision on a single key read its whole key after its claim,
  and a batch adding a claim to a (scope, multi key) dropped the key's other prefetched
  claims: per 10,000 items 2,451 projection reads, the largest wait of a batch. The prefetch
  now reads declared single keys whole and a save patches the other claims (revision,
  tombstones); then reads that the prefetch serves, a superseding item's inherited metadata
  and an owner's restatement no longer write the batch's held rows first:

  | code | statements / projection reads (10k items) | client CPU s | wall s |
  | --- | --- | --- | --- |
  | before | 4,437 / 2,451 | 10.6, 11.5 | 68.0, 70.1 |
  | single keys whole + claims kept | 2,601 / 615 | 8.6, 8.6 | 56.5, 38.4 |

  and on 5,000 items (two alternations, the last step added): 3,583 / 1,892 statements, 7.5
  and 6.3 s CPU before; 2,306 / 615, 5.7 and 7.7 s; with held rows written only when read
  2,149 / 615 (plus fewer ``executemany`` batches, not counted), 5.5 and 5.5 s.

- Scope order (session 9): after ``bulk_load`` the vector partition is ``CLUSTER``-ed on its
  scope index before the graph is built (``vector_index.cluster_by_scope``). On the 100k bench
  memory: a scope's exact scan read ~1,000 heap pages, then 250; execution 3.5-8 ms warm /
  15-21 ms cold -> 1.2-2.3 ms; the rewrite 2.2-2.8 s without the graph (40.8 s with it, which
  is why it runs first), the ``VACUUM`` after it 0.4-0.7 s.

- The whole ``--items 10000,100000,1000000`` run with the above (session 9, 09:57-10:53 UTC,
  shared machine: load average 7.7-10 until ~10:40, then 4.7 falling to 1 during the 1M
  build and recall; the previous run had an idle machine, load 1.4-2.1):

  | items | batched items/s (client CPU s) | build s | recall wall p50 / p95 ms | recall CPU p50 / p95 ms | HNSW R@10 ef 100 / 200 / 400 / 800 |
  | --- | --- | --- | --- | --- | --- |
  | 10,000 | 280 (6.9) | 4.6 | 34.6 / 66.2 | 12.8 / 16.3 | 1.0 |
  | 100,000 | 362 (64.6) | 56.0 | 37.3 / 57.5 | 13.2 / 14.9 | 0.976 / 0.978 / 0.992 / 1.0 |
  | 1,000,000 | 362 (792) | 325.0 | 92.7 / 118.4 | 20.5 / 24.9 | 0.30 / 0.40 / 0.52 / 0.66 |

  56 min 14 s wall, 939 s client CPU (previous run: 34 min 6 s, 1,077 s): the wall is the
  load's, the CPU is comparable: 1M writes 0.79 ms of client CPU per item (0.89 before).
  The 1M build (325 s) is the ``CLUSTER`` (~19 s, from the new files' birth times), the
  count and ``ANALYZE`` (~7 s), the graph (~297 s; 226 s on the idle machine before) and the
  ``VACUUM``. Recall p95 100k -> 1M x2.06 (goal <= x3), but the 100k recall ran at load ~8
  and the 1M one at ~2-4, so the ratio flatters. At 1M only 39 of the 100 user scopes (with
  the agent scope) hold <= 10,000 vectors and are searched exactly (now ~3.3 ms of execution
  per scope, 15-20 buffers for the count); the other 61 take the HNSW path.

Before, 100k took ~33 min to write. At 100k the HNSW pass's recall@10 was 0.978 with
``hnsw.ef_search`` 100 and 0.992 with 200 (now the floor).

- HNSW per-row insert against one build, backend CPU per row (384-dim MiniLM vectors,
  m = 16, ef_construction = 64): 2,000 rows 2.00 vs 0.40 ms, 10,000 rows 2.62 vs 0.52 ms,
  40,000 rows 2.36 vs 0.58 ms. A batch of b rows into a partition of N rows is cheaper to
  build after when b / N >= build / (insert - build): 0.25 at 10k, 0.33 at 40k
  (``vector_index.REBUILD_SHARE`` = 0.3).
"""

from __future__ import annotations

import time
from collections.abc import Callable
from contextlib import AbstractContextManager
from typing import Any

Log = Callable[[str], None]


class BulkLoad(AbstractContextManager):
    """``with BulkLoad(mem.store, mem.id):`` around a size's batches (``mem.store``: the
    storage adapter); a no-op on one without ``bulk_load`` (SQLite). ``build_s``: wall seconds
    of the index build at exit."""

    def __init__(self, adapter: Any, memory_id: str, log: Log | None = None) -> None:
        begin = getattr(adapter, "bulk_load", None)
        self._cm = begin(memory_id) if begin is not None else None
        self.log, self.build_s = log, 0.0

    def __enter__(self) -> BulkLoad:
        if self._cm is not None:
            self._cm.__enter__()
        return self

    def __exit__(self, *exc: Any) -> None:
        if self._cm is None:
            return
        t = time.perf_counter()
        self._cm.__exit__(*exc)
        self.build_s = time.perf_counter() - t
        if self.log and exc[0] is None:
            self.log(f"  HNSW index built over the loaded vectors in {self.build_s:.1f} s")
