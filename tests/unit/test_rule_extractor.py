"""The offline rule extractor: what it extracts, what it refuses, and how it resolves dates."""

from __future__ import annotations

import time
from datetime import datetime, timedelta, timezone
from zoneinfo import ZoneInfo

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from remem.errors import InvalidInput
from remem.providers.rules import KEYS, PRECISIONS, ExtractedClaim, RuleExtractor

TOKYO = timezone(timedelta(hours=9))
# Wednesday 2026-03-18 15:30 at +09:00 (06:30 UTC): dates resolve in the speaker's zone.
SAID_AT = datetime(2026, 3, 18, 15, 30, tzinfo=TOKYO)
KINDS = {"identity", "rule", "profile_slot", "fact", "preference", "skill", "lesson"}

extractor = RuleExtractor()


def extract(text: str, *, role: str = "user", at: datetime = SAID_AT) -> list[ExtractedClaim]:
    return extractor.extract(text, role=role, occurred_at=at)


def pairs(text: str) -> list[tuple[str, object]]:
    return [(c.key, c.value) for c in extract(text)]


def local_midnight(year: int, month: int, day: int) -> datetime:
    return datetime(year, month, day, tzinfo=TOKYO)


POSITIVE = [
    # name
    ("My name is Anna Schmidt.", [("name", "Anna Schmidt")]),
    ("my name's Jean-Luc", [("name", "Jean-Luc")]),
    ("I'm called Bob.", [("name", "Bob")]),
    ("Call me Ishmael.", [("name", "Ishmael")]),
    ("You can call me Sam.", [("name", "Sam")]),
    ("I go by Alex.", [("name", "Alex")]),
    ("Hi! My name is Maria van der Berg.", [("name", "Maria van der Berg")]),
    # home_city and hometown
    ("I live in Paris now.", [("home_city", "Paris")]),
    ("I live in Paris, France.", [("home_city", "Paris")]),
    ("i live in São Paulo", [("home_city", "São Paulo")]),
    ("I'm based in New York City.", [("home_city", "New York City")]),
    ("I currently live in Rio de Janeiro with my family.", [("home_city", "Rio de Janeiro")]),
    ("I just moved to Berlin.", [("home_city", "Berlin")]),
    ("My wife and I live in Toronto.", [("home_city", "Toronto")]),
    ("I'm from Lyon.", [("hometown", "Lyon")]),
    ("I grew up in Osaka.", [("hometown", "Osaka")]),
    # employer and job_title
    ("I work at Google.", [("employer", "Google")]),
    ("I work for the New York Times.", [("employer", "New York Times")]),
    ("I'm working at Bank of America these days.", [("employer", "Bank of America")]),
    ("I joined Stripe.", [("employer", "Stripe")]),
    ("I got a job at AT&T.", [("employer", "AT&T")]),
    ("I work at Google as a software engineer.",
     [("employer", "Google"), ("job_title", "software engineer")]),
    ("I'm a software engineer.", [("job_title", "software engineer")]),
    ("I'm an ICU nurse.", [("job_title", "ICU nurse")]),
    ("I'm a senior data scientist at Spotify.",
     [("job_title", "senior data scientist"), ("employer", "Spotify")]),
    ("I work as a bus driver.", [("job_title", "bus driver")]),
    ("I'm the CEO of Acme.", [("job_title", "CEO"), ("employer", "Acme")]),
    ("I'm a student at MIT.", [("job_title", "student")]),
    # diet
    ("I'm vegetarian.", [("diet", "vegetarian")]),
    ("I'm a vegan now.", [("diet", "vegan")]),
    ("I am pescetarian", [("diet", "pescatarian")]),
    ("I'm on a keto diet.", [("diet", "keto")]),
    ("I don't eat meat.", [("diet", "vegetarian")]),
    ("I no longer eat meat.", [("diet", "vegetarian")]),
    ("I don't eat any animal products.", [("diet", "vegan")]),
    # allergies, languages, pets (multi-valued)
    ("I'm allergic to peanuts and shellfish.",
     [("allergies", "peanuts"), ("allergies", "shellfish")]),
    ("I'm severely allergic to penicillin.", [("allergies", "penicillin")]),
    ("I have a peanut allergy.", [("allergies", "peanut")]),
    ("I have a cat allergy.", [("allergies", "cat")]),
    ("I speak English, French and Japanese.",
     [("languages", "English"), ("languages", "French"), ("languages", "Japanese")]),
    ("I speak fluent german and a little Italian.",
     [("languages", "German"), ("languages", "Italian")]),
    ("I have a dog named Rex.", [("pets", {"species": "dog", "name": "Rex"})]),
    ("I have a dog named Rex and a cat named Luna.",
     [("pets", {"species": "dog", "name": "Rex"}), ("pets", {"species": "cat", "name": "Luna"})]),
    ("I have two cats.", [("pets", {"species": "cat", "count": 2})]),
    ("My dog's name is Biscuit.", [("pets", {"species": "dog", "name": "Biscuit"})]),
    # likes and dislikes
    ("I love hiking and swimming.", [("likes", "hiking"), ("likes", "swimming")]),
    ("I really enjoy reading, watching movies, and exploring nature.",
     [("likes", "reading"), ("likes", "watching movies"), ("likes", "exploring nature")]),
    ("I love mac and cheese.", [("likes", "mac and cheese")]),
    ("I'm a huge fan of jazz.", [("likes", "jazz")]),
    ("I hate cilantro.", [("dislikes", "cilantro")]),
    ("I can't stand loud music.", [("dislikes", "loud music")]),
    ("I don't like olives.", [("dislikes", "olives")]),
    # response_style, timezone, ui_theme, editor
    ("Please keep answers short.", [("response_style", "concise")]),
    ("Keep your responses brief.", [("response_style", "concise")]),
    ("I prefer bullet points.", [("response_style", "bullet points")]),
    ("I prefer detailed explanations.", [("response_style", "detailed")]),
    ("Please don't use emojis.", [("response_style", "no emojis")]),
    ("My timezone is +08:00.", [("timezone", "+08:00")]),
    ("I'm in UTC+8.", [("timezone", "+08:00")]),
    ("my time zone is GMT-5:30", [("timezone", "-05:30")]),
    ("My timezone is Asia/Tokyo.", [("timezone", "Asia/Tokyo")]),
    ("I use dark mode.", [("ui_theme", "dark")]),
    ("light mode now", [("ui_theme", "light")]),
    ("I use vim.", [("editor", "Vim")]),
    ("I switched to VS Code.", [("editor", "VS Code")]),
    ("My editor is Emacs.", [("editor", "Emacs")]),
    # several statements in one turn, discourse words
    ("I live in Paris and I work at Google.", [("home_city", "Paris"), ("employer", "Google")]),
    ("Oh btw, I'm vegan. Also I speak Spanish!", [("diet", "vegan"), ("languages", "Spanish")]),
    ("Please remember that I'm allergic to cats.", [("allergies", "cats")]),
    ("Note: I moved to Lisbon.", [("home_city", "Lisbon")]),
    ("I'm allergic to dogs; I love cats though.", [("allergies", "dogs"), ("likes", "cats")]),
]


