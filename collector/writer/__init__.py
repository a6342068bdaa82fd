"""The batch writer: a bounded queue and one group-commit writer thread.

Knows spans and generic write jobs; what runs need from a span commit comes
in through `CommitHook` (implemented by collector.runs), never by import.
"""

from collector.writer.batch_writer import MAX_BATCH_SPANS, Batch, BatchWriter, CommitHook, Job

__all__ = ["MAX_BATCH_SPANS", "Batch", "BatchWriter", "CommitHook", "Job"]
