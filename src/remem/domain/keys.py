"""Built-in defaults for common keys: cardinality and kind (KickSide: cardinality per key).

A memory's config may override these; once a key is declared in a memory its cardinality is
persisted and never changed by later items.
"""

from __future__ import annotations

from remem.domain.model import Cardinality

SINGLE_KEYS = frozenset(
    {
        "name", "home_city", "hometown", "employer", "job_title", "diet", "timezone",
        "birthday", "age", "email", "phone_number", "response_style", "ui_theme", "editor",
        "language_preference", "units", "relationship_status", "pronouns",
    }
)
MULTI_KEYS = frozenset(
    {
        "allergies", "languages", "pets", "likes", "dislikes", "hobbies", "skills",
        "children", "goals", "projects", "rules",
    }
)


def default_cardinality(key: str) -> Cardinality:
    """Cardinality used when a key is first seen and the config names none.

    Known multi keys (allergies, languages, ...) are multi; everything else is single, the
    safer default: a single key supersedes or conflicts instead of piling up values.
    """
    return Cardinality.MULTI if key in MULTI_KEYS else Cardinality.SINGLE
