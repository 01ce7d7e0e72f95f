"""The first snapshot reads item rows of the best full-text and key candidates and the
payloads and source refs of fewer of them (``recall.PRELOAD_RANKS``); the main snapshot reads
what it lacks, so every answer equals a plain snapshot's."""

from __future__ import annotations

from remem.service.recall_preload import PreloadedSnapshot, preload

ALICE = "user:alice"


def test_preload_reads_details_only_for_the_detail_ids_and_answers_like_the_store(mem) -> None:
    ids = [mem.remember(ALICE, f"note_{i}", f"garden plan {i}",
                        source={"id": f"s{i}", "role": "user"}).item_id for i in range(4)]
    index = mem.ctx.embedding.index
    with index.read(mem.ctx.id) as raw:
        pre = preload(raw, ids, ids[:1])
        assert set(pre.items) == set(ids)
        assert list(pre.refs) == ids[:1] and len(pre.payloads) == 1
        payload_ids = [pre.items[i].payload_id for i in ids]
        snap = PreloadedSnapshot(raw, pre)
        assert snap.items(ids) == raw.items(ids)
        assert snap.payloads(payload_ids) == raw.payloads(payload_ids)
        assert snap.source_refs(ids) == raw.source_refs(ids) == {
            i: [f"s{n}"] for n, i in enumerate(ids)}
