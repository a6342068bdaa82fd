"""Send mutated exports through a running collector's real doors and judge
every answer (bench/fuzz.py runs millions; test_fuzz.py a slice in CI).

An answer passes when it is one docs/otlp.md documents, with a body of the
documented shape: HTTP 200/400/401/413/415 or 503 (overloaded), gRPC OK,
INVALID_ARGUMENT, RESOURCE_EXHAUSTED, UNAUTHENTICATED or UNAVAILABLE. Any
other status (a 500, INTERNAL, UNKNOWN), an unparsable body, no answer
within HANG_S (a hang) or a server that died (a crash) is a failure, and
the input is written to tests/fixtures/fuzz/ to stay a regression case.
"""

from __future__ import annotations

import hashlib
import http.client
import json
import multiprocessing
import time
from collections import Counter
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import NamedTuple

import grpc
from google.protobuf.message import DecodeError
from google.rpc import status_pb2
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import (
    ExportTraceServiceResponse,
)

from bench.support.fuzz_inputs import JSON, Case, Mutator, seed_messages
from bench.support.servers import EXPORT

REGRESSIONS = Path(__file__).resolve().parents[2] / "tests" / "fixtures" / "fuzz"
HANG_S = 30.0
HTTP_PASSING = {200, 400, 401, 413, 415, 503}
GRPC_PASSING = {
    grpc.StatusCode.OK,
    grpc.StatusCode.INVALID_ARGUMENT,
    grpc.StatusCode.RESOURCE_EXHAUSTED,
    grpc.StatusCode.UNAUTHENTICATED,
    grpc.StatusCode.UNAVAILABLE,
}
KEPT_FAILURES = 20  # per worker: a systematic bug fails thousands of inputs alike


class Target(NamedTuple):
    """Where a worker process sends (picklable: workers start fresh)."""

    http_port: int
    grpc_port: int
    key: str


class Answer(NamedTuple):
    kind: str  # e.g. "http 400", "grpc INVALID_ARGUMENT", "hang", "no server"
    failure: str  # why it fails, "" when it passes


@dataclass
class Tally:
    inputs: int = 0
    answers: Counter[str] = field(default_factory=Counter)
    failures: list[tuple[Case, str]] = field(default_factory=list)
    failed: int = 0
    bytes_sent: int = 0

    def add(self, other: Tally) -> None:
        self.inputs += other.inputs
        self.answers.update(other.answers)
        self.failures.extend(other.failures)
        self.failed += other.failed
        self.bytes_sent += other.bytes_sent


class FuzzClient:
    """One kept-alive HTTP connection and one gRPC channel, raw bytes both ways."""

    def __init__(self, target: Target) -> None:
        self._target = target
        self._http = self._connect()
        self._channel = grpc.insecure_channel(
            f"127.0.0.1:{target.grpc_port}",
            options=[("grpc.max_send_message_length", 64 * 2**20)],
        )
        self._export = self._channel.unary_unary(EXPORT)

    def _connect(self) -> http.client.HTTPConnection:
        return http.client.HTTPConnection("127.0.0.1", self._target.http_port, timeout=HANG_S)

    def send(self, case: Case) -> Answer:
        return self._send_http(case) if case.door == "http" else self._send_grpc(case)

    def _send_http(self, case: Case) -> Answer:
        media = "application/json" if case.content == JSON else "application/x-protobuf"
        headers = {
            "content-type": media,
            "authorization": f"Bearer {self._target.key}",
        }
        if case.gzip:
            headers["content-encoding"] = "gzip"
        for attempt in (1, 2):
            try:
                self._http.request("POST", "/v1/traces", body=case.body, headers=headers)
                reply = self._http.getresponse()
                body = reply.read()
                break
            except TimeoutError:
                self._reconnect()
                return Answer("hang", f"no HTTP answer within {HANG_S:.0f} s")
            except (ConnectionError, http.client.HTTPException, OSError) as exc:
                self._reconnect()
                # A kept-alive connection the server closed as idle (its keep-alive
                # timeout) just as this request left: any HTTP client sends again
                # on a new connection. Twice is a real loss.
                if attempt == 2:
                    return Answer("no answer", f"connection lost: {type(exc).__name__}: {exc}")
        if reply.getheader("connection", "").lower() == "close":
            self._reconnect()
        return judge_http(reply.status, body, case.content == JSON)

    def _reconnect(self) -> None:
        self._http.close()
        self._http = self._connect()

    def _send_grpc(self, case: Case) -> Answer:
        try:
            body = self._export(
                case.body,
                metadata=[("authorization", f"Bearer {self._target.key}")],
                timeout=HANG_S,
                compression=grpc.Compression.Gzip if case.gzip else None,
            )
        except grpc.RpcError as exc:
            code = exc.code()
            if code == grpc.StatusCode.DEADLINE_EXCEEDED:
                return Answer("hang", f"no gRPC answer within {HANG_S:.0f} s")
            if code in GRPC_PASSING:
                return Answer(f"grpc {code.name}", "")
            return Answer(f"grpc {code.name}", f"gRPC {code.name}: {exc.details()}")
        try:
            ExportTraceServiceResponse.FromString(body)
        except DecodeError:
            return Answer("grpc OK", "OK with a body that is not an ExportTraceServiceResponse")
        return Answer("grpc OK", "")

    def close(self) -> None:
        self._http.close()
        self._channel.close()


