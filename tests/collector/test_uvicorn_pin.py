"""The HTTP door subclasses uvicorn's internal HttpToolsProtocol
(collector/receivers/http_protocol.py): its head and body deadlines and its
connection bound live in overrides of about a dozen of uvicorn's callbacks.
An upgrade that changed one of them could drop those defences with every
other test green, so pyproject.toml pins the uvicorn it was written and
tested against, and this test fails when the installed uvicorn is outside
the pin or a method the door overrides (or relies on) changed: its
signature, or its code. Then read the new uvicorn's protocol, adapt the
door, run tests/integration/test_http_door_outages.py and record the new
fingerprints here."""

from __future__ import annotations

import hashlib
import inspect
import tomllib
from importlib.metadata import version
from pathlib import Path

from packaging.requirements import Requirement
from uvicorn.protocols.http.httptools_impl import HttpToolsProtocol, RequestResponseCycle

from collector.receivers.http_protocol import GuardedHttpProtocol

PYPROJECT = Path(__file__).resolve().parents[2] / "pyproject.toml"
TESTED = "0.55.0"
# method -> (signature, first 16 hex of the SHA-256 of its source), in uvicorn TESTED
OVERRIDDEN = {
    "__init__": (
        "(self, config: 'Config', server_state: 'ServerState', app_state: 'dict[str, Any]', "
        "_loop: 'asyncio.AbstractEventLoop | None' = None) -> 'None'",
        "4f08999410347141",
    ),
    "connection_lost": ("(self, exc: 'Exception | None') -> 'None'", "c91a4c9bf2e29c55"),
    "connection_made": ("(self, transport: 'asyncio.Transport') -> 'None'", "6efb565ff3d36b91"),
    "data_received": ("(self, data: 'bytes') -> 'None'", "010a7ae59a5d3b1a"),
    "on_headers_complete": ("(self) -> 'None'", "1ea8589acfad92d8"),
    "on_message_begin": ("(self) -> 'None'", "96d377fdc7c2baef"),
    "on_message_complete": ("(self) -> 'None'", "1fbad42dc31fc01f"),
    "on_response_complete": ("(self) -> 'None'", "64e254f28e389e76"),
    "shutdown": ("(self) -> 'None'", "d7351fa33f00d430"),
    "timeout_keep_alive_handler": ("(self) -> 'None'", "8b53bf5f2e202970"),
}
# Called, not overridden: re-arms uvicorn's keep-alive timer (GuardedHttpProtocol._idle).
CALLED = {"_unset_keepalive_if_required": ("(self) -> 'None'", "00a6a4e47214e68e")}
# What the door reads and sets on uvicorn's objects, besides the methods above.
PROTOCOL_ATTRIBUTES = ("cycle", "transport", "connections", "loop", "timeout_keep_alive_task")
CYCLE_ATTRIBUTES = (
    "response_complete",
    "response_started",
    "keep_alive",
    "disconnected",
    "message_event",
    "scope",
)


def fingerprint(function: object) -> tuple[str, str]:
    source = inspect.getsource(function)  # type: ignore[arg-type]
    signature = str(inspect.signature(function))  # type: ignore[arg-type]
    return signature, hashlib.sha256(source.encode()).hexdigest()[:16]


def pinned() -> Requirement:
    dependencies = tomllib.loads(PYPROJECT.read_text())["project"]["dependencies"]
    return next(r for d in dependencies if (r := Requirement(d)).name == "uvicorn")


def test_pyproject_pins_uvicorn_to_a_range_with_an_upper_bound_that_holds_the_tested_one() -> None:
    pin = pinned().specifier
    assert any(spec.operator in ("<", "<=", "==", "~=") for spec in pin), f"no upper bound: {pin}"
    assert pin.contains(TESTED)
    assert not pin.contains("0.30.0")  # the range the door was never tested on


def test_the_installed_uvicorn_is_inside_the_pin() -> None:
    installed = version("uvicorn")
    assert pinned().specifier.contains(installed), (
        f"uvicorn {installed} is outside {pinned()}: the HTTP door was tested on {TESTED}"
    )


def test_the_methods_the_http_door_overrides_are_the_ones_it_was_written_against() -> None:
    overridden = {
        name
        for name, member in vars(GuardedHttpProtocol).items()
        if callable(member) and callable(getattr(HttpToolsProtocol, name, None))
    }
    # a new override needs its fingerprint recorded; a removed one, its entry dropped
    assert overridden == OVERRIDDEN.keys()
    for name, expected in {**OVERRIDDEN, **CALLED}.items():
        assert fingerprint(getattr(HttpToolsProtocol, name)) == expected, (
            f"uvicorn's HttpToolsProtocol.{name} changed since {TESTED}"
        )


def test_the_uvicorn_attributes_the_http_door_relies_on_are_still_set() -> None:
    protocol_init = inspect.getsource(HttpToolsProtocol.__init__)
    for name in PROTOCOL_ATTRIBUTES:
        assert f"self.{name}" in protocol_init, f"HttpToolsProtocol no longer sets {name}"
    cycle_init = inspect.getsource(RequestResponseCycle.__init__)
    for name in CYCLE_ATTRIBUTES:
        assert f"self.{name}" in cycle_init, f"RequestResponseCycle no longer sets {name}"
