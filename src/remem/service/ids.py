"""Id minting for the service (stores never mint ids): ``job_…``, ``run_…`` and friends."""

from __future__ import annotations

import secrets


def new_id(prefix: str, *, hex_chars: int = 20) -> str:
    """``<prefix>_<random hex>`` (20 hex characters = 80 random bits by default)."""
    return f"{prefix}_{secrets.token_hex((hex_chars + 1) // 2)[:hex_chars]}"
