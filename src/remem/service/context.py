"""MemoryContext: one memory's config, ports and providers, built once and cached.

``RememStore.context(memory_id)`` builds a context the first time a memory is used and keeps
it; it is rebuilt only when the memory's stored config differs from the cached one (another
process may have replaced it), so an HTTP request or a job costs one config read, never a
provider build. Service objects (writer, embedding, recall, sources, intake) hang off the
context and take it instead of the public ``Memory`` facade.
"""

from __future__ import annotations

from typing import Any

from remem.providers.registry import build_extractor, build_judge
from remem.service import slots
from remem.service.cached import CachedFacts
from remem.service.config import key_policy, occurrences_enabled
from remem.service.embedding import EmbeddingService
from remem.service.intake import Intake
from remem.service.recall import RecallService
from remem.service.sources import SourceService
from remem.service.writer import Writer


class MemoryContext:
    """Everything one memory's services need; shared by every ``Memory`` facade of it.

    Attributes:
        store: the storage adapter. id: the memory id. clock: the store's clock.
        config: the validated memory config (read-only by convention).
        owner: the ``RememStore`` (the job runner needs it). derive_mode: inline | worker.
        providers: the operator's provider registry (endpoints and credentials).
        extractor, judge: built from the config's provider names and the registry.
        writer, embedding, recall, sources, intake: the memory's services.
    """

    def __init__(self, owner: Any, memory_id: str, config: dict[str, Any]) -> None:
        self.owner = owner
        self.store = owner.adapter
        self.id = memory_id
        self.clock = owner.clock
        self.derive_mode = owner.derive
        self.config = config
        self.providers = getattr(owner, "providers", None)  # the operator's registry
        self.extractor = build_extractor(config.get("extraction"), self.providers)
        self.judge = build_judge(config.get("judge"), self.providers)
        self.writer = Writer(self.store, memory_id, self.clock, self.policy)
        self.writer.occurrences = occurrences_enabled(config)
        self.embedding = EmbeddingService(self)  # indexes new items in the write transaction
        self.embedding.attach(self.writer)
        slots.attach(self)  # instantKV per-slot bounds, checked at the head
        self.recall = RecallService(self, self.embedding)
        self.sources = SourceService(self, self.embedding)
        self.intake = Intake(self)
        self.cached = CachedFacts(self)  # Kind-B cached facts: refresh, labels, erasure

    @property
    def tenant_id(self) -> str:
        """The tenant this memory belongs to (read once; a memory never changes tenant)."""
        tenant = self.__dict__.get("_tenant_id")
        if tenant is None:
            tenant = self.__dict__["_tenant_id"] = self.store.memory_tenant(self.id) or "default"
        return tenant

    def policy(self, key: str):
        """(cardinality from config or None, on_change) of ``key``."""
        return key_policy(self.config, key)

    def run_jobs(self, max_jobs: int | None = None) -> list[dict[str, Any]]:
        """Runs this memory's due jobs in-process (derive, consolidate); returns outcomes."""
        from remem.service.jobs.runner import Worker

        return Worker(self.owner).run_until_idle(self.id, max_jobs=max_jobs)


__all__ = ["MemoryContext"]
