"""The access log of ``remem serve``: method, path and status, never the query string.

uvicorn logs each request line with its query string. A GET form or filter carries what a
user typed (the manage view's text search ``/ui/items?text=...``, ``/items?filters=`` with
metadata values), and a log line outlives a forget. :class:`QueryDropped` replaces the query
with ``?[query not logged]``; :func:`log_config` is uvicorn's default configuration with that
filter on the access handler.
"""

from __future__ import annotations

import copy
import logging
from typing import Any

QUERY_MARK = "?[query not logged]"


class QueryDropped(logging.Filter):
    """Rewrites uvicorn's access record ``(client, method, path?query, version, status)``
    to carry the path only."""

    def filter(self, record: logging.LogRecord) -> bool:
        args = record.args
        if isinstance(args, tuple) and len(args) == 5 and isinstance(args[2], str) \
                and "?" in args[2]:
            record.args = (args[0], args[1], args[2].split("?", 1)[0] + QUERY_MARK, *args[3:])
        return True


def log_config() -> dict[str, Any]:
    """uvicorn's default logging configuration plus :class:`QueryDropped` on the access
    handler (pass as ``uvicorn.run(..., log_config=log_config())``)."""
    from uvicorn.config import LOGGING_CONFIG

    config = copy.deepcopy(LOGGING_CONFIG)
    config.setdefault("filters", {})["query_dropped"] = {"()": QueryDropped}
    config["handlers"]["access"].setdefault("filters", []).append("query_dropped")
    return config
