"""The PostgreSQL backend: engine, sessions, COPY staging and locks (see backend.py)."""
