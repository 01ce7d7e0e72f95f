"""Round-6 finding: ``POST /memory/{id}/deactivate`` handed a scoped writer the memory-wide
consolidation job's id (``job_id``). The job is the memory's, not the scope's: a scoped
caller now gets the consolidation's kind and due time only; a memory-wide caller still gets
the id. A real ``remem serve`` over a real SQLite file."""

from __future__ import annotations

import pytest

from security.probe4_kit import Probe


@pytest.fixture(scope="module")
def probe(tmp_path_factory):
    p = Probe(tmp_path_factory.mktemp("deactivate"))
    yield p
    p.close()


def _deactivate(probe: Probe, who: str, scope: str) -> dict:
    return probe.ok(who, "POST", "/memory/m1/deactivate", json={"scope": scope,
                                                               "host_id": "s1"})


def test_a_scoped_writer_is_not_given_the_memorys_job_id(probe):
    root = _deactivate(probe, "root", "user:alice")
    job_id = root["consolidation"]["job_id"]
    assert job_id.startswith("job")  # a memory-wide caller sees the job
    for who in ("aw", "aa"):  # a scoped writer, a scoped admin
        r = probe.call(who, "POST", "/memory/m1/deactivate",
                       json={"scope": "user:alice", "host_id": "s1"})
        assert r.status_code == 202, r.text
        assert job_id not in r.text
        out = r.json()["consolidation"]
        assert out["kind"] == "consolidate" and out["run_at"]
        assert out.get("job_id") is None
