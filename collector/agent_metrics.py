"""Each recent agent's fitness as Prometheus gauges, for dashboards and alerts
elsewhere (docs/operations.md "Fitness in Grafana").

The values are the board rows the sweeper keeps (collector.storage.board),
never runs: a scrape is one bounded query (storage.board_recent: the listed
agents whose last run started within the window, most recent first, at
most `max_agents` + 1) and a render. The text (format 0.0.4) is written
here: prometheus_client's metric families took ~90 ms to build and render
1,000 agents' ~10,000 samples, this ~6 ms. Labels: `owner`, `agent` (the service name) and
`agent_id`. The id adds no series (it is uuid5 of owner and name, and a
renamed service is a new agent), but it is the key of the API and of the
dashboard's agent page, so a Grafana row can link there.

Imports storage (and the receivers' once-a-minute log); collector.service
serves `render` after collector.metrics' own text, so a database that cannot
answer leaves the agent gauges out and the collector's own metrics in.
"""

from __future__ import annotations

import logging
import math
from collections.abc import Callable, Sequence

from sqlalchemy.exc import SQLAlchemyError

from collector.receivers.quiet_log import OncePerMinute
from collector.storage.board_recent import RecentAgent, recent_agents
from collector.storage.engine import Database
from scoring import policy

log = logging.getLogger(__name__)
Value = Callable[[RecentAgent], float | None]


def _verified(row: RecentAgent) -> float | None:
    """Graded / completed runs; none without a completed run, as /stats's
    verified_state is null then."""
    return row.graded_runs / row.completed_runs if row.completed_runs else None


# (name, HELP, value per agent); a None value leaves the sample out, never NaN.
GAUGES: tuple[tuple[str, str, Value], ...] = (
    (
        "badge_agent_composite_score",
        "Headline composite (0-100) over all the agent's runs, as /stats composite_score",
        lambda r: r.composite_score,
    ),
    (
        "badge_agent_verified_ratio",
        "Graded runs / completed runs (0-1): the share of outcomes a grader verified",
        _verified,
    ),
    ("badge_agent_runs", "Runs stored for the agent, any status", lambda r: r.total_runs),
    ("badge_agent_completed_runs", "Completed runs of the agent", lambda r: r.completed_runs),
    ("badge_agent_graded_runs", "Completed runs whose outcome is graded", lambda r: r.graded_runs),
    (
        "badge_agent_last_run_timestamp_seconds",
        "Start of the agent's latest run (Unix seconds): what the export's window and bound use",
        lambda r: r.last_run_at,
    ),
)
RADAR = "badge_agent_radar_score"
RADAR_HELP = (
    "Fitness radar axis (0-100) over the latest 100 terminal runs, as /fitness; "
    "an axis without evidence is absent"
)
TRUNCATED = "badge_agent_metrics_truncated"
TRUNCATED_HELP = (
    "1 when more agents ran within BADGE_METRICS_WINDOW_DAYS than BADGE_METRICS_MAX_AGENTS: "
    "the least recent were left out"
)


class AgentGauges:
    """The agent gauges of one collector: `render()` per scrape."""

    def __init__(
        self, db: Database, clock: Callable[[], float], *, max_agents: int, window_s: float
    ) -> None:
        self._db = db
        self._clock = clock
        self._max_agents = max_agents
        self._window_s = window_s
        self._failed = OncePerMinute(log, "agent gauges left out of /metrics")

    def render(self) -> bytes:
        """The gauges' text; nothing at all when the bound is 0 (turned off)
        or the database cannot answer (then /readyz says so too)."""
        if self._max_agents <= 0:
            return b""
        since = self._clock() - self._window_s
        try:
            with self._db.reader.connect() as conn:
                rows = recent_agents(conn, since=since, limit=self._max_agents + 1)
        except SQLAlchemyError as exc:
            self._failed.note(f"database: {type(exc).__name__}")
            return b""
        truncated = len(rows) > self._max_agents
        return exposition(rows[: self._max_agents], truncated)


def exposition(rows: Sequence[RecentAgent], truncated: bool) -> bytes:
    """Prometheus text of these agents: every family's samples together, as
    the format requires, each agent's labels escaped once."""
    labels = [_labels(row) for row in rows]
    out: list[str] = []
    for name, help_text, value in GAUGES:
        out.append(f"# HELP {name} {help_text}\n# TYPE {name} gauge\n")
        for row, label in zip(rows, labels, strict=True):
            number = value(row)
            if number is not None and math.isfinite(number):
                out.append(f"{name}{{{label}}} {_number(number)}\n")
    out.append(f"# HELP {RADAR} {RADAR_HELP}\n# TYPE {RADAR} gauge\n")
    for row, label in zip(rows, labels, strict=True):
        for axis in policy.RADAR_AXES:
            score = getattr(row, axis)
            if score is not None and math.isfinite(score):
                out.append(f'{RADAR}{{{label},axis="{axis}"}} {_number(score)}\n')
    out.append(f"# HELP {TRUNCATED} {TRUNCATED_HELP}\n# TYPE {TRUNCATED} gauge\n")
    out.append(f"{TRUNCATED} {int(truncated)}\n")
    return "".join(out).encode()


def _labels(row: RecentAgent) -> str:
    return f'owner="{_escape(row.owner)}",agent="{_escape(row.name)}",agent_id="{row.agent_id}"'


def _escape(value: str) -> str:
    """Label value escaping of the text format: backslash, quote, newline."""
    return value.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n")


def _number(value: float) -> str:
    """Integers without a point; floats as repr, which reads back exactly."""
    return str(value) if isinstance(value, int) else repr(float(value))
