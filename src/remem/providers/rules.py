"""The offline rule extractor: one captured turn → candidate claims about the speaking user.

Pure and deterministic: no I/O, no clock, no randomness; ``re`` only. It is conservative — a
wrong fact is worse than a missing one — so anything it is unsure of yields nothing:

- only ``role == "user"`` turns; the assistant's, tools' and system's words are not facts;
- only first-person statements: every rule is anchored at a clause whose subject is the speaker
  (see ``rules_patterns``), so third parties never match;
- a turn that sets up fiction or role-play yields nothing; a sentence that is a question, a
  request ("translate …"), hedged ("I think", "maybe") or an example yields nothing; a clause
  preceded in its sentence by a hypothetical, modal or future word ("if", "would", "might",
  "wish", "used to", "going to"), by reported speech ("said", "told") or by a quotation mark
  yields nothing.

Time: ``valid_at`` is the source's ``occurred_at`` unless the clause names a date, which is
resolved against ``occurred_at`` (never the current time) and keeps its tzinfo. A date that is
coarser than an instant is stored as the start of its interval plus ``valid_at_precision``
(``"day"``, ``"week"``, ``"month"`` or ``"year"``): "last year" said in 2026 is
``2025-01-01T00:00`` at ``"year"`` precision, i.e. the bound "some time in 2025", not an invented
instant. Clauses whose dates are ambiguous (``01/09/2026``, two dates) or in the future
are skipped.
"""

from __future__ import annotations

import json
import re
import unicodedata
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import date, datetime, timedelta, timezone

from remem.errors import InvalidInput
from remem.providers.rules_patterns import (
    KEYS,
    NEGATIVE_RULES,
    NEGATIVE_UNLESS_RETRACTING,
    NUMBERS,
    RAW_RULES,
    RULES,
    TAIL,
    Hit,
    KeySpec,
    Rule,
)

__all__ = ["KEYS", "PRECISIONS", "ExtractedClaim", "KeySpec", "RuleExtractor"]

PRECISIONS = ("instant", "day", "week", "month", "year")
MAX_QUOTE_BYTES = 512
MAX_VALUE_BYTES = 1024
MAX_CLAUSE_CHARS = 400


@dataclass(frozen=True)
class ExtractedClaim:
    """One candidate claim about the speaker.

    Attributes:
        key: snake_case key from ``KEYS`` (e.g. ``"home_city"``).
        value: JSON value: ``str`` for most keys (the speaker's casing, "Paris"); pets are
            ``{"species": str, "name"?: str, "count"?: int}``.
        kind: the key's kind (``KEYS[key].kind``).
        quote: the exact sentence span of the input it came from, at most 512 UTF-8 bytes
            (the clause, or a prefix of it, when the sentence is longer).
        valid_at: aware datetime in ``occurred_at``'s tzinfo; start of the interval named by
            ``valid_at_precision``.
        negated: the claim was inferred from a negative phrasing ("I don't eat meat" → diet
            vegetarian; every retraction).
        operation: ``"assert"``, or ``"retract"`` when the speaker says the value is no longer
            true ("I'm not vegetarian anymore" → diet vegetarian, retract).
        valid_at_precision: one of ``PRECISIONS``; anything but ``"instant"`` means ``valid_at``
            is a lower bound of an interval of that length.
    """

    key: str
    value: object
    kind: str
    quote: str
    valid_at: datetime
    negated: bool = False
    operation: str = "assert"
    valid_at_precision: str = "instant"


# --- text structure ----------------------------------------------------------------------------

_SAME_LENGTH = str.maketrans({"\u2019": "'", "\u2018": "'", "\u02bc": "'", "\u201c": '"',
                              "\u201d": '"', "\u201e": '"', "\u00a0": " ", "\u2009": " ",
                              "\u202f": " ", "\u2212": "-"})
_BREAK = re.compile(r"[.!?…]+[\"')\]]*(?=\s|$)|\n|;|(?<=[a-z][a-z][.!?])(?=[A-Z])")
_ABBREVIATIONS = frozenset(
    "mr mrs ms dr st prof jr sr inc corp ltd co vs etc e.g i.e approx mt ft u.s u.k a.m p.m "
    "no jan feb mar apr jun jul aug sep sept oct nov dec".split())
