"""What certificates and badges cost (docs/certificates.md).

    python bench/certificates.py [--runs 200] [--rounds 5] [--agents 1000] [--store STORE]

A real collector in this process (SQLite file or a throwaway PostgreSQL),
fed real runs through its OTLP/HTTP door (root > invoke_agent > chat + a
tool: 4 spans each). Then, with each figure the median of `--rounds`
rounds:

- the CPU time (this thread's: `time.thread_time`, so the collector's own
  background threads do not count, nor PostgreSQL's server process) of
  issuing a run certificate on first request, through the view the route
  calls (api.views.certificates): read the run and its spans, build the
  keyless summary, canonicalise, digest, sign, store, append to the log.
  Target: under 2 ms. Its parts are timed alone too;
- the CPU time of answering it again from storage;
- with `--agents` agents on the kept board, the CPU time of a badge answer
  in-process (the board row, the texts, the SVG, its ETag), and the wall
  time of GET /badge/{id}.svg over loopback, every agent once a round.

The machine these run on is shared: figures are medians, and say so.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from contextlib import ExitStack
from pathlib import Path

import httpx

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from api.views import certificates as views  # noqa: E402
from api.views.badges import badge_of, etag, svg  # noqa: E402
from bench.support.otlp import agent_run, attrs  # noqa: E402
from bench.support.postgres import PostgresCluster  # noqa: E402
from collector.certificates.canonical import canonical_json, json_ready  # noqa: E402
from collector.certificates.dsse import STATEMENT_TYPE, seal  # noqa: E402
from collector.certificates.keys import generate  # noqa: E402
from collector.service import Service, build  # noqa: E402
from collector.settings import Settings  # noqa: E402


def settle(service: Service) -> None:
    for _ in range(50):
        service.recomputer.process_pending(all_now=True)
        if not service.recomputer.has_pending():
            break
    service.maintenance.catch_up_board()


def send(service: Service, key: str, services: list[str]) -> None:
    """One run per service name, 200 resources to a request."""
    url = f"http://127.0.0.1:{service.http_port}/v1/traces"
    headers = {"content-type": "application/x-protobuf", "authorization": f"Bearer {key}"}
    for start in range(0, len(services), 200):
        message = agent_run("t1", service=services[start])
        for name in services[start + 1 : start + 200]:
            extra = message.resource_spans.add()
            extra.CopyFrom(agent_run("t1", service=name).resource_spans[0])
            extra.resource.ClearField("attributes")
            extra.resource.attributes.extend(attrs({"service.name": name}))
        reply = httpx.post(url, content=message.SerializeToString(), headers=headers, timeout=60)
        reply.raise_for_status()


def cpu_per_call(calls: list[Callable[[], object]]) -> float:
    """Mean CPU seconds of this thread per call."""
    started = time.thread_time()
    for call in calls:
        call()
    return (time.thread_time() - started) / len(calls)


def report(name: str, rounds: list[float], unit: float = 1e3, suffix: str = "ms") -> None:
    shown = ", ".join(f"{r * unit:.3f}" for r in rounds)
    print(f"  {name:<44} median {statistics.median(rounds) * unit:.3f} {suffix}  ({shown})")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--runs", type=int, default=200, help="run certificates issued in all")
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--agents", type=int, default=1000)
    parser.add_argument("--store", choices=["sqlite", "postgresql"], default="sqlite")
    args = parser.parse_args()
    with ExitStack() as stack:
        folder = Path(stack.enter_context(tempfile.TemporaryDirectory()))
        url = f"sqlite:///{folder / 'bench.db'}"
        if args.store == "postgresql":
            url = stack.enter_context(PostgresCluster()).create_database()
        settings = Settings(
            database_url=url,
            grpc_port=0,
            http_port=0,
            decode_workers=0,
            assembly_delay_s=0.01,
            signing_key=str(folder / "key.pem"),
        )
        service = build(settings)
        stack.callback(service.stop)
        key = service.keys.create("bench")
        service.start()
        read = service.read
        print(f"certificates on {args.store}; a shared, loaded machine: medians of rounds")

        send(service, key, ["certified"] * args.runs)
        settle(service)
        run_ids = [
            r.id
            for r, _ in read.reads.runs(
                agent_id=None, task_id=None, status=None, before=None, limit=args.runs
            )
        ]
        per_round = max(1, len(run_ids) // args.rounds)

        def issue(run_id: str) -> Callable[[], object]:
            return lambda: views.run_certificate(
                read.reads, read.certificate_reads, read.certificates, run_id
            )

        issued, again = [], []
        for number in range(args.rounds):
            chosen = run_ids[number * per_round : (number + 1) * per_round]
            issued.append(cpu_per_call([issue(r) for r in chosen]))
            again.append(cpu_per_call([issue(r) for r in chosen]))
        report("issue a run certificate (CPU, first request)", issued)
        report("answer it again from storage (CPU)", again)

        sample = json_ready(
            {
                "run": {"id": "x" * 36, "latency_ms": 123.4, "steps": 3}
                | {f"field_{i}": i for i in range(20)}
            }
        )
        signing = generate()
        report(
            "  of which: canonical JSON of a predicate",
            [cpu_per_call([lambda: canonical_json(sample)] * 2000) for _ in range(args.rounds)],
        )
        payload = canonical_json(sample)
        report(
            "  of which: an Ed25519 DSSE signature",
            [
                cpu_per_call([lambda: seal(STATEMENT_TYPE, payload, signing)] * 2000)
                for _ in range(args.rounds)
            ],
        )
        run = read.reads.run(run_ids[0])
        assert run is not None
        report(
            "  of which: the canonical spans of a run",
            [
                cpu_per_call([lambda: read.certificate_reads.canonical_spans(run)] * 200)
                for _ in range(args.rounds)
            ],
        )

        names = [f"agent-{i:05d}" for i in range(args.agents - 1)]
        send(service, key, names)
        settle(service)
        agents = [
            row.agent_id
            for row in read.reads.board(
                everything=True, weights=None, offset=0, limit=args.agents + 10
            )[0]
        ]
        print(f"badges, {len(agents)} agents on the kept board")
        badges = read.certificate_reads

        def answer(agent: str) -> Callable[[], object]:
            return lambda: etag(svg(badge_of(badges.badge(agent))))

        report(
            "a badge answer (CPU, in-process)",
            [cpu_per_call([answer(a) for a in agents]) for _ in range(args.rounds)],
        )
        base = f"http://127.0.0.1:{service.http_port}"
        walls = []
        with httpx.Client() as client:
            for _ in range(args.rounds):
                started = time.perf_counter()
                for agent in agents:
                    client.get(f"{base}/badge/{agent}.svg").raise_for_status()
                walls.append((time.perf_counter() - started) / len(agents))
        report("GET /badge/{id}.svg over loopback (wall)", walls)
    return 0


if __name__ == "__main__":
    sys.exit(main())
