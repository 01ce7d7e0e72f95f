"""Rule tables of the rule extractor: the key table, vocabularies, value parsers and rules.

Every rule is a regex anchored at the start of a clause whose subject is the speaker ("I …",
"my name …", "call me …") and ending at the clause's end, so statements about third parties
("my sister lives in Rome", "John works at Google") never match. A rule's handler parses the
captured value and returns hits, or ``[]`` to let the next rule try. ``rules.py`` owns the
pipeline: splitting, guards, dates, negation and retraction.

Values keep the speaker's casing, except closed vocabularies (diet, ui_theme, editor, timezone,
response_style, known language names), which are canonicalised. Pets are objects
``{"species": "dog", "name": "Rex"}`` (``name`` only when given, ``count`` only when above one).
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from types import MappingProxyType
from typing import NamedTuple


@dataclass(frozen=True)
class KeySpec:
    """What the extractor knows about a key: its kind and cardinality (``single``/``multi``)."""

    kind: str
    cardinality: str


KEYS = MappingProxyType({
    "name": KeySpec("identity", "single"),
    "home_city": KeySpec("profile_slot", "single"),
    "hometown": KeySpec("profile_slot", "single"),
    "employer": KeySpec("profile_slot", "single"),
    "job_title": KeySpec("profile_slot", "single"),
    "timezone": KeySpec("profile_slot", "single"),
    "diet": KeySpec("preference", "single"),
    "response_style": KeySpec("preference", "single"),
    "ui_theme": KeySpec("preference", "single"),
    "editor": KeySpec("preference", "single"),
    "likes": KeySpec("preference", "multi"),
    "dislikes": KeySpec("preference", "multi"),
    "allergies": KeySpec("fact", "multi"),
    "languages": KeySpec("fact", "multi"),
    "pets": KeySpec("fact", "multi"),
    "phone_number": KeySpec("profile_slot", "single"),
    "email": KeySpec("profile_slot", "single"),
    "units": KeySpec("preference", "single"),
})


class Hit(NamedTuple):
    """One value found in a clause, before dates and provenance are attached."""

    key: str
    value: object
    negated: bool = False
    operation: str = "assert"


from remem.providers.rules_words import (  # noqa: F401  (re-exported vocabularies)
    DIETS,
    EDITORS,
    LANGUAGES,
    LANGUAGE_MODIFIERS,
    SPECIES,
    PLURALS,
    PET_MODIFIERS,
    NUMBERS,
    JOB_HEADS,
    EXEC_TITLES,
    TITLE_REJECT,
    PLACE_LINKS,
    ORG_LINKS,
    NAME_LINKS,
    PROPER_STOP,
    VAGUE,
    CLAUSE_WORDS,
    CLAUSE_START,
    DANGLING,
    SAY_VERBS,
    NOT_ALLERGENS,
    BINOMIALS,
)


_TOKEN = re.compile(r"[^\s,;:!?()\[\]{}\"<>]+")
_ABBREV = re.compile(r"(?:[A-Za-z]\.){2,}$")
_AMBIGUOUS_TAIL = re.compile(r"^\s*(?:,\s*)?(?:and|or|&|/|nor)\s+\S", re.I)
_SUBORDINATE = re.compile(
    r"\s+[-–—]+\s.*$|\s+(?:'cause|cause|cuz|because|since|when|whenever|while|but|though|"
    r"although|if|unless|so|as long as|which|who|that|where|like|such as|including|especially|"
    r"except|more than|better than|rather than|than|over|instead of|for example|e\.g\.)\b.*$",
    re.I | re.S)
TAIL = re.compile(
    r"(?:[\s.!,;:…~)(*-]|\b(?:now|too|also|as well|again|these days|nowadays|currently|lately|"
    r"at the moment|right now|any\s?more|any longer|a lot|so much|very much|really|though|tbh|"
    r"honestly|haha|lol|btw|by the way|actually|either|at all|these days|ok|okay|please|"
    r"from now on|for now|thanks|thank you)\b)+$", re.I)
_LIST_SPLIT = re.compile(
    r"\s*,\s*(?:and\s+|or\s+|&\s+)?|\s+(?:and|or|&|as well as|plus|along with|nor)\s+|\s*/\s*",
    re.I)
_QUANTIFIER = re.compile(r"^(?:(?:some|any|all|most|of|a|an)\s+)+")
_DEFINITE = re.compile(r"^the\s+(?![A-Z])")  # "the color" points into the chat; "the Beatles" not


def _is_capitalised(token: str, *, org: bool = False) -> bool:
    first = token[0]
    if first.isupper() or (first.isalpha() and not first.islower()):
        return True  # caseless scripts (CJK) count as proper
    if org and first.isdigit():
        return True
    return org and first.islower() and any(ch.isupper() for ch in token[1:])  # eBay, iRobot


def proper_phrase(text: str, links: frozenset[str], *, max_tokens: int = 5,
                  org: bool = False) -> tuple[str, str] | None:
    """The run of capitalised words that opens ``text`` and the text after it, or ``None``."""
    kept: list[re.Match[str]] = []
    pending: list[re.Match[str]] = []
    pos = capitals = 0
    for m in _TOKEN.finditer(text):
        if text[pos:m.start()].strip():
            break  # punctuation between words ends the phrase
        token = m.group()
        if _is_capitalised(token, org=org):
            kept.extend(pending)
            pending = []
            kept.append(m)
            capitals += 1
        elif kept and token.lower() in links:
            pending.append(m)
        else:
            break
        pos = m.end()
        if capitals > max_tokens:
            return None
    if not kept:
        return None
    end = kept[-1].end()
    phrase = text[kept[0].start():end]
    if not _ABBREV.search(phrase):
        phrase = phrase.rstrip(".'-")
    if len(phrase) < 2 or phrase.split()[0] in PROPER_STOP or phrase in PROPER_STOP:
        return None
    return phrase, text[end:]


def _place(text: str) -> str | None:
    found = proper_phrase(text, PLACE_LINKS)
    if found is None or _AMBIGUOUS_TAIL.match(found[1]):
        return None
    return found[0]


def _org(text: str) -> tuple[str, str] | None:
    text = re.sub(r"^the\s+(?=\S)", "", text)
    found = proper_phrase(text, ORG_LINKS, max_tokens=6, org=True)
    if found is None or _AMBIGUOUS_TAIL.match(found[1]):
        return None
    return found


def _person_name(text: str) -> str | None:
    found = proper_phrase(text, NAME_LINKS, max_tokens=4)
    if found is None:
        return None
    name, rest = found
    if any(t in PROPER_STOP or (len(t) > 2 and t.isupper()) for t in name.split()):
        return None
    rest = rest.strip()
    if rest and not re.match(r"^(?:[,(\-–—]|(?:and|but|from|btw|by the way)\b)", rest, re.I):
        return None
    return None if _AMBIGUOUS_TAIL.match(rest) else name


def _title(text: str, *, any_head: bool = False) -> tuple[str, str] | None:
    """A job title (ending in a known head word unless ``any_head``) and the text after it."""
    m = re.match(r"([A-Za-z][\w&/+-]*(?:\s+[A-Za-z][\w&/+-]*){0,4}?)"
                 r"(?=\s*$|\s*[,(]|\s+(?:at|for|with|in|and|but|since|by|from|who|on|of)\b)",
                 text)
    if m is None:
        return None
    words = m.group(1).split()
    lowered = {w.lower() for w in words}
    if (not any_head and words[-1].lower() not in JOB_HEADS) or TITLE_REJECT & lowered:
        return None
    if any_head and (lowered & VAGUE or words[0].lower() in DANGLING):
        return None
    return m.group(1), text[m.end():]


def clean_item(item: str) -> str | None:
    """One free-text list item (likes, dislikes, allergies) trimmed, or ``None`` if vague."""
    item = _SUBORDINATE.sub("", item)
    item = TAIL.sub("", item).strip()
    item = _QUANTIFIER.sub("", item).strip()
    if _DEFINITE.match(item):
        return None  # "I love the color and texture" is about something in the conversation
    words = item.split()
    if not 1 <= len(words) <= 6 or len(item) < 2:
        return None
    lowered = [w.lower().strip(".,!") for w in words]
    if lowered[0] in VAGUE or CLAUSE_WORDS.intersection(lowered) or lowered[-1] in DANGLING:
        return None
    if lowered[0] == "to" and (len(lowered) == 1 or lowered[1] in SAY_VERBS):
        return None
    return item


def split_list(text: str) -> list[str]:
    """Split ``"X, Y and Z"`` into items, keeping fixed phrases ("mac and cheese") whole."""
    protected = text
    for phrase in BINOMIALS:
        protected = re.sub(re.escape(phrase), lambda m: m.group().replace(" ", "\x00"),
                           protected, flags=re.I)
    return [p.replace("\x00", " ") for p in _LIST_SPLIT.split(protected) if p and p.strip()]


def _listed(text: str) -> str | None:
    """The list that opens ``text``: comma segments that read as items, not a new clause.

    "reading, watching movies, and hiking" stays whole; "aerial yoga, it's a great way …" stops
    before "it's"; a continuation that is neither ("a safe, inviting place …") gives ``None``.
    """
    segments = text.split(",")
    kept = [segments[0]]
    for segment in segments[1:]:
        words = [w.strip(".!") for w in segment.lower().split()]
        if not words:
            continue
        core = words[1:] if words[0] in ("and", "or") else words
        if core and len(core) <= 4 and not CLAUSE_WORDS.intersection(core):
            kept.append(segment)
        elif words[0] in CLAUSE_START or CLAUSE_WORDS.intersection(words):
            break
        else:
            return None
    return ",".join(kept)


def _free_items(text: str) -> list[str]:
    """Free-text items (likes, dislikes, allergies); the first unusable item ends the list."""
    listed = _listed(_SUBORDINATE.sub("", text))
    items: list[str] = []
    for part in split_list(listed or ""):
        item = clean_item(part)
        if item is None:
            break
        items.append(item)
    return items


def _language(item: str) -> str | None:
    words = [w for w in TAIL.sub("", _SUBORDINATE.sub("", item)).split()
             if w.lower() not in LANGUAGE_MODIFIERS]
    words = words[: next((i for i, w in enumerate(words) if w.lower() in DANGLING), len(words))]
    if not 1 <= len(words) <= 3:
        return None
    if all(w.lower() in LANGUAGES for w in words):
        return " ".join(w.capitalize() for w in words)
    if all(w[0].isupper() and w.isalpha() for w in words) and words[0] not in PROPER_STOP:
        return " ".join(words)
    return None


def _pet(item: str) -> dict[str, object] | None:
    m = re.match(r"(?i)(\w+)\s+((?:[\w-]+\s+){0,2}?)(guinea pigs?|[a-z]+)"
                 r"(?:\s+(?:named|called)\s+(.+))?$", item.strip())
    if m is None:
        return None
    count = NUMBERS.get(m.group(1).lower()) or (int(m.group(1)) if m.group(1).isdigit() else 0)
    head = m.group(3).lower()
    if not count or not set(m.group(2).lower().split()) <= PET_MODIFIERS:
        return None
    species = SPECIES.get(head) if count == 1 else PLURALS.get(head)
    if species is None:
        return None
    pet: dict[str, object] = {"species": species}
    if m.group(4):
        name = _person_name(m.group(4))
        if name is None or count > 1:
            return None
        pet["name"] = name
    if count > 1:
        pet["count"] = count
    return pet


def _timezone(text: str) -> str | None:
    text = text.strip()
    if re.fullmatch(r"(?i)utc|gmt|z|zulu", text):
        return "+00:00"
    if re.fullmatch(r"[A-Z][a-z]+(?:_[A-Z][a-z]+)*/[A-Z][A-Za-z_-]+(?:/[A-Z][A-Za-z_-]+)?", text):
        return text  # IANA name, kept as written
    m = re.fullmatch(r"(?i)(?:utc|gmt)?\s*([+\-−])\s*(\d{1,2})(?::?(\d{2}))?", text)
    if m is None:
        return None
    hours, minutes = int(m.group(2)), int(m.group(3) or 0)
    if hours > 14 or minutes not in (0, 15, 30, 45):
        return None
    sign = "-" if m.group(1) in "-−" else "+"
    return f"{sign}{hours:02d}:{minutes:02d}"


# --- rules -------------------------------------------------------------------------------------

Handler = Callable[[re.Match[str]], list[Hit]]
_ADV = (r"(?:\s+(?:currently|now|still|also|actually|really|just|recently|finally|already|"
        r"officially|totally|absolutely|truly|genuinely|honestly|definitely|personally|even|"
        r"presently|happily|proudly|newly|originally|do))*")
_I = r"i" + _ADV
_IM = r"(?:i'm|i am|im)" + _ADV
_IHAVE = r"i(?:'ve|\s+have)?" + _ADV
_DIET = "|".join(sorted(map(re.escape, DIETS), key=len, reverse=True))
_EDITOR = "|".join(sorted(map(re.escape, EDITORS), key=len, reverse=True))
_STYLE_NOUNS = r"(?:answers|responses|replies|messages|explanations)"


def _one(key: str, parse: Callable[[str], object | None]) -> Handler:
    def handle(m: re.Match[str]) -> list[Hit]:
        value = parse(m.group("v"))
        return [] if value is None else [Hit(key, value)]
    return handle


def _many(key: str, parse: Callable[[str], list[object]], negated: bool = False) -> Handler:
    return lambda m: [Hit(key, v, negated) for v in parse(m.group("v"))]


def _const(key: str, value: object, negated: bool = False) -> Handler:
    return lambda m: [Hit(key, value, negated)]


def _all_or_nothing(parse: Callable[[str], object | None]) -> Callable[[str], list[object]]:
    def items(text: str) -> list[object]:
        parsed = [parse(p) for p in split_list(text)]
        return [] if not parsed or None in parsed else parsed  # type: ignore[return-value]
    return items


def _employer(m: re.Match[str]) -> list[Hit]:
    found = _org(m.group("v"))
    if found is None:
        return []
    hits = [Hit("employer", found[0])]
    as_title = re.match(r"(?i)\s*as\s+an?\s+(.+)$", found[1])
    title = _title(as_title.group(1), any_head=True) if as_title else None
    return hits + ([Hit("job_title", title[0])] if title else [])


def _title_at(m: re.Match[str], *, exec_only: bool = False, any_head: bool = False) -> list[Hit]:
    """Job title, and the employer after "at/for/of" ("I'm the CEO of Acme" needs one)."""
    found = _title(m.group("v"), any_head=any_head)
    if found is None or (exec_only and found[0].split()[-1].lower() not in EXEC_TITLES):
        return []
    title, rest = found
    at = re.match(r"(?i)\s*(?:at|for|with|of)\s+(.+)$", rest)
    org = _org(at.group(1)) if at and title.split()[-1].lower() != "student" else None
    if exec_only and org is None:
        return []
    return [Hit("job_title", title)] + ([Hit("employer", org[0])] if org else [])


def _diet(m: re.Match[str]) -> list[Hit]:
    return [Hit("diet", DIETS[m.group("v").lower()])]


def _editor(m: re.Match[str]) -> list[Hit]:
    return [Hit("editor", EDITORS[m.group("v").lower()])]


def _meat(m: re.Match[str]) -> list[Hit]:
    return [Hit("diet", "vegan" if "animal" in m.group("v").lower() else "vegetarian", True)]


class Rule(NamedTuple):
    """A clause regex (anchored at both ends), its handler, and whether it needs a date."""

    pattern: re.Pattern[str]
    handler: Handler
    needs_date: bool


def _rule(pattern: str, handler: Handler, *, dated: bool = False) -> Rule:
    return Rule(re.compile(pattern + r"$", re.I), handler, dated)


_ANY = r"(?P<v>.+)"
_OFFSET = r"\d{1,2}(?::?\d{2})?"
_PLACE = _one("home_city", _place)
_TIMEZONE = _one("timezone", _timezone)
_CONCISE = _const("response_style", "concise")
_LIKES = _many("likes", _free_items)
_DISLIKES = _many("dislikes", _free_items)

RULES = (
    # response_style (checked before likes: "I like bullet points" is a style, not a hobby)
    _rule(rf"(?:please\s+)?(?:always\s+)?(?:keep|make)\s+(?:your\s+|the\s+|all\s+)?{_STYLE_NOUNS}"
          r"\s+(?:short|shorter|brief|concise|succinct|to the point)", _CONCISE),
    _rule(r"(?:please\s+)?(?:always\s+)?(?:be|answer|reply|respond)\s+(?:more\s+)?"
          r"(?:brief|concise|succinct|briefly|concisely|short)", _CONCISE),
    _rule(rf"{_I}\s+(?:prefer|like)\s+(?:short|shorter|brief|concise|succinct)\s+{_STYLE_NOUNS}",
          _CONCISE),
    _rule(rf"{_I}\s+(?:prefer|like)\s+(?:detailed|long|longer|in-depth|thorough|comprehensive)\s+"
          rf"{_STYLE_NOUNS}", _const("response_style", "detailed")),
    _rule(rf"(?:{_I}\s+(?:prefer|like)|(?:please\s+)?(?:always\s+)?(?:use|answer\s+(?:in|with)|"
          r"reply\s+(?:in|with)|respond\s+(?:in|with)))\s+(?:answers\s+in\s+)?bullet(?:ed)?[\s-]*"
          r"(?:points|lists)", _const("response_style", "bullet points")),
    # ui_theme and editor
    _rule(rf"(?:{_I}\s+(?:use|prefer|like|switched\s+to|have\s+switched\s+to)|{_IHAVE}\s+switched"
          rf"\s+to|{_IM}\s+(?:using|on))\s+(?:the\s+)?(?P<v>dark|light)\s+(?:mode|theme)",
          lambda m: [Hit("ui_theme", m.group("v").lower())]),
    _rule(rf"{_IM}\s+an?\s+(?P<v>{_EDITOR})\s+user", _editor),
    _rule(rf"(?:{_I}\s+(?:use|prefer|code\s+in|program\s+in|write\s+code\s+in|edit\s+in|"
          rf"switched\s+to)|{_IHAVE}\s+switched\s+to|{_IM}\s+using)"
          rf"\s+(?P<v>{_EDITOR})(?:\s+(?:as\s+my\s+(?:main\s+|primary\s+|daily\s+)?"
          r"(?:editor|ide)|for\s+(?:coding|programming|everything|work|development)|"
          r"daily|every\s?day))?", _editor),
    _rule(r"my\s+(?:main\s+|primary\s+|favou?rite\s+|preferred\s+|daily\s+)?(?:code\s+|text\s+)?"
          rf"(?:editor|ide)\s+(?:is|of\s+choice\s+is)\s+(?P<v>{_EDITOR})", _editor),
    # timezone
    _rule(r"my\s+(?:time\s*zone|tz)\s+is\s+(?P<v>\S+(?:\s*[+\-−]\s*\S+)?)", _TIMEZONE),
    _rule(rf"{_IM}\s+(?:in|on)\s+(?:the\s+)?(?P<v>(?:utc|gmt)(?:\s*[+\-−]\s*{_OFFSET})?"
          rf"|[+\-−]{_OFFSET}|[A-Z][a-z]+/[A-Za-z_/-]+)(?:\s+(?:time\s*zone|time))?", _TIMEZONE),
    # contact details and units
    _rule(r"my\s+(?:(?:mobile|cell|home|work|new)\s+)?(?:phone\s+)?number\s+is\s+"
          r"(?P<v>\+?\d[\d\s().-]{5,22}\d)",
          lambda m: [Hit("phone_number", " ".join(m.group("v").split()))]),
    _rule(r"my\s+(?:(?:work|personal|new)\s+)?e-?mail(?:\s+address)?\s+is\s+"
          r"(?P<v>[\w.+-]+@[\w-]+(?:\.[\w-]+)+)", lambda m: [Hit("email", m.group("v"))]),
    _rule(r"(?:please\s+)?(?:always\s+)?(?:answer|reply|respond|give\s+(?:me\s+)?\w+|use)\s+"
          r"(?:in\s+|with\s+)?(?P<v>metric|imperial)(?:\s+units)?",
          lambda m: [Hit("units", m.group("v").lower())]),
    # name
    _rule(rf"my\s+(?:first\s+)?name(?:'s|\s+is){_ANY}", _one("name", _person_name)),
    _rule(rf"(?:{_IM}\s+called|{_I}\s+go\s+by|(?:(?:you\s+can|please|just|feel\s+free\s+to)\s+)*"
          rf"call\s+me)\s+{_ANY}", _one("name", _person_name)),
    # diet
    _rule(rf"{_IM}\s+(?:an?\s+)?(?:strict\s+|full\s+|fully\s+)?(?P<v>{_DIET})", _diet),
    _rule(rf"(?:{_IM}\s+on|{_I}\s+(?:follow|eat))\s+(?:an?\s+)?(?:strict\s+)?(?P<v>{_DIET})"
          r"(?:\s+diet)?", _diet),
    _rule(rf"{_IHAVE}\s+(?:become|became|went|gone|turned|been)\s+(?:an?\s+)?(?P<v>{_DIET})",
          _diet),
    _rule(rf"{_I}\s+(?:eat|do\s+eat)\s+meat", _const("diet", "omnivore")),
    # allergies
    _rule(rf"{_IM}(?:\s+(?:very|severely|extremely|mildly|slightly|highly|deathly|seriously))?"
          rf"\s+allergic\s+to\s+{_ANY}", _many("allergies", _free_items)),
    _rule(r"i(?:'ve|\s+have)(?:\s+got)?\s+(?:an?\s+)?(?:severe\s+|mild\s+|serious\s+)?"
          r"(?P<v>[a-z-]+(?:\s+[a-z-]+)?)\s+allerg(?:y|ies)",
          lambda m: [] if m.group("v").split()[0].lower() in NOT_ALLERGENS
          else [Hit("allergies", m.group("v"))]),
    _rule(rf"my\s+allergies\s+(?:are|include)\s+{_ANY}", _many("allergies", _free_items)),
    # languages
    _rule(rf"(?:{_I}\s+(?:can\s+)?speak|{_IM}\s+(?:fluent|bilingual|trilingual)\s+in)\s+{_ANY}",
          _many("languages", _all_or_nothing(_language))),
    _rule(r"my\s+(?:native|first|mother)\s+(?:language|tongue)\s+is\s+(?P<v>\S+)",
          _one("languages", _language)),
    _rule(rf"{_IM}\s+an?\s+native\s+(?P<v>\S+)\s+speaker", _one("languages", _language)),
    # pets
    _rule(r"i(?:\s+have|'ve\s+got|\s+have\s+got|\s+own|\s+adopted|'ve\s+adopted|\s+have\s+adopted)"
          rf"{_ADV}\s+{_ANY}", _many("pets", _all_or_nothing(_pet))),
    _rule(r"(?:i\s+have\s+|i've\s+)?(?:also\s+)?(?:got\s+)?my\s+(?P<s>guinea pig|[a-z]+)"
          r"(?:'s\s+name\s+is|\s+is\s+(?:called|named))\s+(?P<v>.+)",
          lambda m: [Hit("pets", {"species": SPECIES[m.group("s").lower()], "name": n})]
          if m.group("s").lower() in SPECIES and (n := _person_name(m.group("v"))) else []),
    # home_city and hometown
    _rule(rf"(?:(?:my\s+\w+\s+and\s+)?{_I}\s+(?:live|reside)|{_IM}\s+(?:living|based|located|"
          rf"residing))\s+in\s+{_ANY}", _PLACE),
    _rule(rf"{_IHAVE}\s+(?:been\s+living|lived|been\s+based)\s+in\s+{_ANY}", _PLACE, dated=True),
    _rule(rf"{_IHAVE}\s+(?:moved|relocated)(?:\s+(?:back|over|house))?\s+to\s+{_ANY}", _PLACE),
    _rule(rf"(?:{_IM}\s+(?:originally\s+)?from|{_I}\s+(?:come\s+from|grew\s+up\s+in|was\s+"
          rf"(?:born\s+and\s+)?raised\s+in|was\s+born\s+in))\s+{_ANY}", _one("hometown", _place)),
    # employer and job_title
    _rule(rf"(?:{_I}\s+work|{_IM}\s+(?:working|employed))\s+(?:at|for|by)\s+{_ANY}", _employer),
    _rule(rf"{_IHAVE}\s+(?:been\s+working|worked|been\s+employed)\s+(?:at|for|by)\s+{_ANY}",
          _employer, dated=True),
    _rule(rf"{_IHAVE}\s+(?:joined|started\s+(?:working\s+)?(?:at|for)|started\s+an?\s+(?:new\s+)?"
          r"(?:job|position|role)\s+(?:at|with)|got\s+an?\s+(?:new\s+)?(?:job|position)\s+"
          rf"(?:at|with)|(?:got|was|been)\s+hired\s+(?:at|by))\s+{_ANY}", _employer),
    _rule(rf"my\s+employer\s+is\s+{_ANY}", _employer),
    _rule(rf"(?:{_I}\s+work|{_IM}\s+working|{_IHAVE}\s+been\s+working)\s+as\s+an?\s+{_ANY}",
          lambda m: _title_at(m, any_head=True)),
    _rule(rf"{_IM}\s+an?\s+{_ANY}", _title_at),
    _rule(rf"{_IM}\s+the\s+{_ANY}", lambda m: _title_at(m, exec_only=True)),
    _rule(r"my\s+job\s+title\s+is\s+(?:an?\s+)?(?P<v>.+)", lambda m: _title_at(m, any_head=True)),
    _rule(r"my\s+(?:title|job|role|position|occupation|profession)\s+is\s+(?:an?\s+)?(?P<v>.+)",
          _title_at),
    # likes and dislikes (last: the broadest patterns)
    _rule(rf"{_I}\s+(?:love|like|enjoy|adore)\s+{_ANY}", _LIKES),
    _rule(rf"{_IM}\s+(?:(?:a\s+)?(?:big\s+|huge\s+|massive\s+)?fan\s+of|(?:really\s+)?into|"
          rf"passionate\s+about|obsessed\s+with|crazy\s+about)\s+{_ANY}", _LIKES),
    _rule(rf"{_I}\s+(?:hate|dislike|detest|loathe|despise)\s+{_ANY}", _DISLIKES),
)

# Negative phrasings that still assert something; run before the negation guard.
NEGATIVE_RULES = (
    _rule(rf"{_I}\s+(?:don't|do\s+not|dont|no\s+longer|never|have\s+stopped|'ve\s+stopped|"
          r"stopped|quit|gave\s+up|have\s+given\s+up|'ve\s+given\s+up)\s+(?:eating\s+|eat\s+)?"
          r"(?:any\s+)?(?P<v>meat|meat\s+(?:or|and|nor)\s+fish|fish\s+(?:or|and)\s+meat|"
          r"animal\s+products)", _meat),
    _rule(rf"(?:{_I}\s+(?:can't|cannot|can\s+not)\s+(?:stand|bear))\s+{_ANY}",
          _many("dislikes", _free_items)),
    _rule(r"(?:please\s+)?(?:don't|do\s+not|never)\s+use\s+(?:any\s+)?emojis?|(?:please\s+)?no\s+"
          r"(?:more\s+)?emojis?", _const("response_style", "no emojis", True)),
)
# Only when the clause is not a retraction ("I don't like X anymore" retracts likes X).
NEGATIVE_UNLESS_RETRACTING = (
    _rule(rf"{_I}\s+(?:don't|do\s+not|dont)\s+(?:really\s+)?(?:like|enjoy)\s+{_ANY}",
          _many("dislikes", _free_items, True)),
    _rule(rf"{_IM}\s+not\s+(?:a\s+)?(?:big\s+|huge\s+)?fan\s+of\s+{_ANY}",
          _many("dislikes", _free_items, True)),
)
RAW_RULES = (  # matched before trailing words are trimmed: "light mode now"
    _rule(r"(?P<v>dark|light)\s+(?:mode|theme)(?:\s+(?:now|from\s+now\s+on|please))+",
          lambda m: [Hit("ui_theme", m.group("v").lower())]),
)
