"""RememStore: what ``remem.open`` returns — memories, verify and rebuild over one database."""

from __future__ import annotations

from typing import Any

from remem.domain.timefmt import to_iso
from remem.errors import ConfigInvalid, InvalidInput
from remem.service.clock import SystemClock
from remem.service.config import validate_config
from remem.service.memory import Memory


class RememStore:
    """A database holding memories.

    Args:
        adapter: a storage adapter (``SQLiteStore`` or ``PostgresStore``).
        clock: injected clock; defaults to the system clock.
    """

    def __init__(self, adapter: Any, clock: Any = None, *, derive: str = "inline") -> None:
        if derive not in ("inline", "worker"):
            raise InvalidInput("derive must be 'inline' (embedded: derive jobs run in-process "
                               "right after observe) or 'worker' (a `remem worker` runs them).",
                               field="derive")
        self.adapter = adapter
        self.clock = clock or SystemClock()
        self.derive = derive

    def create_memory(self, memory_id: str, config: dict[str, Any] | None = None) -> Memory:
        """Creates a memory; ``config`` is validated against ``CONFIG_SCHEMA``.

        Raises:
            InvalidInput: bad id. ConfigInvalid: bad config. AlreadyExists: id taken.
        """
        _check_memory_id(memory_id)
        cfg = validate_config(config)
        self.adapter.create_memory(memory_id, cfg, to_iso(self.clock.now()))
        return self.memory(memory_id)

    def memory(self, memory_id: str) -> Memory:
        """Opens an existing memory.

        Raises:
            NotFound: no memory with that id.
        """
        return Memory(self.adapter, memory_id, self.clock, owner=self, derive_mode=self.derive)

    def update_config(self, memory_id: str, config: dict[str, Any]) -> None:
        """Replaces a memory's config after validating it. A key's declared cardinality never
        changes: a config naming another cardinality for a declared key is refused."""
        cfg = validate_config(config)
        for key, spec in cfg.get("keys", {}).items():
            if "cardinality" not in spec:
                continue
            declared = self.adapter.key_meta(memory_id, "user:_", key)["cardinality"]
            if declared and declared != spec["cardinality"]:
                raise ConfigInvalid(
                    f"Key {key!r} is already declared {declared}; a key's cardinality never "
                    "changes. Use a new key name.", path=f"keys/{key}/cardinality")
        self.adapter.update_memory_config(memory_id, cfg, to_iso(self.clock.now()))

    def list_memories(self) -> list[dict[str, Any]]:
        return self.adapter.list_memories()

    def delete_memory(self, memory_id: str) -> dict[str, int]:
        """Purges the memory: its ledger and every row; returns rows deleted per table."""
        return self.adapter.delete_memory(memory_id)

    def verify(self) -> dict[str, Any]:
        """Walks every chain; returns {"ok", "memories": {id: {"ok", "events", "broken",
        "breaks", "sources_ok", ...}}} (``service.verify``); never raises on damage."""
        from remem.service.verify import verify_store

        return verify_store(self.adapter)

    def rebuild(self, memory_id: str | None = None) -> dict[str, int]:
        """Drops and refolds the read model of one or every memory; returns events folded."""
        ids = [memory_id] if memory_id else [m["memory_id"] for m in self.list_memories()]
        return {mid: self.adapter.rebuild(mid) for mid in ids}

    def close(self) -> None:
        self.adapter.close()


def _check_memory_id(memory_id: str) -> None:
    import re

    from remem.errors import InvalidInput

    if not isinstance(memory_id, str) or not re.fullmatch(r"[A-Za-z0-9][A-Za-z0-9._-]{0,127}",
                                                          memory_id):
        raise InvalidInput(f"memory id {memory_id!r} must be 1-128 letters, digits, '.', '_' "
                           "or '-', starting with a letter or digit.", field="memory")
