"""Run assembly: pure code from a trace's spans to its runs (docs/runs.md).

No SQL, no gRPC, no FastAPI here: storage hands in `SpanFacts`, gets `Run`s.
"""
