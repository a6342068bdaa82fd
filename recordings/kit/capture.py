"""The capture server: an OTLP receiver that records every trace export request as it arrived.

Two doors on 127.0.0.1 (free ports unless given), one `seq` across both:
- HTTP `POST /v1/traces` (protobuf or JSON, any Content-Encoding, Content-Length or chunked):
  `payloads/NNNN.bin` is the body as sent (gzip included); also `POST /api/public/otel/v1/traces`,
  the path the Langfuse SDK's exporter posts to (`http_base` is the base URL to give it);
- gRPC `opentelemetry.proto.collector.trace.v1.TraceService/Export`: `payloads/NNNN.bin` is the
  serialized ExportTraceServiceRequest (grpcio decompresses before the handler sees it).
`payloads/NNNN.meta.json` holds content_encoding, content_type, headers, path, received_unix_nano,
seq, signal, size, transport (gRPC also: grpc_message_bytes, peer), and `authorization`: the
scheme of an Authorization header (`Basic`, `Bearer`; null without one), for Basic also
`authorization_user` (the user part, e.g. a Langfuse public key). The credential itself is never
written: `headers` shows it as `<scheme> <redacted>`.
Every request is answered with success: an empty Export*ServiceResponse (protobuf, or `{}` for
JSON). Metrics and logs exports are answered too but not recorded (counted in `ignored`).

CLI (for recorders in other languages), run with cwd /work/main/recordings:
    python -m kit.capture --out DIR
prints one JSON line {"http": "http://127.0.0.1:P/v1/traces", "grpc": "127.0.0.1:Q"} and serves
until SIGTERM / SIGINT.
"""

from __future__ import annotations

import argparse
import base64
import json
import signal
import sys
import threading
import time
from concurrent import futures
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import grpc

GRPC_TRACE_SERVICE = "opentelemetry.proto.collector.trace.v1.TraceService"
GRPC_OTHER_SERVICES = (
    "opentelemetry.proto.collector.metrics.v1.MetricsService",
    "opentelemetry.proto.collector.logs.v1.LogsService",
)
GRPC_NOTE = (
    "serialized request message after gRPC message decompression (grpcio decompresses "
    "transparently; grpc-encoding is not visible to the handler)"
)
HTTP_SIGNALS = {
    "/v1/traces": "traces",
    "/v1/metrics": "metrics",
    "/v1/logs": "logs",
    "/api/public/otel/v1/traces": "traces",  # the Langfuse SDK's exporter (Basic auth)
}


def authorization_meta(headers: dict[str, str]) -> tuple[dict[str, str], dict[str, Any]]:
    """(headers with the credential redacted, meta fields saying what kind of auth was sent).

    Case-insensitive on the header name (gRPC metadata keys are lower case). For Basic, the
    user part (a Langfuse public key, not a secret) is kept; the password/token never is.
    """
    found = {"authorization": None}
    redacted = {}
    for key, value in headers.items():
        if key.lower() != "authorization":
            redacted[key] = value
            continue
        scheme, _, credential = str(value).strip().partition(" ")
        found["authorization"] = scheme
        if scheme.lower() == "basic":
            try:
                user = base64.b64decode(credential.strip(), validate=True).decode().split(":")[0]
            except (ValueError, UnicodeDecodeError):
                user = None
            found["authorization_user"] = user
        redacted[key] = f"{scheme} <redacted>"
    return redacted, found


def clear_payloads(out: Path) -> Path:
    """Create out/payloads and remove any recorded request from an earlier recording."""
    folder = Path(out) / "payloads"
    folder.mkdir(parents=True, exist_ok=True)
    for old in list(folder.glob("*.bin")) + list(folder.glob("*.meta.json")):
        old.unlink()
    return folder


