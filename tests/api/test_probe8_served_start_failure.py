"""Round-8 probe: when ``remem serve`` failed to start, the test helper
``remem.testing.served.Server`` closed the server's stderr and then read it, so every such
failure surfaced as ``ValueError: read of closed file`` instead of the server's own message
(seen on a loaded machine: five tests/api set-ups). It now reads stderr before closing."""

from __future__ import annotations

import pytest

from remem.testing.served import Server


def test_a_server_that_cannot_start_reports_its_own_error(tmp_path):
    with pytest.raises(RuntimeError) as err:
        Server(tmp_path / "remem.db", ["--no-such-option"], startup_s=30)
    message = str(err.value)
    assert message.startswith("remem serve did not start: ")
    assert "no-such-option" in message, message