_CLAUSE_BREAK = re.compile(
    r"(?:[,:]|\s[-–—]+)\s*(?:(?:and|but|so|plus|also|because|since|though|although|while|"
    r"whereas)\s+)?(?=(?:i|i'm|i've|im|my)\b)"
    r"|\s(?:and|but|so|plus|because|since|though|although|while|whereas|and\s+also|but\s+also)"
    r"\s+(?=(?:i|i'm|i've|im|my)\b)", re.I)
_DISCOURSE = re.compile(
    r"(?:[\s,:;!.\-–—]+|\b(?:(?:no|nope)(?=\s*,)|well|so|oh|ok|okay|yes|yeah|yep|yup|hi|hello|"
    r"hey|also|and|but|actually|btw|by the way|anyway|anyways|fyi|fwiw|for the record|"
    r"just so you know|just to let you know|please note that|please note|note that|"
    r"please remember that|please remember|remember that|keep in mind that|for context|"
    r"as you know|honestly|to be honest|tbh|now|currently|nowadays|these days|lol|haha|plus|"
    r"again|right|sure|alright|cool|great|thanks|thank you|in fact|oh and)\b)*", re.I)


def _sentences(text: str) -> Iterator[tuple[int, int]]:
    """Sentence spans: split after ``.!?…`` + space (except abbreviations), newlines, ``;``."""
    start = 0
    for m in _BREAK.finditer(text):
        if m.group()[:1] == ".":
            before = text[max(start, m.start() - 12):m.start()].split()
            word = before[-1].lower().rstrip(".") if before else ""
            after = text[m.end():].lstrip()[:1]
            if word in _ABBREVIATIONS or len(word) == 1 or (after and after.islower()):
                continue
        yield start, m.end()
        start = m.end()
    yield start, len(text)


def _clauses(sentence: str) -> Iterator[tuple[int, int]]:
    start = 0
    for m in _CLAUSE_BREAK.finditer(sentence):
        yield start, m.start()
        start = m.end()
    yield start, len(sentence)


# --- guards ------------------------------------------------------------------------------------

_FICTION = re.compile(
    r"\b(?:pretend\w*|role[- ]?play\w*|make[- ]believe|in character|my character|let'?s play|"
    r"hypothetical(?:ly)?|imagine|fictional|in (?:a|my|this|the|our) (?:story|game|novel|dream)|"
    r"(?:just\s+)?kidding|joking|jk|j/k)\b", re.I)
# A sentence opening with a speaker label is a pasted transcript ("User: …", "Bob: …"),
# except for labels that introduce the speaker's own words ("Note: …", "FYI: …").
_LABEL = re.compile(r"\s*([^\W\d][\w.' -]{0,24}?)\s*:(?!\d)")
_OWN_LABELS = frozenset("note fyi update ps p.s edit btw context background reminder info "
                        "important also oh well ok okay so and".split())
_QUESTION_START = re.compile(
    r"(?:do(?!\s+not\b)|does|did|am|is|are|was|were|can|could|would|should|will|shall|have|has|"
    r"had|what|where|when|whenever|why|who|whom|whose|how|which|may|might|must|if|unless|suppose|"
    r"supposing|assuming|whether|in case|let's|lets|let us)\b", re.I)
_REQUEST_START = re.compile(
    r"(?:please\s+)?(?:translate|write|rewrite|repeat|say|rephrase|paraphrase|spell|draft|compose|"
    r"generate|create|summari[sz]e|proofread|complete|continue|finish|tell|explain|give|show|find|"
    r"list|help|book|search|look\s+up|correct|fix|check|convert|read|recommend|suggest|describe|"
    r"reply\s+to|respond\s+to|quote)\b", re.I)
_HEDGE = re.compile(
    r"\b(?:i\s+think|i\s+guess|i\s+suppose|i\s+believe|i\s+assume|i\s+feel\s+like|not\s+sure|"
    r"unsure|maybe|perhaps|probably|possibly|apparently|supposedly|allegedly|in\s+theory|"
    r"for\s+example|for\s+instance|e\.g\.|sarcas\w*|kind\s+of|sort\s+of|kinda|sorta)\b", re.I)
_MODAL = re.compile(
    r"(?i:\b(?:would|could|should|might|must|shall|if|unless|whether|wish(?:es|ed|ing)?|"
    r"hop(?:ing|ed|es)|want(?:s|ed|ing)?|wanna|gonna|going\s+to|plan(?:s|ned|ning)?\s+to|"
    r"intend(?:s|ed|ing)?|consider(?:ing)?|thinking\s+(?:of|about)|dream(?:ing|s|ed|t)?|someday|"
    r"one\s+day|tomorrow|next\s+(?:week|month|year|time|\w+day)|soon|eventually|about\s+to|"
    r"used\s+to|supposed\s+to|try(?:ing)?\s+to|tried\s+to|almost|nearly|fake|lie|lying|joke)\b|"
    r"'d\b|'ll\b)|\b(?:may|will|hope)\b")
