"""Send recorded payloads through the real doors."""

from __future__ import annotations

from tests.corpus import Payload
from tests.integration.harness import Collector


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
