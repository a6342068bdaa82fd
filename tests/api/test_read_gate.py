"""The read gate (api.read_gate, issue 39 item 4): a bounded number of reads
answered at once, keyless ones last; health never behind it.

The gate is driven as ASGI, around an app whose requests finish only when
the test lets them: which request runs, waits or is refused is then exact.
tests/integration/test_read_flood.py floods a real collector.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Awaitable, Callable
from typing import Any

from starlette.types import Message, Receive, Scope, Send

from api.auth import Principal
from api.read_gate import ReadGate, ReadLimits


class Keys:
    def authenticate(self, key: str) -> Principal | None:
        return Principal("owner", "agent") if key == "good" else None


class Held:
    """An app whose every request runs until `finish(path)`."""

    def __init__(self) -> None:
        self.running: list[str] = []
        self._done: dict[str, asyncio.Event] = {}

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        path = scope["path"]
        self.running.append(path)
        await self._done.setdefault(path, asyncio.Event()).wait()
        await send({"type": "http.response.start", "status": 200, "headers": []})
        await send({"type": "http.response.body", "body": b"ok"})

    def finish(self, path: str) -> None:
        self._done.setdefault(path, asyncio.Event()).set()


class Answer:
    def __init__(self) -> None:
        self.status = 0
        self.headers: dict[str, str] = {}
        self.body = b""


def request(gate: ReadGate, path: str, key: str | None = None) -> asyncio.Task[Answer]:
    headers = [(b"authorization", f"Bearer {key}".encode())] if key else []
    scope: Scope = {"type": "http", "method": "GET", "path": path, "headers": headers}
    answer = Answer()

    async def receive() -> Message:
        return {"type": "http.request", "body": b"", "more_body": False}

    async def send(message: Message) -> None:
        if message["type"] == "http.response.start":
            answer.status = message["status"]
            answer.headers = {k.decode(): v.decode() for k, v in message["headers"]}
        else:
            answer.body += message.get("body", b"")

    async def run() -> Answer:
        await gate(scope, receive, send)
        return answer

    return asyncio.get_running_loop().create_task(run())


async def settle() -> None:
    """Let every task run until it waits (key checks run on a thread)."""
    for _ in range(50):
        await asyncio.sleep(0.01)


def scenario(
    test: Callable[[Held, ReadGate], Awaitable[None]], **limits: Any
) -> Callable[[], None]:
    def run() -> None:
        app = Held()
        gate = ReadGate(app, ReadLimits(**limits), Keys(), exempt=["/v1/traces"])
        asyncio.run(asyncio.wait_for(test(app, gate), 30))

    return run


async def _past_the_slots_requests_wait_and_then_run_in_turn(app: Held, gate: ReadGate) -> None:
    tasks = []
    for path in ("/a", "/b", "/c"):  # one after the other: keys are checked on threads
        tasks.append(request(gate, path, "good"))
        await settle()
    first, second, third = tasks
    assert app.running == ["/a", "/b"]  # two slots; the third waits
    app.finish("/a")
    await settle()
    assert app.running == ["/a", "/b", "/c"]
    app.finish("/b")
    app.finish("/c")
    assert [(await t).status for t in (first, second, third)] == [200, 200, 200]


test_past_the_slots_requests_wait_and_then_run_in_turn = scenario(
    _past_the_slots_requests_wait_and_then_run_in_turn, slots=2, line=4
)


async def _keyless_reads_hold_half_the_slots_and_a_freed_slot_goes_to_a_key_first(
    app: Held, gate: ReadGate
) -> None:
    keyless = [request(gate, f"/k{n}") for n in range(3)]
    await settle()
    assert app.running == ["/k0", "/k1"]  # half of 4 slots; /k2 waits
    made_up = request(gate, "/made-up", "not-a-key")  # counts as keyless: waits too
    keyed = []
    for path in ("/key0", "/key1"):  # one after the other: keys are checked on threads
        keyed.append(request(gate, path, "good"))
        await settle()
    assert app.running == ["/k0", "/k1", "/key0", "/key1"]
    late_key = request(gate, "/key2", "good")
    await settle()
    app.finish("/k0")  # the slot goes to the keyed caller that waits, not to /k2
    await settle()
    assert app.running[4:] == ["/key2"]
    for path in ("/k1", "/key0", "/key1", "/key2", "/k2", "/made-up"):
        app.finish(path)
    await settle()
    assert set(app.running) == {"/k0", "/k1", "/k2", "/made-up", "/key0", "/key1", "/key2"}
    statuses = [(await t).status for t in [*keyless, made_up, *keyed, late_key]]
    assert statuses == [200] * 7


test_keyless_reads_hold_half_the_slots_and_a_freed_slot_goes_to_a_key_first = scenario(
    _keyless_reads_hold_half_the_slots_and_a_freed_slot_goes_to_a_key_first, slots=4, line=8
)


async def _past_the_line_reads_are_refused_at_once_with_retry_after(
    app: Held, gate: ReadGate
) -> None:
    running = [request(gate, "/api/v1/agents"), request(gate, "/")]  # keyless slots: 1
    await settle()
    assert app.running == ["/api/v1/agents"]  # the page waits: keyless line is 1
    api, page = request(gate, "/api/v1/agents"), request(gate, "/agents/x")
    api_answer, page_answer = await api, await page
    assert api_answer.status == page_answer.status == 503
    assert api_answer.headers["retry-after"] == page_answer.headers["retry-after"] == "1"
    assert "retry later" in json.loads(api_answer.body)["detail"]
    assert page_answer.headers["content-type"].startswith("text/html")
    assert b"retry later" in page_answer.body
    keyed = request(gate, "/api/v1/runs", "good")  # a key still gets a slot
    await settle()
    assert app.running == ["/api/v1/agents", "/api/v1/runs"]
    for path in ("/api/v1/agents", "/", "/api/v1/runs"):
        app.finish(path)
    assert [(await t).status for t in [*running, keyed]] == [200, 200, 200]


test_past_the_line_reads_are_refused_at_once_with_retry_after = scenario(
    _past_the_line_reads_are_refused_at_once_with_retry_after, slots=2, line=2
)


async def _a_read_that_waits_too_long_is_refused(app: Held, gate: ReadGate) -> None:
    holding = request(gate, "/a", "good")
    await settle()
    waiting = await request(gate, "/b", "good")  # its 0.2 s pass: refused
    assert waiting.status == 503
    app.finish("/a")
    assert (await holding).status == 200
    assert app.running == ["/a"]  # the refused one never ran


test_a_read_that_waits_too_long_is_refused = scenario(
    _a_read_that_waits_too_long_is_refused, slots=1, line=4, wait_s=0.2
)


async def _health_and_the_otlp_door_are_never_behind_the_gate(app: Held, gate: ReadGate) -> None:
    request(gate, "/a", "good")
    await settle()
    passing = [request(gate, path) for path in ("/healthz", "/readyz", "/v1/traces")]
    await settle()
    assert app.running == ["/a", "/healthz", "/readyz", "/v1/traces"]
    for path in ("/a", "/healthz", "/readyz", "/v1/traces"):
        app.finish(path)
    assert [(await t).status for t in passing] == [200, 200, 200]


test_health_and_the_otlp_door_are_never_behind_the_gate = scenario(
    _health_and_the_otlp_door_are_never_behind_the_gate, slots=1, line=0
)
