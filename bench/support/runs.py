"""Stored runs built directly, as the writer would store them (the kept-sum
tests and bench/key_filters.py)."""

from __future__ import annotations

import random
from typing import Any

from collector.storage.rows import RUN_COLUMNS, RunRow


def a_run(rnd: random.Random, index: int) -> RunRow:
    status = rnd.choice(["running", "completed", "completed", "failed", "timeout"])
    started = 1_000 + rnd.randint(0, 10**6)
    values: dict[str, Any] = {
        "id": f"run-{index:04d}",
        "owner": "o",
        "agent_id": rnd.choice(["agent-a", "agent-b"]),
        "trace_id": f"{index:032x}",
        "run_key": f"trace:{index:032x}",
        "root_span_id": None,
        "task_id": rnd.choice([None, "t1", "t2", "t3"]),
        "version": rnd.choice([None, "1.0", "2.0"]),
        "status": status,
        "success": None if status == "running" else rnd.choice([None, True, False]),
        "success_source": rnd.choice(["reported", "status"]),
        "started_ns": started,
        "ended_ns": started + 5,
        "latency_ms": rnd.choice([None, rnd.uniform(1, 9000)]),
        "steps": rnd.randint(0, 5),
        "tool_errors": 0,
        "llm_calls": 1,
        "input_tokens": None,
        "output_tokens": None,
        "cost_usd": rnd.choice([None, round(rnd.uniform(0, 0.2), 6)]),
        "cost_source": rnd.choice([None, "reported", "estimated"]),
        "error_class": "none",
        "span_count": 3,
        "has_agent_span": rnd.random() < 0.5,
        "last_received_at": 1.0,
        "check_at": None,
        "terminal_at": None if status == "running" else float(started),
        "tool_calls": "[]",
        "updated_at": 1.0,
        "evaluation": None,
        "screening_id": rnd.choice([None, "s1"]),
        "screening_round": None,
        "suite_name": None,
        "suite_digest": None,
        "grader_claim": False,
        "unrecognised_spans": rnd.choice([None, 0, 2]),
        "conventions_digest": rnd.choice([None, "0123456789abcdef"]),
        "steps_source": rnd.choice([None, "spans", "requested"]),
    }
    return RunRow(*(values[c] for c in RUN_COLUMNS))
