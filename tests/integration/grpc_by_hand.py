"""One OTLP/gRPC Export made by hand over HTTP/2, its message gzipped beforehand.

grpc-core's client compresses a message itself, on the call: for the 1 GiB gzip
bomb that was 7 s of CPU per call, and on a busy machine more than the 15 s a
server lets a connection sit idle, so the call met the server's GOAWAY three
times in a row (issue 43). An attacker sends the bomb already made; so does
this: the frame carries the compressed flag and `grpc-encoding: gzip`, and the
server inflates it as it would any client's.
"""

from __future__ import annotations

import socket
import struct

import grpc
import h2.config
import h2.connection
import h2.events
import h2.exceptions

from bench.support.servers import EXPORT


def export_gzipped(
    port: int, key: str, gzipped: bytes, timeout: float = 120
) -> tuple[grpc.StatusCode, str]:
    """Send `gzipped` (a gzip member) as one compressed Export message; return the
    call's status and message from the server's trailers."""
    frame = b"\x01" + struct.pack(">I", len(gzipped)) + gzipped  # compressed, length
    conn = h2.connection.H2Connection(
        h2.config.H2Configuration(client_side=True, header_encoding="utf-8")
    )
    answer: dict[str, str] = {}
    with socket.create_connection(("127.0.0.1", port), timeout=timeout) as sock:
        conn.initiate_connection()
        stream = conn.get_next_available_stream_id()
        conn.send_headers(
            stream,
            [
                (":method", "POST"),
                (":scheme", "http"),
                (":path", EXPORT),
                (":authority", f"127.0.0.1:{port}"),
                ("content-type", "application/grpc"),
                ("te", "trailers"),
                ("grpc-encoding", "gzip"),
                ("grpc-accept-encoding", "gzip"),
                ("authorization", f"Bearer {key}"),
            ],
        )
        sent, ended = 0, False
        while not ended:
            sent = _send_what_the_window_allows(conn, stream, frame, sent)
            sock.sendall(conn.data_to_send())
            data = sock.recv(65536)
            if not data:
                break
            for event in conn.receive_data(data):
                if isinstance(event, (h2.events.ResponseReceived, h2.events.TrailersReceived)):
                    answer.update((str(k), str(v)) for k, v in event.headers)
                elif isinstance(event, h2.events.DataReceived):
                    conn.acknowledge_received_data(event.flow_controlled_length, stream)
                if isinstance(
                    event,
                    (
                        h2.events.StreamEnded,
                        h2.events.StreamReset,
                        h2.events.ConnectionTerminated,
                    ),
                ):
                    ended = True
            sock.sendall(conn.data_to_send())
    if "grpc-status" not in answer:
        raise AssertionError(f"the server ended the call without a gRPC status: {answer}")
    status = int(answer["grpc-status"])
    code = next(c for c in grpc.StatusCode if c.value[0] == status)
    return code, answer.get("grpc-message", "")


def _send_what_the_window_allows(
    conn: h2.connection.H2Connection, stream: int, frame: bytes, sent: int
) -> int:
    """Queue as much of the frame as flow control lets through; return how much
    is sent. A server that answered before reading it all has closed the stream."""
    try:
        while sent < len(frame):
            room = min(conn.local_flow_control_window(stream), conn.max_outbound_frame_size)
            if room <= 0:
                break
            chunk = frame[sent : sent + room]
            sent += len(chunk)
            conn.send_data(stream, chunk, end_stream=sent == len(frame))
    except h2.exceptions.StreamClosedError:
        return len(frame)
    return sent