@pytest.mark.parametrize(("text", "expected"), POSITIVE, ids=[t for t, _ in POSITIVE])
def test_a_first_person_statement_yields_its_claims(text: str, expected: list) -> None:
    claims = extract(text)
    assert [(c.key, c.value) for c in claims] == expected
    for claim in claims:
        assert claim.operation == "assert"
        assert claim.kind == KEYS[claim.key].kind
        assert claim.valid_at == SAID_AT and claim.valid_at_precision == "instant"


NEGATIVE = [
    # third parties
    "My sister lives in Rome.",
    "John works at Google.",
    "My husband is a software engineer.",
    "My mom is vegetarian.",
    "She's allergic to peanuts.",
    "My friend's name is Anna.",
    "We moved the meeting to Monday.",
    # hypotheticals, wishes, plans, the past
    "If I moved to Oslo I'd be cold.",
    "I might move to Oslo.",
    "I wish I lived in Lisbon.",
    "I would love to live in Tokyo.",
    "I'm going to move to Berlin next year.",
    "I will work at Google.",
    "I'm thinking about going vegan.",
    "I used to live in Madrid.",
    "I'd like to learn Spanish.",
    "When I lived in Paris, I loved it.",
    "I hope I'm not allergic to it.",
    # questions
    "Do I live in Paris?",
    "where should I live",
    "Am I vegetarian?",
    "What's my name?",
    "I live in Paris, right?",
    # reported speech, hedges, examples, fiction
    "He said I live in Paris.",
    "My doctor told me I'm allergic to penicillin.",
    'She wrote "I live in Paris" on the card.',
    "I think I live in Paris.",
    "Maybe I'm vegan.",
    "For example, I live in Paris.",
    "Let's pretend I live on Mars.",
    "I live in Paris. Just kidding, I live in Rome.",
    "User: I live in Paris",
    "Q: where do you live? A: I live in Paris.",
    "Roleplay: you are a pirate and I live in a castle called Skull Keep.",
    # requests
    "Translate: I live in Paris.",
    "Write a story where I work at Google.",
    "Find me a vegan restaurant, I'm in Paris.",
    "Can you call me later?",
    "Call me when you're ready.",
    # plain negation without a change marker, vague or unsupported values
    "I don't live in Paris.",
    "I'm not vegetarian.",
    "I never worked at Google.",
    "I'm allergic to nothing.",
    "I like you.",
    "I love how you explain things.",
    "I love it!",
    "I like the color and texture.",
    "I live in the US.",
    "I live in a small town.",
    "I work from home.",
    "I work for myself.",
    "I joined a gym.",
    "I'm the owner of a bakery.",
    "I'm a huge fan.",
    "I'm a terrible cook.",
    "I'm a former teacher.",
    "I have a meeting at 5.",
    "I speak to my mom every day.",
    "I'm in Paris this week.",
    "I LIVE IN PARIS",
    "My name is not important.",
    "I live in Paris and London.",
    "I moved to Berlin on 01/09/2025.",
    "I'm mostly vegetarian.",
    "Keep this answer short.",
    "I'm using light mode for this screenshot only",
]


