"""The schema: keys, agents, traces, spans (one row per stored span), the
distinct resources of those spans, runs."""

from __future__ import annotations

from typing import Any, get_args, get_type_hints

from sqlalchemy import (
    BigInteger,
    Boolean,
    Column,
    Float,
    Index,
    Integer,
    LargeBinary,
    MetaData,
    PrimaryKeyConstraint,
    SmallInteger,
    String,
    Table,
    Text,
    UniqueConstraint,
    false,
    text,
)

from collector.storage.rows import RUN_KINDS, RunRow

metadata = MetaData()

# SQLite's rowid alias must be INTEGER; PostgreSQL needs 64 bits (BIGSERIAL).
SPAN_ROW_ID = BigInteger().with_variant(Integer(), "sqlite")

keys = Table(
    "keys",
    metadata,
    Column("id", Integer, primary_key=True, autoincrement=True),
    Column("owner", String(200), nullable=False),
    Column("role", String(16), nullable=False),
    Column("key_hash", String(64), nullable=False, unique=True),
    Column("prefix", String(16), nullable=False),
    Column("created_at", Float, nullable=False),
    Column("revoked_at", Float),
)

agents = Table(
    "agents",
    metadata,
    Column("id", String(36), primary_key=True),
    Column("owner", String(200), nullable=False),
    Column("name", Text, nullable=False),
    Column("first_seen_at", Float, nullable=False),
    Column("deleted_at", Float),
    UniqueConstraint("owner", "name", name="uq_agents_owner_name"),
)

# Each owner's radar weights for /fitness (JSON: axis -> weight).
radar_weights = Table(
    "radar_weights",
    metadata,
    Column("owner", String(200), primary_key=True),
    Column("weights", Text, nullable=False),
    Column("updated_at", Float, nullable=False),
)

# One row per (owner, trace): its number, given in order of first sight.
# Spans are keyed by that number, so the span index grows at its right edge;
# keyed by the random trace id itself, every span dirtied a random index page
# (a whole page written to the WAL, and again at checkpoint: ~8 KB per ~1 KB
# span, growing with the table). Only this table is keyed by the random id,
# once per trace. On PostgreSQL it is also the lock row every transaction
# writing a trace's spans or runs upserts first (a session's register_traces).
#
# SQLite (migration 0012): a trace's row is first written outside the
# (owner, trace_id) index (`merged` false) and found through the writer's
# memory (storage/sqlite/key_tail.py); the sweeper merges those rows into the
# index in bulk, so a merge writes each index page once for thousands of
# traces instead of once per commit. PostgreSQL indexes every row at once
# (several processes insert traces) and `merged` is always true there.
# AUTOINCREMENT: a number is never given again (retention deletes the newest
# rows too), so a number the writer remembers always means the same trace.
MERGED_TRUE = text("merged = 1")  # SQLite's spelling; queries repeat it exactly
MERGED_FALSE = text("merged = 0")
NOT_MERGED_PG = text("NOT merged")
# The spans a grader key sent, as their partial index and its queries say it.
GRADER_SPANS = "grader"
GRADER = text(GRADER_SPANS)

traces = Table(
    "traces",
    metadata,
    Column("id", SPAN_ROW_ID, primary_key=True, autoincrement=True),
    Column("owner", String(200), nullable=False),
    Column("trace_id", String(32), nullable=False),
    Column("touched_at", Float, nullable=False),
    Column("merged", Boolean, nullable=False, server_default=text("true")),
    Index("ux_traces_owner_trace", "owner", "trace_id", unique=True, sqlite_where=MERGED_TRUE),
    # The rows not merged yet, in arrival order (appended, never random),
    # with what a lookup reads: a reader finds a key among them without
    # visiting the table (migration 0013).
    Index(
        "ix_traces_unmerged",
        "id",
        "owner",
        "trace_id",
        "merged",
        sqlite_where=MERGED_FALSE,
        postgresql_where=NOT_MERGED_PG,
    ),
    sqlite_autoincrement=True,
)

