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


_FOOD = ("diet", "allergies")
_HOME = ("home_city",)
_FAMILY = ("children", "partner")
_LEISURE = ("hobbies", "likes")
_SCHEDULE = ("work_schedule", "timezone")
#: Everyday requests and the profile keys that constrain them ("book a restaurant" needs the
#: diet and allergies, "nearby" the home city): a general vocabulary by domain (food, place,
#: family, leisure, schedule, travel, pets, car, work), not tuned to any query set. Read after
#: :data:`KEY_HINTS`.
NEED_HINTS: dict[str, tuple[str, ...]] = {
    **dict.fromkeys(("restaurant", "restaurants", "dinner", "lunch", "breakfast", "brunch",
                     "meal", "meals", "cook", "cooking", "recipe", "recipes", "snack",
                     "snacks", "groceries", "grocery", "menu", "dish", "dishes", "bake",
                     "takeaway", "takeout", "cafe", "picnic", "catering"), _FOOD),
    **dict.fromkeys(("nearby", "near", "around", "local", "locally", "weather", "neighborhood",
                     "neighbourhood", "commute", "here"), _HOME),
    **dict.fromkeys(("kids", "kid", "children", "child", "daughter", "daughters", "son",
                     "sons", "babysitter", "babysitting", "school", "family", "wife",
                     "husband", "partner", "spouse", "anniversary"), _FAMILY),
    **dict.fromkeys(("weekend", "weekends", "hobby", "hobbies", "fun", "activity",
                     "activities", "outing", "holiday", "vacation"), _LEISURE),
    **dict.fromkeys(("schedule", "meeting", "meetings", "call", "appointment", "available",
                     "free", "calendar", "monday", "tuesday", "wednesday", "thursday",
                     "friday", "saturday", "sunday"), _SCHEDULE),
    **dict.fromkeys(("trip", "travel", "flight", "flights", "train", "journey"),
                    ("travel_style", "home_city")),
    **dict.fromkeys(("vet", "walk", "puppy", "kitten"), ("pets", "pet")),
    **dict.fromkeys(("car", "drive", "driving", "charge", "parking"), ("car",)),
    **dict.fromkeys(("boss", "colleague", "colleagues", "office", "career", "resume"),
                    ("employer", "job_title")),
    **dict.fromkeys(("user", "who"), ("name",)),
    **dict.fromkeys(("eat", "eats", "eating", "food", "drink", "drinks"), ("allergies",)),
    **dict.fromkeys(("music", "playlist", "song", "songs", "concert", "album", "radio"),
                    ("music_taste",)),
    **dict.fromkeys(("hike", "hiking", "run", "running", "workout", "exercise", "sport",
                     "gym", "race", "marathon", "climb"), ("hobbies", "health_notes")),
    **dict.fromkeys(("book", "books", "novel", "read", "reading"), ("favorite_books",)),
    "dog": ("pets", "pet"), "cat": ("pets", "pet"), "pet": ("pets", "pet"),
}


def hinted_keys(words: list[str]) -> list[str]:
    """Keys named indirectly by query words, in query order, without duplicates."""
    out: list[str] = []
    for w in words:
        for k in KEY_HINTS.get(w, ()) + NEED_HINTS.get(w, ()):
            if k not in out:
                out.append(k)
    return out
