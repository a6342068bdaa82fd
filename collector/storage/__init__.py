"""SQLAlchemy 2 storage: tables, engines, batch writes, reads, keys.

Implements the read API's ports (`api.ports.ReadStore`, `api.auth.KeyChecker`).
Dialect-specific SQL lives only in `dialect.py`.
"""
