"""Reads do not starve ingest (issue 39 item 4, api.read_gate).

200 keyless readers of the heaviest dashboard page halved another owner's
exports and pushed `/healthz` to 4.25 s. Here a real collector process is
flooded with keyless requests of its leaderboard page while another owner
exports and a monitor asks `/healthz`: both keep being answered, and the
reads past the bound are refused with 503 + Retry-After instead of piling
up. How fast is for bench/read_flood.py; this test waits for answers.
"""

from __future__ import annotations

import threading
from collections import Counter
from pathlib import Path

import httpx

from bench.payloads import build_requests
from bench.support.servers import OtlpClient, cli, start_server
from tests.schemas import sqlite_copy_at_head

READERS = 40
ANSWER_S = 120.0  # a loaded two-core machine: how long one answer may take here


def test_a_flood_of_keyless_reads_leaves_health_and_exports_answering(tmp_path: Path) -> None:
    db = tmp_path / "collector.db"
    url = sqlite_copy_at_head(db)
    key = cli("keys", "create", "--owner", "exporter", "--database-url", url).stdout.strip()
    bodies = build_requests(12, spans_per_request=64)
    server = start_server(db, "--max-concurrent-reads", "2", "--max-waiting-reads", "4")
    root = f"http://127.0.0.1:{server.http_port}"
    reads: Counter[int] = Counter()
    refusal: list[httpx.Response] = []
    stop = threading.Event()
    lock = threading.Lock()

    def reader() -> None:
        with httpx.Client(base_url=root, timeout=ANSWER_S) as client:
            while not stop.is_set():
                reply = client.get("/")
                with lock:
                    reads[reply.status_code] += 1
                    if reply.status_code == 503 and not refusal:
                        refusal.append(reply)

    exporter = OtlpClient(server, key, timeout=ANSWER_S)
    try:
        exporter.export(bodies[0], "http")  # an agent on the board before the flood
        flood = [threading.Thread(target=reader, daemon=True) for _ in range(READERS)]
        for thread in flood:
            thread.start()
        health: list[int] = []
        with httpx.Client(base_url=root, timeout=ANSWER_S) as monitor:
            for body in bodies[1:]:
                exporter.export(body, "http")  # raises unless 200
                health.append(monitor.get("/healthz").status_code)
                health.append(monitor.get("/readyz").status_code)
            for _ in range(1000):  # until a read has been refused
                if refusal:
                    break
                health.append(monitor.get("/healthz").status_code)
        stop.set()
        for thread in flood:
            thread.join(ANSWER_S)
            assert not thread.is_alive()
    finally:
        stop.set()
        exporter.close()
        server.stop()
    assert set(health) == {200}
    assert set(reads) <= {200, 503}, reads
    assert reads[200] > 0 and refusal, reads
    assert refusal[0].headers["retry-after"] == "1"
    assert refusal[0].headers["content-type"].startswith("text/html")
