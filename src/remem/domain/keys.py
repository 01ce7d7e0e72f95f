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


#: Query words that name a common key without saying it ("where does she live" -> home_city).
#: Used by recall's exact-key channel; a general vocabulary, not tuned to any benchmark.
KEY_HINTS: dict[str, tuple[str, ...]] = {
    "live": ("home_city",), "lives": ("home_city",), "living": ("home_city",),
    "city": ("home_city", "hometown"), "moved": ("home_city",), "based": ("home_city",),
    "hometown": ("hometown",), "grew": ("hometown",), "born": ("hometown", "birthday"),
    "work": ("employer", "job_title"), "works": ("employer", "job_title"),
    "job": ("job_title", "employer"), "employer": ("employer",), "company": ("employer",),
    "eat": ("diet",), "eats": ("diet",), "vegetarian": ("diet",), "vegan": ("diet",),
    "diet": ("diet",), "food": ("diet", "likes", "allergies"),
    "allergic": ("allergies",), "allergy": ("allergies",), "allergies": ("allergies",),
    "speak": ("languages",), "speaks": ("languages",), "language": ("languages",),
    "languages": ("languages",), "pet": ("pets",), "pets": ("pets",), "dog": ("pets",),
    "cat": ("pets",), "called": ("name",), "name": ("name",), "timezone": ("timezone",),
    "time zone": ("timezone",), "like": ("likes",), "likes": ("likes",), "love": ("likes",),
    "enjoy": ("likes",), "hate": ("dislikes",), "dislike": ("dislikes",),
    "style": ("response_style",), "answers": ("response_style",), "theme": ("ui_theme",),
    "editor": ("editor",), "phone": ("phone_number",), "email": ("email",),
    "birthday": ("birthday",), "age": ("age",), "old": ("age",),
}


def hinted_keys(words: list[str]) -> list[str]:
    """Keys named indirectly by query words, in query order, without duplicates."""
    out: list[str] = []
    for w in words:
        for k in KEY_HINTS.get(w, ()):
            if k not in out:
                out.append(k)
    return out
