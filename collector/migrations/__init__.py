"""Alembic migrations of the collector's schema (SQLite and PostgreSQL alike)."""