# A rowid table with ONE narrow unique index: random keys in a clustered
# index split pages, and every extra index costs each insert.
spans = Table(
    "spans",
    metadata,
    Column("id", SPAN_ROW_ID, primary_key=True, autoincrement=True),
    Column("trace_ref", SPAN_ROW_ID, nullable=False),  # traces.id
    Column("owner", String(200), nullable=False),
    Column("trace_id", String(32), nullable=False),
    Column("span_id", String(16), nullable=False),
    Column("parent_span_id", String(16), nullable=False),
    Column("agent_id", String(36), nullable=False),
    Column("name", Text, nullable=False),
    Column("kind", SmallInteger, nullable=False),
    Column("start_ns", BigInteger, nullable=False),
    Column("end_ns", BigInteger, nullable=False),
    Column("status_code", SmallInteger, nullable=False),
    Column("status_message", Text, nullable=False),
    Column("flags", BigInteger, nullable=False),
    Column("scope_name", Text, nullable=False),
    Column("received_at", Float, nullable=False),
    Column("grader", Boolean, nullable=False),
    Column("role", String(8), nullable=False),
    Column("rule", Text, nullable=False),
    Column("facts", Text, nullable=False),
    Column("encoded", LargeBinary, nullable=False),
    Column("resource_digest", LargeBinary, nullable=False),  # resources.digest
    # keys.id of the key that sent the span (migration 0018): a run
    # certificate names the key of its root (docs/certificates.md); null
    # for keyless ingest (--insecure) and for spans stored before 0018.
    Column("key_id", Integer),
    Index("ux_spans_identity", "trace_ref", "span_id", unique=True),
    # The spans a grader key sent (migration 0022): few (a screener's roots),
    # counted per trace so a recomputation notices that a grader's span took
    # the place of another's (storage.span_identity).
    Index("ix_spans_grader", "trace_ref", sqlite_where=GRADER, postgresql_where=GRADER),
)

# Each distinct resource once, by content (docs/otlp.md "Limits"): a resource is
# the same for every span of a process, and copied into each span row it
# multiplied one request's bytes by its span count. Keyed by the first 16
# bytes of the SHA-256 of its encoded bytes (rows.resource_digest); `seen_at` is
# refreshed at most hourly, and retention drops a resource an hour after the
# newest span that could use it (storage/resources.register_resources).
resources = Table(
    "resources",
    metadata,
    Column("digest", LargeBinary, primary_key=True),
    Column("encoded", LargeBinary, nullable=False),
    Column("seen_at", Float, nullable=False),
)

# Traces whose spans were committed but whose runs were not recomputed since:
# marked in the spans' transaction, cleared in the one that stores the runs.
# A process killed in between leaves the mark, and the sweeper recomputes
# the trace (at start, or once the mark is stale). Small: only traces in
# flight, so the random-looking trace_ref rarely matters.
pending_traces = Table(
    "pending_traces",
    metadata,
    Column("trace_ref", SPAN_ROW_ID, primary_key=True, autoincrement=False),  # traces.id
    Column("marked_at", Float, nullable=False),
)

# A trace's spans by its (owner, trace_id): through its number, the only index.
trace_spans = traces.join(spans, spans.c.trace_ref == traces.c.id)


# Runs by id work as traces by (owner, trace_id) do (migration 0012): `seq`
# is the row's arrival number, the id index holds merged rows only on SQLite.
def run_columns() -> list[Column[Any]]:
    """The columns of the run record (storage.rows.RunRow and RUN_KINDS)."""
    hints = get_type_hints(RunRow)
    return [
        Column(
            name,
            _RUN_SQL[RUN_KINDS[name]],
            nullable=type(None) in get_args(hints[name]),
            server_default=_RUN_DEFAULTS.get(name),
        )
        for name in RunRow._fields
    ]


# Columns added to a table of stored runs, with the value those runs take
# (every write sets them): migration 0022's grader_claim.
_RUN_DEFAULTS: dict[str, Any] = {"grader_claim": false()}


