"""The two OTLP doors, thin adapters over `collector.ingest.Ingest`."""