_REPORTED = re.compile(
    r"\b(?:said|says|say|saying|told|tells|tell|telling|asked|asks|asking|mention(?:s|ed)|"
    r"claim(?:s|ed)|wrote|writes|heard|according\s+to|thinks|thought|reckon(?:s|ed)?|"
    r"insist(?:s|ed)?|replied|repl(?:y|ies)|answered|quot(?:e|es|ed|ing))\b", re.I)


def _after_discourse(text: str) -> str:
    """``text`` without leading discourse words and punctuation ("Oh btw, I'm" → "I'm")."""
    m = _DISCOURSE.match(text)
    return text[m.end():] if m else text


def _sentence_blocked(sentence: str) -> bool:
    """A question, a request, a hedge, an example or a transcript line: no fact in it."""
    if sentence.rstrip(" \t\"')]").endswith("?"):
        return True
    label = _LABEL.match(sentence)
    if label and label.group(1).strip().lower() not in _OWN_LABELS:
        return True
    body = _after_discourse(sentence)
    return bool(_QUESTION_START.match(body) or _REQUEST_START.match(body)
                or _HEDGE.search(sentence))


def _first_guard(sentence: str) -> int:
    """Where the first hypothetical, modal, reporting word or quotation mark starts (or len)."""
    found = [m.start() for m in (_MODAL.search(sentence), _REPORTED.search(sentence)) if m]
    quote = sentence.find('"')
    return min(found + ([quote] if quote >= 0 else []), default=len(sentence))


def _shouting(body: str) -> bool:
    """ALL CAPS text: capitalisation tells nothing about names, so nothing is extracted."""
    letters = [c for c in body if c.isalpha()]
    return len(letters) >= 3 and not any(c.islower() for c in letters)


# --- negation and retraction -------------------------------------------------------------------

_RETRACT_MARK = re.compile(r"\b(?:any\s?more|no\s+longer|any\s+longer)\b", re.I)
_NEGATION = re.compile(r"\b(?:not|no|never|nobody|none|neither|nor|hardly|barely|cannot)\b|"
                       r"n't\b|\b(?:dont|doesnt|didnt|isnt|arent|wasnt|cant|wont)\b", re.I)
_SPACES = re.compile(r"\s+")
_POSITIVE_FORMS = (  # (pattern, replacement, needs a retraction mark)
    (re.compile(r"^i\s+(?:don't|do\s+not|dont)\s+", re.I), "I ", True),
    (re.compile(r"^(i'm|i\s+am|im)\s+not\s+", re.I), r"\1 ", True),
    (re.compile(r"^i(?:\s+have|'ve)?\s+(?:stopped|quit)\s+being\s+", re.I), "I'm ", False),
    (re.compile(r"^i(?:\s+have|'ve)?\s+(?:stopped|quit)\s+using\s+", re.I), "I use ", False),
    (re.compile(r"^i(?:\s+have|'ve)?\s+(?:stopped\s+working|quit\s+working|quit\s+my\s+job|"
                r"left\s+my\s+job)\s+(at|for)\s+", re.I), r"I work \1 ", False),
    (re.compile(r"^i(?:\s+have|'ve)?\s+moved\s+(?:away\s+from|out\s+of)\s+", re.I),
     "I live in ", False),
)


def _apply(rules: tuple[Rule, ...], body: str, dated: bool) -> list[Hit]:
    """Hits of the first rule that matches ``body`` and finds a usable value."""
    for rule in rules:
        if rule.needs_date and not dated:
            continue
        m = rule.pattern.match(body)
        hits = rule.handler(m) if m is not None else []
        if hits:
            return hits
    return []


def _positive_form(clause: str) -> str | None:
    """The statement a retraction takes back, or ``None`` if ``clause`` retracts nothing.

    "I don't live in X anymore" → "I live in X"; "I'm no longer vegan" → "I'm vegan";
    "I stopped being vegan" → "I'm vegan"; "I moved out of X" → "I live in X".
    """
    marked = _RETRACT_MARK.search(clause) is not None
    text = _SPACES.sub(" ", _RETRACT_MARK.sub(" ", clause)).strip()
    for pattern, replacement, needs_mark in _POSITIVE_FORMS:
        if needs_mark and not marked:
            continue
        rewritten, n = pattern.subn(replacement, text, count=1)
        if n:
            return None if _NEGATION.search(rewritten) else rewritten
    return text if marked and not _NEGATION.search(text) else None


