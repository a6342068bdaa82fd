"""The one ingest path both doors share: authenticate -> admit -> decode ->
validate -> queue for the writer (`path.Ingest`), with the decoder processes
(`decoding`) and the in-flight bound (`admission`)."""

from collector.ingest.path import LOCAL_OWNER, Accepted, Ingest

__all__ = ["LOCAL_OWNER", "Accepted", "Ingest"]
