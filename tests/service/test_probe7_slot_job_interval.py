"""Round-7 probe: a memory admin could set ``consolidation_interval_hours`` or
``retention.interval_hours`` to 0 (or 1e-300) with ``PUT /memories/{id}/config``; each run
then re-armed itself due at once, so the shared ``remem worker`` was never idle: it ran that
memory's jobs back to back (200 in 0.6 s here) and never reached the owed erasure scrubs it
finishes only when idle. The interval is now at least 0.1 hours (6 minutes) in the config
schema, and a config stored before is read with that floor. Real SQLite file."""

from __future__ import annotations

import pytest

from remem.errors import ConfigInvalid
from remem.service.jobs.schedule import MIN_INTERVAL_HOURS, interval_hours


@pytest.mark.parametrize("config", [
    {"consolidation_interval_hours": 0}, {"consolidation_interval_hours": 1e-300},
    {"retention": {"interval_hours": 0}}, {"retention": {"interval_hours": 0.01}},
])
def test_a_slot_job_interval_below_six_minutes_is_refused(store, config):
    with pytest.raises(ConfigInvalid) as refused:
        store.create_memory("m1", config)
    assert "interval_hours" in refused.value.details["path"]
    store.create_memory("m2")
    with pytest.raises(ConfigInvalid):
        store.update_config("m2", config)  # what PUT /memories/{id}/config calls


def test_the_shortest_interval_leaves_the_worker_idle(store):
    mem = store.create_memory("m1", {"consolidation_interval_hours": MIN_INTERVAL_HOURS,
                                     "retention": {"interval_hours": MIN_INTERVAL_HOURS}})
    mem.remember("user:x", "home_city", "Lyon", kind="profile_slot")
    assert mem.run_jobs(max_jobs=50) == []  # armed one interval ahead, nothing due


@pytest.mark.parametrize("kind, config", [
    ("consolidate", {"consolidation_interval_hours": 0}),
    ("retention", {"retention": {"interval_hours": 0}}),
])
def test_a_config_stored_before_is_read_with_the_floor(kind, config):
    assert interval_hours(config, kind) == MIN_INTERVAL_HOURS
