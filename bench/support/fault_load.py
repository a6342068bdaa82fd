"""Exporters that keep sending through a fault (bench/faults.py).

Each sender thread, on one door, sends a new trace of `spans` spans per
request, one request at a time, as an OTel SDK exporter does: a retryable
refusal (503 / UNAVAILABLE) is sent again after the wait the collector
asked for (Retry-After, RetryInfo), until `retry_for_s` after its first
try; anything else is final. Every answer is tallied by what it said, and
every acknowledged trace is remembered, to be looked for in the database.
"""

from __future__ import annotations

import http.client
import threading
import time
from collections import Counter
from dataclasses import dataclass, field

import grpc
from google.rpc import error_details_pb2, status_pb2

from bench.support.otlp import new_span_id, new_trace_id, request, span
from bench.support.servers import EXPORT, HTTP_TRANSPORT_ERRORS, ServerProcess


@dataclass
class Tally:
    answers: Counter[str] = field(default_factory=Counter)  # "HTTP 503 (database)" -> count
    acked: set[str] = field(default_factory=set)  # trace ids (hex) acknowledged
    gave_up: int = 0  # refused for longer than retry_for_s: an SDK drops those
    lock: threading.Lock = field(default_factory=threading.Lock)

    def note(self, answer: str) -> None:
        with self.lock:
            self.answers[answer] += 1


def cause(message: str) -> str:
    """What a refusal's message blames."""
    if "database" in message:
        return "database"
    if "decoder" in message:
        return "decoder"
    if "busy" in message or "queue" in message:
        return "overload"
    return "other"


class Load:
    def __init__(
        self,
        server: ServerProcess,
        key: str,
        senders_per_door: int,
        retry_for_s: float,
        spans: int = 5,
    ) -> None:
        self.spans = spans  # per request: a root and its tool calls
        self._server = server
        self._key = key
        self._retry_for_s = retry_for_s
        self._stop = threading.Event()
        self.tally = Tally()
        self._threads = [
            threading.Thread(target=self._send_loop, args=(door,), daemon=True)
            for door in ("http", "grpc")
            for _ in range(senders_per_door)
        ]

    def start(self) -> None:
        for thread in self._threads:
            thread.start()

    def stop(self) -> Tally:
        """No new traces; those being retried go on until they are answered
        or their retry time is up."""
        self._stop.set()
        for thread in self._threads:
            thread.join(self._retry_for_s + 60)
        return self.tally

    def _send_loop(self, door: str) -> None:
        client = _Client(self._server, self._key)
        try:
            while not self._stop.is_set():
                trace, root = new_trace_id(), new_span_id()
                spans = [span(trace, root, "badge.run", attributes={"badge.task.id": "fault"})]
                spans += [
                    span(trace, new_span_id(), "execute_tool t", parent=root)
                    for _ in range(self.spans - 1)
                ]
                body = request(spans, service="fault-bench").SerializeToString()
                if self._deliver(client, door, body):
                    with self.tally.lock:
                        self.tally.acked.add(trace.hex())
        finally:
            client.close()

    def _deliver(self, client: _Client, door: str, body: bytes) -> bool:
        first = time.monotonic()
        while True:
            answer, wait_s = client.export(door, body)
            self.tally.note(answer)
            if answer.endswith(" OK"):
                return True
            if wait_s is None:
                return False  # final, as an SDK treats it
            if time.monotonic() + wait_s - first > self._retry_for_s:
                with self.tally.lock:
                    self.tally.gave_up += 1
                return False
            time.sleep(wait_s)


class _Client:
    """One kept-alive HTTP connection and one gRPC channel, as an exporter holds."""

    def __init__(self, server: ServerProcess, key: str) -> None:
        self._http = http.client.HTTPConnection("127.0.0.1", server.http_port, timeout=30)
        self._channel = grpc.insecure_channel(f"127.0.0.1:{server.grpc_port}")
        self._call = self._channel.unary_unary(EXPORT)
        self._auth = f"Bearer {key}"

    def export(self, door: str, body: bytes) -> tuple[str, float | None]:
        """What the collector said, and how long it asked to wait (None: final)."""
        return self._http_export(body) if door == "http" else self._grpc_export(body)

    def _http_export(self, body: bytes) -> tuple[str, float | None]:
        headers = {"content-type": "application/x-protobuf", "authorization": self._auth}
        try:
            self._http.request("POST", "/v1/traces", body=body, headers=headers)
            reply = self._http.getresponse()
            content = reply.read()
        except HTTP_TRANSPORT_ERRORS as exc:
            self._http.close()
            return f"HTTP no answer ({type(exc).__name__})", 1.0
        if reply.status == 200:
            return "HTTP 200 OK", None
        message = status_pb2.Status.FromString(content).message if content else ""
        after = reply.getheader("retry-after")
        wait_s = float(after) if after is not None and reply.status in (429, 503) else None
        return f"HTTP {reply.status} ({cause(message)})", wait_s

    def _grpc_export(self, body: bytes) -> tuple[str, float | None]:
        try:
            self._call(body, metadata=[("authorization", self._auth)], timeout=30)
        except grpc.RpcError as error:
            code = error.code()
            wait_s = _retry_delay(error) if code == grpc.StatusCode.UNAVAILABLE else None
            if code == grpc.StatusCode.UNAVAILABLE and wait_s is None:
                wait_s = 1.0  # no RetryInfo (a refused connection): an SDK backs off anyway
            return f"gRPC {code.name} ({cause(error.details() or '')})", wait_s
        return "gRPC OK", None

    def close(self) -> None:
        self._http.close()
        self._channel.close()


def _retry_delay(error: grpc.RpcError) -> float | None:
    details = dict(error.trailing_metadata() or ()).get("grpc-status-details-bin")
    if details is None:
        return None
    for detail in status_pb2.Status.FromString(details).details:
        retry = error_details_pb2.RetryInfo()
        if detail.Unpack(retry):
            return float(retry.retry_delay.seconds + retry.retry_delay.nanos / 1e9)
    return None
