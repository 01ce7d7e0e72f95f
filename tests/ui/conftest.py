"""Browser fixtures: a real `remem serve` on loopback over a seeded SQLite file, and one
headless Debian Chromium (driven by Playwright) per test module.

If Chromium is missing the suite fails (never skips) and says how .ci/run installs it.
"""

from __future__ import annotations

import os
import shutil
from collections.abc import Iterator
from pathlib import Path

import pytest

import remem
from remem.service.tokens import Tokens
from remem.testing.served import Server
from ui.kit import CHROMIUM, CHROMIUM_ARGS, SCRIPT, TOKENS, Site


def _chromium() -> str:
    path = CHROMIUM if os.path.exists(CHROMIUM) else shutil.which("chromium")
    if not path:
        pytest.fail("The browser tests need Debian's chromium at /usr/bin/chromium (or "
                    "REMEM_CHROMIUM). .ci/run installs it as root with `apt-get install -y "
                    "--no-install-recommends chromium chromium-driver`; elsewhere run "
                    "`sudo apt-get install chromium`.", pytrace=False)
    return path


def _seed(db: Path) -> dict[str, str]:
    store = remem.open(db)
    try:
        mem = store.create_memory("m1")
        tokens = {name: Tokens(store).create("m1", role, subject, label=name)[0]
                  for name, (role, subject) in TOKENS.items()}
        tokens["fresh_admin"] = Tokens(store).create("m2", "admin", "admin")[0]
        mem.remember("user:alice", "home_city", "Paris",
                     source={"id": "turn-1", "text": "I live in Paris.", "role": "user"})
        mem.remember("user:alice", "home_city", "Lyon",
                     source={"id": "turn-2", "text": "We moved to Lyon last spring.",
                             "role": "user"})
        mem.remember("user:alice", "diet", "vegetarian", kind="preference",
                     source={"id": "turn-3", "text": "I am vegetarian.", "role": "user"})
        mem.remember("user:alice", "nickname", SCRIPT,
                     source={"id": "turn-4", "text": f"Call me {SCRIPT}", "role": "user"})
        mem.remember_many([{"scope": "user:bob", "key": f"topic_{i:02d}",
                             "value": f"note {i}"} for i in range(30)])
    finally:
        store.close()
    return tokens


@pytest.fixture(scope="module")
def site(tmp_path_factory) -> Iterator[Site]:
    db = tmp_path_factory.mktemp("ui") / "remem.db"
    tokens = _seed(db)
    with Server(db, startup_s=60) as srv:
        yield Site(srv, tokens)


@pytest.fixture(scope="module")
def browser():
    path = _chromium()
    from playwright.sync_api import sync_playwright

    with sync_playwright() as pw:
        b = pw.chromium.launch(executable_path=path, args=CHROMIUM_ARGS)
        try:
            yield b
        finally:
            b.close()


@pytest.fixture
def ctx(browser):
    """A fresh browser context (its own cookies) at 1280×800."""
    c = browser.new_context(viewport={"width": 1280, "height": 800})
    c.set_default_timeout(15_000)
    yield c
    c.close()


