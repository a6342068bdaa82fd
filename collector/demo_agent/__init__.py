"""`badge-collector demo-agent`: a small agent to screen, shipped with the package.

A screening needs an agent on the other end, and a first-time user has none
wired up yet. This one answers the endpoint contract of docs/screening.md
with a scripted model (no network, deterministic per task and round), real
tool functions, and the spans an instrumented agent sends: the server span
continued from the screener's `traceparent` by OpenTelemetry's ASGI
middleware, then `invoke_agent`, `chat` and `execute_tool` spans (GenAI
conventions) through the SDK's OTLP exporter. Its variants misbehave on
purpose (slower, broken, flaky) so that screening and compare have something
true to find.

It is a client of the collector like any agent: it imports none of the
collector's server modules (an import-linter contract checks it). Importing
the package does nothing; each module is imported by name.
"""
