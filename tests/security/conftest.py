"""Security-matrix fixtures: one seeded `remem serve` on loopback per backend per module.

``world`` is module-scoped and parametrized over ``sqlite`` and ``postgres``; a test whose
call changed the seeded state marks it dirty (``world.dirty = True``) and the next test gets
memory m1 deleted and seeded again (so one broken guard does not mask the cases after it).
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from security.kit import World


class Worlds:
    """Builds the seeded world lazily and rebuilds it after a destructive failure."""

    def __init__(self, request: pytest.FixtureRequest, backend: str) -> None:
        self.request = request
        self.backend = backend
        self.current: World | None = None
        self.n = 0

    def get(self) -> World:
        if self.current is not None and self.current.broken:
            self.current.close()
            self.current = None
        if self.current is not None and self.current.dirty:
            try:
                self.current.reset()
            except Exception:  # the reset route itself may be what broke: start afresh
                self.current.close()
                self.current = None
        if self.current is None:
            self.current = self._build()
        return self.current

    def _build(self) -> World:
        self.n += 1
        if self.backend == "sqlite":
            tmp = self.request.getfixturevalue("tmp_path_factory").mktemp("secdb")
            return World("sqlite", str(tmp / "remem.db"))
        from _plugins.backends import migrated_database
        from remem.testing.pgdb import drop_database, shared_server

        server = shared_server()
        url = migrated_database(server, prefix="sec")
        return World("postgres", url, on_close=lambda: drop_database(server, url))

    def close(self) -> None:
        if self.current is not None:
            self.current.close()
            self.current = None


@pytest.fixture(scope="module", params=["sqlite", "postgres"])
def worlds(request: pytest.FixtureRequest) -> Iterator[Worlds]:
    w = Worlds(request, request.param)
    yield w
    w.close()


@pytest.fixture
def world(worlds: Worlds) -> World:
    """The seeded server of this module and backend (reseeded if a test dirtied it)."""
    return worlds.get()
