"""An export is one snapshot, on both backends: a Log+Facts export streamed while other
writes land (new turns in the same run, a new fact, a forgotten fact) between its pages
gives exactly the export taken before those writes; the next export has them. The page
size is made small so the writes fall between pages. Real SQLite file, real PostgreSQL."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from remem.service.logfacts_io import comparable_lines

T0 = datetime(2026, 3, 1, 9, 0, tzinfo=UTC)


@pytest.fixture
def small_pages(monkeypatch):
    import remem.stores.sql.export as export

    monkeypatch.setattr(export, "EXPORT_PAGE", 2)


def _fill(mem) -> str:
    for i, text in enumerate(["I live in Lyon.", "Nice weather.", "I like tea.",
                              "The train was late.", "I work at Acme."]):
        mem.observe("user:ana", text, role="user", source_id=f"s{i}", run_id="r",
                    occurred_at=T0 + timedelta(minutes=i))
    for key, value in [("diet", "vegan"), ("pet", "cat"), ("sport", "tennis")]:
        mem.remember("user:ana", key, value)
    return mem.items(scope="user:ana", key="pet").items[0].item_id


def test_writes_between_the_pages_of_an_export_are_not_in_it(remem_store, small_pages):
    mem = remem_store.create_memory("m1")
    pet = _fill(mem)
    before = b"".join(mem.export_log_facts())

    lines = mem.export_log_facts()
    head = [next(lines) for _ in range(3)]  # the claim key and the first page of sources
    for i in range(5, 8):  # the same run: these would be on the next pages
        mem.observe("user:ana", f"Later turn number {i}.", role="user", source_id=f"s{i}",
                    run_id="r", occurred_at=T0 + timedelta(minutes=i))
    mem.remember("user:ana", "allergy", "peanuts")
    mem.forget(pet)
    during = b"".join(head + list(lines))

    assert comparable_lines(during) == comparable_lines(before)
    after = b"".join(mem.export_log_facts())
    assert b"Later turn number 7." in after and b"peanuts" in after
    assert b'"cat"' not in after and b'"cat"' in during