@pytest.mark.parametrize("text", NEGATIVE)
def test_a_statement_that_is_not_a_first_person_fact_yields_nothing(text: str) -> None:
    assert extract(text) == []


@pytest.mark.parametrize("role", ["assistant", "tool", "system", "USER", ""])
def test_only_user_turns_yield_claims(role: str) -> None:
    assert extract("I live in Paris and I'm vegan.", role=role) == []


def test_a_naive_occurred_at_is_rejected() -> None:
    with pytest.raises(InvalidInput):
        extract("I live in Paris.", at=datetime(2026, 3, 18, 15, 30))


RETRACTIONS = [
    ("I don't live in Paris anymore.", "home_city", "Paris"),
    ("I no longer live in Paris.", "home_city", "Paris"),
    ("I'm not vegetarian anymore.", "diet", "vegetarian"),
    ("I'm no longer vegan.", "diet", "vegan"),
    ("I stopped being vegan.", "diet", "vegan"),
    ("I no longer work at Google.", "employer", "Google"),
    ("I don't work for Acme any more.", "employer", "Acme"),
    ("I moved out of London.", "home_city", "London"),
    ("I don't like olives anymore.", "likes", "olives"),
    ("I stopped using vim.", "editor", "Vim"),
]


@pytest.mark.parametrize(("text", "key", "value"), RETRACTIONS)
def test_a_value_said_to_be_no_longer_true_is_retracted(text: str, key: str, value: str) -> None:
    [claim] = extract(text)
    assert (claim.key, claim.value, claim.operation, claim.negated) == (key, value, "retract", True)


def test_a_negative_phrasing_that_asserts_is_marked_negated() -> None:
    [claim] = extract("I don't eat meat anymore.")
    assert (claim.key, claim.value, claim.operation, claim.negated) == (
        "diet", "vegetarian", "assert", True)


DATES = [
    # (text, valid_at, precision); SAID_AT is Wednesday 2026-03-18 15:30 +09:00
    ("I moved to Shanghai on 2025-09-01.", local_midnight(2025, 9, 1), "day"),
    ("I moved to Rome on September 1, 2025.", local_midnight(2025, 9, 1), "day"),
    ("I moved to Rome on 1 September 2025.", local_midnight(2025, 9, 1), "day"),
    ("I moved to Rome on September 1.", local_midnight(2025, 9, 1), "day"),
    ("I moved to Rome on March 2.", local_midnight(2026, 3, 2), "day"),
    ("I moved to Paris yesterday.", local_midnight(2026, 3, 17), "day"),
    ("I moved to Paris today.", local_midnight(2026, 3, 18), "day"),
    ("I joined Google on Monday.", local_midnight(2026, 3, 16), "day"),
    ("I joined Google last Wednesday.", local_midnight(2026, 3, 11), "day"),
    ("I joined Google three days ago.", local_midnight(2026, 3, 15), "day"),
    ("I joined Google last week.", local_midnight(2026, 3, 9), "week"),
    ("I joined Google 2 weeks ago.", local_midnight(2026, 3, 2), "week"),
    ("I moved to Berlin last month.", local_midnight(2026, 2, 1), "month"),
    ("I moved to Berlin in January.", local_midnight(2026, 1, 1), "month"),
    ("I moved to Berlin in May.", local_midnight(2025, 5, 1), "month"),
    ("I moved to Berlin in May 2024.", local_midnight(2024, 5, 1), "month"),
    ("I moved to Berlin last year.", local_midnight(2025, 1, 1), "year"),
    ("Last year, I moved to Berlin.", local_midnight(2025, 1, 1), "year"),
    ("I moved to Berlin two years ago.", local_midnight(2024, 1, 1), "year"),
    ("I've been vegan since 2019.", local_midnight(2019, 1, 1), "year"),
    ("I've lived in Berlin for 5 years.", local_midnight(2021, 1, 1), "year"),
    ("I stopped being vegan last month.", local_midnight(2026, 2, 1), "month"),
    ("I moved to Oslo on 2026-03-18T01:00:00+00:00.", datetime(2026, 3, 18, 10, 0, tzinfo=TOKYO),
     "instant"),
    ("I moved to Oslo on 2026-03-18 14:45.", datetime(2026, 3, 18, 14, 45, tzinfo=TOKYO),
     "instant"),
]