def match_clause(clause: str, *, dated: bool = False) -> list[Hit]:
    """Hits in one clause (dates blanked, discourse words stripped); ``[]`` when unsure.

    Stages: negative phrasings that assert ("I don't eat meat" → diet vegetarian); retraction
    (the positive form is matched and every hit becomes ``retract``); any other negation → no
    claim; positive rules, first match wins.

    Args:
        clause: the clause text, starting at its subject.
        dated: whether the clause carried a resolved date (perfect-tense rules need one:
            "I've lived in Paris since 2019" counts, "I've lived in Paris" may be experience).
    """
    raw = _SPACES.sub(" ", clause).strip()
    hits = _apply(RAW_RULES, raw, dated)
    body = TAIL.sub("", raw).strip()
    if hits or not body:
        return hits
    hits = _apply(NEGATIVE_RULES, body, dated)
    if not hits and not _RETRACT_MARK.search(raw):
        hits = _apply(NEGATIVE_UNLESS_RETRACTING, body, dated)
    if hits:
        return hits
    positive = _positive_form(raw)
    if positive is not None:
        return [h._replace(operation="retract", negated=True)
                for h in _apply(RULES, TAIL.sub("", positive).strip(), dated)]
    return [] if _NEGATION.search(body) else _apply(RULES, body, dated)


# --- dates -------------------------------------------------------------------------------------

_MONTHS = {
    "january": 1, "february": 2, "march": 3, "april": 4, "may": 5, "june": 6, "july": 7,
    "august": 8, "september": 9, "october": 10, "november": 11, "december": 12,
    "jan": 1, "feb": 2, "mar": 3, "apr": 4, "jun": 6, "jul": 7, "aug": 8, "sep": 9, "sept": 9,
    "oct": 10, "nov": 11, "dec": 12,
}
_WEEKDAYS = ("monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday")
_MON = "(?:" + "|".join(sorted(_MONTHS, key=len, reverse=True)) + r")\b\.?"
_N = (r"\d{1,3}|an?|one|two|three|four|five|six|seven|eight|nine|ten|eleven|twelve|"
      r"a\s+couple(?:\s+of)?")
_UNIT = r"(?:day|week|month|year)"
_LEAD = r"(?:(?:on|in|since|from|as\s+of|back\s+in|starting|around|during|effective)\s+)?"
_DATE = re.compile(
    rf"\b(?:{_LEAD}(?:"
    r"(?P<iy>\d{4})-(?P<im>\d{2})-(?P<id>\d{2})(?:[T ](?P<ih>\d{2}):(?P<imi>\d{2})"
    r"(?::(?P<isec>\d{2})(?:\.\d+)?)?(?P<iz>Z|[+-]\d{2}:?\d{2})?)?(?![\d-])"
    rf"|(?P<m1>{_MON})\s*(?P<d1>\d{{1,2}})(?:st|nd|rd|th)?(?:,?\s+(?P<y1>\d{{4}}))?(?!\d)"
    rf"|(?:the\s+)?(?P<d2>\d{{1,2}})(?:st|nd|rd|th)?\s+(?:of\s+)?(?P<m2>{_MON})"
    r"(?:,?\s+(?P<y2>\d{4}))?(?!\d)"
    rf"|(?P<m3>{_MON}),?\s+(?P<y3>\d{{4}})(?!\d)"
    r"|(?P<rel>the\s+day\s+before\s+yesterday|yesterday|earlier\s+today|today|this\s+morning|"
    r"this\s+afternoon|this\s+evening|tonight|last\s+night)\b"
    rf"|(?<!the\s)(?P<lu>last|this)\s+(?P<luu>{_UNIT})\b"
    rf"|(?P<an>{_N})\s+(?P<au>{_UNIT})s?\s+ago\b)"
    rf"|(?:in|since|back\s+in|this|last|from|during)\s+(?P<m4>{_MON})(?!\s*\d)"
    r"|(?:in|since|back\s+in|from|during)\s+(?P<y4>(?:19|20)\d{2})(?![\d-])"
    r"|(?:on|last|this\s+past)\s+(?P<wd>" + "|".join(_WEEKDAYS) + r")\b"
    rf"|for\s+(?:the\s+(?:last|past)\s+)?(?P<fn>{_N})\s+(?P<fu>{_UNIT})s?\b)", re.I)
