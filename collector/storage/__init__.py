"""SQLAlchemy 2 storage: tables, engines, batch writes, reads, keys.

Implements the read API's ports (`api.ports.ReadStore`, `api.auth.KeyChecker`,
`api.certificate_ports`' `CertificateReads` and `CertificateDesk`).
`engine.open_database` chooses the backend once (`sqlite/` or `postgresql/`);
SQL that differs between the two lives only in those packages, as methods of
their sessions (`session.SqlSession`). The other modules are by subject:
`writes` (spans, retention), `resources`, `grades` and `grade_waits`,
`weights`, `keys`, `agents`, `board` and `kept_totals` (the kept sums),
`reads` (the read API), `screenings`, `sweeper_lease`, `migrate`, and
`certificates` with `certificate_rows`, `certificate_reads` and
`canonical_spans` (signed certificates and their log, docs/certificates.md).
"""
