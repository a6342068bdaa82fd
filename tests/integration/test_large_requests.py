"""A request within the documented limits is admitted when its owner has
nothing else in flight, however large it decodes; one that can never fit is
refused at once with a status exporters do not retry (issue 39 item 3,
docs/otlp.md "Overload").

Found by probing: a 10 MiB body of 10,000 spans with 100 small attributes
each decoded past the owner's 16 MiB share and was refused with 503 on
every retry of an idle collector, so its exporter retried it forever.
"""

from __future__ import annotations

import functools
import os
from pathlib import Path
from typing import Any

import grpc
import pytest
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest
from opentelemetry.proto.common.v1.common_pb2 import AnyValue, KeyValue
from opentelemetry.proto.trace.v1.trace_pb2 import Span

from bench.support.otlp import EPOCH_NS
from tests.integration.harness import running_collector
from tests.integration.outages import metric

SPANS, ATTRIBUTES = 10_000, 100


@functools.cache
def probe_body() -> bytes:
    """The probe's request: 10,000 spans of 100 small attributes, ~10 MiB."""
    request = ExportTraceServiceRequest()
    resource_spans = request.resource_spans.add()
    resource_spans.resource.attributes.append(
        KeyValue(key="service.name", value=AnyValue(string_value="big-batch"))
    )
    scope = resource_spans.scope_spans.add()
    attributes = [KeyValue(key=f"{n:02d}", value=AnyValue(int_value=n)) for n in range(ATTRIBUTES)]
    trace_id = os.urandom(16)
    for n in range(SPANS):
        span = scope.spans.add(
            trace_id=trace_id,
            span_id=(n + 1).to_bytes(8, "big"),
            name=f"step {n}",
            kind=Span.SPAN_KIND_INTERNAL,
            start_time_unix_nano=EPOCH_NS + n,
            end_time_unix_nano=EPOCH_NS + n + 1000,
        )
        span.attributes.extend(attributes)
    body = request.SerializeToString()
    assert 9.5 * 2**20 < len(body) < 10.5 * 2**20  # the probe's size: inside the 16 MiB limit
    return body


@pytest.mark.parametrize("door", ["http", "grpc"])
@pytest.mark.parametrize(
    "settings",
    [{}, {"max_inflight_bytes": 4 * 2**20}],
    ids=["defaults", "budget-smaller-than-the-body"],
)
def test_a_request_within_the_limits_is_admitted_alone_however_large_it_decodes(
    tmp_path: Path, door: str, settings: dict[str, Any]
) -> None:
    with running_collector(tmp_path, **settings) as c:
        if door == "http":
            reply = c.post(probe_body())
            assert reply.status_code == 200, reply.text[:200]
        else:
            c.export_grpc(probe_body())
        assert c.span_count() == SPANS
        assert metric(c, "badge_inflight_bytes") == 0  # every byte given back


@pytest.mark.parametrize("door", ["http", "grpc"])
@pytest.mark.parametrize(
    "settings",
    [{"max_body_bytes": 8 * 2**20}, {"max_spans_per_request": SPANS - 1}],
    ids=["body-over-the-limit", "spans-over-the-limit"],
)
def test_a_request_past_the_limits_is_refused_at_once_and_not_retried(
    tmp_path: Path, door: str, settings: dict[str, Any]
) -> None:
    with running_collector(tmp_path, **settings) as c:
        if door == "http":
            reply = c.post(probe_body())
            assert reply.status_code == 413, reply.text[:200]
            assert "retry-after" not in reply.headers
        else:
            with pytest.raises(grpc.RpcError) as refused:
                c.export_grpc(probe_body())
            assert refused.value.code() == grpc.StatusCode.RESOURCE_EXHAUSTED
            trailers = dict(refused.value.trailing_metadata() or ())
            assert "grpc-status-details-bin" not in trailers  # no RetryInfo: not retried
        assert c.span_count() == 0