_SLASH_DATE = re.compile(r"\b\d{1,2}/\d{1,2}(?:/\d{2,4})?\b")
_PERFECT = re.compile(r"\b(?:have|has)\b|'ve\b", re.I)

When = tuple[datetime, str]


def _count(word: str) -> int:
    word = word.lower()
    return int(word) if word.isdigit() else NUMBERS.get(word, 2 if "couple" in word else 0)


def _shift(day: date, unit: str, n: int) -> When:
    """The naive start of the ``unit`` (day, week from Monday, month, year) ``n`` units back."""
    if unit == "day":
        return _midnight(day - timedelta(days=n)), "day"
    if unit == "week":
        back = day - timedelta(days=7 * n)
        return _midnight(back - timedelta(days=back.weekday())), "week"
    if unit == "month":
        k = day.year * 12 + day.month - 1 - n
        return datetime(k // 12, k % 12 + 1, 1), "month"
    return datetime(day.year - n, 1, 1), "year"


def _latest(today: date, month: int, day: int = 1) -> date:
    """The latest ``month``/``day`` on or before ``today``."""
    this_year = date(today.year, month, day) if (month, day) <= (today.month, today.day) else None
    return this_year or date(today.year - 1, month, day)


def _midnight(day: date) -> datetime:
    return datetime.combine(day, datetime.min.time())


def _resolve(m: re.Match[str], today: date) -> When | None:
    """Naive start of the interval a ``_DATE`` match names, and its precision.

    Raises:
        ValueError: the date does not exist (Feb 30) or is out of range.
    """
    if m["iy"]:
        day = date(int(m["iy"]), int(m["im"]), int(m["id"]))
        if m["ih"]:
            clock = (int(m["ih"]), int(m["imi"]), int(m["isec"] or 0))
            return datetime(day.year, day.month, day.day, *clock), "instant"
        return _midnight(day), "day"
    month_name = m["m1"] or m["m2"] or m["m3"] or m["m4"]
    if month_name:
        month = _MONTHS[month_name.lower().rstrip(".")]
        day_of_month, year = m["d1"] or m["d2"], m["y1"] or m["y2"] or m["y3"]
        if day_of_month:
            day = (date(int(year), month, int(day_of_month)) if year
                   else _latest(today, month, int(day_of_month)))
            return _midnight(day), "day"
        return _midnight(date(int(year), month, 1) if year else _latest(today, month)), "month"
    if m["y4"]:
        return datetime(int(m["y4"]), 1, 1), "year"
    if m["rel"]:
        rel = " ".join(m["rel"].lower().split())
        back = 2 if "before" in rel else int(rel in ("yesterday", "last night"))
        return _shift(today, "day", back)
    if m["lu"]:
        return _shift(today, m["luu"].lower(), int(m["lu"].lower() == "last"))
    if m["an"] or m["fn"]:
        n = _count(m["an"] or m["fn"])
        return _shift(today, (m["au"] or m["fu"]).lower(), n) if n else None
    if m["wd"]:
        return _shift(today, "day", (today.weekday() - _WEEKDAYS.index(m["wd"].lower())) % 7 or 7)
    return None


def _zone(offset: str) -> timezone:
    """``Z``, ``+09:00`` or ``-0530`` as a fixed-offset timezone."""
    if offset.upper() == "Z":
        return timezone.utc
    digits = offset.replace(":", "")
    sign = 1 if digits[0] == "+" else -1
    return timezone(sign * timedelta(hours=int(digits[1:3]), minutes=int(digits[3:5])))


def _find_date(clause: str, occurred_at: datetime) -> tuple[When | None, str] | None:
    """The clause's date (aware, in ``occurred_at``'s tz) and the clause with it blanked out.

    Returns ``None`` when the clause names a date that cannot be used: ambiguous
    (``01/09/2026``, two dates), invalid (Feb 30), a duration without a perfect tense
    ("I work at X for 3 months"), or out of range.
    """
    matches = list(_DATE.finditer(clause))
    if len(matches) > 1 or _SLASH_DATE.search(clause):
        return None
    if not matches:
        return None, clause
    m = matches[0]
    if m["fn"] and not _PERFECT.search(clause):
        return None
    tz = occurred_at.tzinfo
    try:
        found = _resolve(m, occurred_at.date())
        if found is None:
            return None
        naive, precision = found
        when = (naive.replace(tzinfo=_zone(m["iz"])).astimezone(tz) if m["iz"]
                else naive.replace(tzinfo=tz))
    except (ValueError, OverflowError):
        return None
    blanked = clause[:m.start()] + " " * (m.end() - m.start()) + clause[m.end():]
    return (when, precision), blanked


# --- claims ------------------------------------------------------------------------------------

def _quote(text: str, spans: list[tuple[int, int]]) -> str:
    """The first span (sentence, then clause) that fits in 512 bytes, else a clause prefix."""
    for start, end in spans:
        piece = text[start:end].strip()
        if len(piece.encode()) <= MAX_QUOTE_BYTES:
            return piece
    piece = text[spans[-1][0]:spans[-1][1]].strip()
    return piece.encode()[:MAX_QUOTE_BYTES].decode(errors="ignore")


def _canonical(value: object) -> str:
    if isinstance(value, str):
        return " ".join(unicodedata.normalize("NFKC", value).casefold().split())
    return json.dumps(value, sort_keys=True, ensure_ascii=False)


def _value_bytes(value: object) -> int:
    text = value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)
    return len(text.encode())