_RUN_SQL: dict[str, Any] = {
    "uuid": String(36),
    "owner": String(200),
    "trace_id": String(32),
    "span_id": String(16),
    "word": String(16),
    "text": Text,
    "bool": Boolean,
    "int": Integer,
    "int64": BigInteger,
    "float": Float,
}

runs = Table(
    "runs",
    metadata,
    Column("seq", SPAN_ROW_ID, primary_key=True, autoincrement=True),
    *run_columns(),
    # The run's trace's number (traces.id), set where the run is written
    # (the SQLite session's upsert_runs). Runs are found by trace through it: the
    # number grows as traces arrive, so a new run's entry is appended where
    # (owner, trace_id), a random key, put each one on a random page.
    Column("trace_ref", SPAN_ROW_ID),
    Column("merged", Boolean, nullable=False, server_default=text("true")),
    # When retention first removed a span of this run's trace: from then on
    # no write changes or deletes the run (migration 0014).
    Column("sealed_at", Float),
    Index("ux_runs_id", "id", unique=True, sqlite_where=MERGED_TRUE),
    Index(
        "ix_runs_unmerged",
        "seq",
        "id",
        "merged",
        sqlite_where=MERGED_FALSE,
        postgresql_where=NOT_MERGED_PG,
    ),
    Index("ix_runs_trace_ref", "trace_ref"),
    Index("ix_runs_agent_started", "agent_id", "started_ns"),
    Index("ix_runs_agent_terminal", "agent_id", "terminal_at"),
    Index("ix_runs_check", "check_at"),
    # Each version's newest runs (its cohort); per-agent and per-version sums
    # are kept in run_totals (migration 0009), not summed from an index.
    Index("ix_runs_agent_version_terminal", "agent_id", "version", "terminal_at"),
    # A screening's runs (its views) and its cohort (compare by screening).
    Index("ix_runs_agent_screening_terminal", "agent_id", "screening_id", "terminal_at"),
    # A screening by its id alone (GET /screenings/{id}/certificate, migration
    # 0018): screened runs only, so unscreened runs cost it nothing.
    Index(
        "ix_runs_screening",
        "screening_id",
        sqlite_where=text("screening_id IS NOT NULL"),
        postgresql_where=text("screening_id IS NOT NULL"),
    ),
    # A screening's runs by whether a grader key claimed them (migration
    # 0022): is the screening a grader's, and which runs of the agent's own
    # name it (collector.runs.claims).
    Index(
        "ix_runs_screening_claims",
        "agent_id",
        "screening_id",
        "grader_claim",
        sqlite_where=text("screening_id IS NOT NULL"),
        postgresql_where=text("screening_id IS NOT NULL"),
    ),
    # /stats graded_runs with a time window (the kept totals have no time):
    # graded runs only, so counting them costs little while few are graded.
    Index(
        "ix_runs_graded",
        "agent_id",
        "status",
        "version",
        "terminal_at",
        sqlite_where=text("success_source = 'graded'"),
        postgresql_where=text("success_source = 'graded'"),
    ),
    sqlite_autoincrement=True,
)

# One row: how many times the rows not merged yet were merged into the
# indexes (or a run among them deleted). A writer that finds it changed
# reloads what it remembers (storage/sqlite/key_tail.py).
key_merges = Table(
    "key_merges",
    metadata,
    Column("id", Integer, primary_key=True, autoincrement=False),
    Column("generation", BigInteger, nullable=False),
)


# Per-agent sums of runs, kept as runs change (migration 0009's triggers), so
# the headline views read a few rows however many runs an agent has. A key
# column holds '' for NULL and '=' + the value otherwise (a unique key cannot
# match NULLs; the cost source is never empty, so it is kept as it is);
# success is 0, 1, or 2 for unknown.
def _totals_key() -> tuple[Column[Any], ...]:
    return (
        Column("agent_id", String(36), nullable=False),
        Column("version_key", Text, nullable=False),
        Column("status", String(16), nullable=False),
        Column("cost_source_key", String(16), nullable=False),
        Column("success_key", SmallInteger, nullable=False),
        Column("task_key", Text, nullable=False),
    )


