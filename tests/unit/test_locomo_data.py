"""LoCoMo loader (synthetic files + the shared dev split) and the shipped demo conversation."""

from __future__ import annotations

import json
import re
from datetime import UTC, datetime
from pathlib import Path

import pytest

from remem.bench.locomo_data import (
    LocomoFormatError,
    load_locomo,
    locate_dev_split,
    normalise_evidence,
    parse_locomo_datetime,
)

REPO = Path(__file__).resolve().parents[2]
EXAMPLE = REPO / "examples" / "conversation.json"
SENTINEL = "ZZSENTINELZZ"


# --------------------------------------------------------------------------- synthetic data


def _conv(sample_id: str = "conv-x", qa: list | None = None, **extra_sessions) -> dict:
    conversation = {
        "speaker_a": "Ann",
        "speaker_b": "Bob",
        "session_1_date_time": "1:56 pm on 8 May, 2023",
        "session_1": [
            {"speaker": "Ann", "dia_id": "D1:1", "text": "Hello Bob."},
            {
                "speaker": "Bob",
                "dia_id": "D1:2",
                "text": "Look at my dog.",
                "img_url": [f"https://example.invalid/{SENTINEL}.jpg"],
                "blip_caption": "a photo of a brown dog",
                "query": f"dog {SENTINEL}",
                "re-download": True,
            },
            {"speaker": "Ann", "dia_id": "D1:3", "text": "", "blip_caption": "a red bike"},
            {"speaker": "Bob", "dia_id": "D1:4", "text": "Nice.", "img_url": ["x.jpg"]},
        ],
        # session 10 comes after session 2 even though it is listed first
        "session_10_date_time": "12:05 am on 3 Jan, 2024",
        "session_10": [{"speaker": "Ann", "dia_id": "D10:1", "text": "Happy new year."}],
        "session_2_date_time": "12:30 pm on 25 December, 2023",
        "session_2": [
            {"speaker": "Bob", "dia_id": "D2:1", "text": "Merry Christmas."},
            {"speaker": "Ann", "dia_id": "D2:2", "text": "Same to you."},
        ],
        # a date without a session is ignored
        "session_11_date_time": "9:00 am on 4 Jan, 2024",
    }
    conversation.update(extra_sessions)
    return {
        "sample_id": sample_id,
        "conversation": conversation,
        "qa": qa if qa is not None else [],
        "observation": {"session_1_observation": SENTINEL},
        "session_summary": {"session_1_summary": SENTINEL},
        "event_summary": {"events_session_1": SENTINEL},
    }


def _write(tmp_path: Path, data) -> Path:
    p = tmp_path / "locomo.json"
    p.write_text(json.dumps(data), encoding="utf-8")
    return p


QA = [
    {"question": "q-valid", "answer": SENTINEL, "evidence": ["D1:1", "D2:2"], "category": 1},
    {"question": "q-colon", "answer": SENTINEL, "evidence": ["D:1:2"], "category": 2},
    {"question": "q-multi", "answer": SENTINEL, "evidence": ["D1:3; D2:1", "D1:4 D10:1"], "category": 3},
    {"question": "q-spaces", "answer": SENTINEL, "evidence": [" D1: 1 ", "D01:02"], "category": 4},
    {"question": "q-bad", "answer": SENTINEL, "evidence": ["D", "D9:9", "D1:1"], "category": 4},
    {"question": "q-dup", "answer": SENTINEL, "evidence": ["D1:1", "D1:1", "D1:1; D1:2"], "category": 4},
    {"question": "q-adv", "adversarial_answer": SENTINEL, "evidence": ["D2:1"], "category": 5},
    {"question": "q-none", "answer": SENTINEL, "evidence": [], "category": 3},
    {"question": "q-allbad", "answer": SENTINEL, "evidence": ["D7:1"], "category": 1},
]


@pytest.fixture
def synthetic(tmp_path: Path):
    return load_locomo(_write(tmp_path, [_conv(qa=QA), _conv("conv-y")]))


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("1:56 pm on 8 May, 2023", datetime(2023, 5, 8, 13, 56, tzinfo=UTC)),
        ("12:48 am on 1 February, 2023", datetime(2023, 2, 1, 0, 48, tzinfo=UTC)),
        ("12:05 pm on 3 Jan, 2024", datetime(2024, 1, 3, 12, 5, tzinfo=UTC)),
        ("9:27 AM on 7 February, 2022", datetime(2022, 2, 7, 9, 27, tzinfo=UTC)),
        ("11:01 am on 17 December 2022", datetime(2022, 12, 17, 11, 1, tzinfo=UTC)),
    ],
)
def test_parse_locomo_datetime(text, expected):
    got = parse_locomo_datetime(text)
    assert got == expected
    assert got.tzinfo is UTC


