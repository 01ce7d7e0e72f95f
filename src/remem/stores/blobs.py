"""The file-backed blob store shipped with remem (``blob://local/<bucket>/<key>``).

Blobs are files under a root directory (by default the memory's data dir: ``<db file>.blobs``
beside a SQLite file; for PostgreSQL the operator names one, ``remem.open(url,
blob_dir=...)`` or ``REMEM_BLOB_DIR``): ``<root>/<bucket>/<key>``. A write goes to a
temporary file in the same directory (mode 0600), is flushed and fsynced, then renamed over the
target, so a reader sees the whole blob or none. Bucket and key are plain names (letters,
digits, ``-``, ``_``, ``.``; not starting with a dot), so a reference never escapes the root.
"""

from __future__ import annotations

import os
import re
import tempfile
import time
from collections.abc import Collection
from pathlib import Path

from remem.errors import InvalidInput, NotFound

_NAME = re.compile(r"^[A-Za-z0-9_-][A-Za-z0-9._-]{0,199}\Z")
PREFIX = "blob://local/"


class LocalBlobStore:
    """Blobs as files under ``root`` (created on first write, mode 0700).

    Args:
        root: directory holding one sub-directory per bucket.
    """

    provider = "local"

    def __init__(self, root: str | os.PathLike[str]) -> None:
        self.root = Path(root)

    def path(self, ref: str) -> Path:
        """The file of a reference.

        Raises:
            InvalidInput: not ``blob://local/<bucket>/<key>`` with plain names.
        """
        if not isinstance(ref, str) or not ref.startswith(PREFIX):
            raise InvalidInput("contentRef must look like 'blob://local/<bucket>/<key>'.",
                               field="contentRef")
        parts = ref[len(PREFIX):].split("/")
        if len(parts) != 2 or not all(_NAME.match(p) for p in parts):
            raise InvalidInput("contentRef must look like 'blob://local/<bucket>/<key>' with "
                               "plain names (letters, digits, '-', '_', '.').",
                               field="contentRef")
        return self.root / parts[0] / parts[1]

    def put(self, bucket: str, key: str, data: bytes) -> str:
        ref = f"{PREFIX}{bucket}/{key}"
        target = self.path(ref)
        target.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
        fd, tmp = tempfile.mkstemp(dir=target.parent, prefix=".tmp-")  # mode 0600
        try:
            with os.fdopen(fd, "wb") as f:
                f.write(data)
                f.flush()
                os.fsync(f.fileno())
            os.chmod(tmp, 0o600)
            os.replace(tmp, target)
        except BaseException:
            Path(tmp).unlink(missing_ok=True)
            raise
        _fsync_dir(target.parent)
        return ref

    def get(self, ref: str) -> bytes:
        try:
            return self.path(ref).read_bytes()
        except FileNotFoundError:
            raise NotFound("The blob of this fact is not stored (it was erased, or never "
                           "written); the fact has no content to fetch.") from None

    def delete(self, ref: str) -> bool:
        p = self.path(ref)
        try:
            p.unlink()
        except FileNotFoundError:
            return False
        _fsync_dir(p.parent)
        return True

    def exists(self, ref: str) -> bool:
        return self.path(ref).exists()

    def sweep_orphans(self, bucket: str, referenced: Collection[str], *, grace_s: float,
                      now_s: float | None = None) -> int:
        """Deletes the files of ``bucket`` that no reference in ``referenced`` names and that
        were last modified more than ``grace_s`` seconds before ``now_s`` (default: the wall
        clock, which is what file mtimes are in). Left-over temporary files of an interrupted
        write count too. A younger file is kept, so a write between its blob and its commit
        is never swept.

        Returns:
            How many files were deleted.
        """
        folder = self.root / bucket
        if not _NAME.match(bucket) or not folder.is_dir():
            return 0
        cutoff = (time.time() if now_s is None else now_s) - grace_s
        keep = {self.path(r) for r in referenced if r.startswith(f"{PREFIX}{bucket}/")}
        deleted = 0
        for entry in folder.iterdir():
            try:
                if entry in keep or not entry.is_file() or entry.stat().st_mtime > cutoff:
                    continue
                entry.unlink()
            except FileNotFoundError:
                continue
            deleted += 1
        if deleted:
            _fsync_dir(folder)
        return deleted


def _fsync_dir(path: Path) -> None:
    """Makes a rename or unlink in ``path`` durable (best effort where unsupported)."""
    try:
        fd = os.open(path, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)


def default_blob_root(adapter: object) -> Path | None:
    """The data dir of a store's blobs: ``REMEM_BLOB_DIR``, else ``<sqlite file>.blobs``;
    None when neither applies (PostgreSQL without a configured directory)."""
    env = os.environ.get("REMEM_BLOB_DIR")
    if env:
        return Path(env)
    path = getattr(adapter, "path", None)
    if isinstance(path, str) and path and path != ":memory:":
        return Path(path + ".blobs")
    return None


__all__ = ["LocalBlobStore", "default_blob_root"]
