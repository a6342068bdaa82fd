"""One auth module for both doors and the API (api/auth.py), and the ingest
path loads no web framework with it."""

from __future__ import annotations

import subprocess
import sys

from api.auth import key_from_headers


def test_a_key_comes_from_bearer_or_x_api_key() -> None:
    assert key_from_headers({"authorization": "Bearer  abc "}) == "abc"
    assert key_from_headers({"authorization": "bearer abc"}) == "abc"
    assert key_from_headers({"x-api-key": " k "}) == "k"
    assert key_from_headers({"authorization": "Basic abc"}) is None
    assert key_from_headers({"authorization": "Bearer "}) is None
    assert key_from_headers({}) is None


def test_the_ingest_path_and_the_decoders_import_no_web_framework() -> None:
    probe = (
        "import sys; import collector.ingest.path, collector.ingest.decoding, "
        "collector.receivers.grpc_door; "
        "print(sorted(m for m in ('fastapi', 'starlette', 'uvicorn') if m in sys.modules))"
    )
    found = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True)
    assert found.returncode == 0, found.stderr
    assert found.stdout.strip() == "[]"
