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

Bounded for keyless scrapers (issue 37 item 8: 1,000 agents named at the
16 KiB value limit made 115 MB per scrape, and 10 scrapers took the server
from 580 MB to 2.7 GB): the `owner` and `agent` labels are cut to
MAX_LABEL_CHARS (`...` included, as a badge cuts a name; `agent_id` still
tells agents apart), the text stops at MAX_TEXT_BYTES (the agents left out
are counted as the bound's are: the truncated gauge says 1), and one
rendering serves every scrape for `refresh_s` seconds, rendered by the first
scrape after that while the others wait for it instead of rendering too.

Imports storage (and the receivers' once-a-minute log); collector.service
serves `render` after collector.metrics' own text, so a database that cannot
answer leaves the agent gauges out and the collector's own metrics in.
"""

from __future__ import annotations

import logging
import math
import threading
import time
from collections.abc import Callable, Sequence

from sqlalchemy.exc import SQLAlchemyError

from collector.receivers.quiet_log import OncePerMinute
from collector.storage.board_recent import RecentAgent, recent_agents
from collector.storage.engine import Database
from scoring import policy

log = logging.getLogger(__name__)
Value = Callable[[RecentAgent], float | None]
# A Grafana legend or table shows a name, not 16 KiB; cut like a badge's name.
MAX_LABEL_CHARS = 128
CUT = "..."
# Per agent (every sample present, exposition() measured): 1.35 KB with
# everyday names, 4.0 KB with ASCII names cut at 128, 12.2 KB with 128
# four-byte characters each: 3,100, 1,050 or 340 agents fit, the default
# 1,000 unless their names are long and not ASCII. Past the bound the least
# recent are left out.
MAX_TEXT_BYTES = 4 << 20


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
        self,
        db: Database,
        clock: Callable[[], float],
        *,
        max_agents: int,
        window_s: float,
        refresh_s: float = 0.0,
        monotonic: Callable[[], float] = time.monotonic,
    ) -> None:
        self._db = db
        self._clock = clock
        self._max_agents = max_agents
        self._window_s = window_s
        self._refresh_s = refresh_s
        self._monotonic = monotonic
        self._failed = OncePerMinute(log, "agent gauges left out of /metrics")
        self._lock = threading.Lock()  # scrapes run in the server's thread pool
        self._text = b""
        self._rendered_at: float | None = None

    def render(self) -> bytes:
        """The gauges' text, rendered at most once per `refresh_s`; nothing at
        all when the bound is 0 (turned off) or the database cannot answer
        (then /readyz says so too)."""
        if self._max_agents <= 0:
            return b""
        with self._lock:
            now = self._monotonic()
            if self._rendered_at is None or now - self._rendered_at >= self._refresh_s:
                self._text = self._render()
                self._rendered_at = now
            return self._text

    def _render(self) -> bytes:
        since = self._clock() - self._window_s
        try:
            with self._db.reader.connect() as conn:
                rows = recent_agents(conn, since=since, limit=self._max_agents + 1)
        except SQLAlchemyError as exc:
            self._failed.note(f"database: {type(exc).__name__}")
            return b""
        truncated = len(rows) > self._max_agents
        return exposition(rows[: self._max_agents], truncated)


def exposition(
    rows: Sequence[RecentAgent], truncated: bool, max_bytes: int = MAX_TEXT_BYTES
) -> bytes:
    """Prometheus text of these agents: every family's samples together, as
    the format requires, each agent's labels escaped once. The agents whose
    samples would take the text past `max_bytes` are left out, as `truncated`."""
    families = [(name, text) for name, text, _ in GAUGES] + [(RADAR, RADAR_HELP)]
    by_family: list[list[str]] = [[] for _ in families]
    size = sum(len(_header(name, text)) for name, text in families)
    size += len(_header(TRUNCATED, TRUNCATED_HELP)) + len(TRUNCATED) + 3
    for row in rows:
        agent = _samples(row)
        grown = size + sum(len(line.encode()) for lines in agent for line in lines)
        if grown > max_bytes:
            truncated = True
            break
        size = grown
        for lines, more in zip(by_family, agent, strict=True):
            lines += more
    out: list[str] = []
    for (name, text), lines in zip(families, by_family, strict=True):
        out.append(_header(name, text))
        out += lines
    out.append(_header(TRUNCATED, TRUNCATED_HELP))
    out.append(f"{TRUNCATED} {int(truncated)}\n")
    return "".join(out).encode()


def _header(name: str, help_text: str) -> str:
    return f"# HELP {name} {help_text}\n# TYPE {name} gauge\n"


def _samples(row: RecentAgent) -> list[list[str]]:
    """One agent's sample lines, by family (GAUGES, then the radar); a None
    value leaves its sample out, never NaN."""
    label = _labels(row)
    found: list[list[str]] = []
    for name, _, value in GAUGES:
        number = value(row)
        if number is None or not math.isfinite(number):
            found.append([])
        else:
            found.append([f"{name}{{{label}}} {_number(number)}\n"])
    found.append(
        [
            f'{RADAR}{{{label},axis="{axis}"}} {_number(score)}\n'
            for axis in policy.RADAR_AXES
            if (score := getattr(row, axis)) is not None and math.isfinite(score)
        ]
    )
    return found


def _labels(row: RecentAgent) -> str:
    owner, name = _escape(cut(row.owner)), _escape(cut(row.name))
    return f'owner="{owner}",agent="{name}",agent_id="{row.agent_id}"'


def cut(value: str) -> str:
    """At most MAX_LABEL_CHARS characters, `...` included when cut."""
    if len(value) <= MAX_LABEL_CHARS:
        return value
    return value[: MAX_LABEL_CHARS - len(CUT)] + CUT


def _escape(value: str) -> str:
    """Label value escaping of the text format: backslash, quote, newline."""
    return value.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n")


def _number(value: float) -> str:
    """Integers without a point; floats as repr, which reads back exactly."""
    return str(value) if isinstance(value, int) else repr(float(value))
