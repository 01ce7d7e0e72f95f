"""Round-6 probe: ``remem serve`` served FastAPI's ``/docs`` (Swagger UI) and ``/redoc``,
pages that load their scripts from a third-party CDN (``cdn.jsdelivr.net``, no integrity
hashes, no Content-Security-Policy) on the *same origin* as the manage view. A script on
that origin can fetch ``/ui/...`` with the signed-in user's cookie (same-origin requests
carry it; ``HttpOnly`` only hides it from ``document.cookie``), read every page and post
its forms with their CSRF tokens: whoever controls the CDN response controls every manage
view session that opens ``/docs``. And offline (README: "no CDN, works offline") the pages
are blank. Unknown routes even pointed users to ``/docs``. The API description stays at
``/openapi.json``. Real server on loopback, real SQLite file."""

from __future__ import annotations

import pytest

from security.probe4_kit import Probe


@pytest.fixture(scope="module")
def probe(tmp_path_factory):
    p = Probe(tmp_path_factory.mktemp("docs"))
    yield p
    p.close()


@pytest.mark.parametrize("path", ["/docs", "/redoc", "/docs/oauth2-redirect"])
def test_no_page_loads_third_party_scripts_on_the_servers_origin(probe, path):
    r = probe.http.get(path)
    assert "cdn." not in r.text and "<script" not in r.text
    assert r.status_code == 404


def test_the_openapi_document_is_still_served_and_named_by_errors(probe):
    assert probe.http.get("/openapi.json").json()["info"]["title"] == "remem"
    err = probe.http.get("/no-such-route").json()["error"]
    assert err["code"] == "not_found" and "/openapi.json" in err["message"]