@pytest.mark.parametrize(("text", "valid_at", "precision"), DATES, ids=[d[0] for d in DATES])
def test_a_named_date_resolves_against_occurred_at_in_its_zone(
        text: str, valid_at: datetime, precision: str) -> None:
    [claim] = extract(text)
    assert claim.valid_at == valid_at
    assert claim.valid_at.utcoffset() == timedelta(hours=9)
    assert claim.valid_at.tzinfo is SAID_AT.tzinfo
    assert claim.valid_at_precision == precision


def test_a_move_on_an_iso_date_is_valid_from_local_midnight_of_that_date() -> None:
    said = datetime(2026, 10, 1, 9, 0, tzinfo=TOKYO)
    [claim] = extract("I moved to Shanghai on 2026-09-01.", at=said)
    assert (claim.key, claim.value) == ("home_city", "Shanghai")
    assert (claim.valid_at, claim.valid_at_precision) == (local_midnight(2026, 9, 1), "day")


def test_the_local_date_not_the_utc_date_anchors_relative_dates() -> None:
    # 00:30 on the 18th in Tokyo is still the 17th in UTC; "yesterday" is the 17th in Tokyo.
    early = datetime(2026, 3, 18, 0, 30, tzinfo=ZoneInfo("Asia/Tokyo"))
    [claim] = extract("I moved to Paris yesterday.", at=early)
    assert claim.valid_at == datetime(2026, 3, 17, tzinfo=ZoneInfo("Asia/Tokyo"))
    assert claim.valid_at.tzinfo is early.tzinfo


@pytest.mark.parametrize("text", [
    "I moved to Shanghai on 2026-09-01.",
    "I joined Google on December 24, 2026.",
    "I moved to Oslo on 2026-03-18T12:00:00+00:00.",
    "I moved to Rome on February 30.",
    "I moved to Rome in 2019 and to Paris in 2022.",
    "I work at Google for 3 months.",
])
def test_a_future_invalid_or_ambiguous_date_yields_nothing(text: str) -> None:
    assert extract(text) == []


def test_several_statements_come_back_in_order_and_deduplicated() -> None:
    text = ("I live in Paris. I'm vegan and I love jazz. I really love JAZZ! "
            "I'm allergic to peanuts, and I'm allergic to peanuts and cats. I live in Paris.")
    assert pairs(text) == [
        ("home_city", "Paris"), ("diet", "vegan"), ("likes", "jazz"),
        ("allergies", "peanuts"), ("allergies", "cats"),
    ]


def test_an_assert_and_a_retract_of_the_same_value_are_both_kept() -> None:
    claims = extract("I was vegan. I'm not vegan anymore. I'm vegan.")
    assert [(c.value, c.operation) for c in claims] == [("vegan", "retract"), ("vegan", "assert")]


def test_multi_value_lists_split_on_commas_and_conjunctions() -> None:
    assert pairs("I speak English, French, and Japanese") == [
        ("languages", "English"), ("languages", "French"), ("languages", "Japanese")]
    assert pairs("I'm allergic to peanuts, tree nuts & shellfish.") == [
        ("allergies", "peanuts"), ("allergies", "tree nuts"), ("allergies", "shellfish")]
    assert pairs("I love aerial yoga, it's a great way to switch off.") == [
        ("likes", "aerial yoga")]


def test_a_list_with_an_unparseable_item_yields_nothing_for_closed_keys() -> None:
    assert pairs("I speak English and some other stuff.") == []
    assert pairs("I have a dog and a mortgage.") == []


def test_the_quote_is_the_exact_sentence_it_came_from() -> None:
    text = "Hello there!  I moved to Berlin last year. What's the weather like?"
    [claim] = extract(text)
    assert claim.quote == "I moved to Berlin last year."
    assert claim.quote in text


