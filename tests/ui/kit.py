"""Helpers for the browser tests: the served site, tokens by name, sign-in, screenshots."""

from __future__ import annotations

import json
import os
from pathlib import Path

import httpx

from remem.testing.served import Server

CHROMIUM = os.environ.get("REMEM_CHROMIUM", "/usr/bin/chromium")
CHROMIUM_ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic",
                 "--no-first-run", "--disable-background-networking",
                 "--disable-component-update", "--disable-sync"]
SHOTS = Path(__file__).resolve().parents[2] / "bench-out" / "ui"
SCRIPT = "<script>alert(1)</script>"

#: name -> (role, subject) of the tokens of memory m1 (and one admin of m2, not yet created)
TOKENS = {"admin": ("admin", "admin"), "writer": ("writer", "user:alice"),
          "reader": ("reader", "user:alice"), "bob": ("writer", "user:bob")}


class Site:
    """The served app, its tokens by name and an API client."""

    def __init__(self, server: Server, tokens: dict[str, str]) -> None:
        self.server, self.tokens, self.base = server, tokens, server.base

    def api(self, method: str, path: str, who: str = "admin", **kw) -> httpx.Response:
        return httpx.request(method, self.base + path, timeout=30,
                             headers={"Authorization": f"Bearer {self.tokens[who]}"}, **kw)

    def remember(self, scope: str, key: str, value, who: str = "admin", **body) -> dict:
        r = self.api("POST", "/memory/m1/items", who,
                     json={"scope": scope, "key": key, "value": value, **body})
        assert r.status_code == 200, r.text
        return r.json()


def sign_in(ctx, site: Site, who: str):
    """A page of ``ctx`` signed in as token ``who`` through the sign-in form."""
    page = ctx.new_page()
    page.goto(site.base + "/ui/login")
    page.fill("#token", site.tokens[who])
    page.click("button[type=submit]")
    page.wait_for_load_state()
    return page


def shot(page, name: str) -> None:
    SHOTS.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(SHOTS / f"{name}.png"), full_page=True)


def item_id(site: Site, scope: str, key: str) -> str:
    r = site.api("GET", "/memory/m1/inspect", params={"scope": scope, "key": key})
    assert r.status_code == 200, r.text
    return json.loads(r.text)["current"][0]["item_id"]