def _totals_sums() -> tuple[Column[Any], ...]:
    return (
        Column("runs", BigInteger, nullable=False),
        Column("latency_sum", Float, nullable=False),
        Column("latency_n", BigInteger, nullable=False),
        Column("cost_sum", Float, nullable=False),
        Column("graded", BigInteger, nullable=False),
        Column("listed", BigInteger, nullable=False),  # runs with a task id or an agent span
        Column("first_started", BigInteger),  # min started_ns (a deleted run leaves it)
        Column("last_started", BigInteger),  # max started_ns
    )


TOTALS_KEY_COLUMNS = tuple(c.name for c in _totals_key())
TOTALS_SUM_COLUMNS = tuple(c.name for c in _totals_sums())

run_totals = Table(
    "run_totals",
    metadata,
    *_totals_key(),
    *_totals_sums(),
    PrimaryKeyConstraint(*TOTALS_KEY_COLUMNS, name="pk_run_totals"),
)

# What changed since the sweeper last folded the changes into run_totals:
# written by a trigger per run write, append-only (no row two writers share),
# read together with run_totals.
run_deltas = Table(
    "run_deltas",
    metadata,
    Column("id", SPAN_ROW_ID, primary_key=True, autoincrement=True),
    *_totals_key(),
    *_totals_sums(),
    Index("ix_run_deltas_agent", "agent_id"),
)

# Grades a screening harness posted (docs/loop.md "Graded outcomes"), one row
# per run id the grade's (owner, agent, run key) can name: the run whose
# badge.run.id is the key, and when the key is a trace id, that trace's run.
# Run writers read it for the runs they store; a grade updates its run if stored.
WAITING = text("waiting_bytes > 0")  # queries repeat it exactly, so the index serves them
grades = Table(
    "grades",
    metadata,
    Column("run_id", String(36), primary_key=True),
    Column("owner", String(200), nullable=False),
    Column("agent", Text, nullable=False),
    Column("run_key", Text, nullable=False),
    Column("success", Boolean, nullable=False),
    Column("score", Float),
    Column("expected_output", Text),
    Column("output", Text),
    Column("error_class", Text),
    Column("graded_at", Float, nullable=False),
    # What this row counts against its owner's grade quota while its run is not
    # stored (storage.grades.waiting_bytes); 0 once the run has met it.
    Column("waiting_bytes", Integer, nullable=False, server_default=text("0")),
    # The retention pass reads the oldest waiting grades, and only those.
    Index("ix_grades_waiting", "graded_at", sqlite_where=WAITING, postgresql_where=WAITING),
)

# Per owner, the sum of `grades.waiting_bytes` (migration 0015): the quota
# check reads one row instead of summing the owner's waiting grades.
grade_usage = Table(
    "grade_usage",
    metadata,
    Column("owner", String(200), primary_key=True),
    Column("waiting_bytes", BigInteger, nullable=False),
)


# Each agent's board row, kept by the sweeper (storage/board.py, migration
# 0017): what the leaderboard, its re-ranking by viewer weights and /metrics
# read, in one query whatever the number of agents. A run change marks its
# agent in board_stale (folded with the run sums); the sweeper refreshes
# marked agents from the kept sums and the agent's radar cohort.
agent_board = Table(
    "agent_board",
    metadata,
    Column("agent_id", String(36), primary_key=True),
    Column("owner", String(200), nullable=False),
    Column("name", Text, nullable=False),
    Column("listed", Boolean, nullable=False),
    Column("total_runs", BigInteger, nullable=False),
    Column("completed_runs", BigInteger, nullable=False),
    Column("successful_runs", BigInteger, nullable=False),
    Column("graded_runs", BigInteger, nullable=False),
    Column("last_run_at", Float),
    Column("composite_score", Float),
    Column("success_rate", Float),
    Column("correctness", Float),
    Column("latency", Float),
    Column("cost", Float),
    Column("tool_efficiency", Float),
    Column("robustness", Float),
    Column("radar_runs", Integer, nullable=False),
    Column("trend", Text, nullable=False),  # JSON: the composite over time, oldest first
    Column("refreshed_at", Float, nullable=False),
    Index("ix_agent_board_rank", "composite_score", "name", "agent_id"),
    Index("ix_agent_board_recent", "last_run_at"),  # /metrics: the recent agents
)
board_stale = Table(
    "board_stale",
    metadata,
    Column("agent_id", String(36), primary_key=True),
)


