"""RememStore: what ``remem.open`` returns — memories, verify and rebuild over one database."""

from __future__ import annotations

import os
import threading
from typing import Any

from remem.domain.access import Operation, Principal, may
from remem.domain.logentry import DEFAULT_TENANT
from remem.domain.timefmt import to_iso
from remem.errors import (
    ConfigInvalid,
    InvalidInput,
    NotFound,
    PermissionDenied,
)
from remem.service.clock import SystemClock
from remem.service.config import validate_config
from remem.service.context import MemoryContext
from remem.service.guard import hidden_memory
from remem.service.memory import Memory
from remem.settings import ProviderRegistry




class RememStore:
    """A database holding memories.

    Args:
        adapter: a storage adapter (``SQLiteStore`` or ``PostgresStore``).
        clock: injected clock; defaults to the system clock.
        providers: the operator's ``ProviderRegistry`` (None: only ``rules`` and ``local``);
            memory configs pick model providers from it by name.
    """

    def __init__(self, adapter: Any, clock: Any = None, *, derive: str = "inline",
                 providers: Any = None, blob_dir: Any = None) -> None:
        if derive not in ("inline", "worker"):
            raise InvalidInput("derive must be 'inline' (embedded: derive jobs run in-process "
                               "right after observe) or 'worker' (a `remem worker` runs them).",
                               field="derive")
        self.adapter = adapter
        self.clock = clock or SystemClock()
        self.derive = derive
        self.providers = providers if providers is not None else ProviderRegistry()
        self._contexts: dict[str, MemoryContext] = {}
        self._contexts_lock = threading.Lock()
        #: Directory of the file-backed blob store (None: ``stores.blobs.default_blob_root``).
        self.blob_dir = blob_dir
        self._blobs: Any = None

    @property
    def blobs(self) -> Any:
        """The blob store of fact content above the inline limit (``ports.BlobStore``), or
        None when no data dir is known (PostgreSQL without ``blob_dir``/``REMEM_BLOB_DIR``)."""
        if self._blobs is None:
            from remem.stores.blobs import LocalBlobStore, default_blob_root

            root = self.blob_dir or default_blob_root(self.adapter)
            self._blobs = LocalBlobStore(root) if root is not None else None
        return self._blobs

    def create_memory(self, memory_id: str, config: dict[str, Any] | None = None, *,
                      principal: Principal | None = None,
                      tenant_id: str | None = None) -> Memory:
        """Creates a memory; ``config`` is validated against ``CONFIG_SCHEMA``.

        A token's principal may create only the memory it is bound to, as a memory admin, in
        its own tenant. ``tenant_id`` (None: the principal's tenant, else ``default``) is the
        tenant the memory belongs to for good.

        Raises:
            InvalidInput: bad id. ConfigInvalid: bad config. AlreadyExists: id taken.
            PermissionDenied: the principal may not create this memory.
        """
        _check_memory_id(memory_id)
        if principal is not None and not principal.is_owner:
            if not may(principal, Operation.MANAGE):
                raise PermissionDenied("Only an admin caller with subject 'admin' may create a "
                                       "memory.", role=principal.role.value,
                                       subject=principal.subject)
            if not principal.reaches(memory_id):
                raise PermissionDenied("This token is bound to another memory; it may create "
                                       f"only its own, not {memory_id!r}.", memory=memory_id)
            if not principal.in_tenant(tenant_id or principal.tenant_id):
                raise PermissionDenied("This token is bound to another tenant; it may create "
                                       "a memory only in its own.", tenant=tenant_id)
        tenant_id = tenant_id or (principal.tenant_id if principal else None) or DEFAULT_TENANT
        check_tenant_id(tenant_id)
        cfg = validate_config(config, self.providers)
        # A fresh random key for the memory's claim ids (HMAC-SHA256), erased with it.
        self.adapter.create_memory(memory_id, cfg, to_iso(self.clock.now()),
                                   claim_secret=os.urandom(32), tenant_id=tenant_id)
        with self._contexts_lock:  # a re-created id must not reuse an old context's secret
            self._contexts.pop(memory_id, None)
        from remem.service.jobs.schedule import arm_all

        arm_all(self.memory(memory_id))  # consolidation and retention, each on its interval
        return self.memory(memory_id, principal)

    def memory(self, memory_id: str, principal: Principal | None = None) -> Memory:
        """Opens an existing memory as seen by ``principal`` (default: the owner).

        Raises:
            NotFound: (owner) no memory with that id. NotFoundOrNotVisible: (a token's
                principal) no memory with that id, or one it is not bound to: one answer.
        """
        if principal is None or principal.is_owner:
            return Memory(self.context(memory_id), principal)
        if not principal.reaches(memory_id):
            raise hidden_memory(memory_id)
        try:
            ctx = self.context(memory_id)
        except NotFound:
            raise hidden_memory(memory_id) from None
        return Memory(ctx, principal)

    def context(self, memory_id: str) -> MemoryContext:
        """The memory's cached context; rebuilt when its stored config changed.

        Raises:
            NotFound: no memory with that id.
        """
        if not isinstance(memory_id, str):
            raise hidden_memory(memory_id)
        config = self.adapter.memory_config(memory_id)
        with self._contexts_lock:
            ctx = self._contexts.get(memory_id)
            if ctx is None or ctx.config != config:
                ctx = self._contexts[memory_id] = MemoryContext(self, memory_id, config)
            return ctx

    def update_config(self, memory_id: str, config: dict[str, Any]) -> None:
        """Replaces a memory's config after validating it. A key's declared cardinality never
        changes: a config naming another cardinality for a declared key is refused."""
        cfg = validate_config(config, self.providers)
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
        """Purges the memory: its ledger and every row; returns rows deleted per table.

        Raises:
            LegalHoldActive: items are under legal hold (``details.held``: how many;
                ``item_ids``: up to 100); nothing deleted. Release the holds first.
            NotFound: no memory with that id.
        """
        self.refuse_held(memory_id)
        with self._contexts_lock:
            self._contexts.pop(memory_id, None)
        out = self.adapter.delete_memory(memory_id, to_iso(self.clock.now()))
        if self.blobs is not None:  # the memory's fact blobs go with it
            import shutil

            shutil.rmtree(self.blobs.root / memory_id, ignore_errors=True)
        return out

    def refuse_held(self, memory_id: str) -> None:
        """Raises LegalHoldActive when any item of the memory is under legal hold (the one
        check before a memory is deleted, by any interface)."""
        held = self.adapter.held_item_ids(memory_id)
        if held:
            from remem.errors import LegalHoldActive

            n = len(held)
            raise LegalHoldActive(
                f"{n} item{'s' if n != 1 else ''} of memory {memory_id} "
                f"{'are' if n != 1 else 'is'} under legal hold, so nothing was deleted. An "
                "admin must release the holds first (`remem hold ITEM_ID --release`).",
                memory=memory_id, held=n, item_ids=held[:100])

    def verify(self) -> dict[str, Any]:
        """Walks every chain; returns {"ok", "memories": {id: {"ok", "events", "broken",
        "breaks", "sources_ok", ...}}, "pending_erasures"} (``service.verify``); never raises
        on damage."""
        from remem.service.verify import verify_store

        report = verify_store(self.adapter)
        report["pending_erasures"] = self.adapter.pending_erasures(None)
        return report

    def rebuild(self, memory_id: str | None = None) -> dict[str, int]:
        """Drops and refolds the read model of one or every memory; returns events folded."""
        ids = [memory_id] if memory_id else [m["memory_id"] for m in self.list_memories()]
        return {mid: self.adapter.rebuild(mid) for mid in ids}

    def pending_erasures(self, memory_id: str | None = None) -> int:
        """How many physical scrubs are owed (erased text may still be in the database
        files): of one memory, or of the whole database."""
        return self.adapter.pending_erasures(memory_id)

    def finish_erasures(self) -> dict[str, Any]:
        """Runs the owed scrubs now (``remem worker`` does this when idle; SQLite also on
        open).

        Returns:
            {"state": "completed" | "pending", "reason": str | None, "pending": int}:
            completed once no scrub is owed any more.
        """
        return self.adapter.scrub_after_erasure(None, to_iso(self.clock.now()))

    def close(self) -> None:
        self.adapter.close()


def check_tenant_id(tenant_id: Any) -> None:
    """Raises InvalidInput unless a tenant id is 1-128 letters, digits, '.', '_' or '-'."""
    import re

    if not isinstance(tenant_id, str) or not re.fullmatch(r"[A-Za-z0-9][A-Za-z0-9._-]{0,127}",
                                                          tenant_id):
        raise InvalidInput(f"tenant id {tenant_id!r} must be 1-128 letters, digits, '.', '_' "
                           "or '-', starting with a letter or digit.", field="tenant")


def _check_memory_id(memory_id: str) -> None:
    import re

    from remem.errors import InvalidInput

    if not isinstance(memory_id, str) or not re.fullmatch(r"[A-Za-z0-9][A-Za-z0-9._-]{0,127}",
                                                          memory_id):
        raise InvalidInput(f"memory id {memory_id!r} must be 1-128 letters, digits, '.', '_' "
                           "or '-', starting with a letter or digit.", field="memory")