def judge_http(status: int, body: bytes, as_json: bool) -> Answer:
    kind = f"http {status}"
    if status not in HTTP_PASSING:
        return Answer(kind, f"HTTP {status}: {body[:300]!r}")
    try:
        if status == 200 and as_json:
            json.loads(body)
        elif status == 200:
            ExportTraceServiceResponse.FromString(body)
        elif body.lstrip().startswith(b"{"):
            json.loads(body)  # a JSON Status (JSON requests, 405/415)
        else:
            status_pb2.Status.FromString(body)
    except (ValueError, DecodeError):
        return Answer(kind, f"HTTP {status} with a body of the wrong shape: {body[:300]!r}")
    return Answer(kind, "")


def run_worker(target: Target, door: str, seed: int, count: int, deadline: float) -> Tally:
    """Send `count` inputs (or until `deadline`, time.time()) through one door."""
    mutator = Mutator(seed, seed_messages())
    client = FuzzClient(target)
    tally = Tally()
    lost = 0  # transport failures in a row
    try:
        while tally.inputs < count and time.time() < deadline:
            case = mutator.next(door)
            answer = client.send(case)
            tally.inputs += 1
            tally.bytes_sent += len(case.body)
            tally.answers[answer.kind] += 1
            if answer.failure:
                tally.failed += 1
                if len(tally.failures) < KEPT_FAILURES:
                    tally.failures.append((case, answer.failure))
            lost = lost + 1 if answer.kind == "no answer" else 0
            if lost == 3:
                break  # the server is gone: the caller checks and reports it
    finally:
        client.close()
    return tally


def fuzz(
    target: Target, door: str, *, seed: int, count: int, workers: int, seconds: float
) -> Tally:
    """`count` inputs split over `workers` processes, each its own input stream."""
    deadline = time.time() + seconds
    shares = [count // workers + (1 if i < count % workers else 0) for i in range(workers)]
    total = Tally()
    # spawn: a forked child of a process holding gRPC channels can deadlock
    with ProcessPoolExecutor(workers, mp_context=multiprocessing.get_context("spawn")) as pool:
        futures = [
            pool.submit(run_worker, target, door, seed * 1000 + i, share, deadline)
            for i, share in enumerate(shares)
        ]
        for future in futures:
            total.add(future.result())
    return total


def keep(failures: list[tuple[Case, str]], folder: Path = REGRESSIONS) -> list[Path]:
    """Write failing inputs where the regression test replays them."""
    folder.mkdir(parents=True, exist_ok=True)
    written = []
    for case, reason in failures:
        digest = hashlib.sha256(case.body).hexdigest()[:16]
        stem = f"{case.door}-{case.content}{'-gzip' if case.gzip else ''}-{digest}"
        (folder / f"{stem}.bin").write_bytes(case.body)
        meta = {"door": case.door, "content": case.content, "gzip": case.gzip, "failed": reason}
        (folder / f"{stem}.json").write_text(json.dumps(meta, indent=1) + "\n")
        written.append(folder / f"{stem}.bin")
    return written


def kept_cases(folder: Path = REGRESSIONS) -> list[Case]:
    cases = []
    for meta_path in sorted(folder.glob("*.json")):
        meta = json.loads(meta_path.read_text())
        body = meta_path.with_suffix(".bin").read_bytes()
        cases.append(Case(meta["door"], meta["content"], meta["gzip"], body))
    return cases