# Certificates (docs/certificates.md, migration 0018). The public half of
# every signing key ever used; the private key is a file, never stored here.
signing_keys = Table(
    "signing_keys",
    metadata,
    Column("kid", String(16), primary_key=True),
    Column("public_key", LargeBinary, nullable=False),  # 32 raw bytes
    Column("created_at", Float, nullable=False),
    Column("retired_at", Float),
)

# Every certificate issued, kept for good: triggers refuse an UPDATE or a
# DELETE (migration 0018). The newest of a subject is its current one;
# `basis` is the digest of what a run certificate was issued from that the
# run summary shows, so an unchanged run is answered without reading spans.
certificates = Table(
    "certificates",
    metadata,
    Column("id", Integer, primary_key=True, autoincrement=True),
    Column("statement_digest", String(64), nullable=False, unique=True),
    Column("kind", String(16), nullable=False),
    Column("subject", Text, nullable=False),
    Column("agent_id", String(36), nullable=False),
    Column("subject_digest", String(64), nullable=False),
    Column("basis", String(64)),
    Column("supersedes", String(64)),
    Column("issued_at", Text, nullable=False),
    Column("kid", String(16), nullable=False),
    Column("envelope", Text, nullable=False),
    Index("ix_certificates_subject", "agent_id", "subject", "id"),
    Index("ix_certificates_supersedes", "supersedes"),
)

# The append-only log of certificates: entry n (1-based) with its hash
# chain (CERTS.md section 3). The primary key on n is what makes two
# collectors appending at once fail rather than fork the chain; appends are
# also serialised (a session's lock_certificates).
certificate_log = Table(
    "certificate_log",
    metadata,
    Column("n", BigInteger, primary_key=True, autoincrement=False),
    Column("statement_digest", String(64), nullable=False, unique=True),
    Column("kind", String(16), nullable=False),
    Column("subject", Text, nullable=False),
    Column("issued_at", Text, nullable=False),
    Column("kid", String(16), nullable=False),
    Column("chain", String(64), nullable=False),
)


# What a screening was to dispatch (migration 0020, docs/screening.md): the
# screener records it through a grader key before its first dispatch, so a
# screening that lost runs shows itself incomplete. Keyed by the agent's
# stable id (owner and name), which exists before the agent's first span.
screening_plans = Table(
    "screening_plans",
    metadata,
    Column("agent_id", String(36), nullable=False),
    Column("screening_id", String(64), nullable=False),  # SCREEN.md section 6's pattern
    Column("owner", String(200), nullable=False),
    Column("agent", Text, nullable=False),
    Column("suite_name", Text),
    Column("suite_digest", Text),
    Column("version", Text),
    Column("rounds", Integer, nullable=False),
    Column("tasks", Integer, nullable=False),
    Column("planned_at", Float, nullable=False),
    PrimaryKeyConstraint("agent_id", "screening_id", name="pk_screening_plans"),
)
screening_plan_tasks = Table(
    "screening_plan_tasks",
    metadata,
    Column("agent_id", String(36), nullable=False),
    Column("screening_id", String(64), nullable=False),
    Column("task_id", Text, nullable=False),
    PrimaryKeyConstraint("agent_id", "screening_id", "task_id", name="pk_screening_plan_tasks"),
)