@pytest.mark.parametrize(
    "bad",
    [
        "",
        "13:00 pm on 8 May, 2023",
        "1:56 pm on 8 Mayo, 2023",
        "1:56 pm on 31 April, 2023",
        "May 8 2023",
    ],
)
def test_parse_locomo_datetime_rejects(bad):
    with pytest.raises(LocomoFormatError):
        parse_locomo_datetime(bad)


@pytest.mark.parametrize(
    ("raw", "ids"),
    [
        ("D1:3", ["D1:3"]),
        ("D:11:26", ["D11:26"]),
        ("D8:6; D9:17", ["D8:6", "D9:17"]),
        ("D1:3 D2:4", ["D1:3", "D2:4"]),
        ("D1:3,D2:4", ["D1:3", "D2:4"]),
        (" D1: 3 ", ["D1:3"]),
        ("d02:007", ["D2:7"]),
        ("D", []),
        ("", []),
    ],
)
def test_normalise_evidence(raw, ids):
    assert normalise_evidence(raw) == ids


def test_turns_order_sessions_and_times(synthetic):
    conv = synthetic.get("conv-x")
    assert [t.dia_id for t in conv.turns] == ["D1:1", "D1:2", "D1:3", "D1:4", "D2:1", "D2:2", "D10:1"]
    assert conv.sessions == (1, 2, 10)
    assert [t.session for t in conv.turns] == [1, 1, 1, 1, 2, 2, 10]
    assert conv.turn("D1:4").occurred_at == datetime(2023, 5, 8, 13, 56, tzinfo=UTC)
    assert conv.turn("D2:1").occurred_at == datetime(2023, 12, 25, 12, 30, tzinfo=UTC)
    assert conv.turn("D10:1").occurred_at == datetime(2024, 1, 3, 0, 5, tzinfo=UTC)
    assert all(t.occurred_at.tzinfo is not None for t in conv.turns)
    assert (conv.speaker_a, conv.speaker_b) == ("Ann", "Bob")
    assert conv.turn("D1:1").speaker == "Ann"


def test_image_turns_use_caption(synthetic):
    conv = synthetic.get("conv-x")
    assert conv.turn("D1:1").text == "Hello Bob." and not conv.turn("D1:1").has_image
    assert conv.turn("D1:2").text == "Look at my dog. [image: a photo of a brown dog]"
    assert conv.turn("D1:2").has_image
    assert conv.turn("D1:3").text == "[image: a red bike]" and conv.turn("D1:3").has_image
    assert conv.turn("D1:4").text == "Nice." and conv.turn("D1:4").has_image


def test_evidence_normalisation_per_question(synthetic):
    qs = {q.question: q for q in synthetic.get("conv-x").questions}
    assert qs["q-valid"].evidence == ("D1:1", "D2:2")
    assert qs["q-colon"].evidence == ("D1:2",)
    assert qs["q-multi"].evidence == ("D1:3", "D2:1", "D1:4", "D10:1")
    assert qs["q-spaces"].evidence == ("D1:1", "D1:2")
    assert qs["q-bad"].evidence == ("D1:1",)
    assert qs["q-dup"].evidence == ("D1:1", "D1:2")
    assert qs["q-allbad"].evidence == ()
    assert [q.qid for q in synthetic.get("conv-x").questions][:2] == ["conv-x:q1", "conv-x:q2"]


def test_evidence_stats_counts(synthetic):
    st = synthetic.evidence_stats
    # raw strings: 2+1+2+2+3+3+1+0+1 = 15
    # valid (exactly one resolving id): D1:1 D2:2 | D1:1 (q-bad) | D1:1 D1:1 (q-dup) | D2:1 (adv) = 6
    # normalised: D1:2 | D1:3 D2:1 D1:4 D10:1 | D1:1 D1:2 | D1:1 D1:2 (from "D1:1; D1:2") = 9
    # dropped: "D", D9:9, D7:1 = 3
    # duplicates within a question: q-dup has D1:1 three times -> 2 repeats
    assert st.as_dict() == {"raw": 15, "valid": 6, "normalised": 9, "dropped": 3, "duplicates": 2}
    dropped = sorted(d for f in st.fixes for d in f.dropped)
    assert dropped == ["D", "D7:1", "D9:9"]
    fix = next(f for f in st.fixes if f.raw == "D:1:2")
    assert fix.kept == ("D1:2",) and fix.qid == "conv-x:q2" and fix.sample_id == "conv-x"


