"""The read side, opened one way from settings for the server and the CLI alike.

`serve` opens it on the database the collector writes; the CLI's reads open
it on the database they are pointed at (`open_read_side`), migrate it and
bring the kept board up to date, as a running collector keeps it. Both then
read through the same store with the same timers, so the numbers agree.
"""

from __future__ import annotations

from dataclasses import dataclass

from collector.assembly.runs import Timers
from collector.settings import Settings
from collector.storage.agents import AgentDirectory, AgentRemoval
from collector.storage.board import catch_up
from collector.storage.certificate_reads import SqlCertificateReads
from collector.storage.certificates import Signing, SqlCertificateDesk
from collector.storage.engine import Database, open_existing
from collector.storage.migrate import create_schema
from collector.storage.reads import SqlReadStore
from collector.storage.weights import SqlWeightStore
from collector.types import Clock


@dataclass(frozen=True, slots=True)
class ReadSide:
    """What the read layer (api.views) is handed: the read store, and the
    writes the API offers, each its own port."""

    reads: SqlReadStore
    weights: SqlWeightStore
    agent_writes: AgentRemoval
    certificate_reads: SqlCertificateReads
    certificates: SqlCertificateDesk


def run_timers(settings: Settings) -> Timers:
    """When a run is orphaned, timed out, or impossibly long (docs/runs.md)."""
    return Timers(settings.orphan_grace_s, settings.run_timeout_s, settings.max_run_latency_s)


def read_side(
    db: Database,
    directory: AgentDirectory,
    settings: Settings,
    clock: Clock,
    signing: Signing | None = None,
) -> ReadSide:
    """The read side over an open database (the server's, whose ingest shares
    `directory`, so a deletion is refused by its doors at once). Without
    `signing` certificates are refused (503) and the rest answers."""
    timers = run_timers(settings)
    return ReadSide(
        reads=SqlReadStore(db, timers, clock),
        weights=SqlWeightStore(db),
        agent_writes=AgentRemoval(directory, clock),
        certificate_reads=SqlCertificateReads(db, timers, clock),
        certificates=SqlCertificateDesk(db, signing, clock),
    )


def open_read_side(settings: Settings, clock: Clock) -> tuple[Database, ReadSide]:
    """Open the settings' database for reading with no collector in this process:
    migrated, and its board brought up to date once. It must exist
    (`NoDatabase` otherwise): a read never creates a database."""
    db = open_existing(settings.database_url, synchronous=settings.sqlite_synchronous)
    create_schema(db)
    # No trace or run key is looked up: the writer's key-tail memory (and its
    # catch-up read of up to 20,000 keys a table) is not wanted here.
    with db.writer.begin() as conn:
        catch_up(db.session(conn), clock())
    return db, read_side(db, AgentDirectory(db), settings, clock)
