"""The `regex` grader's search, bounded in time (docs/screening.md "regex").

SCREEN.md section 2 grades with Python's `re`, a backtracking engine: a
suite pattern such as `^(a+)+$` against a 41-character answer took 79 s of
CPU (issue 37 item 11), and a search in Python cannot be interrupted from
another thread. So the search runs in a child process, one line of JSON in
and one line out, and a search still running after `limit_s` is ended by
killing the child; the next search starts a new one. The grade then fails,
and the screener says so. Python's `re` itself, not a second engine, keeps
every pattern SCREEN.md allows meaning what it means there (Unicode `\\w`,
lookarounds, backreferences).

The child runs the standard library only (`-I -S`: no site-packages, no
environment), so it starts in ~20 ms wherever the screener runs from.
"""

from __future__ import annotations

import json
import os
import select
import subprocess
import sys
import threading
import time
from typing import Final

# Longer than any sane search of a 1 MiB answer takes (a few ms; ~0.3 s for a
# pattern that scans it a few hundred times), short beside a task's timeout.
LIMIT_S: Final = 2.0

_CHILD: Final = """
import json, re, sys
for line in sys.stdin:
    request = json.loads(line)
    try:
        found = b"1" if re.search(request[0], request[1]) is not None else b"0"
    except re.error:
        found = b"e"
    sys.stdout.buffer.write(found + b"\\n")
    sys.stdout.buffer.flush()
"""


class SearchGaveUp(Exception):
    """The search ran past the limit (or the child died): no answer either way."""


class RegexSearcher:
    """`re.search(pattern, text) is not None`, in a child process, at most `limit_s` each.

    Thread-safe: searches take turns on one child (the screener grades in
    threads). A pattern that does not compile does not match, as the pure
    grader says."""

    def __init__(self, limit_s: float = LIMIT_S) -> None:
        self.limit_s = limit_s
        self._lock = threading.Lock()
        self._child: subprocess.Popen[bytes] | None = None

    def search(self, pattern: str, text: str) -> bool:
        """True when the pattern matches; SearchGaveUp past the limit."""
        line = json.dumps([pattern, text]).encode() + b"\n"  # ASCII: lone surrogates escaped
        with self._lock:
            child = self._running()
            assert child.stdin is not None and child.stdout is not None
            try:
                child.stdin.write(line)
                child.stdin.flush()
            except OSError:
                self._end()
                raise SearchGaveUp("the search process ended") from None
            answer = self._read_line(child.stdout.fileno(), time.monotonic() + self.limit_s)
            if answer is None:
                self._end()
                raise SearchGaveUp(f"no answer within {self.limit_s:g} s")
        return answer == b"1"

    def close(self) -> None:
        with self._lock:
            self._end()

    def _running(self) -> subprocess.Popen[bytes]:
        if self._child is None or self._child.poll() is not None:
            self._child = subprocess.Popen(
                [sys.executable, "-I", "-S", "-c", _CHILD],
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=subprocess.DEVNULL,
                bufsize=0,
            )
        return self._child

    def _read_line(self, fd: int, deadline: float) -> bytes | None:
        """The child's answer line, or None when the deadline passed or it died."""
        received = b""
        while not received.endswith(b"\n"):
            left = deadline - time.monotonic()
            if left <= 0 or not select.select([fd], [], [], left)[0]:
                return None
            chunk = os.read(fd, 64)
            if not chunk:
                return None
            received += chunk
        return received.strip()

    def _end(self) -> None:
        child, self._child = self._child, None
        if child is None:
            return
        child.kill()
        child.wait()
        for stream in (child.stdin, child.stdout):
            if stream is not None:
                stream.close()