class RuleExtractor:
    """Deterministic, offline extractor of claims about the speaking user (see module doc).

    Attributes:
        name: registry name, ``"rules"``.
        version: bumped whenever a rule changes what it extracts.
    """

    name = "rules"
    version = "1"

    def extract(self, text: str, *, role: str, occurred_at: datetime) -> list[ExtractedClaim]:
        """Candidate claims stated by the speaker in one turn, in order, deduplicated.

        Args:
            text: the turn's text.
            role: the speaker's role; only ``"user"`` yields claims.
            occurred_at: aware datetime the turn was said; relative dates resolve against it.

        Returns:
            Claims in the order their sentences appear; the same (key, value, operation) once.

        Raises:
            InvalidInput: ``occurred_at`` is naive.
        """
        if occurred_at.tzinfo is None or occurred_at.utcoffset() is None:
            raise InvalidInput("occurred_at must be timezone-aware; pass e.g. "
                               "datetime.now(timezone.utc) or attach the speaker's zone.",
                               field="occurred_at")
        if role != "user" or not text or not text.strip():
            return []
        norm = text.translate(_SAME_LENGTH)
        if _FICTION.search(norm):
            return []
        claims: list[ExtractedClaim] = []
        seen: set[tuple[str, str, str]] = set()
        for start, end in _sentences(norm):
            for claim in _sentence_claims(text, norm, start, end, occurred_at):
                ident = (claim.key, _canonical(claim.value), claim.operation)
                if ident not in seen:
                    seen.add(ident)
                    claims.append(claim)
        return claims


def _sentence_claims(text: str, norm: str, start: int, end: int,
                     occurred_at: datetime) -> Iterator[ExtractedClaim]:
    """Claims of the sentence ``norm[start:end]``; ``text`` is the original for quotes."""
    sentence = norm[start:end]
    if not sentence.strip() or _sentence_blocked(sentence):
        return
    carried: When | None = None
    guard_at = _first_guard(sentence)  # a clause ending after it is off limits
    for c_start, c_end in _clauses(sentence):
        too_long = c_end - c_start > MAX_CLAUSE_CHARS
        found = None if too_long else _find_date(sentence[c_start:c_end], occurred_at)
        if found is None:
            carried = None
            continue
        when, blanked = found
        body = _after_discourse(blanked)
        if not body.strip():
            carried = when  # "Last year, I moved to Berlin": the date leads the next clause
            continue
        when, carried = when or carried, None
        if guard_at < c_end or _shouting(body):
            continue
        hits = match_clause(body, dated=when is not None)
        valid_at, precision = when or (occurred_at, "instant")
        if not hits or valid_at > occurred_at:
            continue
        quote = _quote(text, [(start, end), (start + c_start, start + c_end)])
        for hit in hits:
            if _value_bytes(hit.value) <= MAX_VALUE_BYTES:
                yield _claim(hit, quote, valid_at, precision)


def _claim(hit: Hit, quote: str, valid_at: datetime, precision: str) -> ExtractedClaim:
    return ExtractedClaim(key=hit.key, value=hit.value, kind=KEYS[hit.key].kind, quote=quote,
                          valid_at=valid_at, negated=hit.negated, operation=hit.operation,
                          valid_at_precision=precision)
