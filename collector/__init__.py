"""The engine and composition root: receivers, pipeline, assembly, storage, CLI."""
