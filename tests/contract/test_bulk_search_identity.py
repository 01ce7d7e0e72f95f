"""A batch's full-text and vector rows (held by the search writer until the unit of work
flushes: ``stores/sqlite/search_batch.py``) are the rows one-at-a-time writes give, also when
a document is indexed again: an owner restating a current claim with a new quote revises the
item, so its full-text row and vector are replaced - inside one batch (the first version is
still held) and across batches (the first version is in the database). Compared table by
table (FTS5 shadow tables, ``vectors.seq`` and ``memories.vector_epoch`` included) with the
helpers of ``test_bulk_write_identity``."""

from __future__ import annotations

from typing import Any

import pytest

from remem.testing.pgdb import table_rows
from tests.contract import test_bulk_write_identity as identity


def restatements() -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = []
    for i in range(30):
        scope = f"user:u{i % 2}"
        out.append({"scope": scope, "key": "likes", "value": f"sailing near island {i % 6}",
                    "kind": "preference", "source": {"text": f"I said so on day {i}"}})
        if i % 5 == 0:  # revised again at once: inside the batch when both land in one
            out.append({**out[-1], "source": {"text": f"I said so again on day {i}"}})
        if i % 4 == 3:  # seen again (an occurrence, no new revision)
            out.append({"scope": scope, "key": "likes", "value": "sailing near island 0",
                        "kind": "preference", "source": {"text": "I said so on day 0"}})
        if i % 3 == 0:
            out.append({"scope": scope, "key": "home_city", "value": "Porto",
                        "kind": "profile_slot", "source": {"text": f"I live in Porto ({i})"}})
    return out


def test_revised_documents_in_a_batch_write_the_same_rows(
        backend: str, two_urls: tuple[str, str], monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(identity, "statements", restatements)
    one, many = two_urls
    for url, batch in ((one, None), (many, 8)):
        with pytest.MonkeyPatch.context() as mp:  # _load undoes its own patches
            identity._load(url, batch, mp)
    dump = identity._dump_sqlite if backend == "sqlite" else table_rows
    a, b = dump(one), dump(many)
    types = {str(r[2]).strip("'") for r in a["ledger"]}
    assert {"item.revised", "provenance.added"} <= types, types  # indexed again, seen again
    for dumped in (a, b):
        dumped["jobs"] = sorted((r[1:] for r in dumped["jobs"]), key=repr)
        del dumped["schema_migrations"]
    assert [t for t in a if a[t] != b[t]] == []





def seen_again() -> list[dict[str, Any]]:
    """A claim, then (in the next batch of 8) only occurrences of it: the held item row is
    the only row of that key a later read could miss (no revision moves)."""
    first = {"scope": "user:u0", "key": "likes", "value": "sailing", "kind": "preference"}
    others = [{"scope": "user:u1", "key": f"rule_{i}", "value": "short answers",
               "kind": "rule"} for i in range(7)]
    return [first, *others, *(dict(first) for _ in range(3))]


def test_occurrences_in_a_batch_write_the_same_rows(
        backend: str, two_urls: tuple[str, str], monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(identity, "statements", seen_again)
    one, many = two_urls
    for url, batch in ((one, None), (many, 8)):
        with pytest.MonkeyPatch.context() as mp:
            identity._load(url, batch, mp)
    dump = identity._dump_sqlite if backend == "sqlite" else table_rows
    a, b = dump(one), dump(many)
    for dumped in (a, b):
        dumped["jobs"] = sorted((r[1:] for r in dumped["jobs"]), key=repr)
        del dumped["schema_migrations"]
    assert [t for t in a if a[t] != b[t]] == []
two_urls = identity.two_urls
