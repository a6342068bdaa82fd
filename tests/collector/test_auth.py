"""One auth module for both doors and the API (api/auth.py), and the ingest
path loads no web framework with it."""

from __future__ import annotations

import base64
import subprocess
import sys

from api.auth import key_from_basic, key_from_headers


def test_a_key_comes_from_bearer_or_x_api_key() -> None:
    assert key_from_headers({"authorization": "Bearer  abc "}) == "abc"
    assert key_from_headers({"authorization": "bearer abc"}) == "abc"
    assert key_from_headers({"x-api-key": " k "}) == "k"
    assert key_from_headers({"authorization": "Basic abc"}) is None
    assert key_from_headers({"authorization": "Bearer "}) is None
    assert key_from_headers({}) is None


def basic(text: str) -> dict[str, str]:
    return {"authorization": "Basic " + base64.b64encode(text.encode()).decode()}


def test_the_langfuse_secret_key_is_the_password_of_basic() -> None:
    assert key_from_basic(basic("pk-lf-1:bdg_secret")) == "bdg_secret"
    assert key_from_basic(basic(":bdg_secret:with:colons")) == "bdg_secret:with:colons"
    assert key_from_basic({"authorization": "basic " + basic("p:k")["authorization"][6:]}) == "k"
    for refused in (basic("no-colon"), basic("pk:"), basic("pk:  ")):
        assert key_from_basic(refused) is None
    for refused_header in ("Basic", "Basic !!!", "Basic /w==", "Bearer abc", ""):
        assert key_from_basic({"authorization": refused_header}) is None  # /w==: not UTF-8
    assert key_from_basic({"x-api-key": "k"}) is None


def test_the_ingest_path_and_the_decoders_import_no_web_framework() -> None:
    probe = (
        "import sys; import collector.ingest.path, collector.ingest.decoding, "
        "collector.receivers.grpc_door; "
        "print(sorted(m for m in ('fastapi', 'starlette', 'uvicorn') if m in sys.modules))"
    )
    found = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True)
    assert found.returncode == 0, found.stderr
    assert found.stdout.strip() == "[]"
