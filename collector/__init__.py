"""The engine and composition root: receivers, ingest, writer, runs, storage, CLI."""
