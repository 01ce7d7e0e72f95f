"""Remote mode's edges: loopback origins only, redirects rejected, a private secrets file that
is read (never sourced), and no credential in any diagnostic."""

from __future__ import annotations

import json
import os
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest
from ikvkit import proposal

from remem.cli.remote import check_url, read_token
from remem.errors import InvalidInput

TOKEN = "rmm_0123456789abcdef_SuperSecretTokenValue"


@pytest.mark.parametrize("url", ["http://127.0.0.1:8080", "http://localhost:8080",
                                 "http://[::1]:8080", "http://127.0.0.2:9/"])
def test_loopback_http_origins_are_accepted(url):
    assert check_url(url).startswith("http://")


@pytest.mark.parametrize("url", ["https://127.0.0.1:8080", "http://10.0.0.1:8080",
                                 "http://example.com", "http://user:pw@127.0.0.1:8080",
                                 "http://127.0.0.1:8080/api", "http://127.0.0.1:8080/?x=1",
                                 "ftp://127.0.0.1", "http://127.0.0.1:99999",
                                 "http://0.0.0.0:8080"])
def test_other_urls_are_refused(url):
    with pytest.raises(InvalidInput) as exc:
        check_url(url)
    assert url not in exc.value.message


def _write(path, text, mode=0o600):
    path.write_text(text)
    path.chmod(mode)
    return str(path)


def test_the_secrets_file_is_read_not_sourced(tmp_path):
    marker = tmp_path / "sourced"
    f = _write(tmp_path / "c.env", f"touch {marker}\nOTHER=1\n"
                                    f"export INSTANTKV_APP_TOKEN='{TOKEN}'\n")
    assert read_token(f) == TOKEN
    assert not marker.exists()
    assert read_token(_write(tmp_path / "r.env", f"REMEM_TOKEN={TOKEN}\n")) == TOKEN


@pytest.mark.parametrize("mode", [0o640, 0o604, 0o660])
def test_a_group_or_world_accessible_secrets_file_is_refused(tmp_path, mode):
    f = _write(tmp_path / "c.env", f"INSTANTKV_APP_TOKEN={TOKEN}\n", mode)
    with pytest.raises(InvalidInput) as exc:
        read_token(f)
    assert "chmod 600" in exc.value.message and TOKEN not in exc.value.message


def test_a_fifo_as_secrets_file_is_refused_at_once_instead_of_waiting_for_a_writer(tmp_path):
    # found by probe 6: the open blocked until something wrote to the FIFO (forever)
    fifo = tmp_path / "secrets"
    os.mkfifo(fifo, 0o600)
    out: dict = {}

    def read():
        try:
            read_token(str(fifo))
        except InvalidInput as exc:
            out["error"] = str(exc)

    reader = threading.Thread(target=read, daemon=True)
    reader.start()
    reader.join(5)
    if reader.is_alive():  # unblock the old code's open so the thread ends
        with open(fifo, "wb"):
            pass
        reader.join(5)
        pytest.fail("read_token waited for a writer on a FIFO")
    assert "regular file" in out["error"]


def test_a_file_without_a_token_line_is_refused_without_echoing_it(tmp_path):
    f = _write(tmp_path / "c.env", f"SOME_TOKEN={TOKEN}\n")
    with pytest.raises(InvalidInput) as exc:
        read_token(f)
    assert TOKEN not in str(exc.value.to_dict())


class _Redirector:
    """A loopback HTTP server that answers everything with 302 to another loopback port,
    and counts the requests it gets."""

    def __init__(self) -> None:
        self.hits = 0
        owner = self

        class Handler(BaseHTTPRequestHandler):
            def _redirect(self) -> None:
                owner.hits += 1
                self.send_response(302)
                self.send_header("Location", "http://127.0.0.1:9/elsewhere")
                self.send_header("Content-Length", "0")
                self.end_headers()

            do_GET = do_POST = _redirect  # noqa: N815

            def log_message(self, *args: object) -> None:
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()


def test_redirects_are_rejected_and_no_diagnostic_holds_the_token(ikv, tmp_path):
    secrets = _write(tmp_path / "c.env", f"INSTANTKV_APP_TOKEN={TOKEN}\n")
    server = _Redirector()
    try:
        opts = ("--url", server.url, "--secrets-file", secrets, "--namespace", "knowledge",
                "--scope", "personal")
        r = ikv("inspect", "user", "response_style", options=opts)
        assert r.code != 0 and "redirect" in r.error()["error"]["message"]
        assert server.hits == 1  # the Location was never followed
        r = ikv("apply", "--file", "-", input=json.dumps(proposal()), options=opts)
        assert r.code != 0
        for out in (r.stdout, r.stderr):
            assert TOKEN not in out and server.url not in out
    finally:
        server.close()


def test_an_unreachable_server_says_what_to_do_without_the_url(ikv, tmp_path):
    from remem.testing.served import free_port

    secrets = _write(tmp_path / "c.env", f"INSTANTKV_APP_TOKEN={TOKEN}\n")
    url = f"http://127.0.0.1:{free_port()}"
    r = ikv("profile", options=("--url", url, "--secrets-file", secrets, "--namespace",
                                "knowledge"))
    body = r.error()
    assert r.code != 0 and body["error"]["code"] == "store_unavailable"
    assert "retry the identical JSON" in body["next_action"]
    assert url not in r.stderr and TOKEN not in r.stderr


def test_url_needs_a_secrets_file_and_there_is_no_token_option(ikv, monkeypatch):
    monkeypatch.setenv("INSTANTKV_APP_TOKEN", TOKEN)  # no environment override
    r = ikv("profile", options=("--url", "http://127.0.0.1:9", "--namespace", "knowledge"))
    assert r.code != 0 and r.error()["error"]["details"]["field"] == "secrets_file"
    r = ikv("--token", TOKEN, "profile")
    assert r.code != 0


def test_url_without_namespace_is_refused_instead_of_using_the_local_database(ikv):
    r = ikv("items", options=("--url", "http://127.0.0.1:9", "--memory", "knowledge"))
    assert r.code != 0 and r.error()["error"]["details"]["field"] == "namespace"
