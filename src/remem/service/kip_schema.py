"""The KIP 2.0 Memory Interface wire schema remem serves, and validation against it.

remem keeps its own copy in ``remem/specs/kip/`` (the ldclabs/KIP schema of 2026-09-23),
extended only where the seed text is newer (see docs/kip.md, "Schema extensions"):
recall ``mode: attention`` and revise ``change_kind: misrecorded`` are accepted by the
schema so that remem can answer them ``UnsupportedCapability``; the referenced response
``Error`` and request ``SpaceSelector`` definitions are copied; projection, cognitive-record
and element definitions (briefing ``details``) are stubs that reject anything, because remem
emits no ``details``.
"""

from __future__ import annotations

import functools
import json
from pathlib import Path
from typing import Any

SPEC_DIR = Path(__file__).resolve().parent.parent / "specs" / "kip"
MEMORY_ID = "urn:kip:2.0:2026-09-23:schema:memory"
SHAPES = ("Request", "Response", "Descriptor")


@functools.cache
def _registry() -> Any:
    from referencing import Registry, Resource

    resources = []
    for path in sorted(SPEC_DIR.glob("*.schema.json")):
        doc = json.loads(path.read_text(encoding="utf-8"))
        resources.append((doc["$id"], Resource.from_contents(doc)))
    return Registry().with_resources(resources)


@functools.cache
def _validator(shape: str) -> Any:
    from jsonschema import Draft202012Validator

    return Draft202012Validator({"$ref": f"{MEMORY_ID}#/$defs/{shape}"},
                                registry=_registry())


def errors(document: Any, shape: str) -> list[str]:
    """Every way ``document`` breaks the schema's ``shape`` (Request, Response or Descriptor),
    as ``"<json path>: <message>"`` strings; empty when it validates."""
    if shape not in SHAPES:
        raise ValueError(f"shape must be one of {SHAPES}")
    found = sorted(_validator(shape).iter_errors(document), key=lambda e: list(e.path))
    return [f"{'/'.join(str(p) for p in e.path) or '<root>'}: {e.message}"[:300]
            for e in found]


def check(document: Any, shape: str) -> None:
    """Nothing when ``document`` is a valid ``shape``.

    Raises:
        ValueError: it is not (the message lists the first problems).
    """
    problems = errors(document, shape)
    if problems:
        raise ValueError(f"not a schema-valid KIP {shape}: " + "; ".join(problems[:5]))


def bundles() -> dict[str, Any]:
    """The capability-bundle registry (``memory-bundles.json``)."""
    return json.loads((SPEC_DIR / "memory-bundles.json").read_text(encoding="utf-8"))


__all__ = ["SPEC_DIR", "bundles", "check", "errors"]