class CaptureServer:
    """Records trace export requests under `out/payloads` (emptied on start)."""

    def __init__(self, out: Path, host: str = "127.0.0.1", http_port: int = 0, grpc_port: int = 0):
        self.out = Path(out)
        self.host = host
        self._http_port = http_port
        self._grpc_port = grpc_port
        self._lock = threading.Lock()
        self._seq = 0
        self.ignored: list[str] = []  # non-trace requests answered but not recorded
        self._http: ThreadingHTTPServer | None = None
        self._http_thread: threading.Thread | None = None
        self._grpc: grpc.Server | None = None
        self.http_endpoint = ""
        self.http_base = ""  # http://127.0.0.1:P, for exporters that append their own path
        self.grpc_endpoint = ""

    # -- recording -------------------------------------------------------------------------

    @property
    def request_count(self) -> int:
        return self._seq

    def record(self, body: bytes, meta: dict[str, Any]) -> int:
        """Write one request body and its meta under the next seq; returns the seq."""
        with self._lock:
            seq = self._seq
            self._seq += 1
            meta = dict(meta, seq=seq, size=len(body))
            folder = self.out / "payloads"
            (folder / f"{seq:04d}.bin").write_bytes(body)
            (folder / f"{seq:04d}.meta.json").write_text(
                json.dumps(meta, indent=2, sort_keys=True) + "\n"
            )
            return seq

    # -- lifecycle -------------------------------------------------------------------------

    def start(self) -> CaptureServer:
        clear_payloads(self.out)
        self._http = ThreadingHTTPServer((self.host, self._http_port), _handler_for(self))
        self._http.daemon_threads = True
        port = self._http.server_address[1]
        self.http_base = f"http://{self.host}:{port}"
        self.http_endpoint = f"{self.http_base}/v1/traces"
        self._http_thread = threading.Thread(
            target=self._http.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True
        )
        self._http_thread.start()

        self._grpc = grpc.server(futures.ThreadPoolExecutor(max_workers=4))
        handlers = [
            grpc.method_handlers_generic_handler(
                GRPC_TRACE_SERVICE,
                {"Export": grpc.unary_unary_rpc_method_handler(self._grpc_export)},
            )
        ]
        for service in GRPC_OTHER_SERVICES:
            handlers.append(
                grpc.method_handlers_generic_handler(
                    service,
                    {"Export": grpc.unary_unary_rpc_method_handler(self._grpc_ignored(service))},
                )
            )
        self._grpc.add_generic_rpc_handlers(handlers)
        gport = self._grpc.add_insecure_port(f"{self.host}:{self._grpc_port}")
        self._grpc.start()
        self.grpc_endpoint = f"{self.host}:{gport}"
        return self

    def stop(self) -> None:
        if self._http is not None:
            self._http.shutdown()
            self._http.server_close()
            self._http = None
        if self._grpc is not None:
            self._grpc.stop(grace=1.0).wait()
            self._grpc = None

    def __enter__(self) -> CaptureServer:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    # -- gRPC ------------------------------------------------------------------------------

    def _grpc_export(self, request: bytes, context: grpc.ServicerContext) -> bytes:
        received = time.time_ns()
        headers, auth = authorization_meta(dict(context.invocation_metadata()))
        self.record(
            request,
            {
                **auth,
                "content_encoding": None,
                "content_type": "application/grpc",
                "grpc_message_bytes": GRPC_NOTE,
                "headers": headers,
                "path": f"/{GRPC_TRACE_SERVICE}/Export",
                "peer": context.peer(),
                "received_unix_nano": received,
                "signal": "traces",
                "transport": "grpc",
            },
        )
        return b""  # an empty ExportTraceServiceResponse

    def _grpc_ignored(self, service: str) -> Any:
        def export(request: bytes, context: grpc.ServicerContext) -> bytes:
            with self._lock:
                self.ignored.append(f"grpc {service}")
            return b""

        return export


def _read_chunked(rfile: Any) -> bytes:
    parts = []
    while True:
        line = rfile.readline().strip()
        size = int(line.split(b";")[0], 16)
        if size == 0:
            while rfile.readline().strip():  # trailers
                pass
            return b"".join(parts)
        parts.append(rfile.read(size))
        rfile.readline()


def _handler_for(server: CaptureServer) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, format: str, *args: Any) -> None:  # noqa: A002
            pass

        def do_POST(self) -> None:  # noqa: N802
            received = time.time_ns()
            if self.headers.get("Transfer-Encoding", "").lower() == "chunked":
                body = _read_chunked(self.rfile)
            else:
                body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
            path = self.path.split("?")[0]
            content_type = self.headers.get("Content-Type") or ""
            is_json = content_type.split(";")[0].strip().lower() == "application/json"
            signal_name = HTTP_SIGNALS.get(path)
            if signal_name is None:
                self._answer(404, b"not found", "text/plain")
                return
            if signal_name == "traces":
                headers, auth = authorization_meta(dict(self.headers.items()))
                server.record(
                    body,
                    {
                        **auth,
                        "content_encoding": self.headers.get("Content-Encoding"),
                        "content_type": content_type or None,
                        "headers": headers,
                        "path": path,
                        "received_unix_nano": received,
                        "signal": signal_name,
                        "transport": "http",
                    },
                )
            else:
                with server._lock:
                    server.ignored.append(f"http {path}")
            if is_json:
                self._answer(200, b"{}", "application/json")
            else:
                self._answer(200, b"", "application/x-protobuf")

        def _answer(self, code: int, body: bytes, content_type: str) -> None:
            self.send_response(code)
            self.send_header("Content-Type", content_type)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

    return Handler


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m kit.capture", description=__doc__)
    parser.add_argument("--out", required=True, type=Path, help="recording folder (payloads/)")
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--http-port", type=int, default=0)
    parser.add_argument("--grpc-port", type=int, default=0)
    args = parser.parse_args(argv)

    stop = threading.Event()
    signal.signal(signal.SIGTERM, lambda *_: stop.set())
    signal.signal(signal.SIGINT, lambda *_: stop.set())
    server = CaptureServer(args.out, args.host, args.http_port, args.grpc_port).start()
    print(
        json.dumps(
            {
                "http": server.http_endpoint,
                "grpc": server.grpc_endpoint,
                "http_base": server.http_base,
            }
        ),
        flush=True,
    )
    while not stop.wait(0.2):
        pass
    server.stop()
    print(
        f"kit.capture: {server.request_count} trace requests recorded in {args.out / 'payloads'}"
        + (f"; {len(server.ignored)} non-trace requests ignored" if server.ignored else ""),
        file=sys.stderr,
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
