"""A tiny synthetic file in the LoCoMo layout (two conversations), written per test."""

from __future__ import annotations

import json
from pathlib import Path

import pytest


def _conversation(sample_id: str, a: str, b: str, pet: str, city: str) -> dict:
    return {
        "sample_id": sample_id,
        "conversation": {
            "speaker_a": a,
            "speaker_b": b,
            "session_1_date_time": "1:56 pm on 8 May, 2023",
            "session_1": [
                {"speaker": a, "dia_id": "D1:1", "text": f"Hi {b}! How was your week?"},
                {"speaker": b, "dia_id": "D1:2",
                 "text": f"Great, {a}. I adopted a {pet} from the shelter on Tuesday."},
                {"speaker": a, "dia_id": "D1:3", "text": "What a lovely surprise! Any name yet?"},
                {"speaker": b, "dia_id": "D1:4", "text": "Not yet, still thinking about it.",
                 "img_url": ["https://example.invalid/x.jpg"],
                 "blip_caption": f"a photo of a small {pet} on a sofa"},
            ],
            "session_2_date_time": "10:15 am on 2 June, 2023",
            "session_2": [
                {"speaker": a, "dia_id": "D2:1",
                 "text": f"I finally booked my trip to {city} for the marathon."},
                {"speaker": b, "dia_id": "D2:2", "text": "Amazing, good luck with the training!"},
                {"speaker": a, "dia_id": "D2:3",
                 "text": "Thanks! I run every morning before work now."},
            ],
        },
        "qa": [
            {"question": f"What animal did {b} adopt?", "answer": "unused",
             "evidence": ["D1:2"], "category": 4},
            {"question": f"Where is {a} going for the marathon?", "answer": "unused",
             "evidence": ["D2:1"], "category": 2},
            {"question": f"What does {a} do every morning and where is the race?",
             "answer": "unused", "evidence": ["D2:3", "D:2:1"], "category": 1},
            {"question": f"What did {b} name the pet?", "adversarial_answer": "unused",
             "evidence": ["D1:4"], "category": 5},
        ],
        "observation": {"session_1_observation": "not read"},
        "session_summary": {"session_1_summary": "not read"},
    }


@pytest.fixture
def locomo_file(tmp_path: Path) -> Path:
    data = [_conversation("conv-a", "Ann", "Bob", "kitten", "Lisbon"),
            _conversation("conv-b", "Cleo", "Dan", "puppy", "Oslo")]
    path = tmp_path / "locomo-tiny.json"
    path.write_text(json.dumps(data), encoding="utf-8")
    return path