def test_category_5_kept_but_flagged(synthetic):
    qs = {q.question: q for q in synthetic.get("conv-x").questions}
    assert len(qs) == len(QA)
    adv = qs["q-adv"]
    assert adv.category == 5 and adv.adversarial and not adv.scorable
    assert adv.evidence == ("D2:1",)
    assert not qs["q-none"].scorable and not qs["q-allbad"].scorable
    assert qs["q-valid"].scorable and not qs["q-valid"].adversarial
    scorable = {q.question for q in synthetic.get("conv-x").scorable_questions()}
    assert scorable == {"q-valid", "q-colon", "q-multi", "q-spaces", "q-bad", "q-dup"}


def test_annotations_answers_and_image_urls_are_never_read(synthetic):
    # observation / session_summary / event_summary / answers / img_url / query all carry SENTINEL
    assert SENTINEL not in repr(synthetic)
    assert len(synthetic) == 2 and synthetic.get("conv-y").questions == ()


def test_set_accessors(synthetic):
    assert [c.sample_id for c in synthetic] == ["conv-x", "conv-y"]
    assert len(synthetic.questions) == len(QA)
    with pytest.raises(KeyError):
        synthetic.get("conv-nope")
    with pytest.raises(KeyError):
        synthetic.get("conv-x").turn("D99:1")


@pytest.mark.parametrize(
    ("data", "message"),
    [
        ({"not": "a list"}, "list of conversations"),
        ([{"sample_id": "c", "qa": []}], "conversation"),
        ([{"sample_id": "c", "conversation": {"speaker_a": "A", "session_1": []}}], "speaker_b"),
        (
            [
                {
                    "sample_id": "c",
                    "conversation": {
                        "speaker_a": "A",
                        "speaker_b": "B",
                        "session_1": [{"speaker": "A", "dia_id": "D1:1", "text": "x"}],
                    },
                }
            ],
            "session_1_date_time",
        ),
        ([_conv("same"), _conv("same")], "duplicate sample_id"),
    ],
)
def test_format_errors(tmp_path, data, message):
    with pytest.raises(LocomoFormatError, match=message):
        load_locomo(_write(tmp_path, data))


def test_duplicate_dia_id_rejected(tmp_path):
    c = _conv()
    c["conversation"]["session_2"].append({"speaker": "Ann", "dia_id": "D1:1", "text": "again"})
    with pytest.raises(LocomoFormatError, match="duplicate dia_id"):
        load_locomo(_write(tmp_path, [c]))


# --------------------------------------------------------------------------- the dev split

DEV = locate_dev_split()
needs_dev = pytest.mark.skipif(
    DEV is None,
    reason="LoCoMo dev split not found (set REMEM_LOCOMO_PATH, or lay shared/data/locomo-dev.json "
    "beside the checkout, or at /work/shared/data/locomo-dev.json)",
)


@pytest.fixture(scope="module")
def dev():
    assert DEV is not None
    return load_locomo(DEV)


@needs_dev
def test_dev_split_shape(dev):
    assert [c.sample_id for c in dev] == ["conv-26", "conv-30", "conv-41", "conv-42", "conv-43"]
    assert [len(c.turns) for c in dev] == [419, 369, 663, 629, 680]
    assert len(dev.questions) == 999
    assert sum(q.category == 5 for q in dev.questions) == 237
    assert sum(q.scorable for q in dev.questions) == 760
    c26 = dev.get("conv-26")
    assert (c26.speaker_a, c26.speaker_b) == ("Caroline", "Melanie")
    assert c26.turns[0].dia_id == "D1:1"
    assert c26.turns[0].occurred_at == datetime(2023, 5, 8, 13, 56, tzinfo=UTC)
    assert c26.turn("D1:5").has_image and "[image: " in c26.turn("D1:5").text
    for c in dev:
        ids = c.turn_ids
        for q in c.questions:
            assert all(e in ids for e in q.evidence)
            assert all(re.fullmatch(r"D\d+:\d+", e) for e in q.evidence)
        times = [t.occurred_at for t in c.turns]
        assert all(t.tzinfo is not None for t in times)


@needs_dev
def test_dev_split_evidence_stats(dev):
    st = dev.evidence_stats
    assert st.as_dict() == {"raw": 1350, "valid": 1346, "normalised": 3, "dropped": 2, "duplicates": 0}
    by_raw = {f.raw: f for f in st.fixes}
    assert by_raw["D8:6; D9:17"].kept == ("D8:6", "D9:17")
    assert by_raw["D:11:26"].kept == ("D11:26",)
    assert by_raw["D"].dropped == ("D",)
    assert by_raw["D10:19"].dropped == ("D10:19",) and by_raw["D10:19"].sample_id == "conv-42"


