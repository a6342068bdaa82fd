"""The SQLite backend: engines, sessions and the key tail (see backend.py)."""
