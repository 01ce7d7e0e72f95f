"""HTTP API (FastAPI, thin): ``create_app(store)``; see ``remem.api.app`` for the routes.

Needs the ``server`` extra: ``pip install 'remem[server]'``.
"""

from __future__ import annotations

from remem.api.app import create_app

__all__ = ["create_app"]
