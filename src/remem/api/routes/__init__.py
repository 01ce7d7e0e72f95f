"""Route modules; ``ROUTERS`` lists them in the order ``create_app`` includes them."""

from __future__ import annotations

from remem.api.routes import admin, conflicts, intake, items, kip, memory, recall, slots
from remem.api.routes import cached, export, sessions
from remem.api.routes import facts

ROUTERS = [items.router, recall.router, intake.router, conflicts.router, memory.router,
           admin.router, kip.router, slots.router, cached.router, export.router, sessions.router,
           facts.router]
