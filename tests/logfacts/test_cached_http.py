"""The http-api refresh handler against a real HTTP server on loopback: conditional GET,
200 / 304 / 500 / timeout / redirect, and the operator's allow-list (no SSRF)."""

from __future__ import annotations

import time

import pytest

from remem.errors import ConfigInvalid
from remem.ports import RefreshCheck, RefreshHandler
from remem.providers.refresh_http import HttpRefreshHandler

from .cached_kit import source_server  # noqa: F401 - fixture


def _check(uri: str, etag: str | None = None, timeout_s: float = 5.0) -> RefreshCheck:
    return RefreshCheck(kind="http-api", uri=uri, etag=etag, source_version=None,
                        timeout_s=timeout_s)


def test_200_gives_the_json_body_and_the_etag(source_server):
    source_server.resources["/rate"] = {"body": {"eur_usd": 1.09}, "etag": '"v2"'}
    h = HttpRefreshHandler(["loopback"])
    assert isinstance(h, RefreshHandler)
    ans = h.check(_check(source_server.url("/rate")))
    assert (ans.state, ans.value, ans.etag) == ("changed", {"eur_usd": 1.09}, '"v2"')


def test_a_text_body_is_a_trimmed_string(source_server):
    source_server.resources["/city"] = {"body": "Lyon\n", "type": "text/plain"}
    ans = HttpRefreshHandler(["loopback"]).check(_check(source_server.url("/city")))
    assert (ans.state, ans.value) == ("changed", "Lyon")


def test_the_stored_etag_is_sent_and_304_means_unchanged(source_server):
    source_server.resources["/rate"] = {"body": 1.09, "etag": '"v2"'}
    ans = HttpRefreshHandler(["loopback"]).check(_check(source_server.url("/rate"), '"v2"'))
    assert ans.state == "unchanged"
    assert source_server.log == [("/rate", '"v2"')]


def test_an_error_status_fails_with_a_reason_naming_no_host(source_server):
    source_server.resources["/rate"] = {"status": 500, "body": "boom"}
    ans = HttpRefreshHandler(["loopback"]).check(_check(source_server.url("/rate")))
    assert ans.state == "failed" and "HTTP 500" in ans.reason
    assert "127.0.0.1" not in ans.reason and "/rate" not in ans.reason


def test_a_slow_source_fails_within_the_deadline(source_server):
    source_server.resources["/slow"] = {"body": 1, "delay_s": 2.0}
    started = time.monotonic()
    ans = HttpRefreshHandler(["loopback"]).check(_check(source_server.url("/slow"),
                                                        timeout_s=0.3))
    assert ans.state == "failed" and "did not answer" in ans.reason
    assert time.monotonic() - started < 1.5


def test_a_redirect_is_not_followed(source_server):
    source_server.resources["/moved"] = {"status": 302, "location": "/rate"}
    source_server.resources["/rate"] = {"body": 1}
    ans = HttpRefreshHandler(["loopback"]).check(_check(source_server.url("/moved")))
    assert ans.state == "failed" and "redirect" in ans.reason
    assert [p for p, _ in source_server.log] == ["/moved"]


def test_by_default_nothing_is_fetched(source_server):
    source_server.resources["/rate"] = {"body": 1}
    ans = HttpRefreshHandler().check(_check(source_server.url("/rate")))
    assert ans.state == "failed" and "not allowed" in ans.reason
    assert source_server.log == []


@pytest.mark.parametrize("allowed, uri, ok", [
    (["https://api.example.com/v1/"], "https://api.example.com/v1/rate", True),
    (["https://api.example.com/v1/"], "https://api.example.com/v2/rate", False),
    (["https://api.example.com/v1/"], "http://api.example.com/v1/rate", False),
    (["https://api.example.com/v1/"], "https://api.example.com:8443/v1/rate", False),
    (["https://api.example.com/v1/"], "https://api.example.com.evil.test/v1/", False),
    (["https://api.example.com/v1/"], "https://api.example.com/v1/%2e%2e/admin", False),
    (["https://api.example.com/v1/"], "https://api.example.com/v1/.%2E/admin", False),
    (["https://api.example.com/v1/"], "https://api.example.com/v1/..%2fadmin", False),
    (["https://api.example.com/v1/"], "https://api.example.com/v1/%2e/rate", False),
    (["https://api.example.com/v1/"], "https://api.example.com/v1/%5c..%5cadmin", False),
    (["https://api.example.com/v1"], "https://api.example.com/v1/rate", True),
    (["https://api.example.com/v1"], "https://api.example.com/v1", True),
    (["https://api.example.com/v1"], "https://api.example.com/v1evil/rate", False),
    (["loopback"], "http://127.0.0.1:9/x", True),
    (["loopback"], "http://[::1]:9/x", True),
    (["loopback"], "http://10.0.0.5/x", False),
    (["loopback"], "http://169.254.169.254/latest/meta-data", False),
    (["loopback"], "file:///etc/passwd", False),
    (["loopback"], "gopher://127.0.0.1/", False),
    (["loopback"], None, False),
])
def test_the_allow_list_matches_scheme_host_port_and_path_prefix(allowed, uri, ok):
    assert HttpRefreshHandler(allowed).permits(uri) is ok


def test_an_allow_list_entry_that_is_not_an_http_prefix_is_refused():
    with pytest.raises(ConfigInvalid):
        HttpRefreshHandler(["ftp://files.example.com/"])
    with pytest.raises(ConfigInvalid):
        HttpRefreshHandler(["https://user:pw@api.example.com/"])
