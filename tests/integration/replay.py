"""Send recorded payloads through the real doors."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from concurrent.futures import ThreadPoolExecutor

from tests.corpus import Payload, payloads
from tests.integration.harness import Collector

# Scenarios sent at once. One sender waits out a durable commit per request
# (1,466 sequential exports took 59-107 s beside a CPU hog, issue 43); several
# let the writer commit their requests together, as exporters in many agents do.
SENDERS = 8


def send_as_recorded(collector: Collector, payload: Payload, key: str = "default") -> None:
    """The request as it arrived: its door, content type and encoding."""
    if payload.transport == "grpc":
        response, call = collector.export_grpc(payload.body, key=key)
        assert call.code().name == "OK"
        return
    headers = {}
    if payload.content_encoding:
        headers["content-encoding"] = payload.content_encoding
    reply = collector.post(
        payload.body, content_type=payload.content_type, headers=headers, key=key
    )
    assert reply.status_code == 200, reply.text


def send_through(collector: Collector, payload: Payload, door: str, key: str = "default") -> None:
    """Send the payload's request through `door` ("grpc" or "http"), re-encoded."""
    body = payload.message().SerializeToString()
    if door == "grpc":
        _, call = collector.export_grpc(body, key=key)
        assert call.code().name == "OK"
    else:
        reply = collector.post(body, key=key)
        assert reply.status_code == 200, reply.text


def replay_scenarios(scenarios: Iterable[str], send: Callable[[Payload], None]) -> None:
    """`send` every payload of every scenario: a scenario's payloads in their
    recorded order, the scenarios side by side (their traces are their own).
    The first failure is raised once every scenario has been sent."""
    with ThreadPoolExecutor(SENDERS) as pool:
        sent = [pool.submit(_send_all, payloads(s), send) for s in scenarios]
    for each in sent:
        each.result()


def _send_all(scenario_payloads: list[Payload], send: Callable[[Payload], None]) -> None:
    for payload in scenario_payloads:
        send(payload)