@needs_dev
def test_dev_split_annotations_do_not_leak(dev):
    raw = json.loads(Path(DEV).read_text(encoding="utf-8"))
    derived: set[str] = set()

    def walk(x):
        if isinstance(x, str):
            if len(x) > 40:
                derived.add(x)
        elif isinstance(x, dict):
            for v in x.values():
                walk(v)
        elif isinstance(x, list):
            for v in x:
                walk(v)

    for conv in raw:
        for key in ("observation", "session_summary", "event_summary"):
            walk(conv.get(key))
    assert derived, "expected some derived annotations in the raw file"
    turn_texts = [t.text for c in dev for t in c.turns]
    leaked = [d for d in derived if any(d in t for t in turn_texts)]
    assert leaked == []


# --------------------------------------------------------------------------- the demo conversation


@pytest.fixture(scope="module")
def example():
    return json.loads(EXAMPLE.read_text(encoding="utf-8"))


def _all_turns(ex):
    return [t for s in ex["sessions"] for t in s["turns"]]


def test_example_layout(example):
    assert example["user"] == {"id": "maya", "name": "Maya"}
    assert example["agent"]["id"] == "helper"
    assert 4 <= len(example["sessions"]) <= 6
    turns = _all_turns(example)
    assert 40 <= len(turns) <= 80
    ids = [s["id"] for s in example["sessions"]] + [t["id"] for t in turns]
    assert len(ids) == len(set(ids))
    for s in example["sessions"]:
        for t in s["turns"]:
            assert t["id"].startswith(s["id"] + ":")
            assert t["role"] in {"user", "assistant"}
            assert t["text"].strip()
    assert {t["role"] for t in turns} == {"user", "assistant"}


def test_example_chronological_with_offsets(example):
    stamps = []
    for s in example["sessions"]:
        start = datetime.fromisoformat(s["occurred_at"])
        assert start.utcoffset() is not None, s["id"]
        turn_times = [datetime.fromisoformat(t["occurred_at"]) for t in s["turns"]]
        assert all(t.utcoffset() is not None for t in turn_times)
        assert turn_times[0] >= start
        stamps.append(start)
        stamps.extend(turn_times)
    assert all(a <= b for a, b in zip(stamps, stamps[1:])), "sessions and turns must be chronological"
    turn_stamps = [datetime.fromisoformat(t["occurred_at"]) for t in _all_turns(example)]
    assert all(a < b for a, b in zip(turn_stamps, turn_stamps[1:]))
    assert len({s["occurred_at"][-6:] for s in example["sessions"]}) > 1, "expected a change of offset"


def _user_turn(example, pattern: str) -> dict:
    hits = [t for t in _all_turns(example) if t["role"] == "user" and re.search(pattern, t["text"])]
    assert hits, f"no user turn matches {pattern!r}"
    return hits[0]


def _pos(example, turn) -> int:
    return [t["id"] for t in _all_turns(example)].index(turn["id"])


def test_example_scenarios_present(example):
    u = lambda p: _user_turn(example, p)  # noqa: E731
    # correction of the home city
    lyon, lille = u(r"^I live in Lyon\.$"), u(r"I said Lyon, I meant Lille")
    assert _pos(example, lyon) < _pos(example, lille)
    # change of mind about diet
    assert _pos(example, u(r"^I eat meat\.")) < _pos(example, u(r"I no longer eat meat"))
    u(r"I'm vegetarian")
    # third party, hypothetical, rule, multi-valued facts, timezone
    u(r"My brother lives in Rome\.")
    u(r"^If I moved to Oslo")
    u(r"Always answer in metric units\.")
    u(r"I speak French and English\.")
    u(r"I'm allergic to peanuts and shellfish\.")
    u(r"My timezone is \+01:00\.")
    # a move on a stated date, then living there
    announce = u(r"I'm moving to Montreal on 15 June 2024\.")
    moved = u(r"I live in Montreal now\.")
    assert _pos(example, announce) < _pos(example, moved)
    assert datetime.fromisoformat(moved["occurred_at"]) > datetime(2024, 6, 15, tzinfo=UTC)
    assert datetime.fromisoformat(announce["occurred_at"]) < datetime(2024, 6, 15, tzinfo=UTC)
    # phone number given, then a request to forget it
    phone = u(r"My phone number is \+[\d ]+\.")
    forget = u(r"[Pp]lease forget my old phone number")
    assert _pos(example, phone) < _pos(example, forget)


def test_example_demo_block(example):
    demo = example["demo"]
    qs = demo["recall_queries"]
    assert len(qs) == 3 and all(q.strip().endswith("?") for q in qs)
    assert demo["corrected_key"] == "home_city"
    assert demo["forget"]["key"] == "phone_number"
    turns = {t["id"]: t for t in _all_turns(example)}
    target = turns[demo["forget"]["turn_id"]]
    assert target["role"] == "user" and "forget my old phone number" in target["text"]