def test_curly_apostrophes_are_understood_and_quotes_stay_exact() -> None:
    text = "I’m vegetarian and I don’t live in Paris anymore."
    claims = extract(text)
    assert [(c.key, c.value, c.operation) for c in claims] == [
        ("diet", "vegetarian", "assert"), ("home_city", "Paris", "retract")]
    assert all(c.quote == text for c in claims)


def test_a_long_sentence_is_quoted_within_512_bytes() -> None:
    text = "I live in Paris and I " + "really " * 120 + "love jazz."
    claims = extract(text)
    assert ("home_city", "Paris") in [(c.key, c.value) for c in claims]
    assert all(len(c.quote.encode()) <= 512 and c.quote in text for c in claims)


def test_extraction_is_deterministic() -> None:
    text = "I moved to Berlin last year. I speak English and German. I have a cat named Miso."
    assert extract(text) == extract(text)


def test_every_key_has_a_listed_kind() -> None:
    assert {spec.kind for spec in KEYS.values()} <= KINDS
    assert {spec.cardinality for spec in KEYS.values()} == {"single", "multi"}


FRAGMENTS = [
    "I live in Paris", "I'm vegan", "I don't", "anymore", "my name is Bob", "I moved to Berlin",
    "last year", "on 2025-02-30", "yesterday", "I'm allergic to", "peanuts", "and", ",", ".",
    "?", "if", "I speak", "English", "I have a dog named", "Rex", "I love", "you", "\n", "’",
    '"', "no longer", "call me", "UTC+8", "I'm a", "nurse", "at", "Google", "in May", "ago",
    "two weeks", "I'm in", "My timezone is", "+99:00", "I use", "vim", "dark mode", "東京",
]


@settings(max_examples=300, deadline=None)
@given(st.one_of(
    st.text(max_size=300),
    st.lists(st.sampled_from(FRAGMENTS), max_size=25).map(" ".join),
), st.sampled_from([SAID_AT, datetime(2024, 2, 29, 0, 0, tzinfo=ZoneInfo("America/New_York")),
                    datetime(1970, 1, 1, tzinfo=timezone.utc)]))
def test_extract_never_raises_and_returns_only_well_formed_claims(text: str, at: datetime) -> None:
    claims = extractor.extract(text, role="user", occurred_at=at)
    for claim in claims:
        assert claim.key in KEYS and claim.kind == KEYS[claim.key].kind
        assert claim.operation in ("assert", "retract")
        assert claim.valid_at_precision in PRECISIONS
        assert claim.valid_at.tzinfo is at.tzinfo and claim.valid_at <= at
        assert claim.quote and claim.quote in text and len(claim.quote.encode()) <= 512
        assert isinstance(claim.value, (str, dict)) and claim.value
        if isinstance(claim.value, str):
            assert claim.value == claim.value.strip() and len(claim.value.encode()) <= 1024


def synthetic_turns(n: int) -> list[str]:
    templates = [
        "Hey! I moved to Berlin last year and I work at Siemens as a software engineer.",
        "Can you recommend a good restaurant near the station? Something not too expensive.",
        "I'm vegetarian, I'm allergic to peanuts and shellfish, and I speak English and German.",
        "My sister lives in Rome and she loves it there, she says the food is amazing.",
        "Thanks, that was helpful. I think I'll try the second option tomorrow morning.",
        "Please keep answers short. I prefer bullet points and I use dark mode in VS Code.",
        "I have a dog named Rex and two cats. We went hiking yesterday and it was lovely!",
        "If I moved to Oslo I'd need a warmer coat, right? What do people wear there in winter?",
    ]
    return [f"{templates[i % len(templates)]} (turn {i})" for i in range(n)]


def test_throughput_is_thousands_of_turns_per_second() -> None:
    turns = synthetic_turns(3000)
    started = time.perf_counter()
    found = sum(len(extract(turn)) for turn in turns)
    per_second = len(turns) / (time.perf_counter() - started)
    print(f"rule extractor: {per_second:,.0f} turns/s, {found} claims from {len(turns)} turns")
    assert found > 3000
    assert per_second > 200  # measured ≈ 5–6k turns/s on one core; the floor absorbs noisy CI


@pytest.mark.parametrize("text", [
    "a. " * 40_000, ", I live in Paris" * 8_000, "I love " + "x, " * 30_000, " " * 100_000 + "x",
    "I live in Paris" + " now" * 20_000 + " x",
])
def test_long_or_pathological_input_is_handled_in_linear_time(text: str) -> None:
    started = time.perf_counter()
    extract(text)
    assert time.perf_counter() - started < 60  # ≈ 0.02–0.4 s measured (7 s on a loaded machine); quadratic takes many minutes
