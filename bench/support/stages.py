"""CPU per span, step by step, of a collector process under the ingest bench.

The decoders time their own steps (decode, recognise, rows, assemble) and
the batch writer its transactions (write); the server exports those as
`badge_ingest_cpu_seconds_total{stage}`. What its process spent besides
the writer's transactions is the door's: HTTP or gRPC framing, admission,
unpickling the decoders' rows, the commit hook's answers. What the decoder
processes spent besides their timed steps is the pool's: pickling rows
and jobs, moving them through pipes.
"""

from __future__ import annotations

import os
import re
import urllib.request
from dataclasses import dataclass
from pathlib import Path

STAGES = ("door", "decode", "recognise", "rows", "assemble", "write", "pool")
_TICK = os.sysconf("SC_CLK_TCK")
_LINE = re.compile(r'^badge_ingest_cpu_seconds_total\{stage="(\w+)"\} (\S+)$', re.M)


@dataclass(frozen=True)
class CpuSnapshot:
    """CPU seconds so far: the server's own process, its decoders, each step."""

    server_s: float
    decoders_s: float
    stages_s: dict[str, float]


def _cpu_s(pid: int) -> float:
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / _TICK  # utime, stime


def _children(pid: int) -> list[int]:
    found: list[int] = []
    for task in Path(f"/proc/{pid}/task").iterdir():
        found += [int(c) for c in (task / "children").read_text().split()]
    return found


def snapshot(pid: int, http_port: int) -> CpuSnapshot:
    with urllib.request.urlopen(f"http://127.0.0.1:{http_port}/metrics", timeout=10) as reply:
        text = reply.read().decode()
    stages = {stage: float(value) for stage, value in _LINE.findall(text)}
    decoders = sum(_cpu_s(child) for child in _children(pid))
    return CpuSnapshot(_cpu_s(pid), decoders, stages)


def per_span_us(before: CpuSnapshot, after: CpuSnapshot, spans: int) -> dict[str, float]:
    """Each step's CPU microseconds per span between two snapshots."""
    step = {
        stage: after.stages_s.get(stage, 0.0) - before.stages_s.get(stage, 0.0)
        for stage in ("decode", "recognise", "rows", "assemble", "write")
    }
    server = after.server_s - before.server_s
    decoders = after.decoders_s - before.decoders_s
    step["door"] = server - step["write"]
    step["pool"] = decoders - sum(step[s] for s in ("decode", "recognise", "rows", "assemble"))
    return {stage: step[stage] / spans * 1e6 for stage in STAGES}
