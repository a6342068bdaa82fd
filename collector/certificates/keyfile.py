"""The signing key's file: created once with mode 0600, re-read when replaced.

CERTS.md section 1: the key lives in a file, never in the database.
Processes that start together on a missing file create ONE key: the new key
is written to a private temporary file and linked to the final name, which
fails for all but the first (`os.link` does not replace); the others read
the winner's key. `badge-collector signing-key rotate` replaces the file
(keeping the old one as FILE.<kid>.retired), and a running collector sees
the new file at its next signature (one stat per signature, ~2 us), so a
rotation needs no restart.
"""

from __future__ import annotations

import os
import tempfile
import threading
from dataclasses import dataclass
from pathlib import Path

from collector.certificates.keys import BadKey, SigningKey, from_pem, generate, to_pem

DEFAULT_NAME = "badge-signing-key.pem"  # beside a SQLite database file (CERTS.md section 1)


class KeyFileError(Exception):
    """The key file cannot be read or written; the message says which and why."""


def read_key(path: Path) -> SigningKey:
    try:
        data = path.read_bytes()
    except OSError as exc:
        raise KeyFileError(f"cannot read the signing key {path}: {exc.strerror}") from None
    try:
        return from_pem(data)
    except BadKey as exc:
        raise KeyFileError(f"{path} is not an Ed25519 signing key: {exc}") from None


def write_new(path: Path, key: SigningKey, *, replace: bool) -> None:
    """Write `key` to `path` (mode 0600) all at once: readers see the old
    file or the whole new one. Without `replace`, FileExistsError when
    `path` exists."""
    folder = path.parent
    try:
        folder.mkdir(parents=True, exist_ok=True)
        handle, temporary = tempfile.mkstemp(prefix=".badge-key-", dir=folder)
    except OSError as exc:
        raise KeyFileError(f"cannot write a signing key in {folder}: {exc.strerror}") from None
    try:
        with os.fdopen(handle, "wb") as out:  # mkstemp made it 0600
            out.write(to_pem(key))
            out.flush()
            os.fsync(out.fileno())
        if replace:
            os.replace(temporary, path)
        else:
            os.link(temporary, path)  # FileExistsError if another process was first
    except FileExistsError:
        raise
    except OSError as exc:
        raise KeyFileError(f"cannot write the signing key {path}: {exc.strerror}") from None
    finally:
        if os.path.exists(temporary):
            os.unlink(temporary)


def load_or_create(path: Path) -> tuple[SigningKey, bool]:
    """The key in `path`, created first if the file is missing; whether it was created."""
    if not path.exists():
        key = generate()
        try:
            write_new(path, key, replace=False)
            return key, True
        except FileExistsError:
            pass  # another process created it first: use theirs
    return read_key(path), False


@dataclass(frozen=True, slots=True)
class _Stamp:
    inode: int
    mtime_ns: int
    size: int


def _stamp(path: Path) -> _Stamp | None:
    try:
        found = path.stat()
    except OSError:
        return None
    return _Stamp(found.st_ino, found.st_mtime_ns, found.st_size)


class KeyFile:
    """The signing key of one file, or of none (a database in memory: a key
    of this process only)."""

    def __init__(self, path: Path | None, key: SigningKey, *, created: bool = False) -> None:
        self.path = path
        self.created = created
        self._key = key
        self._stamp = _stamp(path) if path is not None else None
        self._lock = threading.Lock()

    @classmethod
    def open(cls, path: Path) -> KeyFile:
        key, created = load_or_create(path)
        return cls(path, key, created=created)

    def current(self) -> SigningKey:
        """The key in the file now: re-read when the file was replaced. While
        a replaced file cannot be read (caught half-copied) the key in hand
        signs, and the next call looks again."""
        if self.path is None:
            return self._key
        stamp = _stamp(self.path)
        if stamp == self._stamp or stamp is None:
            return self._key
        with self._lock:
            try:
                self._key = read_key(self.path)
            except KeyFileError:
                return self._key
            self._stamp = stamp
            return self._key


def retired_path(path: Path, kid: str) -> Path:
    """Where rotation keeps an old key (CERTS.md section 1: FILE.<kid>.retired)."""
    return path.with_name(f"{path.name}.{kid}.retired")


def replace_key(path: Path, old: SigningKey | None, new: SigningKey) -> None:
    """`new` in `path`; `old`, the key there now (if any), kept as FILE.<kid>.retired."""
    if old is not None:
        kept = retired_path(path, old.kid)
        try:
            os.link(path, kept)
        except FileExistsError:
            pass  # rotated before and put back by hand: the copy is already there
        except OSError as exc:
            raise KeyFileError(f"cannot keep the old key as {kept}: {exc.strerror}") from None
    write_new(path, new, replace=True)
