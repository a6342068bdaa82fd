"""Send corpus payloads through the real doors."""

from __future__ import annotations

from tests.corpus import Payload
from tests.integration.harness import Collector


def send_as_recorded(collector: Collector, payload: Payload) -> None:
    if payload.transport == "grpc":
        response, call = collector.export_grpc(payload.body)
        assert call.code().name == "OK"
        return
    headers = {}
    if payload.content_encoding:
        headers["content-encoding"] = payload.content_encoding
    reply = collector.post(payload.body, content_type=payload.content_type, headers=headers)
    assert reply.status_code == 200, reply.text


def send_through(collector: Collector, payload: Payload, door: str) -> None:
    """Send the payload's request through `door` ("grpc" or "http"), re-encoded."""
    body = payload.message().SerializeToString()
    if door == "grpc":
        _, call = collector.export_grpc(body)
        assert call.code().name == "OK"
    else:
        reply = collector.post(body)
        assert reply.status_code == 200, reply.text
