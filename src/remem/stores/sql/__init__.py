"""SQL both backends share: memory admin, reads, rebuild, the unit of work's inserts,
idempotency, receipts, jobs, runs, tokens and the source log, written once against a small
:class:`~remem.stores.sql.dialect.Dialect` (placeholders, ``= ANY`` vs ``IN``, bytewise order,
row locks, JSON columns). Only search, erasure and partitioning differ per backend
(``stores/sqlite``, ``stores/postgres``).
"""
