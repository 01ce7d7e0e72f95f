"""Loader for the LoCoMo long-term conversational memory benchmark.

LoCoMo (Maharana et al., ACL 2024, arXiv 2402.17753; CC BY-NC 4.0) is a JSON list of
conversations. Each has ``sample_id``, a ``conversation`` object (``speaker_a``, ``speaker_b``,
``session_N`` turn lists and ``session_N_date_time`` strings such as ``"1:56 pm on 8 May, 2023"``)
and ``qa`` (``question``, ``answer``/``adversarial_answer``, ``evidence``, ``category``).

The data is read by path and never copied into the project.

What is read, and what is not:

* Turns: ``dia_id``, ``speaker``, ``text`` and, for shared images, ``blip_caption``. These are
  the only inputs a memory system under test may see.
* Questions: ``question``, ``category`` and ``evidence``. ``evidence`` is ground truth for the
  recall metric only; it must not be fed to the engine.
* Never read: ``answer``/``adversarial_answer``, ``observation``, ``session_summary``,
  ``event_summary``, nor the per-turn ``img_url``/``query``/``re-download`` fields (``query`` is
  the search string the dataset authors used to find the image, not something a participant
  said). Only the *presence* of an image is recorded (``Turn.has_image``).

Choices (documented because they change what the engine sees):

* Image turns: the text becomes ``text + " [image: <blip_caption>]"`` when both exist, just
  ``"[image: <blip_caption>]"`` when the turn has no text, and ``text`` alone when the turn has an
  ``img_url`` but no caption. ``has_image`` is true when the turn has ``img_url`` or
  ``blip_caption``.
* Times: LoCoMo session times carry no zone; they are taken as UTC. Every turn of a session gets
  the session's time (no per-turn offsets are invented); within a session, list order is the
  order of speech.
* Sessions are ordered by their number ``N`` (``session_10`` after ``session_9``), not by key
  order in the file.

Evidence normalisation: a valid id is ``D<session>:<turn>`` naming a turn of the same
conversation. Each raw evidence string is scanned for ids written as ``D<s>:<t>`` with optional
spaces, an extra colon after ``D`` (``"D:11:26"`` -> ``"D11:26"``), leading zeros, or several ids
in one string (``"D8:6; D9:17"``, ``"D1:3 D2:4"``). A raw string that is already exactly one
resolving id counts as ``valid``; each resolving id recovered from any other raw string counts as
``normalised``; an id that does not resolve to a turn, or a raw string with no id in it at all
(``"D"``), counts as ``dropped``. Repeated ids within a question are kept once
(``duplicates``). Every non-trivial case is listed in ``EvidenceStats.fixes``.

Category 5 (adversarial: the answer is not in the conversation) questions are kept but flagged
(``Question.adversarial``) and excluded from evidence recall, as are questions left with no
evidence after normalisation (``Question.scorable``).
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Iterator
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

__all__ = [
    "CATEGORY_NAMES",
    "ADVERSARIAL_CATEGORY",
    "DEFAULT_DEV_PATH",
    "DEV_PATH_ENV",
    "locate_dev_split",
    "LocomoFormatError",
    "Turn",
    "Question",
    "Conversation",
    "EvidenceFix",
    "EvidenceStats",
    "LocomoSet",
    "load_locomo",
    "parse_locomo_datetime",
    "normalise_evidence",
]

#: Where the shared dev split (conversations 1-5) lives on the project's machines.
DEFAULT_DEV_PATH = Path("/work/shared/data/locomo-dev.json")
#: Environment variable naming another location of a LoCoMo file.
DEV_PATH_ENV = "REMEM_LOCOMO_PATH"
_REPO_ROOT = Path(__file__).resolve().parents[3]


def locate_dev_split() -> Path | None:
    """The dev split's path, or None: ``$REMEM_LOCOMO_PATH``, then ``../shared/data/`` beside
    the repository checkout (where CI lays shared/), then :data:`DEFAULT_DEV_PATH`."""
    candidates = []
    if os.environ.get(DEV_PATH_ENV):
        candidates.append(Path(os.environ[DEV_PATH_ENV]))
    candidates += [_REPO_ROOT.parent / "shared" / "data" / "locomo-dev.json", DEFAULT_DEV_PATH]
    for c in candidates:
        if c.is_file():
            return c
    return None

CATEGORY_NAMES: dict[int, str] = {
    1: "multi-hop",
    2: "temporal",
    3: "open-domain",
    4: "single-hop",
    5: "adversarial",
}
ADVERSARIAL_CATEGORY = 5


class LocomoFormatError(ValueError):
    """The file does not follow the LoCoMo layout."""


@dataclass(frozen=True, slots=True)
class Turn:
    """One utterance. ``text`` already includes the image caption (see module docs)."""

    dia_id: str
    speaker: str
    text: str
    session: int
    occurred_at: datetime
    has_image: bool = False


@dataclass(frozen=True, slots=True)
class Question:
    """A benchmark question. ``evidence`` holds normalised, resolving dia_ids (metrics only)."""

    question: str
    category: int
    evidence: tuple[str, ...]
    qid: str = ""

    @property
    def adversarial(self) -> bool:
        """Category 5: no answer in the conversation; excluded from evidence recall."""
        return self.category == ADVERSARIAL_CATEGORY

    @property
    def scorable(self) -> bool:
        """Whether evidence recall is defined: not adversarial and at least one evidence id."""
        return not self.adversarial and bool(self.evidence)


@dataclass(frozen=True, slots=True)
class Conversation:
    sample_id: str
    speaker_a: str
    speaker_b: str
    turns: tuple[Turn, ...]
    questions: tuple[Question, ...]

    @property
    def turn_ids(self) -> frozenset[str]:
        return frozenset(t.dia_id for t in self.turns)

    def turn(self, dia_id: str) -> Turn:
        for t in self.turns:
            if t.dia_id == dia_id:
                return t
        raise KeyError(dia_id)

    @property
    def sessions(self) -> tuple[int, ...]:
        return tuple(sorted({t.session for t in self.turns}))

    def scorable_questions(self) -> tuple[Question, ...]:
        return tuple(q for q in self.questions if q.scorable)


@dataclass(frozen=True, slots=True)
class EvidenceFix:
    """One raw evidence string that was not exactly one resolving id, and what became of it."""

    sample_id: str
    qid: str
    raw: str
    kept: tuple[str, ...]
    dropped: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class EvidenceStats:
    """Counts over every question (all categories) of a :class:`LocomoSet`.

    ``raw``: raw evidence strings read. ``valid``: strings that were exactly one resolving id.
    ``normalised``: resolving ids recovered from malformed or multi-id strings. ``dropped``: ids
    that do not resolve, plus strings containing no id at all. ``duplicates``: repeated ids
    within one question, kept once.
    """

    raw: int = 0
    valid: int = 0
    normalised: int = 0
    dropped: int = 0
    duplicates: int = 0
    fixes: tuple[EvidenceFix, ...] = ()

    def __add__(self, other: EvidenceStats) -> EvidenceStats:
        return EvidenceStats(
            raw=self.raw + other.raw,
            valid=self.valid + other.valid,
            normalised=self.normalised + other.normalised,
            dropped=self.dropped + other.dropped,
            duplicates=self.duplicates + other.duplicates,
            fixes=self.fixes + other.fixes,
        )

    def as_dict(self) -> dict[str, int]:
        return {
            "raw": self.raw,
            "valid": self.valid,
            "normalised": self.normalised,
            "dropped": self.dropped,
            "duplicates": self.duplicates,
        }


@dataclass(frozen=True, slots=True)
class LocomoSet:
    conversations: tuple[Conversation, ...]
    evidence_stats: EvidenceStats = field(default_factory=EvidenceStats)
    path: str = ""

    def __iter__(self) -> Iterator[Conversation]:
        return iter(self.conversations)

    def __len__(self) -> int:
        return len(self.conversations)

    def get(self, sample_id: str) -> Conversation:
        for c in self.conversations:
            if c.sample_id == sample_id:
                return c
        raise KeyError(sample_id)

    @property
    def questions(self) -> tuple[Question, ...]:
        return tuple(q for c in self.conversations for q in c.questions)


# --------------------------------------------------------------------------- parsing helpers

_MONTHS = {
    name: i
    for i, names in enumerate(
        [
            ("january", "jan"),
            ("february", "feb"),
            ("march", "mar"),
            ("april", "apr"),
            ("may",),
            ("june", "jun"),
            ("july", "jul"),
            ("august", "aug"),
            ("september", "sep", "sept"),
            ("october", "oct"),
            ("november", "nov"),
            ("december", "dec"),
        ],
        start=1,
    )
    for name in names
}

_DATETIME_RE = re.compile(
    r"^\s*(\d{1,2}):(\d{2})\s*([ap])\.?\s*m\.?\s+on\s+(\d{1,2})\s+([A-Za-z]+)\.?,?\s+(\d{4})\s*$",
    re.IGNORECASE,
)


def parse_locomo_datetime(value: str) -> datetime:
    """Parse ``"1:56 pm on 8 May, 2023"`` into an aware UTC datetime (locale-independent)."""
    m = _DATETIME_RE.match(value)
    if not m:
        raise LocomoFormatError(f"unrecognised LoCoMo date/time {value!r}")
    hour, minute, ampm, day, month_name, year = m.groups()
    h = int(hour)
    if not 1 <= h <= 12:
        raise LocomoFormatError(f"hour out of range in {value!r}")
    month = _MONTHS.get(month_name.lower())
    if month is None:
        raise LocomoFormatError(f"unknown month {month_name!r} in {value!r}")
    h = h % 12 + (12 if ampm.lower() == "p" else 0)
    try:
        return datetime(int(year), month, int(day), h, int(minute), tzinfo=UTC)
    except ValueError as exc:
        raise LocomoFormatError(f"invalid date/time {value!r}: {exc}") from None


_VALID_ID_RE = re.compile(r"D[1-9]\d*:[1-9]\d*")
_ID_SCAN_RE = re.compile(r"D\s*:?\s*(\d+)\s*:\s*(\d+)", re.IGNORECASE)


def normalise_evidence(raw: str) -> list[str]:
    """Every id found in one raw evidence string, in canonical ``D<s>:<t>`` form.

    Does not check that the ids resolve. ``"D:11:26"`` -> ``["D11:26"]``,
    ``"D8:6; D9:17"`` -> ``["D8:6", "D9:17"]``, ``"D"`` -> ``[]``.
    """
    return [f"D{int(s)}:{int(t)}" for s, t in _ID_SCAN_RE.findall(raw)]


def _normalise_question_evidence(
    raw_list: Any, known: frozenset[str], sample_id: str, qid: str
) -> tuple[tuple[str, ...], EvidenceStats]:
    if raw_list is None:
        raw_list = []
    if isinstance(raw_list, str):
        raw_list = [raw_list]
    if not isinstance(raw_list, list):
        raise LocomoFormatError(f"{qid}: evidence must be a list, got {type(raw_list).__name__}")
    kept: list[str] = []
    valid = normalised = dropped = duplicates = 0
    fixes: list[EvidenceFix] = []
    for raw in raw_list:
        raw_s = str(raw)
        if _VALID_ID_RE.fullmatch(raw_s) and raw_s in known:
            valid += 1
            found_kept, found_dropped = [raw_s], []
        else:
            ids = normalise_evidence(raw_s)
            found_kept = [i for i in ids if i in known]
            found_dropped = [i for i in ids if i not in known]
            normalised += len(found_kept)
            dropped += len(found_dropped) if ids else 1
            fixes.append(
                EvidenceFix(
                    sample_id=sample_id,
                    qid=qid,
                    raw=raw_s,
                    kept=tuple(found_kept),
                    dropped=tuple(found_dropped) if ids else (raw_s,),
                )
            )
        for i in found_kept:
            if i in kept:
                duplicates += 1
            else:
                kept.append(i)
    stats = EvidenceStats(
        raw=len(raw_list),
        valid=valid,
        normalised=normalised,
        dropped=dropped,
        duplicates=duplicates,
        fixes=tuple(fixes),
    )
    return tuple(kept), stats


def _turn_text(raw: dict[str, Any]) -> tuple[str, bool]:
    text = str(raw.get("text") or "").strip()
    caption = raw.get("blip_caption")
    caption = str(caption).strip() if caption else ""
    has_image = bool(raw.get("img_url")) or bool(caption)
    if caption:
        text = f"{text} [image: {caption}]" if text else f"[image: {caption}]"
    return text, has_image


_SESSION_KEY_RE = re.compile(r"session_(\d+)")


def _parse_conversation(obj: Any, position: int) -> tuple[Conversation, EvidenceStats]:
    if not isinstance(obj, dict):
        raise LocomoFormatError(f"conversation #{position} is not an object")
    sample_id = str(obj.get("sample_id") or f"conv-{position}")
    conv = obj.get("conversation")
    if not isinstance(conv, dict):
        raise LocomoFormatError(f"{sample_id}: missing 'conversation' object")
    try:
        speaker_a = str(conv["speaker_a"])
        speaker_b = str(conv["speaker_b"])
    except KeyError as exc:
        raise LocomoFormatError(f"{sample_id}: missing {exc.args[0]!r}") from None

    session_numbers = sorted(
        int(m.group(1)) for k in conv if (m := _SESSION_KEY_RE.fullmatch(k))
    )
    turns: list[Turn] = []
    seen: set[str] = set()
    for n in session_numbers:
        raw_turns = conv[f"session_{n}"]
        if not isinstance(raw_turns, list):
            raise LocomoFormatError(f"{sample_id}: session_{n} is not a list")
        if not raw_turns:
            continue
        date_key = f"session_{n}_date_time"
        if date_key not in conv:
            raise LocomoFormatError(f"{sample_id}: session_{n} has no {date_key}")
        occurred_at = parse_locomo_datetime(str(conv[date_key]))
        for raw in raw_turns:
            try:
                dia_id = str(raw["dia_id"]).strip()
                speaker = str(raw["speaker"])
            except (KeyError, TypeError) as exc:
                raise LocomoFormatError(f"{sample_id}: session_{n} turn lacks {exc}") from None
            if dia_id in seen:
                raise LocomoFormatError(f"{sample_id}: duplicate dia_id {dia_id!r}")
            seen.add(dia_id)
            text, has_image = _turn_text(raw)
            turns.append(
                Turn(
                    dia_id=dia_id,
                    speaker=speaker,
                    text=text,
                    session=n,
                    occurred_at=occurred_at,
                    has_image=has_image,
                )
            )

    known = frozenset(seen)
    questions: list[Question] = []
    stats = EvidenceStats()
    for i, qa in enumerate(obj.get("qa") or []):
        qid = f"{sample_id}:q{i + 1}"
        try:
            text = str(qa["question"])
            category = int(qa["category"])
        except (KeyError, TypeError, ValueError) as exc:
            raise LocomoFormatError(f"{qid}: bad question/category ({exc})") from None
        evidence, q_stats = _normalise_question_evidence(qa.get("evidence"), known, sample_id, qid)
        stats = stats + q_stats
        questions.append(Question(question=text, category=category, evidence=evidence, qid=qid))
    return (
        Conversation(
            sample_id=sample_id,
            speaker_a=speaker_a,
            speaker_b=speaker_b,
            turns=tuple(turns),
            questions=tuple(questions),
        ),
        stats,
    )


def load_locomo(path: str | Path = DEFAULT_DEV_PATH) -> LocomoSet:
    """Read a LoCoMo JSON file (a list of conversations) into a :class:`LocomoSet`."""
    p = Path(path)
    with p.open(encoding="utf-8") as fh:
        data = json.load(fh)
    if not isinstance(data, list):
        raise LocomoFormatError(f"{p}: expected a JSON list of conversations")
    conversations: list[Conversation] = []
    stats = EvidenceStats()
    ids: set[str] = set()
    for pos, obj in enumerate(data, start=1):
        conv, conv_stats = _parse_conversation(obj, pos)
        if conv.sample_id in ids:
            raise LocomoFormatError(f"{p}: duplicate sample_id {conv.sample_id!r}")
        ids.add(conv.sample_id)
        conversations.append(conv)
        stats = stats + conv_stats
    return LocomoSet(conversations=tuple(conversations), evidence_stats=stats, path=str(p))
