"""Runs: from committed spans to stored runs, in one package.

- `collector.assembly` (below storage): the pure rules, span facts -> runs.
- `fresh`: runs assembled from one request in the decoder, stored with its
  spans; the writer's commit hook (fresh runs in, the rest marked pending).
- `recompute`: the thread that recomputes touched traces after each commit,
  sweeps timers and pending marks, and applies span retention.
- `cache`: recently committed span facts, so recomputation rarely reads.
- `store`: run storage, the `terminal_at` rule, the runs-finalised metric.

Imports storage and assembly; never the writer (it reaches the writer's job
queue through `recompute.JobSink`) nor ingest.
"""
